//! Usage read back for money and for the transcript: per model (a session's cost), per
//! request (a resumed transcript's turn summaries), and per day, project and session
//! (`cairn usage`). Pricing is the caller's business; this only sums tokens.

use rusqlite::params;

use super::{Store, StoreError};
use crate::conversation::Usage;

/// One recorded request, as the transcript recaps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageRow {
    pub purpose: String,
    pub model: String,
    pub usage: Usage,
    pub created_at: String,
    /// Made by a subagent the session started (at any depth), not by the session itself.
    pub subagent: bool,
    /// Made while a turn ran that a conversation rewind has since taken back.
    pub rewound: bool,
}

/// A session and the subagents' sessions under it, at any depth, as `tree(id)`: its requests
/// are what the session cost, as the live session and `cairn usage` count them.
const SESSION_TREE: &str = "WITH RECURSIVE tree(id) AS (
        SELECT ?1 UNION ALL SELECT s.id FROM sessions s JOIN tree t ON s.parent_session = t.id
    )";

/// One compaction of a session, as the transcript recaps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedCompaction {
    pub trigger: String,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub summary_bytes: usize,
    pub created_at: String,
}

/// One session's requests of one model on one day (local time), with its project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DailyUsage {
    /// `YYYY-MM-DD`, local time.
    pub date: String,
    pub project_root: String,
    pub session_id: String,
    pub title: String,
    pub model: String,
    pub usage: Usage,
    pub requests: u64,
}

/// The first four columns of a usage row as [`Usage`].
fn usage_at(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Usage> {
    Ok(Usage {
        input_tokens: r.get::<_, i64>(first)? as u64,
        output_tokens: r.get::<_, i64>(first + 1)? as u64,
        cache_read_input_tokens: r.get::<_, i64>(first + 2)? as u64,
        cache_creation_input_tokens: r.get::<_, i64>(first + 3)? as u64,
    })
}

impl Store {
    /// The session's usage summed per model, with the number of requests: what it cost, its
    /// subagents' requests included.
    pub fn usage_by_model(&self, session: &str) -> Result<Vec<(String, Usage, u64)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "{SESSION_TREE}
             SELECT model, SUM(input_tokens), SUM(output_tokens), SUM(cache_read_input_tokens),
                    SUM(cache_creation_input_tokens), COUNT(*)
             FROM usage WHERE session_id IN (SELECT id FROM tree) GROUP BY model ORDER BY model"
        ))?;
        let rows =
            stmt.query_map(params![session], |r| Ok((r.get(0)?, usage_at(r, 1)?, r.get::<_, i64>(5)? as u64)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every request of the session and of the subagents it started, oldest first, each saying
    /// whether a conversation rewind has since taken back the turn it was made in.
    pub fn usage_rows(&self, session: &str) -> Result<Vec<UsageRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "{SESSION_TREE}
             SELECT u.purpose, u.model, u.input_tokens, u.output_tokens, u.cache_read_input_tokens,
                    u.cache_creation_input_tokens, u.created_at, u.session_id != ?1,
                    EXISTS (SELECT 1 FROM message_rewinds r
                            JOIN messages m ON m.session_id = r.session_id AND m.seq = r.first_seq
                            WHERE r.session_id = ?1 AND u.created_at >= m.created_at AND u.created_at <= r.created_at)
             FROM usage u WHERE u.session_id IN (SELECT id FROM tree) ORDER BY u.id"
        ))?;
        let rows = stmt.query_map(params![session], |r| {
            Ok(UsageRow {
                purpose: r.get(0)?,
                model: r.get(1)?,
                usage: usage_at(r, 2)?,
                created_at: r.get(6)?,
                subagent: r.get(7)?,
                rewound: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Usage of every project since `since` (RFC 3339), per local day, session and model;
    /// newest day first.
    pub fn daily_usage(&self, since: &str) -> Result<Vec<DailyUsage>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT date(u.created_at, 'localtime') AS day, p.root, s.id, s.title, u.model,
                    SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_read_input_tokens),
                    SUM(u.cache_creation_input_tokens), COUNT(*)
             FROM usage u JOIN sessions s ON s.id = u.session_id JOIN projects p ON p.id = s.project_id
             WHERE u.created_at >= ?1
             GROUP BY day, s.id, u.model
             ORDER BY day DESC, p.root, MIN(u.id)",
        )?;
        let rows = stmt.query_map(params![since], |r| {
            Ok(DailyUsage {
                date: r.get(0)?,
                project_root: r.get(1)?,
                session_id: r.get(2)?,
                title: r.get(3)?,
                model: r.get(4)?,
                usage: usage_at(r, 5)?,
                requests: r.get::<_, i64>(9)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The session's compactions, oldest first.
    pub fn compaction_log(&self, session: &str) -> Result<Vec<LoggedCompaction>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT trigger, tokens_before, tokens_after, length(CAST(summary AS BLOB)), created_at
             FROM compactions WHERE session_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![session], |r| {
            Ok(LoggedCompaction {
                trigger: r.get(0)?,
                tokens_before: r.get::<_, i64>(1)? as u64,
                tokens_after: r.get::<_, i64>(2)? as u64,
                summary_bytes: r.get::<_, i64>(3)? as usize,
                created_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderKind;
    use crate::conversation::{Message, Mode};
    use crate::store::NewSession;

    #[test]
    fn usage_sums_per_model_per_request_and_per_day() {
        let store = Store::open_in_memory().unwrap();
        let project = store.project(std::path::Path::new("/tmp/shop")).unwrap();
        let s = store
            .create_session(project, NewSession { provider: ProviderKind::Anthropic, model: "m", mode: Mode::Edit })
            .unwrap();
        store.set_session_title(&s.id, "fix it").unwrap();
        let m = store.append_message(&s.id, &Message::assistant("a")).unwrap();
        let u =
            Usage { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 1 };
        store.record_usage(&s.id, Some(m.id), "turn", "claude-sonnet-4-5", &u).unwrap();
        store.record_usage(&s.id, Some(m.id), "turn", "claude-sonnet-4-5", &u).unwrap();
        store.record_usage(&s.id, None, "compaction", "claude-haiku-4-5", &u).unwrap();
        let by_model = store.usage_by_model(&s.id).unwrap();
        assert_eq!(by_model.len(), 2);
        assert_eq!(
            by_model[1],
            (
                "claude-sonnet-4-5".to_string(),
                Usage {
                    input_tokens: 20,
                    output_tokens: 10,
                    cache_read_input_tokens: 200,
                    cache_creation_input_tokens: 2
                },
                2
            )
        );
        let rows = store.usage_rows(&s.id).unwrap();
        assert_eq!(rows.iter().map(|r| r.purpose.as_str()).collect::<Vec<_>>(), ["turn", "turn", "compaction"]);
        let days = store.daily_usage("2000-01-01T00:00:00Z").unwrap();
        assert_eq!(days.len(), 2, "{days:?}");
        assert!(days.iter().all(|d| d.project_root == "/tmp/shop" && d.title == "fix it" && d.date.len() == 10));
        assert!(store.daily_usage("2999-01-01T00:00:00Z").unwrap().is_empty());
        assert!(store.compaction_log(&s.id).unwrap().is_empty());
    }
}

use rusqlite::params;
use serde::Serialize;

use super::{Store, StoreError, now_rfc3339};
use crate::conversation::Usage;

/// Usage summed over a session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UsageTotals {
    pub usage: Usage,
    pub requests: u64,
}

/// The last agent request of a session, as calibration reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastRequest {
    pub usage: Usage,
    /// The seq of the reply it produced, when one was stored.
    pub reply_seq: Option<i64>,
    /// The rough tokens of the system prompt and tools it carried.
    pub overhead_tokens: Option<u64>,
}

impl Store {
    /// Record one request's usage. `purpose` says what the request was for: `turn` for the
    /// agent's own requests, `compaction`, `extraction`, … for auxiliary calls, `keepalive`
    /// for a ping that kept the prompt cache warm. Returns the row's id.
    pub fn record_usage(
        &self,
        session: &str,
        message_id: Option<i64>,
        purpose: &str,
        model: &str,
        usage: &Usage,
    ) -> Result<i64, StoreError> {
        self.record_usage_at(session, message_id, purpose, model, usage, &now_rfc3339())
    }

    /// [`Store::record_usage`] at a given time (RFC 3339): a replay's requests happen on its
    /// own clock. Returns the row's id.
    pub fn record_usage_at(
        &self,
        session: &str,
        message_id: Option<i64>,
        purpose: &str,
        model: &str,
        usage: &Usage,
        at: &str,
    ) -> Result<i64, StoreError> {
        self.insert_usage(session, message_id, purpose, model, usage, at, None)
    }

    /// An agent request's usage (`turn`), with the rough tokens of the system prompt and tools
    /// it carried: a session opened again calibrates its estimate against them. Returns the
    /// row's id.
    pub fn record_request(
        &self,
        session: &str,
        message_id: Option<i64>,
        model: &str,
        usage: &Usage,
        overhead_tokens: u64,
    ) -> Result<i64, StoreError> {
        self.insert_usage(session, message_id, "turn", model, usage, &now_rfc3339(), Some(overhead_tokens))
    }

    #[allow(clippy::too_many_arguments)] // one row's columns
    fn insert_usage(
        &self,
        session: &str,
        message_id: Option<i64>,
        purpose: &str,
        model: &str,
        usage: &Usage,
        at: &str,
        overhead_tokens: Option<u64>,
    ) -> Result<i64, StoreError> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO usage (session_id, message_id, purpose, model, input_tokens, output_tokens,
                                    cache_read_input_tokens, cache_creation_input_tokens, created_at, overhead_tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    session,
                    message_id,
                    purpose,
                    model,
                    usage.input_tokens as i64,
                    usage.output_tokens as i64,
                    usage.cache_read_input_tokens as i64,
                    usage.cache_creation_input_tokens as i64,
                    at,
                    overhead_tokens.map(|t| t as i64)
                ],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    pub fn session_usage(&self, session: &str) -> Result<UsageTotals, StoreError> {
        Ok(self.conn().query_row(
            "SELECT COALESCE(SUM(input_tokens),0), COALESCE(SUM(output_tokens),0), COALESCE(SUM(cache_read_input_tokens),0),
                    COALESCE(SUM(cache_creation_input_tokens),0), COUNT(*)
             FROM usage WHERE session_id = ?1",
            params![session],
            |r| {
                Ok(UsageTotals {
                    usage: Usage {
                        input_tokens: r.get::<_, i64>(0)? as u64,
                        output_tokens: r.get::<_, i64>(1)? as u64,
                        cache_read_input_tokens: r.get::<_, i64>(2)? as u64,
                        cache_creation_input_tokens: r.get::<_, i64>(3)? as u64,
                    },
                    requests: r.get::<_, i64>(4)? as u64,
                })
            },
        )?)
    }

    /// The session's last agent request whose reply a conversation rewind has not taken back:
    /// its usage, the figure calibration starts from, the seq of the reply it produced
    /// (messages from there on came after the request), and the rough tokens of the system
    /// prompt and tools it carried (`None` for requests recorded before cairn kept them).
    pub fn last_request(&self, session: &str) -> Result<Option<LastRequest>, StoreError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn()
            .query_row(
                "SELECT u.input_tokens, u.output_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, m.seq,
                        u.overhead_tokens
                 FROM usage u LEFT JOIN messages m ON m.id = u.message_id
                 WHERE u.session_id = ?1 AND u.purpose = 'turn'
                   AND NOT EXISTS (SELECT 1 FROM message_rewinds r WHERE r.session_id = u.session_id
                       AND (m.seq BETWEEN r.first_seq AND r.last_seq
                            -- an empty reply stored no message: rewound when the rewind came
                            -- after it and took back a turn already open then
                            OR (m.seq IS NULL AND r.created_at > u.created_at
                                AND (SELECT f.created_at FROM messages f WHERE f.session_id = r.session_id
                                     AND f.seq = r.first_seq) <= u.created_at)))
                 ORDER BY u.id DESC LIMIT 1",
                params![session],
                |r| {
                    Ok(LastRequest {
                        usage: Usage {
                            input_tokens: r.get::<_, i64>(0)? as u64,
                            output_tokens: r.get::<_, i64>(1)? as u64,
                            cache_read_input_tokens: r.get::<_, i64>(2)? as u64,
                            cache_creation_input_tokens: r.get::<_, i64>(3)? as u64,
                        },
                        reply_seq: r.get(4)?,
                        overhead_tokens: r.get::<_, Option<i64>>(5)?.map(|t| t.max(0) as u64),
                    })
                },
            )
            .optional()?)
    }
}

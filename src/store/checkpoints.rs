//! Checkpoints: one per turn (keyed by the seq of the user message that opened it), holding the
//! before/after state of each path a tool touched; the manifest of each project's tree as last
//! scanned; the turns of a session as `/rewind` lists them; and the message ranges a
//! conversation rewind took out of what is sent.
//!
//! Stores and returns; what to capture and how to restore belong to `checkpoint`.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use super::blobs::{self, ContentHash, NewBlob, now_ms};
use super::{ProjectId, Store, StoreError, StoredMessage, now_rfc3339};
use crate::conversation::TurnInfo;

/// Why the content of a path that existed was not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unkept {
    /// Larger than `checkpoints.max_file_bytes`.
    TooLarge,
    /// Matches `checkpoints.never_store` (secrets stay where the user put them).
    NeverStore,
    /// Inside an ignored folder too large to checkpoint (target/, node_modules/).
    IgnoredDir,
    /// It could not be read.
    Unreadable,
    /// Another cairn on the same project replaced the copy before this change was recorded.
    Missing,
    /// It holds the value of a provider key: never copied into the database.
    Secret,
}

impl Unkept {
    fn as_str(self) -> &'static str {
        match self {
            Unkept::TooLarge => "too_large",
            Unkept::NeverStore => "never_store",
            Unkept::IgnoredDir => "ignored_dir",
            Unkept::Unreadable => "unreadable",
            Unkept::Missing => "missing",
            Unkept::Secret => "secret",
        }
    }

    fn parse(s: &str) -> Option<Unkept> {
        Some(match s {
            "too_large" => Unkept::TooLarge,
            "never_store" => Unkept::NeverStore,
            "ignored_dir" => Unkept::IgnoredDir,
            "unreadable" => Unkept::Unreadable,
            "missing" => Unkept::Missing,
            "secret" => Unkept::Secret,
            _ => return None,
        })
    }

    /// Why, in words, for reports: "its content was not kept: …".
    pub fn explain(self) -> &'static str {
        match self {
            Unkept::TooLarge => "it was larger than checkpoints.max_file_bytes",
            Unkept::NeverStore => "it matches checkpoints.never_store, so its content is never copied",
            Unkept::IgnoredDir => "it is inside an ignored folder too large to checkpoint",
            Unkept::Unreadable => "it could not be read",
            Unkept::Missing => "another cairn on this project replaced the copy before it was recorded",
            Unkept::Secret => "it holds the value of a provider key, which is never stored",
        }
    }
}

/// What a path held at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathState {
    Absent,
    Dir,
    /// A regular file; `mode` is its permission bits.
    File {
        hash: ContentHash,
        mode: u32,
    },
    /// A symbolic link; the content is its target.
    Symlink {
        hash: ContentHash,
    },
    /// It existed, but its content was not kept; size and mtime tell later whether it is still
    /// what was left there.
    Unkept {
        reason: Unkept,
        size: u64,
        mtime_ns: i64,
    },
}

impl PathState {
    pub fn hash(&self) -> Option<ContentHash> {
        match self {
            PathState::File { hash, .. } | PathState::Symlink { hash } => Some(*hash),
            PathState::Absent | PathState::Dir | PathState::Unkept { .. } => None,
        }
    }

    /// (kind, mode, size, mtime_ns) as stored; the blob is stored by id beside them.
    fn columns(&self) -> (&'static str, Option<i64>, Option<i64>, Option<i64>) {
        match self {
            PathState::Absent => ("absent", None, None, None),
            PathState::Dir => ("dir", None, None, None),
            PathState::File { mode, .. } => ("file", Some(*mode as i64), None, None),
            PathState::Symlink { .. } => ("symlink", None, None, None),
            PathState::Unkept { reason, size, mtime_ns } => {
                (reason.as_str(), None, Some(*size as i64), Some(*mtime_ns))
            }
        }
    }

    fn from_columns(
        kind: &str,
        hash: Option<Vec<u8>>,
        mode: Option<i64>,
        size: Option<i64>,
        mtime_ns: Option<i64>,
    ) -> Result<PathState, StoreError> {
        let hash = || -> Result<ContentHash, StoreError> {
            ContentHash::from_column(
                hash.clone().ok_or_else(|| StoreError::Corrupt(format!("a checkpoint {kind} has no content")))?,
            )
        };
        Ok(match kind {
            "absent" => PathState::Absent,
            "dir" => PathState::Dir,
            "file" => PathState::File { hash: hash()?, mode: mode.unwrap_or(0o644) as u32 },
            "symlink" => PathState::Symlink { hash: hash()? },
            other => match Unkept::parse(other) {
                Some(reason) => {
                    PathState::Unkept { reason, size: size.unwrap_or(0).max(0) as u64, mtime_ns: mtime_ns.unwrap_or(0) }
                }
                None => return Err(StoreError::Corrupt(format!("a checkpoint records an unknown kind {other:?}"))),
            },
        })
    }
}

/// One path one tool call changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewChange {
    /// Relative to the project root, `/`-separated.
    pub path: String,
    pub tool: String,
    pub call_id: String,
    pub before: PathState,
    pub after: PathState,
}

/// A recorded change, with the turn it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeRecord {
    pub id: i64,
    /// Seq of the user message that opened the turn.
    pub user_seq: i64,
    pub path: String,
    pub tool: String,
    pub call_id: String,
    pub before: PathState,
    pub after: PathState,
    /// A code rewind already put the path back to before this change.
    pub reverted: bool,
}

/// A file of a project tree as last scanned, and the content it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestEntry {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub mode: u32,
    pub hash: ContentHash,
}

/// Everything one capture step stores, in one transaction: the contents, the changes that
/// refer to them, and the manifest rows that keep the current ones.
#[derive(Debug, Default)]
pub struct CaptureBatch {
    pub blobs: Vec<NewBlob>,
    pub turn: Option<TurnChanges>,
    pub manifest: Option<ManifestDelta>,
}

#[derive(Debug)]
pub struct TurnChanges {
    pub session: String,
    pub user_seq: i64,
    pub changes: Vec<NewChange>,
}

#[derive(Debug)]
pub struct ManifestDelta {
    pub project: ProjectId,
    pub upserts: Vec<ManifestEntry>,
    pub removals: Vec<String>,
}

/// Messages a conversation rewind took out of what is sent (inclusive seqs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RewoundRange {
    pub first_seq: i64,
    pub last_seq: i64,
}

impl RewoundRange {
    pub fn contains(&self, seq: i64) -> bool {
        self.first_seq <= seq && seq <= self.last_seq
    }
}

/// A compaction summary from the log, as a conversation rewind restores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EarlierSummary {
    pub through_seq: i64,
    pub summary: String,
    pub generation: u32,
}

/// Whether any rewind took `seq` out of what is sent.
pub fn is_rewound(ranges: &[RewoundRange], seq: i64) -> bool {
    ranges.iter().any(|r| r.contains(seq))
}

const CHANGE_COLUMNS: &str = "c.id, k.user_seq, c.path, c.tool, c.call_id,
     c.before_kind, bb.hash, c.before_mode, c.before_size, c.before_mtime_ns,
     c.after_kind, ab.hash, c.after_mode, c.after_size, c.after_mtime_ns, c.reverted_at IS NOT NULL";

const CHANGE_JOINS: &str = "FROM checkpoint_changes c
     JOIN checkpoints k ON k.id = c.checkpoint_id
     LEFT JOIN blobs bb ON bb.id = c.before_blob
     LEFT JOIN blobs ab ON ab.id = c.after_blob";

fn change_from_row(r: &Row<'_>) -> rusqlite::Result<Result<ChangeRecord, StoreError>> {
    let before = PathState::from_columns(&r.get::<_, String>(5)?, r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?);
    let after = PathState::from_columns(&r.get::<_, String>(10)?, r.get(11)?, r.get(12)?, r.get(13)?, r.get(14)?);
    let (id, user_seq, path, tool, call_id, reverted) =
        (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(15)?);
    Ok(before.and_then(|before| {
        after.map(|after| ChangeRecord { id, user_seq, path, tool, call_id, before, after, reverted })
    }))
}

impl Store {
    /// Store one capture step atomically. A change whose earlier content another process has
    /// meanwhile released is recorded with that content marked missing, never dropped.
    pub fn commit_capture(&self, batch: CaptureBatch) -> Result<(), StoreError> {
        let encoded = self.encode_missing(batch.blobs)?;
        let now = now_ms();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        blobs::insert(&tx, &encoded, now)?;
        if let Some(turn) = &batch.turn
            && !turn.changes.is_empty()
        {
            record_changes(&tx, turn, now)?;
        }
        if let Some(delta) = &batch.manifest {
            update_manifest(&tx, delta, now)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The changes of turns opened at or after `from_user_seq` (and up to `to_user_seq`), in the
    /// order they happened.
    pub fn checkpoint_changes(
        &self,
        session: &str,
        from_user_seq: i64,
        to_user_seq: Option<i64>,
    ) -> Result<Vec<ChangeRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {CHANGE_COLUMNS} {CHANGE_JOINS}
             WHERE k.session_id = ?1 AND k.user_seq >= ?2 AND k.user_seq <= ?3 ORDER BY c.id"
        ))?;
        let rows = stmt.query_map(params![session, from_user_seq, to_user_seq.unwrap_or(i64::MAX)], change_from_row)?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row??);
        }
        Ok(out)
    }

    /// Record that a code rewind put these changes' paths back.
    pub fn mark_changes_reverted(&self, ids: &[i64]) -> Result<(), StoreError> {
        let now = now_rfc3339();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached("UPDATE checkpoint_changes SET reverted_at = ?2 WHERE id = ?1")?;
            for id in ids {
                stmt.execute(params![id, now])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The project's manifest: files as last scanned whose content the store still holds.
    pub fn manifest(&self, project: ProjectId) -> Result<Vec<ManifestEntry>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT m.path, m.size, m.mtime_ns, m.ctime_ns, m.ino, m.mode, b.hash
             FROM file_manifest m JOIN blobs b ON b.id = m.blob_id
             WHERE m.project_id = ?1 AND b.dropped_at IS NULL",
        )?;
        let rows = stmt.query_map(params![project.0], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, Vec<u8>>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (path, size, mtime_ns, ctime_ns, ino, mode, hash) = row?;
            out.push(ManifestEntry {
                path,
                size: size.max(0) as u64,
                mtime_ns,
                ctime_ns,
                ino: ino as u64,
                mode: mode as u32,
                hash: ContentHash::from_column(hash)?,
            });
        }
        Ok(out)
    }

    /// The session's turns still in the conversation, numbered from 1, with the files each
    /// changed.
    pub fn turns(&self, session: &str) -> Result<Vec<TurnInfo>, StoreError> {
        let ranges = self.rewound_ranges(session)?;
        let conn = self.conn();
        let mut stmt = conn.prepare(
            // Files, as `/diff` counts them: a folder made or removed is no file of its own.
            "SELECT m.seq, m.content, m.created_at,
                    (SELECT COUNT(DISTINCT c.path) FROM checkpoint_changes c JOIN checkpoints k ON k.id = c.checkpoint_id
                     WHERE k.session_id = m.session_id AND k.user_seq = m.seq AND c.reverted_at IS NULL
                       AND NOT (c.before_kind IN ('absent', 'dir') AND c.after_kind IN ('absent', 'dir'))),
                    (SELECT COUNT(DISTINCT c.path) FROM checkpoint_changes c JOIN checkpoints k ON k.id = c.checkpoint_id
                     WHERE k.session_id = m.session_id AND k.user_seq = m.seq AND c.reverted_at IS NOT NULL
                       AND NOT (c.before_kind IN ('absent', 'dir') AND c.after_kind IN ('absent', 'dir')))
             FROM messages m WHERE m.session_id = ?1 AND m.role = 'user' ORDER BY m.seq",
        )?;
        let rows = stmt.query_map(params![session], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, content, created_at, changed, reverted) = row?;
            if is_rewound(&ranges, seq) {
                continue;
            }
            out.push(TurnInfo {
                number: out.len() as u32 + 1,
                user_seq: seq,
                prompt: prompt_line(&content),
                created_at,
                files_changed: changed as u64,
                files_reverted: reverted as u64,
            });
        }
        Ok(out)
    }

    /// Take every message from `from_seq` on out of what is sent (the store keeps them), in one
    /// transaction with what depends on them: the segments that reach into them are deleted
    /// (they are cut again from what stays), and `context_state`, when given, becomes the
    /// session's context state. `None` when there is no message at or after `from_seq`.
    pub fn rewind_messages(
        &self,
        session: &str,
        from_seq: i64,
        context_state: Option<&str>,
    ) -> Result<Option<RewoundRange>, StoreError> {
        let now = now_rfc3339();
        self.write(|tx| {
            let last: Option<i64> =
                tx.query_row("SELECT MAX(seq) FROM messages WHERE session_id = ?1", params![session], |r| r.get(0))?;
            let Some(last_seq) = last.filter(|&last| last >= from_seq) else { return Ok(None) };
            tx.execute(
                "INSERT INTO message_rewinds (session_id, first_seq, last_seq, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![session, from_seq, last_seq, now],
            )?;
            tx.execute("DELETE FROM segments WHERE session_id = ?1 AND last_seq >= ?2", params![session, from_seq])?;
            if let Some(state) = context_state {
                tx.execute(
                    "INSERT INTO context_state (session_id, state, updated_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                    params![session, state, now],
                )?;
            }
            Ok(Some(RewoundRange { first_seq: from_seq, last_seq }))
        })
    }

    /// The highest seq the session has used, rewound messages included (0 when none): the
    /// next message is numbered after it.
    pub fn last_seq(&self, session: &str) -> Result<i64, StoreError> {
        Ok(self.conn().query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session_id = ?1",
            params![session],
            |r| r.get(0),
        )?)
    }

    /// Every range of the session's messages a conversation rewind took out, oldest first.
    pub fn rewound_ranges(&self, session: &str) -> Result<Vec<RewoundRange>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT first_seq, last_seq FROM message_rewinds WHERE session_id = ?1 ORDER BY first_seq, id")?;
        let rows =
            stmt.query_map(params![session], |r| Ok(RewoundRange { first_seq: r.get(0)?, last_seq: r.get(1)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The latest compaction that covers only messages before `seq`: what a conversation
    /// rewind to `seq` puts back as the session's summary (a later one summarised rewound
    /// messages). A compaction made before an earlier rewind that took back some of what it
    /// covers summarised those messages too, so it does not count. The generation counts the
    /// compactions up to it.
    pub fn summary_before(&self, session: &str, seq: i64) -> Result<Option<EarlierSummary>, StoreError> {
        let conn = self.conn();
        let row: Option<(i64, i64, String)> = conn
            .query_row(
                "SELECT c.id, c.through_seq, c.summary FROM compactions c
                 WHERE c.session_id = ?1 AND c.through_seq < ?2
                   AND NOT EXISTS (SELECT 1 FROM message_rewinds r WHERE r.session_id = c.session_id
                                   AND r.first_seq <= c.through_seq AND r.created_at >= c.created_at)
                 ORDER BY c.id DESC LIMIT 1",
                params![session, seq],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((id, through_seq, summary)) = row else { return Ok(None) };
        let generation: i64 = conn.query_row(
            "SELECT COUNT(*) FROM compactions WHERE session_id = ?1 AND id <= ?2",
            params![session, id],
            |r| r.get(0),
        )?;
        Ok(Some(EarlierSummary { through_seq, summary, generation: generation as u32 }))
    }

    /// The messages to load for sending: every stored message but those rewound.
    pub fn live_messages(&self, session: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.live_messages_between(session, i64::MIN, i64::MAX)
    }

    /// The messages not rewound with `first <= seq <= last`, in order.
    pub fn live_messages_between(
        &self,
        session: &str,
        first: i64,
        last: i64,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let ranges = self.rewound_ranges(session)?;
        Ok(self.messages_between(session, first, last)?.into_iter().filter(|m| !is_rewound(&ranges, m.seq)).collect())
    }
}

fn record_changes(tx: &Connection, turn: &TurnChanges, now: i64) -> Result<(), StoreError> {
    let created = now_rfc3339();
    tx.execute(
        "INSERT INTO checkpoints (session_id, user_seq, created_at) VALUES (?1, ?2, ?3)
         ON CONFLICT(session_id, user_seq) DO NOTHING",
        params![turn.session, turn.user_seq, created],
    )?;
    let checkpoint: i64 = tx.query_row(
        "SELECT id FROM checkpoints WHERE session_id = ?1 AND user_seq = ?2",
        params![turn.session, turn.user_seq],
        |r| r.get(0),
    )?;
    let hashes = turn.changes.iter().flat_map(|c| [c.before.hash(), c.after.hash()]).flatten();
    let ids = blobs::ids_for_use(tx, hashes, now)?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO checkpoint_changes (checkpoint_id, path, tool, call_id,
             before_kind, before_blob, before_mode, before_size, before_mtime_ns,
             after_kind, after_blob, after_mode, after_size, after_mtime_ns, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?;
    for change in &turn.changes {
        let before = resolve(&change.before, &ids);
        let after = resolve(&change.after, &ids);
        let (bk, bm, bs, bt) = before.0.columns();
        let (ak, am, asz, at) = after.0.columns();
        insert.execute(params![
            checkpoint,
            change.path,
            change.tool,
            change.call_id,
            bk,
            before.1,
            bm,
            bs,
            bt,
            ak,
            after.1,
            am,
            asz,
            at,
            created
        ])?;
    }
    Ok(())
}

/// The state as it can be stored: a content the store no longer knows becomes `Missing`.
fn resolve(state: &PathState, ids: &std::collections::HashMap<ContentHash, i64>) -> (PathState, Option<i64>) {
    match state.hash() {
        None => (state.clone(), None),
        Some(hash) => match ids.get(&hash) {
            Some(id) => (state.clone(), Some(*id)),
            None => {
                tracing::warn!(?hash, "a checkpoint content vanished before its change was recorded");
                (PathState::Unkept { reason: Unkept::Missing, size: 0, mtime_ns: 0 }, None)
            }
        },
    }
}

fn update_manifest(tx: &Connection, delta: &ManifestDelta, now: i64) -> Result<(), StoreError> {
    let ids = blobs::ids_for_use(tx, delta.upserts.iter().map(|e| e.hash), now)?;
    let mut upsert = tx.prepare_cached(
        "INSERT INTO file_manifest (project_id, path, size, mtime_ns, ctime_ns, ino, mode, blob_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT(project_id, path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
             ctime_ns = excluded.ctime_ns, ino = excluded.ino, mode = excluded.mode, blob_id = excluded.blob_id",
    )?;
    for e in &delta.upserts {
        let Some(id) = ids.get(&e.hash) else { continue };
        upsert.execute(params![
            delta.project.0,
            e.path,
            e.size as i64,
            e.mtime_ns,
            e.ctime_ns,
            e.ino as i64,
            e.mode as i64,
            id
        ])?;
    }
    let mut remove = tx.prepare_cached("DELETE FROM file_manifest WHERE project_id = ?1 AND path = ?2")?;
    for path in &delta.removals {
        remove.execute(params![delta.project.0, path])?;
    }
    Ok(())
}

/// The first non-empty line of a stored user message, clipped for a picker.
fn prompt_line(json: &str) -> String {
    let text = serde_json::from_str::<Vec<crate::conversation::Block>>(json)
        .map(|blocks| {
            blocks
                .iter()
                .find_map(|b| match b {
                    crate::conversation::Block::Text { text } if !text.trim().is_empty() => Some(text.clone()),
                    _ => None,
                })
                .unwrap_or_default()
        })
        .unwrap_or_default();
    crate::conversation::clip(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim(), 100)
}

#[cfg(test)]
#[path = "checkpoints_tests.rs"]
mod tests;

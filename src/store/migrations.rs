//! Versioned schema migrations, tracked in SQLite's `user_version`. Each step runs in its own
//! transaction; steps are only ever appended.

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

const STEPS: &[&str] = &[
    // 1: projects, sessions, messages, full tool results, usage per request.
    r#"
    CREATE TABLE projects (
        id          INTEGER PRIMARY KEY,
        root        TEXT NOT NULL UNIQUE,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        title       TEXT NOT NULL DEFAULT '',
        provider    TEXT NOT NULL,
        model       TEXT NOT NULL,
        mode        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    );
    CREATE INDEX sessions_by_project ON sessions(project_id, updated_at);
    CREATE TABLE messages (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
        content     TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        UNIQUE (session_id, seq)
    );
    CREATE TABLE tool_results (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        call_id     TEXT NOT NULL,
        tool        TEXT NOT NULL,
        arguments   TEXT NOT NULL,
        output      TEXT NOT NULL,
        is_error    INTEGER NOT NULL,
        exit_code   INTEGER,
        diff        TEXT,
        duration_ms INTEGER NOT NULL,
        created_at  TEXT NOT NULL
    );
    CREATE INDEX tool_results_by_call ON tool_results(session_id, call_id);
    CREATE TABLE usage (
        id                          INTEGER PRIMARY KEY,
        session_id                  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        message_id                  INTEGER REFERENCES messages(id) ON DELETE SET NULL,
        purpose                     TEXT NOT NULL,
        model                       TEXT NOT NULL,
        input_tokens                INTEGER NOT NULL,
        output_tokens               INTEGER NOT NULL,
        cache_read_input_tokens     INTEGER NOT NULL,
        cache_creation_input_tokens INTEGER NOT NULL,
        created_at                  TEXT NOT NULL
    );
    CREATE INDEX usage_by_session ON usage(session_id, id);
    "#,
    // 2: memories, per project (or global when project_id is NULL).
    r#"
    CREATE TABLE memories (
        id           INTEGER PRIMARY KEY,
        project_id   INTEGER REFERENCES projects(id) ON DELETE CASCADE,
        kind         TEXT NOT NULL CHECK (kind IN ('project', 'user', 'decision', 'compaction')),
        class        TEXT NOT NULL CHECK (class IN ('priority', 'durable', 'working')),
        pinned       INTEGER NOT NULL DEFAULT 0,
        title        TEXT NOT NULL,
        content      TEXT NOT NULL,
        session_id   TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        expires_at   TEXT
    );
    CREATE INDEX memories_by_project ON memories(project_id, created_at);
    "#,
    // 3: the context state that turns stored history into the sent view, and a log of
    // compactions.
    r#"
    CREATE TABLE context_state (
        session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        state       TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    );
    CREATE TABLE compactions (
        id             INTEGER PRIMARY KEY,
        session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        trigger        TEXT NOT NULL,
        through_seq    INTEGER NOT NULL,
        tokens_before  INTEGER NOT NULL,
        tokens_after   INTEGER NOT NULL,
        summary        TEXT NOT NULL,
        created_at     TEXT NOT NULL
    );
    CREATE INDEX compactions_by_session ON compactions(session_id, id);
    "#,
    // 4: full-text search over memories and over every message (recall).
    r#"
    CREATE VIRTUAL TABLE memories_fts USING fts5(title, content, content='memories', content_rowid='id');
    INSERT INTO memories_fts(rowid, title, content) SELECT id, title, content FROM memories;
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, title, content) VALUES (new.id, new.title, new.content);
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF title, content ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
        INSERT INTO memories_fts(rowid, title, content) VALUES (new.id, new.title, new.content);
    END;
    CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='', contentless_delete=1);
    INSERT INTO messages_fts(rowid, text)
        SELECT m.id, (SELECT group_concat(COALESCE(json_extract(b.value, '$.text'), substr(json_extract(b.value, '$.content'), 1, 4000)), ' ')
                      FROM json_each(m.content) b)
        FROM messages m;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        DELETE FROM messages_fts WHERE rowid = old.id;
    END;
    "#,
    // 5: hierarchical segments of sessions (level 0 at topic shifts, parents roll up ten).
    r#"
    CREATE TABLE segments (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        level       INTEGER NOT NULL,
        first_seq   INTEGER NOT NULL,
        last_seq    INTEGER NOT NULL,
        tokens      INTEGER NOT NULL,
        summary     TEXT,
        parent_id   INTEGER REFERENCES segments(id) ON DELETE SET NULL,
        created_at  TEXT NOT NULL
    );
    CREATE INDEX segments_by_session ON segments(session_id, level, first_seq);
    "#,
    // 6: whether a recorded call ran at all (refused, denied, interrupted calls did not).
    r#"
    ALTER TABLE tool_results ADD COLUMN not_run INTEGER NOT NULL DEFAULT 0;
    "#,
    // 7: checkpoints. File contents by SHA-256 (shared by every checkpoint and the project
    // manifest; dropped by the size cap oldest-used first, the row kept so a rewind can say
    // why), one checkpoint per turn with the before/after state of each path a tool touched,
    // the manifest of each project's tree as last scanned, and the ranges of messages a
    // conversation rewind took out of what is sent.
    r#"
    CREATE TABLE blobs (
        id           INTEGER PRIMARY KEY,
        hash         BLOB NOT NULL UNIQUE,
        size         INTEGER NOT NULL,
        stored_size  INTEGER NOT NULL,
        codec        TEXT NOT NULL CHECK (codec IN ('raw', 'deflate')),
        last_used    INTEGER NOT NULL,
        dropped_at   TEXT
    );
    CREATE INDEX blobs_by_use ON blobs(last_used);
    CREATE TABLE blob_data (
        blob_id  INTEGER PRIMARY KEY REFERENCES blobs(id) ON DELETE CASCADE,
        data     BLOB NOT NULL
    );
    CREATE TABLE checkpoint_totals (
        id            INTEGER PRIMARY KEY CHECK (id = 1),
        stored_bytes  INTEGER NOT NULL
    );
    INSERT INTO checkpoint_totals (id, stored_bytes) VALUES (1, 0);
    CREATE TRIGGER blobs_total_insert AFTER INSERT ON blobs BEGIN
        UPDATE checkpoint_totals SET stored_bytes = stored_bytes + new.stored_size WHERE id = 1;
    END;
    CREATE TRIGGER blobs_total_delete AFTER DELETE ON blobs BEGIN
        UPDATE checkpoint_totals SET stored_bytes = stored_bytes - old.stored_size WHERE id = 1;
    END;
    CREATE TRIGGER blobs_total_update AFTER UPDATE OF stored_size ON blobs BEGIN
        UPDATE checkpoint_totals SET stored_bytes = stored_bytes - old.stored_size + new.stored_size WHERE id = 1;
    END;
    CREATE TABLE checkpoints (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        user_seq    INTEGER NOT NULL,
        created_at  TEXT NOT NULL,
        UNIQUE (session_id, user_seq)
    );
    CREATE TABLE checkpoint_changes (
        id               INTEGER PRIMARY KEY,
        checkpoint_id    INTEGER NOT NULL REFERENCES checkpoints(id) ON DELETE CASCADE,
        path             TEXT NOT NULL,
        tool             TEXT NOT NULL,
        call_id          TEXT NOT NULL,
        before_kind      TEXT NOT NULL,
        before_blob      INTEGER REFERENCES blobs(id),
        before_mode      INTEGER,
        before_size      INTEGER,
        before_mtime_ns  INTEGER,
        after_kind       TEXT NOT NULL,
        after_blob       INTEGER REFERENCES blobs(id),
        after_mode       INTEGER,
        after_size       INTEGER,
        after_mtime_ns   INTEGER,
        reverted_at      TEXT,
        created_at       TEXT NOT NULL
    );
    CREATE INDEX checkpoint_changes_by_checkpoint ON checkpoint_changes(checkpoint_id, id);
    CREATE INDEX checkpoint_changes_by_before ON checkpoint_changes(before_blob);
    CREATE INDEX checkpoint_changes_by_after ON checkpoint_changes(after_blob);
    CREATE TABLE file_manifest (
        project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        path        TEXT NOT NULL,
        size        INTEGER NOT NULL,
        mtime_ns    INTEGER NOT NULL,
        ctime_ns    INTEGER NOT NULL,
        ino         INTEGER NOT NULL,
        mode        INTEGER NOT NULL,
        blob_id     INTEGER NOT NULL REFERENCES blobs(id),
        PRIMARY KEY (project_id, path)
    ) WITHOUT ROWID;
    CREATE INDEX file_manifest_by_blob ON file_manifest(blob_id);
    CREATE TRIGGER checkpoint_changes_release AFTER DELETE ON checkpoint_changes BEGIN
        DELETE FROM blobs WHERE id IN (old.before_blob, old.after_blob)
            AND NOT EXISTS (SELECT 1 FROM checkpoint_changes c WHERE c.before_blob = blobs.id)
            AND NOT EXISTS (SELECT 1 FROM checkpoint_changes c WHERE c.after_blob = blobs.id)
            AND NOT EXISTS (SELECT 1 FROM file_manifest m WHERE m.blob_id = blobs.id);
    END;
    CREATE TRIGGER file_manifest_release AFTER DELETE ON file_manifest BEGIN
        DELETE FROM blobs WHERE id = old.blob_id
            AND NOT EXISTS (SELECT 1 FROM checkpoint_changes c WHERE c.before_blob = blobs.id)
            AND NOT EXISTS (SELECT 1 FROM checkpoint_changes c WHERE c.after_blob = blobs.id)
            AND NOT EXISTS (SELECT 1 FROM file_manifest m WHERE m.blob_id = blobs.id);
    END;
    CREATE TRIGGER file_manifest_release_on_update AFTER UPDATE OF blob_id ON file_manifest
    WHEN old.blob_id != new.blob_id BEGIN
        DELETE FROM blobs WHERE id = old.blob_id
            AND NOT EXISTS (SELECT 1 FROM checkpoint_changes c WHERE c.before_blob = blobs.id)
            AND NOT EXISTS (SELECT 1 FROM checkpoint_changes c WHERE c.after_blob = blobs.id)
            AND NOT EXISTS (SELECT 1 FROM file_manifest m WHERE m.blob_id = blobs.id);
    END;
    CREATE TABLE message_rewinds (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        first_seq   INTEGER NOT NULL,
        last_seq    INTEGER NOT NULL,
        created_at  TEXT NOT NULL
    );
    CREATE INDEX message_rewinds_by_session ON message_rewinds(session_id, first_seq);
    "#,
    // 8: what allowed or refused each call (a rule, the mode, the user, the sandbox), as the
    // transcript's approval line shows it; and who approved saving a global memory.
    r#"
    ALTER TABLE tool_results ADD COLUMN decided_by TEXT;
    ALTER TABLE memories ADD COLUMN approved_by TEXT;
    "#,
    // 9: subagents' sessions hang under the session that started them (deleted with it), with
    // the agent type they ran as; a session's task list (the todo tool's), as JSON.
    r#"
    ALTER TABLE sessions ADD COLUMN parent_session TEXT REFERENCES sessions(id) ON DELETE CASCADE;
    ALTER TABLE sessions ADD COLUMN agent_type TEXT;
    ALTER TABLE sessions ADD COLUMN todo TEXT;
    CREATE INDEX sessions_by_parent ON sessions(parent_session);
    "#,
    // 10: what each agent request carried, for the session report: the window and thresholds
    // in force, the context in four parts (as sent, summing to the prompt tokens the provider
    // reported), what the pipeline did since the request before (JSON) and the cache break the
    // request showed, if any (JSON).
    r#"
    CREATE TABLE request_figures (
        usage_id        INTEGER PRIMARY KEY REFERENCES usage(id) ON DELETE CASCADE,
        window          INTEGER NOT NULL,
        effective       INTEGER NOT NULL,
        warning         INTEGER NOT NULL,
        auto_compact    INTEGER NOT NULL,
        blocking        INTEGER NOT NULL,
        system_tokens   INTEGER NOT NULL,
        memory_tokens   INTEGER NOT NULL,
        summary_tokens  INTEGER NOT NULL,
        message_tokens  INTEGER NOT NULL,
        stages          TEXT NOT NULL DEFAULT '[]',
        cache_break     TEXT
    );
    "#,
    // 11: what a resumed session needs to show the figures the live one showed: each call's
    // one-line summary as its tool gave it; the `task` call that started a subagent's session;
    // the rough tokens of the system prompt and tools a request carried (the estimate is
    // calibrated against them, whatever the tools are when the session is opened again).
    r#"
    ALTER TABLE tool_results ADD COLUMN summary TEXT;
    ALTER TABLE sessions ADD COLUMN parent_call TEXT;
    ALTER TABLE usage ADD COLUMN overhead_tokens INTEGER;
    "#,
];

pub const LATEST: i64 = STEPS.len() as i64;

/// Brings the schema to [`LATEST`]. Each step reads the version inside its own IMMEDIATE
/// transaction, so two processes opening a new database at once never run a step twice.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    // Up to date, the common case: no write lock needed to see it.
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current == LATEST {
        return Ok(());
    }
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if current > LATEST {
            return Err(StoreError::TooNew { found: current, known: LATEST });
        }
        let Some(sql) = STEPS.get(current as usize) else { return Ok(()) };
        let version = current + 1;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
        tracing::info!(version, "database migrated");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrating_twice_is_a_no_op_and_newer_schemas_are_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(v, LATEST);
        conn.pragma_update(None, "user_version", LATEST + 1).unwrap();
        assert!(matches!(migrate(&mut conn), Err(StoreError::TooNew { .. })));
    }
}

//! The agent's side of memory: the memory tools' access (save with twin detection, search over
//! memories, past messages and this session's saved tool outputs), the memory block frozen per
//! session, the durable memories a compaction's reply carries, and auto-recall for prompts once
//! history has been compacted away.

use std::collections::HashSet;
use std::sync::Arc;

use super::Worker;
use crate::agent::events::NoticeLevel;
use crate::agent::session_state::SessionState;
use crate::agent::workplace::Workplace;
use crate::config::Redactor;
use crate::context::{PromptSnapshot, fts_query};
use crate::conversation::{MemoryKind, RetentionClass, clip, floor_char_boundary};
use crate::memory::{Merge, build_block, consolidation, expired, merge_decision, parse_extraction};
use crate::store::{MemoryRecord, MessageHit, NewMemory, ProjectId, Store};
use crate::tools::{MemoryAccess, MemoryDraft};

/// The memory tools' view of one session.
pub(super) struct AgentMemory {
    pub store: Arc<Store>,
    pub project: ProjectId,
    pub session: String,
    pub redactor: Redactor,
    /// Seqs of this session's messages the model sees verbatim: not worth finding again.
    pub visible: HashSet<i64>,
    /// Who approved this call, when it needed approval (a global save always does): kept
    /// with a global memory so `/memories` can say who let it in.
    pub approved_by: Option<String>,
}

/// Fragments of earlier sessions in the frozen block (KosmoKrator's session recall: three).
const SESSION_RECALL_HITS: usize = 3;

fn now_utc() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// Save a memory, or update the one it duplicates. A project memory's twin is looked for among
/// this project's memories only (a project's detail must not rewrite what every project sees);
/// a global one's among both, and a project twin it updates becomes global. Returns the answer
/// for the model.
fn save_memory(
    store: &Store,
    project: ProjectId,
    session: &str,
    approved_by: Option<&str>,
    draft: MemoryDraft<'_>,
) -> Result<String, String> {
    let MemoryDraft { kind, class, title, content, global } = draft;
    // The permission rules make a global save ask in every mode; this holds even if a caller
    // ever bypassed them: a memory every project sees never gets in unapproved.
    if global && approved_by.is_none() {
        return Err(
            "a global memory needs the user's approval, and this call had none; save it for this project instead"
                .into(),
        );
    }
    let scope = if global { ", global" } else { "" };
    let existing: Vec<MemoryRecord> = store
        .memories(project)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|m| m.kind != MemoryKind::Compaction && (global || !m.global))
        .collect();
    match merge_decision(kind, title, content, &existing) {
        Merge::Update(id) => {
            store.update_memory(project, id, title, content).map_err(|e| e.to_string())?;
            if global && existing.iter().any(|m| m.id == id && !m.global) {
                store.set_memory_global(project, id, true, approved_by).map_err(|e| e.to_string())?;
            }
            Ok(format!("Updated memory #{id} ({kind}{scope}): {title}{}", held_back(title, content)))
        }
        Merge::Insert => {
            let expires = crate::memory::expiry(class, now_utc());
            let m = store
                .create_memory(NewMemory {
                    project: (!global).then_some(project),
                    kind,
                    class,
                    title,
                    content,
                    session_id: Some(session),
                    expires_at: expires.as_deref(),
                    approved_by,
                })
                .map_err(|e| e.to_string())?;
            Ok(format!("Saved memory #{} ({kind}, {class}{scope}): {title}{}", m.id, held_back(title, content)))
        }
    }
}

/// What a save answers when the memory is quarantined: it is kept, not injected.
fn held_back(title: &str, content: &str) -> String {
    match crate::context::scan_injection(&format!("{title}\n{content}")) {
        Some(why) => format!(
            ". It is quarantined ({why}): it will not be given to the model in later sessions unless the user pins it in /memories"
        ),
        None => String::new(),
    }
}

/// A recalled fragment as it may be shown to the model: withheld, with why, when it carries
/// instructions aimed at the model.
fn recalled(text: String) -> String {
    match crate::context::scan_injection(&text) {
        Some(why) => format!("(withheld: {why})"),
        None => text,
    }
}

/// Up to `max_chars` of `text` around the line that holds the most of the query's words (the
/// evidence, not the first place a common word occurs).
fn snippet(text: &str, query: &str, max_chars: usize) -> String {
    let words = crate::context::terms(query);
    let mut at = 0;
    let mut best = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let lower = line.to_lowercase();
        let hits = words.iter().filter(|w| lower.contains(w.as_str())).count();
        if hits > best {
            best = hits;
            at = offset;
        }
        offset += line.len();
    }
    let start = floor_char_boundary(text, at.saturating_sub(max_chars / 3));
    let end = floor_char_boundary(text, (start + max_chars).min(text.len()));
    let body = text[start..end].split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{}{body}{}", if start > 0 { "…" } else { "" }, if end < text.len() { "…" } else { "" })
}

fn render_hit(h: &MessageHit, query: &str, max_chars: usize) -> String {
    let title = if h.session_title.is_empty() { "untitled session".to_string() } else { clip(&h.session_title, 50) };
    format!(
        "- [{}, “{title}”, {}] {}",
        h.created_at.get(..10).unwrap_or(""),
        h.role,
        recalled(snippet(&h.text, query, max_chars))
    )
}

impl MemoryAccess for AgentMemory {
    fn save(&self, draft: MemoryDraft<'_>) -> Result<String, String> {
        let title = self.redactor.redact(&crate::context::redact_secrets(draft.title)).into_owned();
        let content = self.redactor.redact(&crate::context::redact_secrets(draft.content)).into_owned();
        let draft = MemoryDraft { title: &title, content: &content, ..draft };
        save_memory(&self.store, self.project, &self.session, self.approved_by.as_deref(), draft)
    }

    fn search(&self, query: &str, limit: usize) -> Result<String, String> {
        let Some(fts) = fts_query(query) else {
            return Ok(format!("Nothing to search for in {query:?}: use distinctive words."));
        };
        let now = now_utc();
        let memories: Vec<MemoryRecord> = self
            .store
            .search_memories(self.project, &fts, limit)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|m| !expired(m, now))
            .collect();
        let skip = |session: &str, seq: i64| session == self.session && self.visible.contains(&seq);
        let hits = self.store.search_messages(self.project, &fts, limit, &skip).map_err(|e| e.to_string())?;
        // This session's saved outputs, whole: what the message index and a truncated result
        // leave out.
        let words: Vec<String> = crate::context::terms(query).into_iter().collect();
        let outputs = self.store.search_tool_outputs(&self.session, &words, 3).map_err(|e| e.to_string())?;
        if memories.is_empty() && hits.is_empty() && outputs.is_empty() {
            return Ok(format!("No memories or past messages match {query:?}."));
        }
        let mut out = String::new();
        if !memories.is_empty() {
            out.push_str("Memories:\n");
            for m in &memories {
                let body = match crate::memory::quarantine(m).filter(|_| !m.pinned) {
                    Some(why) => format!("(quarantined, withheld until the user pins it: {why})"),
                    None => format!("{}: {}", m.title, clip(&m.content, 400)),
                };
                out.push_str(&format!("- #{} [{}, {}] {body}\n", m.id, m.kind, m.class));
            }
        }
        if !hits.is_empty() {
            out.push_str(if out.is_empty() { "Past messages:\n" } else { "\nPast messages:\n" });
            for h in &hits {
                out.push_str(&render_hit(h, query, 300));
                out.push('\n');
            }
        }
        if !outputs.is_empty() {
            out.push_str(if out.is_empty() { "" } else { "\n" });
            out.push_str("Full outputs of this session's tool calls:\n");
            for o in &outputs {
                out.push_str(&format!(
                    "- [message {}, {} call {}] {}\n",
                    o.seq,
                    o.tool,
                    o.call_id,
                    recalled(snippet(&self.redactor.redact(&o.output), query, 400))
                ));
            }
        }
        Ok(out.trim_end().to_string())
    }
}

/// The memory tools' view of `session`, in `place`, as it stands now.
pub(super) fn memory_access(place: &Workplace, session: &SessionState) -> AgentMemory {
    AgentMemory {
        store: place.store().clone(),
        project: place.project(),
        session: session.id().to_string(),
        redactor: session.redactor().clone(),
        visible: session.visible_seqs(),
        approved_by: None,
    }
}

impl Worker {
    /// The memories to inject for `query`: unexpired, not this session's own summaries.
    fn memory_block_for(&self, query: &str) -> (String, Vec<i64>) {
        let now = now_utc();
        let memories: Vec<MemoryRecord> = match self.place.store().memories(self.place.project()) {
            Ok(all) => {
                // This session's own summaries are already in its continuation message.
                let own_summary = |m: &MemoryRecord| {
                    m.kind == MemoryKind::Compaction && m.session_id.as_deref() == Some(self.session.id())
                };
                all.into_iter().filter(|m| !expired(m, now) && !own_summary(m)).collect()
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read memories");
                Vec::new()
            }
        };
        match build_block(&memories, query, self.place.config().memory.max_injected, crate::prompt::MEMORIES_PREAMBLE) {
            Some(block) => (block.text, block.ids),
            None => (String::new(), Vec::new()),
        }
    }

    /// Freeze the memory block and the environment for the session, the first time a request is
    /// built (and the environment again when the day changes). Persisted, so a resume sends
    /// the same bytes. Returns a reason when the frozen prompt changed.
    pub(super) fn ensure_prompt_snapshot(&mut self) -> Option<String> {
        let mut snapshot = self.session.pipeline().state().prompt.clone();
        let today = chrono::Local::now().date_naive();
        let today_text = today.format("%Y-%m-%d").to_string();
        let mut changed = None;
        if snapshot.environment_date.as_deref() != Some(today_text.as_str()) || snapshot.environment.is_none() {
            if snapshot.environment.is_some() {
                changed = Some("a new day (the date in the environment changed)".to_string());
            }
            let env = crate::prompt::Environment::detect(self.place.root(), self.place.cwd(), today).with_git_status();
            snapshot.environment = Some(env.render());
            snapshot.environment_date = Some(today_text);
        }
        if snapshot.memory_block.is_none() {
            let query = self
                .session
                .pipeline()
                .ledger()
                .entries()
                .iter()
                .find(|e| e.role() == crate::conversation::Role::User)
                .map(|e| e.message.text())
                .unwrap_or_default();
            let (mut text, ids) = self.memory_block_for(&query);
            if let Some(recall) = self.session_recall(&query) {
                if text.is_empty() {
                    text = format!("{}\n", crate::prompt::MEMORIES_PREAMBLE.trim_end());
                }
                text.push_str(&recall);
            }
            snapshot.memory_block = Some(text);
            snapshot.memory_ids = ids;
        }
        if snapshot != self.session.pipeline().state().prompt {
            self.session.pipeline_mut().set_prompt_snapshot(snapshot);
            self.session.save_state();
        }
        changed
    }

    /// Fragments of earlier sessions of the project that match the session's first request
    /// (KosmoKrator's session recall: at most three), frozen with the memory block.
    fn session_recall(&self, query: &str) -> Option<String> {
        let fts = fts_query(query)?;
        // Not this session's own family: a subagent would otherwise find its parent's request
        // and its siblings' briefs, which its parent brief already carries or which are not its job.
        let family = self.session_family();
        let skip = |session: &str, _: i64| family.contains(session);
        let hits = self.place.store().search_messages(self.place.project(), &fts, SESSION_RECALL_HITS, &skip).ok()?;
        // A fragment that carries instructions for the model is left out of the frozen block.
        let hits: Vec<MessageHit> = hits
            .into_iter()
            .filter(|h| crate::context::scan_injection(&snippet(&h.text, query, 300)).is_none())
            .collect();
        if hits.is_empty() {
            return None;
        }
        let mut text = String::from("\n## From earlier sessions\n");
        for h in &hits {
            text.push_str(&render_hit(h, query, 300));
            text.push('\n');
        }
        Some(text)
    }

    /// This session, the session it was delegated from (up to the main agent's) and every
    /// subagent session under that one.
    fn session_family(&self) -> HashSet<String> {
        let store = self.place.store();
        let mut root = self.session.id().to_string();
        let mut family = HashSet::from([root.clone()]);
        while let Ok(Some(parent)) = store.parent_session(&root) {
            // A loop in the stored tree would be a bug; stop rather than spin.
            if !family.insert(parent.clone()) {
                break;
            }
            root = parent;
        }
        let mut open = vec![root];
        while let Some(id) = open.pop() {
            for child in store.child_sessions(&id).unwrap_or_default() {
                if family.insert(child.clone()) {
                    open.push(child);
                }
            }
        }
        family
    }

    /// After a compaction the memory block is built again, for the conversation as it is now.
    pub(super) fn rebuild_memory_block(&mut self) {
        let query = self
            .session
            .pipeline()
            .ledger()
            .entries()
            .iter()
            .rev()
            .find(|e| e.role() == crate::conversation::Role::User)
            .map(|e| e.message.text())
            .unwrap_or_default();
        let (text, ids) = self.memory_block_for(&query);
        let snapshot = PromptSnapshot {
            memory_block: Some(text),
            memory_ids: ids,
            ..self.session.pipeline().state().prompt.clone()
        };
        self.session.pipeline_mut().set_prompt_snapshot(snapshot);
    }

    /// Save the durable memories a compaction's reply carried (its `## Memories` section: no
    /// call of its own), updating twins, then consolidate and say what was kept.
    pub(super) fn save_memories(&mut self, sections: &[String]) {
        if !self.place.config().memory.extract {
            return;
        }
        let store = self.place.store();
        let project = self.place.project();
        let mut kept = Vec::new();
        for m in sections.iter().flat_map(|json| parse_extraction(json)) {
            let draft = MemoryDraft {
                kind: m.kind,
                class: RetentionClass::Durable,
                title: &m.title,
                content: &m.content,
                global: false,
            };
            match save_memory(store, project, self.session.id(), None, draft) {
                Ok(answer) => kept.push(answer),
                Err(e) => tracing::error!(error = %e, "could not save a remembered fact"),
            }
        }
        if kept.is_empty() {
            return;
        }
        if let Ok(all) = store.memories(project) {
            for id in consolidation(&all, now_utc()) {
                let _ = store.delete_memory(project, id);
            }
        }
        self.link.notice(NoticeLevel::Info, format!("remembered from this session: {}", kept.join("; ")));
    }

    /// Search earlier messages for a new prompt once history has been compacted or trimmed
    /// away, and attach what is found to the prompt (kern's auto-recall).
    pub(super) fn auto_recall(&mut self, seq: i64, prompt: &str) {
        let state = self.session.pipeline().state();
        if !self.place.config().memory.auto_recall || (state.summary.is_none() && state.trimmed.is_empty()) {
            return;
        }
        // A request of its own brings its own context: recall is for a short prompt that points
        // back at earlier work ("do it like the parser fix this morning").
        if crate::context::terms(prompt).len() >= self.place.config().context.new_work_min_terms {
            return;
        }
        let Some(fts) = fts_query(prompt) else { return };
        // What the model already sees — verbatim, or carried into the continuation — is not
        // worth finding again.
        let mut shown: HashSet<i64> = self.session.visible_seqs();
        shown.extend(state.carried.messages.iter().map(|(s, _)| *s));
        let skip = |session: &str, s: i64| session == self.session.id() && (shown.contains(&s) || s == seq);
        let hits = match self.place.store().search_messages(self.place.project(), &fts, 6, &skip) {
            Ok(hits) => hits,
            Err(e) => {
                tracing::error!(error = %e, "recall search failed");
                return;
            }
        };
        if hits.is_empty() {
            return;
        }
        let budget_chars = (self.place.config().memory.recall_max_tokens as f64
            * self.place.config().context.chars_per_token) as usize;
        let mut text = String::from(
            "<recall>\nEarlier messages that match this request (from this or past sessions of the project; they may be out of date):\n",
        );
        for h in hits.iter().filter(|h| crate::context::scan_injection(&snippet(&h.text, prompt, 400)).is_none()) {
            let line = render_hit(h, prompt, 400);
            if text.len() + line.len() > budget_chars {
                break;
            }
            text.push_str(&line);
            text.push('\n');
        }
        text.push_str("</recall>");
        self.session.pipeline_mut().set_recall(seq, text);
        self.session.save_state();
    }
}

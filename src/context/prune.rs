//! Pruning (CONTEXT.md §4): from the warning threshold, old tool results of least value are
//! replaced by placeholders that still say what was done, and over-long arguments of old tool
//! calls are shrunk (with valid JSON).
//!
//! The seed's table gives each tool a *prunability* (bash 70 is pruned first, glob 10 last) and
//! says references *raise* a result's score so it is kept longer; both hold if a result's keep
//! value is `(100 − prunability) + 15 × references + 10 × decision`, pruned lowest first.
//! Fixed against the seed: protection counts tool groups, so one long user turn is prunable;
//! savings count the placeholder's own size.

use super::estimate::estimate_text_tokens;
use super::facts::{Effect, ToolFacts};
use super::ledger::Ledger;
use super::salient::error_lines;
use super::state::ContextState;
use crate::config::ContextConfig;
use crate::conversation::{Role, clip};

/// Keep the last this many tool groups even inside one long user turn (**cairn**).
pub const PROTECTED_TOOL_GROUPS: usize = 4;

/// The seed's constants are sized for 200k windows: 40k protected tokens and a 20k minimum are
/// most of a 32k model's window, so pruning could never run there. **cairn** scales them:
/// protection is at most a quarter of the effective window, the minimum at most a tenth.
fn scaled(config: &ContextConfig, effective: u64) -> (u64, u64) {
    (config.prune_protect_tokens.min(effective / 4), config.prune_min_savings_tokens.min(effective / 10))
}

fn prunability(tool: &str) -> u32 {
    match tool {
        "bash" => 70,
        "shell_read" => 65,
        "web_fetch" => 55,
        "grep" => 50,
        "web_search" => 40,
        "file_read" => 30,
        "file_edit" | "file_write" => 20,
        "glob" => 10,
        _ => 25,
    }
}

/// The placeholder that replaces a pruned result `content`: tool, target, and for commands
/// the whole command (up to a cap), its exit code and how long the output was; a result that
/// reported an error keeps its error lines.
pub fn placeholder(facts: &ToolFacts, content: &str, config: &ContextConfig) -> String {
    let lines = facts.lines;
    let failed = facts.is_error || facts.exit_code.is_some_and(|c| c != 0);
    let mut text = match &facts.effect {
        Effect::Command { command } => {
            let command = clip(command.trim(), config.placeholder_command_chars);
            let exit = facts.exit_code.map(|c| format!(" exit {c},")).unwrap_or_default();
            format!(
                "[Old {} output cleared: `{command}`{exit} {lines} lines; rerun a narrower command if needed]",
                facts.tool
            )
        }
        Effect::Read { path, range } => {
            let span = match (range.first, range.last) {
                (1, None) => String::new(),
                (a, None) => format!(" (lines {a}–end)"),
                (a, Some(b)) => format!(" (lines {a}–{b})"),
            };
            format!("[Old file_read output cleared for {path}{span}; read it again if needed]")
        }
        Effect::Search { pattern, scope } => {
            format!(
                "[Old {} output cleared for `{}` in {scope}; search again if needed]",
                facts.tool,
                clip(pattern, 60)
            )
        }
        Effect::List { pattern } => format!("[Old {} output cleared for `{}`]", facts.tool, clip(pattern, 60)),
        Effect::Write { path } => format!("[Old {} output cleared for {path}]", facts.tool),
        Effect::Other if facts.is_error => format!("[Old {} error output cleared]", facts.tool),
        Effect::Other => format!("[Old {} output cleared; run it again if needed]", facts.tool),
    };
    let unknown_exit = facts.exit_code.is_none() && matches!(facts.effect, Effect::Command { .. });
    if failed || unknown_exit {
        let errors = error_lines(content, config.placeholder_error_chars);
        if !errors.is_empty() {
            text.push_str("\nIts error lines, verbatim:\n");
            text.push_str(&errors.join("\n"));
        }
    }
    text
}

/// One change pruning decided, at ledger entry `index`, saving `saved` tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PruneAction {
    Replace { index: usize, call_id: String, text: String, saved: u64 },
    Shrink { index: usize, call_id: String, arguments: String, saved: u64 },
}

impl PruneAction {
    pub fn index(&self) -> usize {
        match self {
            PruneAction::Replace { index, .. } | PruneAction::Shrink { index, .. } => *index,
        }
    }

    pub fn saved(&self) -> u64 {
        match self {
            PruneAction::Replace { saved, .. } | PruneAction::Shrink { saved, .. } => *saved,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrunePlan {
    pub actions: Vec<PruneAction>,
    pub saved_tokens: u64,
    pub pruned_results: u64,
}

/// The first entry index pruning must not touch: the later of the start of the last
/// `prune_protect_user_turns` user turns and the start of the last [`PROTECTED_TOOL_GROUPS`]
/// tool groups.
pub fn protected_from(ledger: &Ledger, state: &ContextState, config: &ContextConfig) -> usize {
    let entries = ledger.entries();
    let visible_users: Vec<usize> =
        ledger.user_indices().iter().copied().filter(|&i| state.is_visible(entries[i].seq)).collect();
    let by_turns = match config.prune_protect_user_turns {
        0 => entries.len(),
        n if visible_users.len() >= n => visible_users[visible_users.len() - n],
        _ => 0,
    };
    let mut groups_seen = 0;
    let mut by_groups = 0;
    for (i, e) in entries.iter().enumerate().rev() {
        if e.role() == Role::Assistant && e.message.has_tool_calls() {
            groups_seen += 1;
            if groups_seen == PROTECTED_TOOL_GROUPS {
                by_groups = i;
                break;
            }
        }
    }
    by_turns.max(by_groups)
}

/// Decide what to prune to save at least `target` tokens (and never less than the configured
/// minimum: a small saving is not worth breaking the cache). `sent_tokens[i]` is what entry `i`
/// costs as currently sent.
pub fn plan(
    ledger: &Ledger,
    state: &ContextState,
    config: &ContextConfig,
    sent_tokens: &[u64],
    target: u64,
    effective: u64,
) -> PrunePlan {
    let (protect_tokens, min_savings) = scaled(config, effective);
    let cpt = ledger.chars_per_token();
    let entries = ledger.entries();
    let protect = protected_from(ledger, state, config);
    // A result a later visible repeat refers to stays: clearing it would bring the repeat back.
    let referenced: std::collections::HashSet<usize> =
        entries.iter().filter(|e| state.is_visible(e.seq)).flat_map(|e| e.identical_to.iter().copied()).collect();
    // Walking back from the protected boundary, a further budget of recent tool output stays.
    let mut candidates: Vec<(u32, usize, u64, String)> = Vec::new();
    let mut recent_output = 0u64;
    let mut shrinks: Vec<(usize, String, String, u64)> = Vec::new();
    for i in (0..protect).rev() {
        let e = &entries[i];
        if !state.is_visible(e.seq) {
            continue;
        }
        match e.role() {
            Role::Tool => {
                let Some(facts) = &e.facts else { continue };
                if state
                    .replacements
                    .get(&facts.call_id)
                    .is_some_and(|r| !matches!(r.kind, super::state::ReplacementKind::StaleWarning))
                {
                    continue;
                }
                if recent_output < protect_tokens {
                    recent_output += sent_tokens[i];
                    continue;
                }
                // Short results are what their exact lines are for, and save little.
                if sent_tokens[i] < config.prune_floor_tokens || referenced.contains(&i) {
                    continue;
                }
                let content = e.message.tool_result().map(|r| r.content.as_str()).unwrap_or_default();
                let text = placeholder(facts, content, config);
                let saved = sent_tokens[i]
                    .saturating_sub(estimate_text_tokens(text.len(), cpt) + super::estimate::MESSAGE_OVERHEAD_TOKENS);
                // A placeholder never outgrows what it replaces: the result's text and the
                // images it returned, which go with it.
                let images: usize =
                    e.message.images().map(|i| i.tokens() as usize * crate::conversation::IMAGE_CHARS_PER_TOKEN).sum();
                if saved == 0 || text.len() >= content.len() + images {
                    continue;
                }
                let value = (100 - prunability(&facts.tool)) + 15 * e.references + if e.decided_on { 10 } else { 0 };
                candidates.push((value, i, saved, text));
            }
            Role::Assistant => {
                for call in e.message.tool_calls() {
                    if call.arguments.len() > config.prune_max_argument_chars
                        && !state.shrunk_arguments.contains_key(&call.id)
                        && let Some(shrunk) = shrink_arguments(&call.arguments, config.prune_max_argument_chars)
                    {
                        let saved = estimate_text_tokens(call.arguments.len().saturating_sub(shrunk.len()), cpt);
                        shrinks.push((i, call.id.clone(), shrunk, saved));
                    }
                }
            }
            Role::User => {}
        }
    }
    let possible: u64 = candidates.iter().map(|c| c.2).sum::<u64>() + shrinks.iter().map(|s| s.3).sum::<u64>();
    if possible < min_savings.max(1) {
        return PrunePlan::default();
    }
    let target = target.max(min_savings);
    let mut plan = PrunePlan::default();
    // Shrinking arguments loses least: always take it first.
    for (index, call_id, arguments, saved) in shrinks {
        plan.saved_tokens += saved;
        plan.actions.push(PruneAction::Shrink { index, call_id, arguments, saved });
    }
    // Lowest value first; among equals, oldest first.
    candidates.sort_by_key(|&(value, i, _, _)| (value, i));
    for (_, i, saved, text) in candidates {
        if plan.saved_tokens >= target {
            break;
        }
        let Some(facts) = &entries[i].facts else { continue };
        plan.saved_tokens += saved;
        plan.pruned_results += 1;
        plan.actions.push(PruneAction::Replace { index: i, call_id: facts.call_id.clone(), text, saved });
    }
    plan
}

/// Arguments with every long string value cut to its start and an omission note, as valid
/// JSON; `None` when they do not parse or nothing would be shorter.
pub fn shrink_arguments(arguments: &str, max_chars: usize) -> Option<String> {
    let mut value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    let keep = (max_chars / 4).max(40);
    fn walk(v: &mut serde_json::Value, keep: usize) {
        match v {
            serde_json::Value::String(s) if s.chars().count() > keep * 2 => {
                let total = s.chars().count();
                let head: String = s.chars().take(keep).collect();
                *s = format!("{head}… [{} more characters omitted to save context]", total - keep);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|i| walk(i, keep)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|i| walk(i, keep)),
            serde_json::Value::String(_)
            | serde_json::Value::Null
            | serde_json::Value::Bool(_)
            | serde_json::Value::Number(_) => {}
        }
    }
    walk(&mut value, keep);
    let shrunk = value.to_string();
    (shrunk.len() < arguments.len()).then_some(shrunk)
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;

//! How each message of the ledger is sent, recomputed from the context state when it changes:
//! a clipped or pruned result, a result that repeats an earlier one as a reference to it, a
//! prompt with its recall, an assistant message with its arguments shrunk or clipped.

use std::sync::Arc;

use super::pipeline::Pipeline;
use super::prune::shrink_arguments;
use super::state::ReplacementKind;
use super::view;
use crate::conversation::{Block, Message, Role};

impl Pipeline {
    /// Recompute how entry `i` is sent from the state.
    pub(super) fn refresh(&mut self, i: usize) {
        let e = &self.ledger.entries()[i];
        if e.released {
            // Never shown again: nothing to send.
            self.sent[i] = None;
            return;
        }
        let clipped = self.state.clipped.get(&e.seq);
        let sent = match e.role() {
            Role::Tool if clipped.is_some() => e.message.tool_result().map(|r| {
                let mut r = r.clone();
                r.content = clipped.cloned().unwrap_or_default();
                Arc::new(Message::tool(r))
            }),
            Role::User if clipped.is_some() => clipped.map(|text| Arc::new(Message::user(text.clone()))),
            Role::User if self.state.recall.contains_key(&e.seq) => self
                .state
                .recall
                .get(&e.seq)
                .map(|recall| Arc::new(Message::user(format!("{}\n\n{}", e.message.text(), recall)))),
            Role::Tool => match e.facts.as_ref().and_then(|f| self.state.replacements.get(&f.call_id)) {
                Some(r) => e.message.tool_result().map(|result| {
                    let mut result = result.clone();
                    result.content = match r.kind {
                        ReplacementKind::StaleWarning => format!("{}\n{}", r.text, result.content),
                        ReplacementKind::Duplicate
                        | ReplacementKind::StaleRead
                        | ReplacementKind::SubsumedGrep
                        | ReplacementKind::Pruned => r.text.clone(),
                    };
                    Arc::new(Message::tool(result))
                }),
                None => self.reference_to_twin(i),
            },
            Role::Assistant => self.sent_arguments(&e.message),
            Role::User => None,
        };
        let counted = self.exact.tokens(sent.as_ref().unwrap_or(&e.message));
        self.sent_tokens[i] = match (counted, &sent) {
            (Some(exact), _) => exact,
            (None, Some(m)) => view::tokens_of(m, self.config.chars_per_token),
            (None, None) => e.tokens,
        };
        self.sent[i] = sent;
    }

    /// Whether result `j` is sent with its whole output (possibly behind a stale warning).
    fn shown_whole(&self, j: usize) -> bool {
        let e = &self.ledger.entries()[j];
        self.state.is_visible(e.seq)
            && !self.state.clipped.contains_key(&e.seq)
            && e.facts.as_ref().and_then(|f| self.state.replacements.get(&f.call_id)).is_none_or(|r| match r.kind {
                ReplacementKind::StaleWarning => true,
                ReplacementKind::Duplicate
                | ReplacementKind::StaleRead
                | ReplacementKind::SubsumedGrep
                | ReplacementKind::Pruned => false,
            })
    }

    /// Result `i` as a reference to an earlier identical output still shown whole, when there
    /// is one and the reference is shorter: the repeat says nothing new, and replacing it as it
    /// arrives changes nothing already sent. When the earlier copy leaves the view, the output
    /// is sent whole again (that change always falls inside the rewrite that removed it).
    fn reference_to_twin(&self, i: usize) -> Option<Arc<Message>> {
        let e = &self.ledger.entries()[i];
        let j = *e.identical_to.iter().find(|&&j| self.shown_whole(j))?;
        let result = e.message.tool_result()?;
        let twin = self.ledger.entries()[j].facts.as_ref()?;
        let text = format!(
            "[Same output as the earlier identical call {} above ({} lines); nothing changed]",
            twin.call_id,
            result.content.lines().count()
        );
        (text.len() < result.content.len()).then(|| {
            let mut r = result.clone();
            r.content = text;
            Arc::new(Message::tool(r))
        })
    }

    /// Recompute every result that repeats an earlier one: which copy is shown whole may have
    /// changed.
    pub(super) fn refresh_twins(&mut self) {
        for i in 0..self.ledger.len() {
            if !self.ledger.entries()[i].identical_to.is_empty() {
                self.refresh(i);
            }
        }
    }

    /// An assistant message as sent, when any of its calls is: arguments pruning shrank, and
    /// arguments over the cap clipped from the first request on (valid JSON, with a note).
    fn sent_arguments(&self, message: &Arc<Message>) -> Option<Arc<Message>> {
        let cap = self.config.max_sent_argument_chars;
        let changes = |id: &str, args: &str| -> Option<String> {
            match self.state.shrunk_arguments.get(id) {
                Some(shrunk) => Some(shrunk.clone()),
                None if args.len() > cap => {
                    Some(shrink_arguments(args, cap).unwrap_or_else(|| clipped_raw_arguments(args, cap)))
                }
                None => None,
            }
        };
        if !message.tool_calls().any(|c| changes(&c.id, &c.arguments).is_some()) {
            return None;
        }
        let mut m = (**message).clone();
        for block in &mut m.content {
            if let Block::ToolCall(call) = block
                && let Some(args) = changes(&call.id, &call.arguments)
            {
                call.arguments = args;
            }
        }
        Some(Arc::new(m))
    }
}

/// Arguments that do not parse as JSON, over the cap: sent as a JSON object holding their
/// start and a note, so the request stays valid.
fn clipped_raw_arguments(args: &str, cap: usize) -> String {
    let keep = crate::conversation::floor_char_boundary(args, cap / 4);
    serde_json::json!({
        "clipped_arguments": &args[..keep],
        "note": format!("{} more characters omitted to save context", args.len() - keep),
    })
    .to_string()
}

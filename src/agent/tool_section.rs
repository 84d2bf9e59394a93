//! The tools a request offers, as one section that stays byte-identical from request to
//! request: the built-in tools, `skill` when there are skills, then the MCP servers' tools —
//! listed themselves when their schemas fit the budget (`mcp.tool_budget_tokens`), or else
//! `tool_search` and `tool_call` in their place, so that ten servers cost a few hundred tokens.
//!
//! Where tools sit: providers cache by prefix, and the tools come first (Anthropic renders
//! tools, then system, then messages), so any change to this section re-writes the whole
//! cache. A schema the model loads through `tool_search` therefore arrives as that tool's
//! result, in the newest message, after the last breakpoint; the section itself changes only
//! when a server is first listed, switched on or off, or its tools change, and each of those
//! is announced as an expected cache break.

use std::sync::{Arc, Mutex};

use crate::context::estimate_text_tokens;
use crate::conversation::{Mode, ToolSpec};
use crate::mcp::McpHub;
use crate::prompt::Skill;
use crate::tools::mcp::tools_of;
use crate::tools::skill::SkillTool;
use crate::tools::tool_search::{ToolSearch, tool_call_spec};
use crate::tools::{Registry, Tool};

/// How the MCP tools are offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum McpOffer {
    /// No MCP tool is known (no server, or none listed yet).
    None,
    /// Listed themselves: their schemas fit the budget.
    Direct,
    /// Behind `tool_search` and `tool_call`.
    Search,
}

/// The tools one request offers, and which of the MCP servers' tool lists they were made from
/// (so the request that sends them is the one that tells the cache watch they changed).
#[derive(Clone, Debug)]
pub(crate) struct ToolsOffered {
    pub(crate) generation: u64,
    pub(crate) specs: Vec<ToolSpec>,
}

struct Built {
    generation: u64,
    registry: Arc<Registry>,
    offer: McpOffer,
}

pub(crate) struct ToolSection {
    base: Arc<Registry>,
    hub: McpHub,
    skills: Arc<Vec<Skill>>,
    budget_tokens: u64,
    chars_per_token: f64,
    built: Mutex<Option<Built>>,
    /// The generation the last request was built from.
    sent: std::sync::atomic::AtomicU64,
}

/// Tokens of a tool's spec, counted as the `/context` overhead counts them.
pub(crate) fn spec_tokens(spec: &ToolSpec, chars_per_token: f64) -> u64 {
    estimate_text_tokens(
        spec.name.len() + spec.description.len() + spec.input_schema.to_string().len(),
        chars_per_token,
    )
}

fn spec_of(tool: &dyn Tool) -> ToolSpec {
    ToolSpec { name: tool.name().to_string(), description: tool.description().to_string(), input_schema: tool.schema() }
}

impl ToolSection {
    pub(crate) fn new(
        base: Arc<Registry>,
        hub: McpHub,
        skills: Arc<Vec<Skill>>,
        budget_tokens: u64,
        chars_per_token: f64,
    ) -> ToolSection {
        ToolSection {
            base,
            hub,
            skills,
            budget_tokens,
            chars_per_token,
            built: Mutex::new(None),
            sent: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Just `base`: no MCP server, no skill.
    #[cfg(test)]
    pub(crate) fn plain(base: Arc<Registry>) -> ToolSection {
        let hub = McpHub::new(
            Default::default(),
            Default::default(),
            std::path::PathBuf::new(),
            Arc::new(|_: &str| Err("no servers here".to_string())),
            Arc::new(|_: &str| None),
            Arc::new(|_| {}),
        );
        ToolSection::new(base, hub, Arc::new(Vec::new()), 0, 4.0)
    }

    /// Build (or reuse) the registry for the hub's current tools.
    fn current<T>(&self, read: impl FnOnce(&Built) -> T) -> T {
        let generation = self.hub.generation();
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if built.as_ref().is_none_or(|b| b.generation != generation) {
            *built = Some(self.build(generation));
        }
        match built.as_ref() {
            Some(b) => read(b),
            // Just set above.
            None => read(&self.build(generation)),
        }
    }

    fn build(&self, generation: u64) -> Built {
        let mut extra: Vec<Arc<dyn Tool>> = Vec::new();
        if self.skills.iter().any(|s| s.model_invocable) {
            extra.push(Arc::new(SkillTool::new(self.skills.clone())));
        }
        let mcp = tools_of(&self.hub);
        let mcp_tokens: u64 = mcp.iter().map(|t| spec_tokens(&spec_of(t), self.chars_per_token)).sum();
        let offer = if mcp.is_empty() {
            McpOffer::None
        } else if mcp_tokens <= self.budget_tokens {
            McpOffer::Direct
        } else {
            McpOffer::Search
        };
        match offer {
            McpOffer::None => {}
            McpOffer::Direct => extra.extend(mcp.into_iter().map(|t| Arc::new(t) as Arc<dyn Tool>)),
            McpOffer::Search => {
                extra.push(Arc::new(ToolSearch::new(self.hub.clone())));
                // Resolvable by name (through tool_call) but not listed: see `specs`.
                extra.extend(mcp.into_iter().map(|t| Arc::new(t) as Arc<dyn Tool>));
            }
        }
        Built { generation, registry: Arc::new(self.base.extended(extra)), offer }
    }

    /// Whether the MCP tools changed since the last request (not counting the first), the
    /// request about to be sent offering the section of `generation`.
    pub(crate) fn changed_since_last_request(&self, generation: u64) -> bool {
        let before = self.sent.swap(generation, std::sync::atomic::Ordering::SeqCst);
        before != generation && before != 0
    }

    /// Every tool a call may name (MCP tools behind `tool_search` included).
    pub(crate) fn registry(&self) -> Arc<Registry> {
        self.current(|b| b.registry.clone())
    }

    /// The section as `mode` sends it, with the generation of the MCP servers' tools it holds.
    pub(crate) fn offered(&self, mode: Mode) -> ToolsOffered {
        self.current(|b| {
            let mut specs = b.registry.specs(mode);
            if b.offer == McpOffer::Search {
                specs.retain(|s| !s.name.starts_with("mcp__"));
                if mode != Mode::Ask {
                    specs.push(tool_call_spec());
                }
            }
            ToolsOffered { generation: b.generation, specs }
        })
    }
}

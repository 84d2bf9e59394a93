//! The set of tools a session offers, and which of them each mode sends.

use super::bash::Bash;
use super::bash_jobs::{BashOutput, BashStop};
use super::file_edit::FileEdit;
use super::file_read::FileRead;
use super::file_write::FileWrite;
use super::glob::Glob;
use super::grep::Grep;
use super::memory::{MemorySave, MemorySearch};
use super::web_fetch::WebFetch;
use super::{Access, Tool};
use crate::conversation::Mode;
use crate::conversation::ToolSpec;
use std::sync::Arc;

pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

impl Registry {
    /// The built-in tools, in the order the model sees them, with `bash` unconfined.
    #[cfg(test)]
    pub fn builtin() -> Registry {
        Registry::builtin_with(Bash::default())
    }

    /// The built-in tools with this `bash` (e.g. `Bash::sandboxed(policy)`).
    pub fn builtin_with(bash: Bash) -> Registry {
        Registry::new(vec![
            Box::new(FileRead),
            Box::new(Glob),
            Box::new(Grep),
            Box::new(FileWrite),
            Box::new(FileEdit),
            Box::new(bash),
            Box::new(BashOutput),
            Box::new(BashStop),
            Box::new(MemorySave),
            Box::new(MemorySearch),
            Box::new(WebFetch),
        ])
    }

    pub fn new(tools: Vec<Box<dyn Tool>>) -> Registry {
        Registry { tools: tools.into_iter().map(Arc::from).collect() }
    }

    /// These tools followed by `extra` (skills, MCP servers' tools), in that order.
    pub fn extended(&self, extra: Vec<Arc<dyn Tool>>) -> Registry {
        Registry { tools: self.tools.iter().cloned().chain(extra).collect() }
    }

    /// Add a tool after the others (the model sees it last).
    pub fn push(&mut self, tool: Box<dyn Tool>) {
        self.tools.push(Arc::from(tool));
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| t.as_ref())
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name())
    }

    /// The tools the model is told about in `mode`: none in ask mode; in plan mode the
    /// read-only and memory tools, and `bash`, whose commands the permission policy checks one
    /// by one against the read-only set (and which runs in the read-only sandbox); all in edit
    /// mode. Order is registration order, so the list is byte-stable from request to request
    /// (it sits in the cached prefix).
    pub fn specs(&self, mode: Mode) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter(|t| match mode {
                Mode::Ask => false,
                // web_fetch is offered (plan mode runs it where a rule allows its domain); other
                // commands than bash — MCP tools their server does not mark read-only — are not.
                Mode::Plan => {
                    t.access().is_read_only()
                        || t.access() == Access::Network
                        || (t.access() == Access::Execute && t.name() == "bash")
                }
                Mode::Edit => true,
            })
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                input_schema: t.schema(),
            })
            .collect()
    }

    pub fn access_of(&self, name: &str) -> Option<Access> {
        self.get(name).map(|t| t.access())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lists_the_tools_in_their_fixed_order_with_object_schemas() {
        let registry = Registry::builtin();
        let names: Vec<_> = registry.names().collect();
        assert_eq!(
            names,
            [
                "file_read",
                "glob",
                "grep",
                "file_write",
                "file_edit",
                "bash",
                "bash_output",
                "bash_stop",
                "memory_save",
                "memory_search",
                "web_fetch"
            ]
        );
        for name in names {
            let tool = registry.get(name).unwrap();
            let schema = tool.schema();
            assert_eq!(schema["type"], "object", "{name}");
            let properties = schema["properties"].as_object().unwrap();
            for required in schema["required"].as_array().unwrap() {
                assert!(properties.contains_key(required.as_str().unwrap()), "{name}: {required}");
            }
            assert!(tool.description().len() > 100, "{name} needs a real description");
        }
    }

    #[test]
    fn plan_mode_gets_the_read_only_tools_bash_and_the_memory_tools() {
        let names: Vec<_> = Registry::builtin().specs(Mode::Plan).into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "file_read",
                "glob",
                "grep",
                "bash",
                "bash_output",
                "bash_stop",
                "memory_save",
                "memory_search",
                "web_fetch"
            ]
        );
    }
}

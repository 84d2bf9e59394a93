//! The set of tools a session offers, and which of them each mode sends.

use super::{Access, Tool};
use crate::conversation::Mode;
use crate::llm::ToolSpec;

pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
}

impl Registry {
    pub fn new(tools: Vec<Box<dyn Tool>>) -> Registry {
        Registry { tools }
    }

    pub fn register(&mut self, tool: Box<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| t.as_ref())
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name())
    }

    /// The tools the model is told about in `mode`: none in ask mode, read-only and memory
    /// tools in plan mode, all in edit mode. Order is registration order, so the list is
    /// byte-stable from request to request (it sits in the cached prefix).
    pub fn specs(&self, mode: Mode) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter(|t| match mode {
                Mode::Ask => false,
                Mode::Plan => t.access().is_read_only(),
                Mode::Edit => true,
            })
            .map(|t| ToolSpec { name: t.name().to_string(), description: t.description().to_string(), input_schema: t.schema() })
            .collect()
    }

    pub fn access_of(&self, name: &str) -> Option<Access> {
        self.get(name).map(|t| t.access())
    }
}

//! The plain parts of a model request that several layers build: the system prompt's blocks
//! (`prompt` writes them) and the tools as the model sees them (`tools` describes them). `llm`
//! only puts them on the wire.

use serde::Serialize;

/// A piece of the system prompt. `cache_breakpoint` marks the end of a cacheable prefix
/// (Anthropic `cache_control`); OpenAI-compatible clients concatenate the blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemBlock {
    pub text: String,
    pub cache_breakpoint: bool,
}

/// A tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub input_schema: serde_json::Value,
}

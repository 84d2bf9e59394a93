//! A request's head: everything it carries but its messages — the system prompt, the tool
//! section, the tail (the task list and the mode line) and how it is sent — assembled from the
//! session's state as it is when the request is prepared, and what it weighs in the window.

use std::borrow::Cow;

use crate::agent::local_site::{system_text, tools_text};
use crate::agent::tool_section::ToolsOffered;
use crate::config::CacheTtl;
use crate::context::{ExactCounts, estimate_text_tokens};
use crate::conversation::{Mode, tool_names};
use crate::llm::{ChatRequest, Reasoning, ToolChoice};
use crate::prompt::{self, InstructionScan};

/// What a head is assembled from.
pub(crate) struct HeadSources<'a> {
    /// The mode the request is sent in.
    pub(crate) mode: Mode,
    /// The instruction files as they are on disk now (none in a folder not trusted).
    pub(crate) instructions: InstructionScan,
    /// The memory block, frozen for the session.
    pub(crate) memories: Option<&'a str>,
    /// The environment layer, frozen for the session.
    pub(crate) environment: Cow<'a, str>,
    /// The skills' listing: sent only when the tools offer `skill`.
    pub(crate) skills: &'a str,
    /// A subagent's role and parent brief.
    pub(crate) role: Option<&'a str>,
    /// The task list as the tail shows it.
    pub(crate) task_list: Option<&'a str>,
    pub(crate) tools: ToolsOffered,
    pub(crate) sending: Sending,
}

/// How a request is sent: to which model, with what room for the reply, caching and thinking.
pub(crate) struct Sending {
    pub(crate) model: String,
    pub(crate) max_tokens: u32,
    pub(crate) cache: Option<CacheTtl>,
    pub(crate) reasoning: Option<Reasoning>,
    pub(crate) images: bool,
}

/// Tokens of a head, as the budget counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Overhead {
    /// The system prompt with the tail (and, when counted, the template's framing of one
    /// message).
    pub(crate) system: u64,
    pub(crate) tools: u64,
    /// The system prompt with the tail, and the tools, as the model's tokenizer counted them,
    /// when it counted both.
    pub(crate) counted: Option<(u64, u64)>,
}

impl Overhead {
    pub(crate) fn total(&self) -> u64 {
        self.system + self.tools
    }
}

/// Everything a request carries but its messages, and what it weighs.
pub(crate) struct RequestHead {
    /// The request with no messages yet.
    request: ChatRequest,
    mode: Mode,
    instructions: InstructionScan,
    /// Which of the MCP servers' tool lists the tool section was made from.
    tools_generation: u64,
    overhead: Overhead,
    /// The system prompt with the tail, and the tools, as a chat template renders them (what a
    /// local server's tokenizer counts); made when first needed.
    template_texts: Option<[String; 2]>,
}

impl RequestHead {
    /// Assemble the head from `sources`, weighed with the counts known so far.
    pub(crate) fn assemble(sources: HeadSources<'_>, exact: &ExactCounts, chars_per_token: f64) -> RequestHead {
        let HeadSources { mode, instructions, memories, environment, skills, role, task_list, tools, sending } =
            sources;
        // Skills are listed only to an agent that can load them.
        let loads_skills = tools.specs.iter().any(|s| s.name == tool_names::SKILL);
        let parts = prompt::PromptParts {
            memories,
            instructions: &instructions.files,
            environment: &environment,
            recall: None,
            skills: if loads_skills { skills } else { "" },
            role,
        };
        // Every mode sends the same tools, system prompt and tool choice, so a mode switch keeps
        // the cached prefix: the mode is a line in the request's tail and is held where calls
        // are dispatched. Anthropic drops the cached messages when `tool_choice` changes, so ask
        // mode is not sent as `tool_choice` none: each call it makes is refused with a result
        // saying so.
        let request = ChatRequest {
            model: sending.model,
            system: prompt::build(&parts),
            messages: Vec::new(),
            tools: tools.specs,
            tool_choice: ToolChoice::Auto,
            max_tokens: sending.max_tokens,
            cache: sending.cache,
            tail: prompt::request_tail(task_list, mode, role.is_some()),
            reasoning: sending.reasoning,
            images: sending.images,
        };
        let mut head = RequestHead {
            request,
            mode,
            instructions,
            tools_generation: tools.generation,
            overhead: Overhead::default(),
            template_texts: None,
        };
        head.measure(exact, chars_per_token);
        head
    }

    /// Weigh the head again, after counts were added to `exact`: the tokenizer's count of the
    /// system prompt and the tools when it has both, else the estimate.
    pub(crate) fn measure(&mut self, exact: &ExactCounts, chars_per_token: f64) {
        self.overhead = match self.counted(exact) {
            Some((system, tools)) => {
                // The system prompt is one message of the template.
                Overhead { system: system + exact.framing(), tools, counted: Some((system, tools)) }
            }
            None => self.estimated(chars_per_token),
        };
    }

    fn counted(&mut self, exact: &ExactCounts) -> Option<(u64, u64)> {
        if !exact.is_on() {
            return None;
        }
        let [system, tools] = self.template_texts();
        Some((exact.content_tokens(system)?, exact.content_tokens(tools)?))
    }

    fn estimated(&self, chars_per_token: f64) -> Overhead {
        let request = &self.request;
        // The task list and the mode line travel with every request, after the cached part.
        let tail = request.tail.as_ref().map_or(0, |t| t.len());
        let system: usize = request.system.iter().map(|b| b.text.len()).sum::<usize>() + tail;
        let tools: usize =
            request.tools.iter().map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len()).sum();
        Overhead {
            system: estimate_text_tokens(system, chars_per_token),
            tools: estimate_text_tokens(tools, chars_per_token),
            counted: None,
        }
    }

    /// The system prompt with the tail, and the tool schemas, as a chat template renders them:
    /// one text each, as a local server's tokenizer counts them.
    pub(crate) fn template_texts(&mut self) -> &[String; 2] {
        let request = &self.request;
        self.template_texts
            .get_or_insert_with(|| [system_text(&request.system, request.tail.as_deref()), tools_text(&request.tools)])
    }

    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    pub(crate) fn overhead(&self) -> &Overhead {
        &self.overhead
    }

    /// The instruction files read for this request, and those skipped.
    pub(crate) fn instructions(&self) -> &InstructionScan {
        &self.instructions
    }

    pub(crate) fn tools_generation(&self) -> u64 {
        self.tools_generation
    }

    /// The request this head makes with `messages`, the head kept (a compaction reads such a
    /// request in place before the one sent).
    pub(crate) fn request_with(&self, messages: Vec<std::sync::Arc<crate::conversation::Message>>) -> ChatRequest {
        ChatRequest { messages, ..self.request.clone() }
    }

    pub(super) fn into_request(self) -> ChatRequest {
        self.request
    }
}

#[cfg(test)]
#[path = "head_tests.rs"]
mod tests;

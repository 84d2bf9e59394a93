//! `skill`: load one of the user's skills by name. The system prompt lists only names and
//! descriptions; this returns the instructions, and where the skill's other files are (the
//! dispatcher lets `file_read` read them without asking). Needs no approval: it only reads.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args};
use crate::conversation::tool_names::SKILL;
use crate::prompt::skills::{self, Skill};

pub struct SkillTool {
    skills: Arc<Vec<Skill>>,
}

impl SkillTool {
    pub fn new(skills: Arc<Vec<Skill>>) -> SkillTool {
        SkillTool { skills }
    }

    fn find(&self, name: &str) -> Result<&Skill, ToolError> {
        let name = name.trim().trim_start_matches('/');
        self.skills.iter().find(|s| s.name == name && s.model_invocable).ok_or_else(|| {
            let known: Vec<&str> = self.skills.iter().filter(|s| s.model_invocable).map(|s| s.name.as_str()).collect();
            ToolError::new(format!("There is no skill `{name}`. The skills are: {}.", known.join(", ")))
        })
    }
}

#[derive(Deserialize)]
struct Args {
    name: String,
    #[serde(default)]
    arguments: Option<String>,
}

const SHAPE: &str = "{\"name\": \"pdf\"}";

impl Tool for SkillTool {
    fn name(&self) -> &'static str {
        SKILL
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/skill.md").trim_end()
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name, as the system prompt lists it."},
                "arguments": {"type": "string", "description": "Text for the skill's $ARGUMENTS, when it takes any."}
            },
            "required": ["name"]
        })
    }

    fn access(&self) -> Access {
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: Args = parse_args(SKILL, args, SHAPE)?;
        let skill = self.find(&args.name)?;
        Ok(Prepared::new(format!("load the skill {}", skill.name)))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(SKILL, args, SHAPE)?;
            let skill = self.find(&args.name)?;
            skills::load(skill, args.arguments.as_deref().unwrap_or("")).map(ToolOutput::text).map_err(ToolError::new)
        })
    }
}

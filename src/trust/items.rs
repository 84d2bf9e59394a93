//! One thing a folder's files make cairn run or tell the model, as the trust dialog, the
//! headless refusal and `cairn doctor` show it: what it is, where it is written, and — for what
//! runs — a digest of it, so a change is noticed.

/// What an item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Hook,
    McpServer,
    /// A custom command: it runs commands when its text has `` !`cmd` `` or pre-approves tools
    /// (`allowed-tools`), else it only adds text to a prompt.
    Command,
    /// A skill: it runs when its folder holds files beside `SKILL.md` (scripts the skill tells
    /// the model to run), else it is only text.
    Skill,
    /// A permission rule that lets a call run without asking.
    AllowRule,
    /// A setting of `.cairn/settings.local.toml` that widens the sandbox.
    Sandbox,
    /// An instruction file (AGENTS.md, CLAUDE.md): text the model is told to follow.
    Instructions,
    /// A subagent type: a prompt and the tools it gets.
    AgentType,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Hook => "hook",
            Kind::McpServer => "MCP server",
            Kind::Command => "command",
            Kind::Skill => "skill",
            Kind::AllowRule => "allow rule",
            Kind::Sandbox => "sandbox",
            Kind::Instructions => "instructions",
            Kind::AgentType => "agent type",
        }
    }
}

/// Whose files an item comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The project's: held back until the folder is trusted.
    Project,
    /// The user's own config and folders: always in force.
    User,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub kind: Kind,
    pub origin: Origin,
    /// The file it is written in: relative to the project root for the project's, as found for
    /// the user's.
    pub file: String,
    /// 1-based line in that file.
    pub line: usize,
    /// What it runs or says, one line, with secret values masked.
    pub what: String,
    /// Where it is written, stable across edits elsewhere in the file: the key of the trust
    /// record (`.cairn/settings.toml#hooks.SessionStart[1]`).
    pub id: String,
    /// For what runs: the digest of everything that decides what it runs. `None` for what only
    /// instructs (the folder's trust covers it, edits included).
    pub digest: Option<String>,
}

impl Item {
    /// It makes something run (or run unasked): a change to it asks again.
    pub fn runs(&self) -> bool {
        self.digest.is_some()
    }

    /// `hook  SessionStart: ./setup.sh  (.cairn/settings.toml:3)`.
    pub fn describe(&self) -> String {
        format!("{} {}  ({}:{})", self.kind.label(), self.what, self.file, self.line)
    }
}

/// The first 16 hex digits of the SHA-256 of `parts`, each length-prefixed so that moving text
/// from one part to the next changes the digest.
pub fn digest(parts: &[&[u8]]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for part in parts {
        ctx.update(&(part.len() as u64).to_le_bytes());
        ctx.update(part);
    }
    ctx.finish().as_ref().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// `value` as shown: a `${VAR}` reference as written, anything else masked — a literal token in
/// an `env` or a header is a secret in plain sight.
pub fn masked(value: &str) -> String {
    let refs = crate::mcp::variables(value);
    if refs.is_empty() {
        "***".to_string()
    } else {
        refs.iter().map(|v| format!("${{{v}}}")).collect::<Vec<_>>().join("…")
    }
}

/// A URL with the values of its query masked (`?key=***`) and no user info.
pub fn masked_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let base = match base.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split('/').next().unwrap_or(rest);
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://***@{host}{}", &rest[authority.len()..]),
                None => base.to_string(),
            }
        }
        None => base.to_string(),
    };
    match query {
        None => base,
        Some(q) => {
            let parts: Vec<String> = q
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, v)) if crate::mcp::variables(v).is_empty() => format!("{k}=***"),
                    Some((k, v)) => format!("{k}={v}"),
                    None => p.to_string(),
                })
                .collect();
            format!("{base}?{}", parts.join("&"))
        }
    }
}

/// One line of `text`, clipped for a listing.
pub fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::conversation::clip(&crate::conversation::strip_terminal_controls(&joined), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_tell_parts_apart() {
        assert_eq!(digest(&[b"ab", b"c"]), digest(&[b"ab", b"c"]));
        assert_ne!(digest(&[b"ab", b"c"]), digest(&[b"a", b"bc"]));
        assert_eq!(digest(&[b"x"]).len(), 16);
    }

    #[test]
    fn secrets_are_masked_and_variable_names_kept() {
        assert_eq!(masked("ghp_literaltoken"), "***");
        assert_eq!(masked("Bearer ${GITHUB_TOKEN}"), "${GITHUB_TOKEN}");
        assert_eq!(masked_url("https://h.example/mcp?key=abc&v=${V}"), "https://h.example/mcp?key=***&v=${V}");
        assert_eq!(masked_url("https://me:pw@h.example/mcp"), "https://***@h.example/mcp");
        assert_eq!(masked_url("https://h.example/a@b"), "https://h.example/a@b");
    }
}

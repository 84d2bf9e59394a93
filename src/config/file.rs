use std::path::Path;

use super::defaults::Config;
use super::error::{ConfigError, key_at};
use super::trust::TrustEntry;

/// Load `path`; a missing file is the default config, a malformed one an error naming the line
/// and key.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(source) => return Err(ConfigError::Unreadable { path: path.to_path_buf(), source }),
    };
    let config = parse(&text).map_err(|(line, key, message)| ConfigError::Invalid {
        path: path.to_path_buf(),
        line,
        key,
        message,
    })?;
    validate(&config).map_err(|Problem { key, message }| {
        match key.and_then(|key| line_of(&text, key).map(|line| (line, key))) {
            Some((line, key)) => {
                ConfigError::Invalid { path: path.to_path_buf(), line, key: Some(key.into()), message }
            }
            None => ConfigError::Inconsistent { path: path.to_path_buf(), message },
        }
    })?;
    Ok(config)
}

/// Parse config text; on failure, the 1-based line, the dotted key if one can be named, and
/// the parser's message without its source excerpt.
pub fn parse(text: &str) -> Result<Config, (usize, Option<String>, String)> {
    let mut config = toml::from_str::<Config>(text).map_err(|e| {
        let offset = e.span().map(|s| s.start).unwrap_or(0).min(text.len());
        let line = text[..offset].matches('\n').count() + 1;
        (line, key_at(text, line), e.message().trim().to_string())
    })?;
    config.permissions.locate(text);
    Ok(config)
}

/// The folder's entry as the file at `path` holds it now (another cairn may have written it
/// since this one started).
pub fn read_trust(path: &Path, root: &Path) -> Option<TrustEntry> {
    let text = std::fs::read_to_string(path).ok()?;
    let config = parse(&text).ok()?;
    config.trust.get(&root.display().to_string()).cloned()
}

/// The 1-based line on which the dotted `key` is written (`table.key` under `[table]`).
fn line_of(text: &str, key: &str) -> Option<usize> {
    (1..=text.lines().count()).find(|&line| {
        let written = text.lines().nth(line - 1).unwrap_or("").trim();
        !written.starts_with('[') && key_at(text, line).as_deref() == Some(key)
    })
}

/// A value that parses but cannot be used: the dotted key it is about, when there is one.
#[derive(Debug)]
struct Problem {
    key: Option<&'static str>,
    message: String,
}

fn problem(key: &'static str, message: impl Into<String>) -> Problem {
    Problem { key: Some(key), message: message.into() }
}

fn validate(config: &Config) -> Result<(), Problem> {
    let c = &config.context;
    if let Some(pct) = c.compact_threshold_pct
        && !(pct > 0.0 && pct <= 100.0)
    {
        return Err(problem(
            "context.compact_threshold_pct",
            format!("{pct} is not a percentage; give one between 1 and 100"),
        ));
    }
    if !(c.truncate_head_share > 0.0 && c.truncate_head_share < 1.0) {
        return Err(problem("context.truncate_head_share", "must be between 0 and 1 (e.g. 0.6)"));
    }
    if !(c.compaction_tail_share > 0.0 && c.compaction_tail_share < 1.0) {
        return Err(problem("context.compaction_tail_share", "must be between 0 and 1 (e.g. 0.2)"));
    }
    if c.chars_per_token <= 0.5 {
        return Err(problem("context.chars_per_token", "must be above 0.5 (the default is 3.2)"));
    }
    if !(c.warning_buffer_tokens > c.auto_compact_buffer_tokens
        && c.auto_compact_buffer_tokens > c.blocking_buffer_tokens)
    {
        return Err(Problem {
            key: None,
            message: format!(
                "context buffers must shrink from warning to blocking (warning_buffer_tokens {} > auto_compact_buffer_tokens {} > blocking_buffer_tokens {}); adjust them",
                c.warning_buffer_tokens, c.auto_compact_buffer_tokens, c.blocking_buffer_tokens
            ),
        });
    }
    if !(c.breaker_useful_share >= 0.0 && c.breaker_useful_share < 1.0) {
        return Err(problem("context.breaker_useful_share", "must be between 0 and 1 (e.g. 0.2)"));
    }
    if !(c.expected_requests_share > 0.0 && c.expected_requests_share.is_finite()) {
        return Err(problem("context.expected_requests_share", "must be above 0 (e.g. 0.5)"));
    }
    if !(c.compaction_input_ratio >= 1.0 && c.compaction_input_ratio.is_finite()) {
        return Err(problem("context.compaction_input_ratio", "must be at least 1 (e.g. 6)"));
    }
    if !(c.summary_window_share > 0.0 && c.summary_window_share <= 0.2) {
        return Err(problem("context.summary_window_share", "must be above 0 and at most 0.2 (e.g. 0.035)"));
    }
    if !(0.0..=1.0).contains(&c.new_work_min_novelty) {
        return Err(problem("context.new_work_min_novelty", "must be between 0 and 1 (e.g. 0.35)"));
    }
    if !(c.new_work_margin >= 1.0 && c.new_work_margin.is_finite()) {
        return Err(problem("context.new_work_margin", "must be at least 1 (e.g. 2)"));
    }
    if !(c.early_compaction_margin >= 1.0 && c.early_compaction_margin.is_finite()) {
        return Err(problem("context.early_compaction_margin", "must be at least 1 (e.g. 2)"));
    }
    if c.max_sent_argument_chars < 1_000 {
        return Err(problem("context.max_sent_argument_chars", "must be at least 1000 (e.g. 8000)"));
    }
    let r = &config.retry;
    if r.max_attempts == 0 {
        return Err(problem("retry.max_attempts", "must be at least 1"));
    }
    let zero_ms = [
        ("retry.stream_idle_timeout_ms", r.stream_idle_timeout_ms, "a stream would fail before its first token"),
        ("retry.stream_total_timeout_ms", r.stream_total_timeout_ms, "every response would fail at once"),
        ("tools.bash_timeout_ms", config.tools.bash_timeout_ms, "every command would time out at once"),
        ("tools.bash_max_timeout_ms", config.tools.bash_max_timeout_ms, "every command would time out at once"),
        ("tools.web_fetch_timeout_ms", config.tools.web_fetch_timeout_ms, "every fetch would time out at once"),
        ("local.tokenize_timeout_ms", config.local.tokenize_timeout_ms, "every count would fall back to the estimate"),
    ];
    if let Some((key, _, why)) = zero_ms.iter().find(|(_, ms, _)| *ms == 0) {
        return Err(problem(key, format!("0 ms is not a timeout ({why}); remove the line for the default")));
    }
    if config.tools.image_max_edge_px < 64 {
        return Err(problem("tools.image_max_edge_px", "must be at least 64 pixels (the default is 1568)"));
    }
    if config.tools.image_max_bytes < 16_384 {
        return Err(problem("tools.image_max_bytes", "must be at least 16384 bytes (the default is 1000000)"));
    }
    if config.local.load_timeout_secs == 0 {
        return Err(problem(
            "local.load_timeout_secs",
            "0 s is not a timeout (no model loads at once); the default is 600",
        ));
    }
    if config.local.ctx.is_some_and(|w| w < 4_096) {
        return Err(problem("local.ctx", "must be at least 4096 tokens (cairn's system prompt and tools need room)"));
    }
    if config.local.slots == 0 {
        return Err(problem(
            "local.slots",
            "must be at least 1 (the default is 2: the conversation and a summary beside it)",
        ));
    }
    if config.local.server.trim().is_empty() {
        return Err(problem("local.server", "is empty; name the llama-server binary or give its path"));
    }
    if config.context_window.is_some_and(|w| w < 4_096) {
        return Err(problem("context_window", "must be at least 4096 tokens"));
    }
    config.checkpoints.validate().map_err(|(key, message)| problem(key, message))?;
    validate_extensions(config)
}

fn validate_extensions(config: &Config) -> Result<(), Problem> {
    for (name, server) in &config.mcp_servers {
        if !super::extensions::valid_server_name(name) {
            return Err(Problem {
                key: None,
                message: format!(
                    "[mcp_servers.{name}]: a server name takes letters, digits, `-` and `_` (no `__`), as it becomes part of the tool names `mcp__{name}__TOOL`"
                ),
            });
        }
        if let Some(p) = server.problem() {
            return Err(Problem { key: None, message: format!("[mcp_servers.{name}] {p}") });
        }
    }
    if let Some(p) = config.hooks.problem() {
        return Err(Problem { key: None, message: p });
    }
    let m = &config.mcp;
    for (key, ms) in [("mcp.startup_timeout_ms", m.startup_timeout_ms), ("mcp.call_timeout_ms", m.call_timeout_ms)] {
        if ms == 0 {
            return Err(problem(key, "0 ms is not a timeout; remove the line for the default"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::trust::record_trust;
    use super::*;

    #[test]
    fn unknown_key_names_line_and_key() {
        let (line, key, msg) = parse("model = \"x\"\n\n[context]\nreserve_output = 5\n").unwrap_err();
        assert_eq!(line, 4);
        assert_eq!(key.as_deref(), Some("context.reserve_output"));
        assert!(msg.contains("unknown field"), "{msg}");
    }

    #[test]
    fn wrong_type_names_line_and_key() {
        let (line, key, msg) = parse("context_window = \"big\"\n").unwrap_err();
        assert_eq!((line, key.as_deref()), (1, Some("context_window")));
        assert!(msg.contains("invalid type"), "{msg}");
    }

    #[test]
    fn syntax_error_names_line() {
        let (line, _, _) = parse("model = \"x\"\nprovider = \n").unwrap_err();
        assert_eq!(line, 2);
    }

    #[test]
    fn empty_file_is_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c.context.reserve_output_tokens, 16_000);
        assert_eq!(c.mode, crate::conversation::Mode::Edit);
    }

    #[test]
    fn disordered_buffers_are_rejected() {
        let mut c = Config::default();
        c.context.blocking_buffer_tokens = 50_000;
        assert!(validate(&c).unwrap_err().message.contains("shrink"));
    }

    #[test]
    fn zero_timeouts_are_refused_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        for (text, line, key) in [
            (
                "model = \"x\"\n[retry]\nmax_attempts = 3\nstream_idle_timeout_ms = 0\n",
                4,
                "retry.stream_idle_timeout_ms",
            ),
            ("[retry]\nstream_total_timeout_ms = 0\n", 2, "retry.stream_total_timeout_ms"),
            ("[tools]\n\nbash_timeout_ms = 0\n", 3, "tools.bash_timeout_ms"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = load(&path).unwrap_err().to_string();
            assert!(err.contains(&format!("line {line}, key `{key}`")), "{err}");
            assert!(err.contains("0 ms is not a timeout"), "{err}");
        }
    }

    #[test]
    fn missing_file_is_default_and_malformed_file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert!(load(&path).is_ok());
        std::fs::write(&path, "[tools]\nbash_timeout_ms = -1\n").unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("tools.bash_timeout_ms"), "{err}");
        assert!(err.contains(&path.display().to_string()));
    }

    #[test]
    fn an_entry_is_written_beside_what_the_file_holds_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# my settings\nmodel = \"m\"\n\n[tools]\nbash_timeout_ms = 5000\n").unwrap();
        let root = std::path::Path::new("/home/me/code/app");
        let mut entry = TrustEntry { at: "2026-01-02T03:04:05Z".into(), items: std::collections::BTreeMap::new() };
        entry.items.insert(".cairn/settings.toml#hooks.SessionStart[1]".into(), "00aa11bb22cc33dd".into());
        record_trust(&path, root, &entry).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my settings\nmodel = \"m\""), "{text}");
        assert!(text.contains("[trust.\"/home/me/code/app\"]"), "{text}");
        let config = parse(&text).unwrap();
        assert_eq!(config.tools.bash_timeout_ms, 5000);
        assert_eq!(config.trust[&root.display().to_string()], entry);
        assert_eq!(read_trust(&path, root), Some(entry.clone()));

        // Trusting again replaces the folder's entry, and leaves another folder's alone.
        let other = std::path::Path::new("/srv/other");
        record_trust(&path, other, &TrustEntry::default()).unwrap();
        let changed = TrustEntry { at: "2026-02-02T00:00:00Z".into(), items: std::collections::BTreeMap::new() };
        record_trust(&path, root, &changed).unwrap();
        assert_eq!(read_trust(&path, root), Some(changed));
        assert_eq!(read_trust(&path, other), Some(TrustEntry::default()));
    }

    #[test]
    fn a_missing_file_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/config.toml");
        record_trust(&path, std::path::Path::new("/p"), &TrustEntry::default()).unwrap();
        assert_eq!(read_trust(&path, std::path::Path::new("/p")), Some(TrustEntry::default()));
        assert_eq!(read_trust(&path, std::path::Path::new("/q")), None);
    }
}

//! `[local]`: the llama-server cairn starts itself for `cairn --local` (or when a model is
//! configured here), and how it runs it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalConfig {
    /// A GGUF file, or a folder of them to pick from (`--local NAME` picks by file name). `~`
    /// is the home folder. Setting it makes the local server the provider when nothing on the
    /// command line names another.
    pub model: Option<String>,
    /// The server: a name looked up on PATH, or a path.
    pub server: String,
    /// Context window of each slot: the server gets `--ctx-size` of `ctx × slots`. Unset leaves
    /// llama-server's choice (the model's training context, shared by the slots).
    pub ctx: Option<u64>,
    /// Requests served at once (`--parallel`), each with its own `ctx`: the conversation, and
    /// a compaction or summary running beside it. With one slot a background summary waits for
    /// the turn and takes the turn's cached prefix away; with llama-server's automatic four
    /// sharing one window, two long requests at once overflow it.
    pub slots: u32,
    /// Layers offloaded to the GPU (`--n-gpu-layers`); unset leaves llama-server's choice.
    pub gpu_layers: Option<i64>,
    /// CPU threads (`--threads`); unset leaves llama-server's choice.
    pub threads: Option<u32>,
    /// Further arguments, passed as they are (e.g. `["--flash-attn", "on"]`).
    pub args: Vec<String>,
    /// Leave the server running when cairn exits, and use it again next time (the model stays
    /// loaded and its prompt cache warm).
    pub keep: bool,
    /// How long the model may take to load before cairn gives up: a large model from a slow
    /// disk takes minutes.
    pub load_timeout_secs: u64,
    /// How long one exact token count may take before the calibrated estimate is used instead:
    /// a count must never hold a request up noticeably.
    pub tokenize_timeout_ms: u64,
}

impl Default for LocalConfig {
    fn default() -> Self {
        LocalConfig {
            model: None,
            server: "llama-server".into(),
            ctx: None,
            slots: 2,
            gpu_layers: None,
            threads: None,
            args: Vec::new(),
            keep: false,
            load_timeout_secs: 600,
            tokenize_timeout_ms: 1_500,
        }
    }
}

impl LocalConfig {
    /// `model` with `~` expanded.
    pub fn model_path(&self) -> Option<PathBuf> {
        self.model.as_deref().map(expand_home)
    }
}

/// `~/x` → `$HOME/x`; anything else as it is.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/").or((path == "~").then_some("")), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_reads_with_defaults_for_what_is_left_out() {
        let c: LocalConfig = toml::from_str("model = \"~/models/q.gguf\"\nctx = 8192\nkeep = true").unwrap();
        assert_eq!(c.ctx, Some(8192));
        assert!(c.keep && c.server == "llama-server" && c.args.is_empty());
        let home = std::env::var("HOME").unwrap();
        assert_eq!(c.model_path(), Some(PathBuf::from(home).join("models/q.gguf")));
        assert!(toml::from_str::<LocalConfig>("modle = \"x\"").is_err(), "a typo is an error");
        assert_eq!(expand_home("/abs/m.gguf"), PathBuf::from("/abs/m.gguf"));
    }
}

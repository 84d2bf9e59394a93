//! The config structure and every default in one place. Values from the seed documents are
//! marked with the seed; cairn's own choices say why.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::checkpoints::CheckpointsConfig;
use super::extensions::{HooksConfig, McpConfig, McpServerConfig};
use super::local::LocalConfig;
use super::models::ModelOverride;
use super::permissions::{PermissionsConfig, SandboxConfig};
use super::provider::ProviderKind;
use super::reasoning::ThinkingSetting;
use super::subagents::{SubagentsConfig, TodoConfig};
use crate::conversation::Mode;

/// The whole of `config.toml`. Unknown keys are errors, so a typo is reported instead of
/// silently ignored.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `anthropic` or `openai`; unset means auto-detect from the environment.
    pub provider: Option<ProviderKind>,
    /// Model name; unset means the provider's default.
    pub model: Option<String>,
    /// Endpoint override for the chosen provider.
    pub base_url: Option<String>,
    /// Context window in tokens, overriding the catalog.
    pub context_window: Option<u64>,
    /// `off`, `low`, `medium`, `high` or a budget in tokens; unset leaves the model's default
    /// (`--thinking` overrides it).
    pub thinking: Option<ThinkingSetting>,
    /// Whether the OpenAI-compatible endpoint honours Anthropic-style `cache_control` marks
    /// (OpenRouter does for `anthropic/*` models, which is assumed when unset).
    pub cache_control: Option<bool>,
    /// Mode a new session starts in.
    pub mode: Mode,
    /// Colour theme name (a file in `themes/`).
    pub theme: Option<String>,
    /// Per-model facts for models the catalog does not know (or to correct it).
    pub models: BTreeMap<String, ModelOverride>,
    pub retry: RetryConfig,
    pub tools: ToolsConfig,
    pub context: ContextConfig,
    pub compaction: CompactionConfig,
    pub cache: CacheConfig,
    pub memory: MemoryConfig,
    /// Allow / ask / deny rules for tool calls (`tools::permissions` gives them meaning).
    pub permissions: PermissionsConfig,
    /// The OS sandbox for `bash`.
    pub sandbox: SandboxConfig,
    pub checkpoints: CheckpointsConfig,
    /// How MCP servers are used (budget, timeouts).
    pub mcp: McpConfig,
    /// MCP servers by name; the project's settings files add theirs.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// Shell commands run at events (`[[hooks.PreToolUse]]`, …).
    pub hooks: HooksConfig,
    /// The `task` tool's subagents.
    pub subagents: SubagentsConfig,
    /// The `todo` tool's task list.
    pub todo: TodoConfig,
    pub notify: NotifyConfig,
    /// `[tui]`: how the interface uses the terminal, and the user's own status line.
    pub tui: TuiConfig,
    /// The llama-server cairn runs itself (`--local`).
    pub local: LocalConfig,
    /// The folders the user trusts (`[trust."PATH"]`), written by cairn when they say yes.
    pub trust: BTreeMap<String, super::trust::TrustEntry>,
}

/// How the interface uses the terminal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TuiMode {
    /// The alternate screen, the whole of it cairn's (scrolling, search and selection are cairn's).
    #[default]
    Full,
    /// The terminal's own screen: the conversation goes into its scrollback, a live viewport
    /// stays at the bottom (`--inline`).
    Inline,
}

/// How the terminal tells the user cairn needs them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyMethod {
    /// The terminal bell (BEL): every terminal has one; most flag the tab or window.
    #[default]
    Bell,
    /// A desktop notification through OSC 9 (iTerm2, WezTerm, Windows Terminal, Ghostty).
    Osc9,
    /// A desktop notification through OSC 777 (urxvt, foot, Konsole, VTE terminals).
    Osc777,
    Off,
}

/// `[notify]`: ringing or notifying when an approval waits or a long turn ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NotifyConfig {
    pub method: NotifyMethod,
    /// A turn that ran at least this long ends with a notification: long enough that the user
    /// has likely looked away, short enough that they are not kept waiting.
    pub after_secs: u64,
    /// An approval that waits notifies at once.
    pub approvals: bool,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig { method: NotifyMethod::Bell, after_secs: 10, approvals: true }
    }
}

/// `[tui]`: the interface's use of the terminal, and the user's own status line. The user's
/// alone: a project's settings files cannot set them (the status command runs without the
/// folder's trust).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TuiConfig {
    /// `full` (the default) or `inline`; `--inline` and `--full-screen` override it.
    pub mode: TuiMode,
    /// A shell command (`sh -c`) given the session's figures as JSON on stdin; the first line
    /// it prints is shown under the composer. docs/status-line.md gives the JSON.
    pub status_command: Option<String>,
    /// A run past this is killed (its whole process group) and counts as a failure.
    pub status_command_timeout_ms: u64,
    /// Runs are at least this far apart, however fast the figures change.
    pub status_command_interval_ms: u64,
}

impl Default for TuiConfig {
    fn default() -> Self {
        // Claude Code's statusline refreshes at most every 300 ms; a line that takes longer
        // than half a second to compute is stale by the time it shows.
        TuiConfig {
            mode: TuiMode::default(),
            status_command: None,
            status_command_timeout_ms: 500,
            status_command_interval_ms: 300,
        }
    }
}

/// `[memory]`: memories and recall.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Memories injected into the system prompt at most (KosmoKrator's default).
    pub max_injected: usize,
    /// Extract durable memories from each compaction summary (KosmoKrator's default).
    pub extract: bool,
    /// Search earlier messages for each prompt once some have been compacted or trimmed away,
    /// and send what is found with the prompt (kern's default).
    pub auto_recall: bool,
    /// Tokens of recall at most (kern's default).
    pub recall_max_tokens: u64,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig { max_injected: 6, extract: true, auto_recall: true, recall_max_tokens: 2_000 }
    }
}

/// Retries of failed provider requests.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// First backoff; doubled each attempt, with ±25 % jitter.
    pub base_delay_ms: u64,
    /// Ceiling for one wait, `retry-after` included.
    pub max_delay_ms: u64,
    /// A stream with no content for this long (keep-alive pings do not count) is dropped and
    /// retried.
    pub stream_idle_timeout_ms: u64,
    /// A response still streaming after this long is dropped and retried.
    pub stream_total_timeout_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        // Anthropic's 529 "overloaded" spells can last tens of seconds; 8 attempts at
        // 1, 2, 4, … s (capped at 60 s) ride out about four minutes before giving up.
        RetryConfig {
            max_attempts: 8,
            base_delay_ms: 1_000,
            max_delay_ms: 60_000,
            // Models think for a minute or more before their first token; two minutes of
            // nothing but pings is a stream that has died.
            stream_idle_timeout_ms: 120_000,
            // Even 32k output tokens at a slow 20 tokens/s is under 30 minutes; past it, the
            // stream is not going to end.
            stream_total_timeout_ms: 1_800_000,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// bash timeout when the model gives none.
    pub bash_timeout_ms: u64,
    /// Largest timeout the model may ask for.
    pub bash_max_timeout_ms: u64,
    /// Leave processes a command started in the background running when cairn exits.
    pub bash_keep_background: bool,
    /// Bytes of output a background command (`bash` with `background`) keeps on disk; past
    /// it the oldest half is dropped.
    pub bash_background_max_bytes: u64,
    /// Most matches grep returns.
    pub grep_max_matches: usize,
    /// Most paths glob returns.
    pub glob_max_results: usize,
    /// Lines file_read returns when no limit is given.
    pub read_default_lines: usize,
    /// web_fetch gives up on a page after this long.
    pub web_fetch_timeout_ms: u64,
    /// web_fetch reads at most this much of a response body (bytes); what is read is then cut
    /// and spilled like any tool output.
    pub web_fetch_max_bytes: usize,
    /// Images (read or attached) are scaled down to at most this many pixels on their longer
    /// side: Anthropic's recommended size, past which it scales them down itself anyway.
    pub image_max_edge_px: u32,
    /// Images are re-encoded until they take at most this many bytes: well under every API's
    /// limit (Anthropic 5 MB), and a request carries them again each turn.
    pub image_max_bytes: usize,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            bash_timeout_ms: 120_000,
            bash_max_timeout_ms: 600_000,
            // Off: a finished cairn leaves nothing running that the user did not ask to keep.
            bash_keep_background: false,
            // Hours of a chatty dev server's log, and still small on disk.
            bash_background_max_bytes: 8 << 20,
            grep_max_matches: 200,
            glob_max_results: 500,
            // Matches the truncation line limit (KosmoKrator's default), so a default read never needs spilling.
            read_default_lines: 2_000,
            // A page that has not arrived in half a minute is not worth holding a turn for.
            web_fetch_timeout_ms: 30_000,
            // Ten megabytes of HTML is already far past anything the model should read whole.
            web_fetch_max_bytes: 10 << 20,
            image_max_edge_px: 1_568,
            image_max_bytes: 1_000_000,
        }
    }
}

/// `[context]`: every constant of the context pipeline (CONTEXT.md).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Headroom for the model's reply (KosmoKrator's default).
    pub reserve_output_tokens: u64,
    /// Pruning begins this far below the effective window (KosmoKrator's default).
    pub warning_buffer_tokens: u64,
    /// Compaction fires this far below the effective window (KosmoKrator's default).
    pub auto_compact_buffer_tokens: u64,
    /// Trimming fires this far below the effective window (KosmoKrator's default).
    pub blocking_buffer_tokens: u64,
    /// When set, auto-compact also fires at this share of the window if that is earlier.
    pub compact_threshold_pct: Option<f64>,
    /// Automatic compaction on or off; `/compact` works either way.
    pub auto_compact: bool,
    /// Rough estimator: characters per token (KosmoKrator's default).
    pub chars_per_token: f64,
    /// Truncation limits per tool result (KosmoKrator's default).
    pub truncate_max_lines: usize,
    pub truncate_max_bytes: usize,
    /// Share of the allowance kept from the head; the rest from the tail.
    pub truncate_head_share: f64,
    /// Cap across all results of one assistant message (characters).
    pub turn_results_max_chars: usize,
    /// Days a spilled full output is kept (KosmoKrator's default).
    pub truncation_retention_days: u64,
    /// Dedup in the pre-flight only when it saves at least this much, to keep the cache prefix.
    pub dedup_min_savings_tokens: u64,
    /// Pruning on or off.
    pub prune: bool,
    /// User turns at the end that pruning never touches (KosmoKrator's default).
    pub prune_protect_user_turns: usize,
    /// Further recent tool output protected from pruning (KosmoKrator's default); at most a quarter of the
    /// effective window (**cairn**, so small windows can prune at all).
    pub prune_protect_tokens: u64,
    /// Pruning runs only when it can save this much (KosmoKrator's default); at most a tenth of the effective
    /// window.
    pub prune_min_savings_tokens: u64,
    /// Tool-call arguments longer than this are shrunk in old groups.
    pub prune_max_argument_chars: usize,
    /// Compaction tail: share of the compaction threshold kept verbatim (Hermes Agent keeps 20 %
    /// of its threshold, 15 % of the window; the tail is rewritten at every compaction and read on
    /// every request until the next, so cairn keeps 7 % of its own threshold: measured on the
    /// corpus, 0.15 → 0.07 is 2 % cheaper at 32k with evidence recall still above every peer's,
    /// docs/context-costs.md).
    pub compaction_tail_share: f64,
    /// Compaction tail: at least this many user turns (KosmoKrator's default).
    pub compaction_min_tail_turns: usize,
    /// Compaction tail: at least this many messages (claw-code's default).
    pub compaction_min_tail_messages: usize,
    /// Circuit breaker: consecutive failures that open it (001).
    pub breaker_failures: u32,
    /// Circuit breaker: seconds before it half-opens.
    pub breaker_cooldown_secs: u64,
    /// Circuit breaker: compactions in a row that free too little before it opens (001).
    pub breaker_ineffective_in_row: u32,
    /// Circuit breaker: a compaction freeing less than this share of the effective window is
    /// ineffective (**cairn**: a share, so it scales with the window; the next one reaches
    /// further back).
    pub breaker_useful_share: f64,
    /// Cost model: further requests expected in a session, as a share of those sent so far
    /// (half the median a session of unknown length has left: conservative).
    pub expected_requests_share: f64,
    /// Pruning never clears a result under this many tokens: the saving is small and its exact
    /// lines are what a short output is for.
    pub prune_floor_tokens: u64,
    /// A pruned command's placeholder keeps the command up to this many characters.
    pub placeholder_command_chars: usize,
    /// A pruned result that reported an error keeps its error lines, up to this many characters.
    pub placeholder_error_chars: usize,
    /// What the summariser reads per compaction, at most, as a multiple of the summary it writes
    /// (a summary is ~5:1 (002); more input than this buys little and is paid in full).
    pub compaction_input_ratio: f64,
    /// The longest summary, as a share of the window (at most 12,000 tokens).
    pub summary_window_share: f64,
    /// Tool-call arguments longer than this are sent clipped (valid JSON, with a note) from the
    /// first request on; the stored call and what the tool received stay whole.
    pub max_sent_argument_chars: usize,
    /// A request turns to new work when it has at least this many distinct words…
    pub new_work_min_terms: usize,
    /// …and at least this share of them are new to what the assistant and its tools said since
    /// the previous request: the work before is finished and may be summarised at once
    /// (CONTEXT.md §5).
    pub new_work_min_novelty: f64,
    /// Finished work is summarised before the window asks only when that saves this many times
    /// what it costs (the summary call and the rewrite after the system prompt).
    pub new_work_margin: f64,
    /// A compaction before the window forces one (from the warning threshold) is made only when
    /// the requests still expected read back this many times what it costs: it loses detail the
    /// verbatim history has, and a session that ends first never needed it (measured on the
    /// corpus at 32k: 4 costs what 1 does and keeps more evidence, docs/context-costs.md).
    pub early_compaction_margin: f64,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            reserve_output_tokens: 16_000,
            warning_buffer_tokens: 24_000,
            auto_compact_buffer_tokens: 12_000,
            blocking_buffer_tokens: 3_000,
            compact_threshold_pct: None,
            auto_compact: true,
            chars_per_token: 3.2,
            truncate_max_lines: 2_000,
            truncate_max_bytes: 50_000,
            truncate_head_share: 0.6,
            turn_results_max_chars: 200_000,
            truncation_retention_days: 7,
            dedup_min_savings_tokens: 4_096,
            prune: true,
            prune_protect_user_turns: 2,
            prune_protect_tokens: 40_000,
            prune_min_savings_tokens: 20_000,
            prune_max_argument_chars: 500,
            compaction_tail_share: 0.07,
            compaction_min_tail_turns: 3,
            compaction_min_tail_messages: 4,
            breaker_failures: 3,
            breaker_cooldown_secs: 300,
            breaker_ineffective_in_row: 2,
            breaker_useful_share: 0.2,
            expected_requests_share: 0.5,
            prune_floor_tokens: 200,
            placeholder_command_chars: 300,
            placeholder_error_chars: 600,
            compaction_input_ratio: 4.0,
            summary_window_share: 0.035,
            max_sent_argument_chars: 8_000,
            new_work_min_terms: 40,
            new_work_min_novelty: 0.35,
            new_work_margin: 2.0,
            early_compaction_margin: 4.0,
        }
    }
}

/// `[compaction]`: the auxiliary model that writes summaries.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompactionConfig {
    /// Model for summaries; unset means the main model.
    pub model: Option<String>,
    /// Context window of that model when the catalog does not know it.
    pub context_window: Option<u64>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CacheTtl {
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

/// `[cache]`: Anthropic prompt caching.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    pub enabled: bool,
    pub ttl: CacheTtl,
    /// Most keep-alive pings per idle spell (0: none). A ping is sent only when the cost
    /// model says it pays (docs/report.md, "Keeping the cache warm").
    pub keepalive_max_pings: u32,
    /// A ping goes this long before the cache would run out, so a slow answer still lands in
    /// time (**cairn**: 90 s covers a retried request).
    pub keepalive_lead_secs: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { enabled: true, ttl: CacheTtl::FiveMinutes, keepalive_max_pings: 2, keepalive_lead_secs: 90 }
    }
}

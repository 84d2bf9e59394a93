//! Keys and their redaction: a key may sit in memory and go into a request header, and nowhere
//! else — not the database, an export, or a log line.

use std::borrow::Cow;
use std::sync::OnceLock;

/// Environment variables that hold provider keys.
pub const KEY_VARS: [&str; 2] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];

/// The provider keys as they were in the environment when cairn started, once
/// [`take_keys_from_env`] moved them here.
static TAKEN_KEYS: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();

/// Moves the provider keys out of the process environment into cairn's memory, so no command
/// cairn runs inherits them and no process can read them in `/proc/<cairn's pid>/environ`
/// (which shows the environment block as it was at exec, so the value is overwritten there too).
///
/// # Safety
///
/// Changes the environment: call it first thing in `main`, while the process has one thread.
pub unsafe fn take_keys_from_env() {
    let mut taken = Vec::new();
    for var in KEY_VARS {
        let Some(value) = std::env::var_os(var) else { continue };
        taken.push((var, value.to_string_lossy().into_owned()));
        // SAFETY: the caller guarantees no other thread exists.
        unsafe {
            #[cfg(unix)]
            wipe_initial_value(var);
            std::env::remove_var(var);
        }
    }
    let _ = TAKEN_KEYS.set(taken);
}

/// Marks cairn's process non-dumpable (`PR_SET_DUMPABLE` 0), where the provider keys live: no
/// other process of the user's — a hook, an MCP server, a command the model runs — may read its
/// memory through `/proc/<pid>/mem` or `process_vm_readv`, or attach to it with `ptrace` (only
/// a process with `CAP_SYS_PTRACE`, such as root's, still may). It also keeps the keys out of
/// core dumps. A child is dumpable again once it starts its own program: its memory is its own.
/// Returns why it could not, where it could not.
pub fn keep_memory_private() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(PR_SET_DUMPABLE) takes plain integers and changes a flag of this
        // process only.
        let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        if rc != 0 {
            return Err(format!("PR_SET_DUMPABLE failed: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// A variable of cairn's environment: a provider key from where [`take_keys_from_env`] keeps
/// it, anything else from the environment itself.
pub fn env_var(name: &str) -> Option<String> {
    if let Some(taken) = TAKEN_KEYS.get()
        && KEY_VARS.contains(&name)
    {
        return taken.iter().find(|(var, _)| *var == name).map(|(_, value)| value.clone());
    }
    std::env::var(name).ok()
}

/// Overwrites the value of `var` with NULs where `environ` points, which for the variables cairn
/// was started with is the block the kernel shows in `/proc/self/environ`; the name is kept so
/// `remove_var` still finds the entry.
///
/// # Safety
///
/// No other thread may read or change the environment meanwhile.
#[cfg(unix)]
unsafe fn wipe_initial_value(var: &str) {
    unsafe extern "C" {
        static mut environ: *mut *mut std::ffi::c_char;
    }
    let prefix = format!("{var}=");
    // SAFETY: `environ` is the NULL-terminated array of NUL-terminated strings that libc keeps;
    // each entry is writable memory (the initial block on the stack, or setenv's heap copy), and
    // the bytes overwritten lie between the `=` and the terminating NUL of that entry.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let bytes = std::ffi::CStr::from_ptr(*entry).to_bytes();
            if bytes.starts_with(prefix.as_bytes()) {
                let value_len = bytes.len() - prefix.len();
                std::ptr::write_bytes((*entry).add(prefix.len()), 0, value_len);
            }
            entry = entry.add(1);
        }
    }
}

/// An API key. Its `Debug` never shows the value, so it cannot reach a log line or an error
/// message by accident; it is never serialised.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The key itself, for the one place that needs it: the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Replaces known key values with a marker naming the variable they came from.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    secrets: Vec<(Secret, &'static str)>,
}

/// Shorter values are not treated as secrets: replacing them would mangle ordinary text.
const MIN_SECRET_LEN: usize = 8;

impl Redactor {
    /// Only this key, under its variable's name: for a client that holds one.
    pub fn for_key(name: &'static str, key: Option<&Secret>) -> Redactor {
        let mut redactor = Redactor::default();
        if let Some(key) = key {
            redactor.add(name, key.expose().trim());
        }
        redactor
    }

    /// The values of every provider key variable that is set.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Redactor {
        let mut redactor = Redactor::default();
        for var in KEY_VARS {
            if let Some(value) = env(var) {
                redactor.add(var, value.trim());
            }
        }
        redactor
    }

    pub fn add(&mut self, name: &'static str, value: &str) {
        if value.len() >= MIN_SECRET_LEN && !self.secrets.iter().any(|(s, _)| s.expose() == value) {
            self.secrets.push((Secret::new(value), name));
        }
    }

    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (secret, name) in &self.secrets {
            if out.contains(secret.expose()) {
                out = Cow::Owned(out.replace(secret.expose(), &format!("[REDACTED {name}]")));
            }
        }
        out
    }

    /// The variable whose value `bytes` hold, if any: such a content is never stored.
    pub fn found_in(&self, bytes: &[u8]) -> Option<&'static str> {
        self.secrets.iter().find(|(s, _)| memchr::memmem::find(bytes, s.expose().as_bytes()).is_some()).map(|(_, n)| *n)
    }

    /// Where the end of `text` may be the start of a key cut off by the end of a stream chunk:
    /// `text[i..]` is a proper prefix of a key. `text.len()` when it cannot be.
    pub fn unfinished_at(&self, text: &str) -> usize {
        let longest = self.secrets.iter().map(|(s, _)| s.expose().len()).max().unwrap_or(0);
        let from = text.len().saturating_sub(longest.saturating_sub(1));
        (from..text.len())
            .filter(|&i| text.is_char_boundary(i))
            .find(|&i| {
                self.secrets
                    .iter()
                    .any(|(s, _)| s.expose().len() > text.len() - i && s.expose().starts_with(&text[i..]))
            })
            .unwrap_or(text.len())
    }

    /// A streamed chunk added to what was `held` back: what can be shown now, keys redacted;
    /// the end that may still become a key stays held (show it when the stream ends: a key cut
    /// off at the end is not a key).
    pub fn release(&self, held: &mut String, chunk: &str) -> String {
        held.push_str(chunk);
        let redacted = self.redact(held).into_owned();
        let at = self.unfinished_at(&redacted);
        *held = redacted[at..].to_string();
        redacted[..at].to_string()
    }

    pub fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redact(text) {
            *text = redacted;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_keys_are_replaced_and_short_values_ignored() {
        let env = |k: &str| match k {
            "ANTHROPIC_API_KEY" => Some("sk-ant-123456789\n".to_string()),
            "OPENAI_API_KEY" => Some("short".to_string()),
            _ => None,
        };
        let r = Redactor::from_env(&env);
        assert_eq!(r.redact("key=sk-ant-123456789 ok"), "key=[REDACTED ANTHROPIC_API_KEY] ok");
        assert_eq!(r.redact("short stays"), "short stays");
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
        assert_eq!(r.found_in(b"\x00bin key=sk-ant-123456789 "), Some("ANTHROPIC_API_KEY"));
        assert_eq!(r.found_in(b"sk-ant-12345678"), None);
    }

    #[test]
    fn a_key_cut_by_a_chunk_end_is_found() {
        let r = Redactor::for_key("ANTHROPIC_API_KEY", Some(&Secret::new("sk-ant-123456789")));
        assert_eq!(r.unfinished_at("the key is sk-an"), 11);
        assert_eq!(r.unfinished_at("the key is s"), 11);
        assert_eq!(r.unfinished_at("the key is sk-ant-123456789"), 27, "a whole key is redacted, not held");
        assert_eq!(r.unfinished_at("nothing é"), 10);
        assert_eq!(Redactor::default().unfinished_at("sk-"), 3);
    }

    #[test]
    fn secret_never_prints() {
        let s = Secret::new("sk-very-secret");
        assert!(!format!("{s:?}").contains("very"));
    }
}

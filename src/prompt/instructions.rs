//! Instruction files: AGENTS.md and CLAUDE.md from the repository root down to the working
//! directory, read from disk for every request (so an edit reaches the next one), capped so a
//! huge file cannot crowd out the conversation.
//!
//! A file is read only when it is a regular file that resolves inside the project (or cairn's
//! own config folder): a repository can commit `AGENTS.md -> ../../.ssh/id_rsa`, or a link to
//! `/dev/zero` or a FIFO, and none of those may reach the prompt, fill memory or hang a start.
//! What was skipped, and why, is returned as data for `/context` and `doctor`.

use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};

pub const INSTRUCTION_FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
/// Most bytes taken from one file; also all that is ever read of it.
const MAX_FILE_CHARS: usize = 12_000;
/// Most bytes taken from all of them together.
const MAX_TOTAL_CHARS: usize = 24_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionFile {
    /// Relative to the project root.
    pub path: String,
    pub text: String,
    /// The file was longer than what is included.
    pub clipped_from: Option<usize>,
}

/// An instruction file that exists but was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedInstruction {
    /// Relative to the project root.
    pub path: String,
    pub reason: SkipReason,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// A symlink whose target is outside the project and cairn's config folder.
    OutsideProject { target: PathBuf },
    /// Not a regular file: a device, a FIFO, a socket, a folder.
    NotARegularFile { kind: &'static str },
    /// A link to nothing.
    BrokenLink,
    /// Not UTF-8 text.
    NotText,
    /// Could not be opened or read.
    Unreadable { error: String },
    /// The folder is not trusted: its files do not instruct the model.
    Untrusted,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::OutsideProject { target } => {
                write!(f, "links outside the project (to {}); only files inside it are read", target.display())
            }
            SkipReason::NotARegularFile { kind } => write!(f, "is a {kind}, not a regular file"),
            SkipReason::BrokenLink => f.write_str("is a link to nothing"),
            SkipReason::NotText => f.write_str("is not UTF-8 text"),
            SkipReason::Unreadable { error } => write!(f, "cannot be read: {error}"),
            SkipReason::Untrusted => f.write_str("belongs to a folder you have not trusted (cairn --trust trusts it)"),
        }
    }
}

impl std::fmt::Display for SkippedInstruction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.path, self.reason)
    }
}

/// What a scan found: the files to include, and the ones left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstructionScan {
    pub files: Vec<InstructionFile>,
    pub skipped: Vec<SkippedInstruction>,
}

impl InstructionScan {
    /// The same scan in a folder the user has not trusted: every file left out, saying why.
    pub fn untrusted(mut self) -> InstructionScan {
        let files = std::mem::take(&mut self.files);
        let left = files.into_iter().map(|f| SkippedInstruction { path: f.path, reason: SkipReason::Untrusted });
        self.skipped.splice(0..0, left);
        self
    }
}

/// The instruction files that apply in `cwd`, shallowest first, and those skipped (with why).
/// Links may point anywhere inside `root` or cairn's config folder.
pub fn scan_instruction_files(root: &Path, cwd: &Path) -> InstructionScan {
    let config_dir = crate::config::Paths::from_env()
        .ok()
        .and_then(|p| p.config_file.parent().map(Path::to_path_buf))
        .and_then(|d| d.canonicalize().ok());
    let trusted: Vec<&Path> = std::iter::once(root).chain(config_dir.as_deref()).collect();
    scan_with(root, cwd, &trusted)
}

fn scan_with(root: &Path, cwd: &Path, trusted: &[&Path]) -> InstructionScan {
    let mut dirs: Vec<PathBuf> = cwd.ancestors().take_while(|d| d.starts_with(root)).map(Path::to_path_buf).collect();
    dirs.reverse();
    let mut scan = InstructionScan::default();
    let mut total = 0;
    for dir in dirs {
        for name in INSTRUCTION_FILE_NAMES {
            let path = dir.join(name);
            let rel = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            let (text, len) = match read_capped(&path, trusted) {
                Ok(Some(found)) => found,
                Ok(None) => continue,
                Err(reason) => {
                    tracing::warn!(path = %rel, %reason, "instruction file skipped");
                    scan.skipped.push(SkippedInstruction { path: rel, reason });
                    continue;
                }
            };
            if text.trim().is_empty() || total >= MAX_TOTAL_CHARS {
                continue;
            }
            let allowance = MAX_FILE_CHARS.min(MAX_TOTAL_CHARS - total);
            let (text, clipped_from) = if len > allowance {
                let cut = crate::conversation::floor_char_boundary(&text, allowance.min(text.len()));
                (text[..cut].to_string(), Some(len))
            } else {
                (text, None)
            };
            total += text.len();
            scan.files.push(InstructionFile { path: rel, text, clipped_from });
        }
    }
    scan
}

/// The first [`MAX_FILE_CHARS`] bytes of `path` and its full length, if it is a regular file
/// resolving inside a trusted folder; `None` when there is no such file at all.
fn read_capped(path: &Path, trusted: &[&Path]) -> Result<Option<(String, usize)>, SkipReason> {
    let Ok(link) = std::fs::symlink_metadata(path) else { return Ok(None) };
    let resolved = match path.canonicalize() {
        Ok(resolved) => resolved,
        Err(_) if link.file_type().is_symlink() => return Err(SkipReason::BrokenLink),
        Err(e) => return Err(SkipReason::Unreadable { error: e.to_string() }),
    };
    if !trusted.iter().any(|dir| resolved.starts_with(dir)) {
        return Err(SkipReason::OutsideProject { target: resolved });
    }
    let file = open_no_wait(&resolved).map_err(|e| SkipReason::Unreadable { error: e.to_string() })?;
    // The type of what was opened, not of what the path named a moment ago.
    let meta = file.metadata().map_err(|e| SkipReason::Unreadable { error: e.to_string() })?;
    if !meta.is_file() {
        return Err(SkipReason::NotARegularFile { kind: kind_of(&meta.file_type()) });
    }
    let mut bytes = Vec::with_capacity(MAX_FILE_CHARS.min(meta.len() as usize));
    file.take(MAX_FILE_CHARS as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| SkipReason::Unreadable { error: e.to_string() })?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // Cut inside a character at the cap: keep the whole characters before it.
        Err(e) if e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| SkipReason::NotText)?
        }
        Err(_) => return Err(SkipReason::NotText),
    };
    let len = (meta.len() as usize).max(text.len());
    Ok(Some((text, len)))
}

/// Opens for reading without following a final symlink and without blocking on a FIFO (whose
/// open would wait for a writer forever).
fn open_no_wait(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    options.open(path)
}

fn kind_of(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "device";
        }
        if kind.is_socket() {
            return "socket";
        }
    }
    if kind.is_dir() { "folder" } else { "special file" }
}

/// The instructions layer, or nothing when there are no files.
pub fn render_instructions(files: &[InstructionFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut out = String::from(include_str!("../../assets/prompts/instructions.md").trim_end());
    out.push_str("\n\n");
    for f in files {
        out.push_str(&format!("<instructions path=\"{}\">\n{}\n", f.path, f.text.trim_end()));
        if let Some(len) = f.clipped_from {
            out.push_str(&format!(
                "[only the first {} of {len} characters are included; read the file for the rest]\n",
                f.text.len()
            ));
        }
        out.push_str("</instructions>\n\n");
    }
    out
}

/// A fingerprint of the files, to tell an edited file from a volatile prompt.
pub fn fingerprint(files: &[InstructionFile]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    files.hash(&mut h);
    h.finish()
}

impl Hash for InstructionFile {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.path.hash(state);
        self.text.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_from_the_root_down_to_cwd_shallowest_first_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let deep = root.join("pkg/a");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(root.join("pkg/CLAUDE.md"), "pkg rules").unwrap();
        std::fs::write(deep.join("AGENTS.md"), "x".repeat(20_000)).unwrap();
        std::fs::write(root.join("pkg/b.md"), "not an instruction file").unwrap();
        let files = scan_instruction_files(&root, &deep).files;
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["AGENTS.md", "pkg/CLAUDE.md", "pkg/a/AGENTS.md"]);
        assert_eq!(files[2].clipped_from, Some(20_000));
        assert_eq!(files[2].text.len(), 12_000);
        let text = render_instructions(&files);
        assert!(text.contains("<instructions path=\"pkg/CLAUDE.md\">\npkg rules\n"));
        assert!(text.contains("only the first 12000 of 20000 characters"));
        // A folder outside the project contributes nothing.
        assert!(scan_instruction_files(&deep, &root).files.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_project_devices_and_fifos_are_skipped_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let sub = root.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(outside.path().join("secret"), "outside").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("CLAUDE.md")).unwrap();
        let fifo = std::ffi::CString::new(sub.join("AGENTS.md").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink(root.join("nowhere"), sub.join("CLAUDE.md")).unwrap();

        let scan = scan_with(&root, &sub, &[&root]);
        assert!(scan.files.is_empty(), "{:?}", scan.files);
        let reasons: Vec<String> = scan.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(reasons.len(), 4, "{reasons:#?}");
        assert!(reasons[0].starts_with("AGENTS.md links outside the project"), "{}", reasons[0]);
        assert!(reasons[1].starts_with("CLAUDE.md links outside the project (to /dev/zero)"), "{}", reasons[1]);
        assert_eq!(reasons[2], "sub/AGENTS.md is a FIFO, not a regular file");
        assert_eq!(reasons[3], "sub/CLAUDE.md is a link to nothing");
        // Even where links may lead, a device is never read.
        let scan = scan_with(&root, &sub, &[&root, Path::new("/dev")]);
        assert_eq!(scan.skipped[1].to_string(), "CLAUDE.md is a device, not a regular file");
    }

    #[cfg(unix)]
    #[test]
    fn links_inside_the_project_or_a_trusted_folder_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let config_dir = config.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/rules.md"), "shared rules").unwrap();
        std::fs::write(config_dir.join("AGENTS.md"), "my own rules").unwrap();
        std::os::unix::fs::symlink("docs/rules.md", root.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(config_dir.join("AGENTS.md"), root.join("CLAUDE.md")).unwrap();
        let scan = scan_with(&root, &root, &[&root, &config_dir]);
        let texts: Vec<&str> = scan.files.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["shared rules", "my own rules"]);
        assert!(scan.skipped.is_empty());
        // Without the config folder trusted, the second link is refused.
        assert_eq!(scan_with(&root, &root, &[&root]).skipped.len(), 1);
    }

    #[test]
    fn a_huge_file_is_read_only_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        // Sparse: 8 GB long, nothing on disk, and never read past the cap.
        let file = std::fs::File::create(root.join("AGENTS.md")).unwrap();
        file.set_len(8 << 30).unwrap();
        std::fs::write(root.join("CLAUDE.md"), format!("a{}", "é".repeat(7_000))).unwrap();
        let scan = scan_with(&root, &root, &[&root]);
        assert_eq!(scan.files.len(), 2, "{:?}", scan.skipped);
        assert_eq!(scan.files[0].clipped_from, Some(8 << 30));
        assert_eq!(scan.files[0].text.len(), MAX_FILE_CHARS);
        // A cut inside a two-byte character keeps only whole ones.
        assert_eq!(scan.files[1].text.len(), MAX_FILE_CHARS - 1);
        assert_eq!(scan.files[1].clipped_from, Some(14_001));
    }
}

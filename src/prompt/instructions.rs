//! Instruction files: the user's own AGENTS.md and CLAUDE.md in their config folder (as Codex
//! reads `~/.codex/AGENTS.md` and Claude Code `~/.claude/CLAUDE.md`), then the project's from the
//! repository root down to the working directory, read from disk for every request (so an
//! edit reaches the next one), capped so a huge file cannot crowd out the conversation. The
//! user's files are theirs: no project item for folder trust, and read in an untrusted folder.
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
    /// Relative to the project root; a user's own file as `~/…` (or its whole path).
    pub path: String,
    pub text: String,
    /// The file was longer than what is included.
    pub clipped_from: Option<usize>,
    /// The user's own, from their config folder: no file of the project.
    pub user: bool,
}

/// An instruction file that exists but was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedInstruction {
    /// Relative to the project root; a user's own file as `~/…` (or its whole path).
    pub path: String,
    pub reason: SkipReason,
    /// The user's own, from their config folder.
    pub user: bool,
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
    /// The same scan in a folder the user has not trusted: every file of the project left out,
    /// saying why (the user's own still count).
    pub fn untrusted(mut self) -> InstructionScan {
        let (user, project): (Vec<_>, Vec<_>) = std::mem::take(&mut self.files).into_iter().partition(|f| f.user);
        self.files = user;
        let left = project.into_iter().map(|f| SkippedInstruction {
            path: f.path,
            reason: SkipReason::Untrusted,
            user: false,
        });
        self.skipped.splice(0..0, left);
        self
    }
}

/// The instruction files that apply in `cwd` — those in the user's own folders `user_dirs`
/// (cairn's config folder, `~/.claude`), then the project's shallowest first — and those
/// skipped (with why). A project's links may point anywhere inside `root` or cairn's config
/// folder; the user's own files are theirs to link where they like.
pub fn scan_instruction_files(root: &Path, cwd: &Path, user_dirs: &[PathBuf]) -> InstructionScan {
    let config_dir = crate::config::Paths::from_env()
        .ok()
        .and_then(|p| p.config_file.parent().map(Path::to_path_buf))
        .and_then(|d| d.canonicalize().ok());
    let trusted: Vec<&Path> = std::iter::once(root).chain(config_dir.as_deref()).collect();
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
    scan_with(root, cwd, &trusted, &UserFiles { dirs: user_dirs, home: home.as_deref() })
}

/// Where the user's own instruction files are, and the home folder their paths are shown from.
struct UserFiles<'a> {
    dirs: &'a [PathBuf],
    home: Option<&'a Path>,
}

impl UserFiles<'_> {
    /// `~/.config/cairn/AGENTS.md`, or the whole path outside the home folder.
    fn shown(&self, path: &Path) -> String {
        match self.home.and_then(|h| path.strip_prefix(h).ok()) {
            Some(rest) => format!("~/{}", rest.display()),
            None => path.display().to_string(),
        }
    }
}

/// The files' texts, capped one by one and all together, into `scan`.
struct Collector {
    scan: InstructionScan,
    total: usize,
}

impl Collector {
    fn take(&mut self, path: &Path, shown: String, user: bool, trusted: &[&Path]) {
        let (text, len) = match read_capped(path, trusted) {
            Ok(Some(found)) => found,
            Ok(None) => return,
            Err(reason) => {
                tracing::warn!(path = %shown, %reason, "instruction file skipped");
                self.scan.skipped.push(SkippedInstruction { path: shown, reason, user });
                return;
            }
        };
        if text.trim().is_empty() || self.total >= MAX_TOTAL_CHARS {
            return;
        }
        let allowance = MAX_FILE_CHARS.min(MAX_TOTAL_CHARS - self.total);
        let (text, clipped_from) = if len > allowance {
            let cut = crate::conversation::floor_char_boundary(&text, allowance.min(text.len()));
            (text[..cut].to_string(), Some(len))
        } else {
            (text, None)
        };
        self.total += text.len();
        self.scan.files.push(InstructionFile { path: shown, text, clipped_from, user });
    }
}

fn scan_with(root: &Path, cwd: &Path, trusted: &[&Path], user: &UserFiles<'_>) -> InstructionScan {
    let mut collector = Collector { scan: InstructionScan::default(), total: 0 };
    // The user's own first: the project's, read after them, win where the two disagree.
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in user.dirs {
        for name in INSTRUCTION_FILE_NAMES {
            let path = dir.join(name);
            // One file linked from two of the folders (CLAUDE.md -> ~/.claude/CLAUDE.md) once.
            if let Ok(real) = path.canonicalize() {
                if seen.contains(&real) {
                    continue;
                }
                seen.push(real);
            }
            collector.take(&path, user.shown(&path), true, &[Path::new("/")]);
        }
    }
    let mut dirs: Vec<PathBuf> = cwd.ancestors().take_while(|d| d.starts_with(root)).map(Path::to_path_buf).collect();
    dirs.reverse();
    for dir in dirs {
        for name in INSTRUCTION_FILE_NAMES {
            let path = dir.join(name);
            let rel = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            collector.take(&path, rel, false, trusted);
        }
    }
    collector.scan
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

    const NO_USER: UserFiles<'static> = UserFiles { dirs: &[], home: None };

    #[test]
    fn the_users_own_file_comes_first_shown_from_home_and_stays_in_an_untrusted_folder() {
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = home.path().canonicalize().unwrap();
        let config = home.join(".config/cairn");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(config.join("AGENTS.md"), "my rule: answer briefly").unwrap();
        std::fs::write(home.join(".claude/CLAUDE.md"), "claude rule: no emoji").unwrap();
        // The same file linked from the config folder is read once.
        std::os::unix::fs::symlink(home.join(".claude/CLAUDE.md"), config.join("CLAUDE.md")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "project rule").unwrap();
        let dirs = [config.clone(), home.join(".claude")];
        let user = UserFiles { dirs: &dirs, home: Some(&home) };
        let scan = scan_with(&root, &root, &[&root], &user);
        let got: Vec<(&str, bool)> = scan.files.iter().map(|f| (f.path.as_str(), f.user)).collect();
        assert_eq!(
            got,
            [("~/.config/cairn/AGENTS.md", true), ("~/.config/cairn/CLAUDE.md", true), ("AGENTS.md", false)]
        );
        assert!(
            render_instructions(&scan.files).contains("<instructions path=\"~/.config/cairn/AGENTS.md\">\nmy rule")
        );
        let untrusted = scan.untrusted();
        let kept: Vec<&str> = untrusted.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(kept, ["~/.config/cairn/AGENTS.md", "~/.config/cairn/CLAUDE.md"]);
        assert_eq!(untrusted.skipped[0].path, "AGENTS.md");
        assert_eq!(untrusted.skipped[0].reason, SkipReason::Untrusted);
    }

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
        let files = scan_instruction_files(&root, &deep, &[]).files;
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["AGENTS.md", "pkg/CLAUDE.md", "pkg/a/AGENTS.md"]);
        assert_eq!(files[2].clipped_from, Some(20_000));
        assert_eq!(files[2].text.len(), 12_000);
        let text = render_instructions(&files);
        assert!(text.contains("<instructions path=\"pkg/CLAUDE.md\">\npkg rules\n"));
        assert!(text.contains("only the first 12000 of 20000 characters"));
        // A folder outside the project contributes nothing.
        assert!(scan_instruction_files(&deep, &root, &[]).files.is_empty());
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

        let scan = scan_with(&root, &sub, &[&root], &NO_USER);
        assert!(scan.files.is_empty(), "{:?}", scan.files);
        let reasons: Vec<String> = scan.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(reasons.len(), 4, "{reasons:#?}");
        assert!(reasons[0].starts_with("AGENTS.md links outside the project"), "{}", reasons[0]);
        assert!(reasons[1].starts_with("CLAUDE.md links outside the project (to /dev/zero)"), "{}", reasons[1]);
        assert_eq!(reasons[2], "sub/AGENTS.md is a FIFO, not a regular file");
        assert_eq!(reasons[3], "sub/CLAUDE.md is a link to nothing");
        // Even where links may lead, a device is never read.
        let scan = scan_with(&root, &sub, &[&root, Path::new("/dev")], &NO_USER);
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
        let scan = scan_with(&root, &root, &[&root, &config_dir], &NO_USER);
        let texts: Vec<&str> = scan.files.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["shared rules", "my own rules"]);
        assert!(scan.skipped.is_empty());
        // Without the config folder trusted, the second link is refused.
        assert_eq!(scan_with(&root, &root, &[&root], &NO_USER).skipped.len(), 1);
    }

    #[test]
    fn a_huge_file_is_read_only_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        // Sparse: 8 GB long, nothing on disk, and never read past the cap.
        let file = std::fs::File::create(root.join("AGENTS.md")).unwrap();
        file.set_len(8 << 30).unwrap();
        std::fs::write(root.join("CLAUDE.md"), format!("a{}", "é".repeat(7_000))).unwrap();
        let scan = scan_with(&root, &root, &[&root], &NO_USER);
        assert_eq!(scan.files.len(), 2, "{:?}", scan.skipped);
        assert_eq!(scan.files[0].clipped_from, Some(8 << 30));
        assert_eq!(scan.files[0].text.len(), MAX_FILE_CHARS);
        // A cut inside a two-byte character keeps only whole ones.
        assert_eq!(scan.files[1].text.len(), MAX_FILE_CHARS - 1);
        assert_eq!(scan.files[1].clipped_from, Some(14_001));
    }
}

//! Instruction files: AGENTS.md and CLAUDE.md from the repository root down to the working
//! directory, read from disk for every request (so an edit reaches the next one), capped so a
//! huge file cannot crowd out the conversation.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

pub const INSTRUCTION_FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
/// Most characters taken from one file.
const MAX_FILE_CHARS: usize = 12_000;
/// Most characters taken from all of them together.
const MAX_TOTAL_CHARS: usize = 24_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionFile {
    /// Relative to the project root.
    pub path: String,
    pub text: String,
    /// The file was longer than what is included.
    pub clipped_from: Option<usize>,
}

/// The instruction files that apply in `cwd`, shallowest first.
pub fn read_instruction_files(root: &Path, cwd: &Path) -> Vec<InstructionFile> {
    let mut dirs: Vec<PathBuf> = cwd.ancestors().take_while(|d| d.starts_with(root)).map(Path::to_path_buf).collect();
    dirs.reverse();
    let mut out = Vec::new();
    let mut total = 0;
    for dir in dirs {
        for name in INSTRUCTION_FILE_NAMES {
            let path = dir.join(name);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            if text.trim().is_empty() || total >= MAX_TOTAL_CHARS {
                continue;
            }
            let allowance = MAX_FILE_CHARS.min(MAX_TOTAL_CHARS - total);
            let (text, clipped_from) = if text.len() > allowance {
                let cut = crate::conversation::floor_char_boundary(&text, allowance);
                (text[..cut].to_string(), Some(text.len()))
            } else {
                (text, None)
            };
            total += text.len();
            let rel = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            out.push(InstructionFile { path: rel, text, clipped_from });
        }
    }
    out
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
        let files = read_instruction_files(&root, &deep);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["AGENTS.md", "pkg/CLAUDE.md", "pkg/a/AGENTS.md"]);
        assert_eq!(files[2].clipped_from, Some(20_000));
        assert_eq!(files[2].text.len(), 12_000);
        let text = render_instructions(&files);
        assert!(text.contains("<instructions path=\"pkg/CLAUDE.md\">\npkg rules\n"));
        assert!(text.contains("only the first 12000 of 20000 characters"));
        // A folder outside the project contributes nothing.
        assert!(read_instruction_files(&deep, &root).is_empty());
    }
}

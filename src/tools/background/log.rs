//! A background command's output on disk, bounded: appended as it comes, and when the file
//! passes its cap the oldest half is dropped. Offsets are counted over everything the command
//! ever printed, so a reader's offset stays valid after a drop (it learns what it missed).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub(super) struct OutputLog {
    path: PathBuf,
    file: File,
    /// Bytes dropped from the start of the file so far.
    dropped: u64,
    /// Bytes written so far, dropped ones included: the offset of the next byte.
    written: u64,
    cap: u64,
}

/// A piece of the output, read from an offset.
#[derive(Debug, PartialEq, Eq)]
pub struct Slice {
    pub text: String,
    /// The offset the text starts at: later than asked when older output was dropped.
    pub from: u64,
    /// The offset after the text: where the next read goes on from.
    pub to: u64,
    /// Everything written so far.
    pub total: u64,
}

impl OutputLog {
    /// A new, empty log at `path` (its folder made) keeping at most `cap` bytes.
    pub(super) fn create(path: &Path, cap: u64) -> std::io::Result<OutputLog> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new().create(true).truncate(true).read(true).write(true).open(path)?;
        Ok(OutputLog { path: path.to_path_buf(), file, dropped: 0, written: 0, cap: cap.max(1024) })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn written(&self) -> u64 {
        self.written
    }

    pub(super) fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.seek(SeekFrom::End(0))?;
        self.file.write_all(bytes)?;
        self.written += bytes.len() as u64;
        if self.written - self.dropped > self.cap {
            self.drop_oldest()?;
        }
        Ok(())
    }

    /// Keep the newest half of the cap: rewritten through a new file, renamed over the old.
    fn drop_oldest(&mut self) -> std::io::Result<()> {
        let keep = self.cap / 2;
        let on_disk = self.written - self.dropped;
        let cut = on_disk - keep;
        let mut tail = Vec::with_capacity(keep as usize);
        self.file.seek(SeekFrom::Start(cut))?;
        self.file.read_to_end(&mut tail)?;
        let mut part = self.path.as_os_str().to_owned();
        part.push(".part");
        let part = PathBuf::from(part);
        std::fs::write(&part, &tail)?;
        std::fs::rename(&part, &self.path)?;
        self.file = std::fs::OpenOptions::new().read(true).write(true).open(&self.path)?;
        self.dropped += cut;
        Ok(())
    }

    /// At most `max` bytes from `offset` (cut back to a whole line when there is more).
    pub(super) fn read(&mut self, offset: u64, max: usize) -> std::io::Result<Slice> {
        let from = offset.clamp(self.dropped, self.written);
        let available = (self.written - from) as usize;
        let len = available.min(max);
        let mut bytes = vec![0u8; len];
        self.file.seek(SeekFrom::Start(from - self.dropped))?;
        self.file.read_exact(&mut bytes)?;
        if len < available
            && let Some(end) = bytes.iter().rposition(|&b| b == b'\n')
        {
            bytes.truncate(end + 1);
        }
        let to = from + bytes.len() as u64;
        Ok(Slice { text: String::from_utf8_lossy(&bytes).into_owned(), from, to, total: self.written })
    }

    /// The last `n` lines (from the last few kilobytes).
    pub(super) fn last_lines(&mut self, n: usize) -> Vec<String> {
        let from = self.written.saturating_sub(4096);
        let Ok(slice) = self.read(from, 4096) else { return Vec::new() };
        let mut lines: Vec<String> =
            slice.text.lines().rev().filter(|l| !l.trim().is_empty()).take(n).map(str::to_string).collect();
        lines.reverse();
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_outlive_the_oldest_output_being_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = OutputLog::create(&dir.path().join("job/1.log"), 1024).unwrap();
        for i in 0..100 {
            log.append(format!("line {i:03}\n").as_bytes()).unwrap();
        }
        assert_eq!(log.written(), 900);
        let all = log.read(0, 10_000).unwrap();
        assert_eq!((all.from, all.to, all.total), (0, 900, 900), "under the cap: everything is there");
        for i in 100..200 {
            log.append(format!("line {i:03}\n").as_bytes()).unwrap();
        }
        let on_disk = std::fs::metadata(log.path()).unwrap().len();
        assert!(on_disk <= 1024, "the file stays under its cap: {on_disk}");
        let slice = log.read(0, 10_000).unwrap();
        assert!(slice.from > 0 && slice.to == 1800, "{slice:?}");
        assert!(slice.text.ends_with("line 199\n"));
        let next = log.read(1791, 100).unwrap();
        assert_eq!(next.text, "line 199\n", "an offset past the drop reads what it named");
        let cut = log.read(1692, 25).unwrap();
        assert_eq!(cut.text, "line 188\nline 189\n", "a short read ends at a whole line");
        assert_eq!(log.last_lines(2), ["line 198", "line 199"]);
    }
}

//! Projects for the benches: a git folder with files whose text neither repeats between files
//! nor compresses into nothing.

/// A temporary project (a `.git` folder, so it is a project root) holding `f00.txt`,
/// `f01.txt`, … of about `bytes` bytes each.
pub fn project(files: usize, bytes: usize) -> tempfile::TempDir {
    let project = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir(project.path().join(".git")).expect("a .git folder");
    for i in 0..files {
        std::fs::write(project.path().join(format!("f{i:02}.txt")), file_text(i, bytes)).expect("a file");
    }
    project
}

/// About `bytes` bytes of numbered lines, different for every `index`.
fn file_text(index: usize, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 80);
    let mut n = index as u64 * 7_919 + 1;
    while out.len() < bytes {
        n = n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        out.push_str(&format!("line {} of file {index}: value {:x}\n", out.len() / 40, n >> 20));
    }
    out
}

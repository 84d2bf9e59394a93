//! `find`: starting points, then an expression of tests, options and actions. Read-only when
//! every word of the expression is a known test or a printing action — not `-exec`, `-ok`,
//! `-delete`, `-fprint…`, `-fls` or `-files0-from`.

use super::Reads;

const FLAGS: &[&str] = &[
    "-daystart",
    "-depth",
    "-d",
    "-ignore_readdir_race",
    "-mount",
    "-noignore_readdir_race",
    "-noleaf",
    "-xdev",
    "-nowarn",
    "-warn",
    "-empty",
    "-executable",
    "-false",
    "-nogroup",
    "-nouser",
    "-readable",
    "-true",
    "-writable",
    "-print",
    "-print0",
    "-prune",
    "-quit",
    "-ls",
    "(",
    ")",
    "!",
    "-not",
    "-a",
    "-and",
    "-o",
    "-or",
    ",",
    "-follow",
];
const VALUED: &[&str] = &[
    "-maxdepth",
    "-mindepth",
    "-amin",
    "-atime",
    "-cmin",
    "-ctime",
    "-fstype",
    "-gid",
    "-group",
    "-ilname",
    "-iname",
    "-inum",
    "-ipath",
    "-iregex",
    "-iwholename",
    "-links",
    "-lname",
    "-mmin",
    "-mtime",
    "-name",
    "-path",
    "-perm",
    "-regex",
    "-regextype",
    "-size",
    "-type",
    "-uid",
    "-used",
    "-user",
    "-wholename",
    "-xtype",
    "-context",
    "-printf",
];
/// Tests whose value is a file whose times or identity are compared.
const FILE_VALUED: &[&str] = &["-anewer", "-cnewer", "-newer", "-samefile"];

pub fn check(args: &[String]) -> Result<Reads, String> {
    let mut reads = Reads { recursive: true, ..Reads::default() };
    let mut i = 0;
    // Global options before the starting points.
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-H" | "-P" => {}
            "-L" => reads.follows_links = true,
            "-D" => i += 1,
            o if o.starts_with("-O") => {}
            _ => break,
        }
        i += 1;
    }
    while let Some(a) = args.get(i) {
        if a.starts_with('-') || a == "(" || a == "!" {
            break;
        }
        reads.paths.push(a.clone());
        i += 1;
    }
    if reads.paths.is_empty() {
        reads.paths.push(".".into());
    }
    while let Some(a) = args.get(i) {
        i += 1;
        let word = a.as_str();
        if word == "-follow" {
            reads.follows_links = true;
        }
        if FLAGS.contains(&word) {
            continue;
        }
        if VALUED.contains(&word) {
            i += 1;
            continue;
        }
        if FILE_VALUED.contains(&word) || (word.starts_with("-newer") && word.len() == 8) {
            if let Some(file) = args.get(i) {
                reads.paths.push(file.clone());
            }
            i += 1;
            continue;
        }
        return Err(match word {
            "-exec" | "-execdir" | "-ok" | "-okdir" => format!("`find {word}` runs a command on what it finds"),
            "-delete" => "`find -delete` deletes what it finds".into(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => format!("`find {word}` writes a file"),
            "-files0-from" => "`find -files0-from` reads the names of its starting points from a file".into(),
            other => format!("`find {other}` is not a test or action cairn knows"),
        });
    }
    Ok(reads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tests_and_printing_are_read_only_and_actions_are_not() {
        let r = check(&words(&["src", "-name", "*.rs", "-type", "f", "-newer", "Cargo.toml", "-print"])).unwrap();
        assert_eq!(r.paths, ["src", "Cargo.toml"]);
        assert!(check(&words(&["-L", "."])).unwrap().follows_links);
        assert_eq!(check(&words(&[])).unwrap().paths, ["."]);
        for bad in [
            &["-exec", "rm", "{}", ";"][..],
            &["-delete"],
            &["-fprint", "x"],
            &["-files0-from", "-"],
            &["-okdir", "x"],
            &["-frobnicate"],
        ] {
            assert!(check(&words(bad)).is_err(), "{bad:?}");
        }
    }
}

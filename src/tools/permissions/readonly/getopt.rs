//! Command-line options read the way the program reads them: short options clustered
//! (`-rn`), their values attached (`-es/x/y/`) or in the next word, long options with `=` or
//! the next word, and — for programs that use GNU `getopt_long` — long options abbreviated to
//! any unique prefix (`sed --in` is `--in-place`, `sort --outp=f` is `--output=f`). An option
//! the table does not list is an error: an unknown option is never read-only.

/// How a program's options are written.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Short options, as for getopt: `"nr"` flags, `"k:"` a value, `"o::"` an optional value
    /// that must be attached.
    pub short: &'static str,
    /// Long options without dashes, separated by spaces: `name` a flag, `name=` a value,
    /// `name?` an optional value (only with `=`).
    pub long: &'static str,
    /// Long options may be abbreviated to a unique prefix (GNU getopt_long, git).
    pub abbreviations: bool,
    /// Options may follow operands (GNU argument permutation); otherwise the first operand
    /// ends the options.
    pub permute: bool,
}

/// One option or operand, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// `name` is the short letter or the full long name (an abbreviation resolved).
    Opt {
        name: String,
        value: Option<String>,
    },
    Operand(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Value,
    Optional,
}

fn long_entry(entry: &str) -> (&str, Takes) {
    if let Some(name) = entry.strip_suffix('=') {
        (name, Takes::Value)
    } else if let Some(name) = entry.strip_suffix('?') {
        (name, Takes::Optional)
    } else {
        (entry, Takes::Nothing)
    }
}

fn short_takes(spec: &Spec, c: char) -> Option<Takes> {
    let chars: Vec<char> = spec.short.chars().collect();
    let at = chars.iter().position(|&s| s == c && c != ':')?;
    Some(match (chars.get(at + 1), chars.get(at + 2)) {
        (Some(':'), Some(':')) => Takes::Optional,
        (Some(':'), _) => Takes::Value,
        _ => Takes::Nothing,
    })
}

/// Resolve `--given` among the long options: exact, else a unique prefix when abbreviations
/// are allowed.
fn resolve_long(spec: &Spec, program: &str, given: &str) -> Result<(&'static str, Takes), String> {
    if let Some(entry) = spec.long.split_whitespace().find(|e| long_entry(e).0 == given) {
        return Ok(long_entry(entry));
    }
    let candidates: Vec<&'static str> = if spec.abbreviations && !given.is_empty() {
        spec.long.split_whitespace().filter(|e| long_entry(e).0.starts_with(given)).collect()
    } else {
        Vec::new()
    };
    match candidates.as_slice() {
        [one] => Ok(long_entry(one)),
        [] => Err(format!("`--{given}` is an option of `{program}` that cairn does not know")),
        many => Err(format!(
            "`--{given}` is ambiguous for `{program}` ({})",
            many.iter().map(|e| format!("--{}", long_entry(e).0)).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Split `args` into options and operands as `program` would.
pub fn parse(spec: &Spec, program: &str, args: &[String]) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options_over = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if options_over || arg == "-" || !arg.starts_with('-') {
            out.push(Token::Operand(arg.clone()));
            if !spec.permute {
                options_over = true;
            }
            continue;
        }
        if arg == "--" {
            options_over = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (given, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (long, None),
            };
            let (name, takes) = resolve_long(spec, program, given)?;
            let value = match (takes, attached) {
                (Takes::Nothing, Some(_)) => {
                    return Err(format!("`--{name}` of `{program}` takes no value"));
                }
                (Takes::Nothing, None) => None,
                (Takes::Optional, value) => value,
                (Takes::Value, Some(value)) => Some(value),
                (Takes::Value, None) => {
                    let next = args.get(i).ok_or_else(|| format!("`--{name}` of `{program}` needs a value"))?;
                    i += 1;
                    Some(next.clone())
                }
            };
            out.push(Token::Opt { name: name.to_string(), value });
            continue;
        }
        let cluster: Vec<char> = arg[1..].chars().collect();
        let mut k = 0;
        while k < cluster.len() {
            let c = cluster[k];
            k += 1;
            let takes = short_takes(spec, c)
                .ok_or_else(|| format!("`-{c}` is an option of `{program}` that cairn does not know"))?;
            let rest: String = cluster[k..].iter().collect();
            let value = match takes {
                Takes::Nothing => None,
                Takes::Optional => {
                    k = cluster.len();
                    (!rest.is_empty()).then_some(rest)
                }
                Takes::Value => {
                    k = cluster.len();
                    if rest.is_empty() {
                        let next = args.get(i).ok_or_else(|| format!("`-{c}` of `{program}` needs a value"))?;
                        i += 1;
                        Some(next.clone())
                    } else {
                        Some(rest)
                    }
                }
            };
            out.push(Token::Opt { name: c.to_string(), value });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Spec = Spec {
        short: "bno:k:",
        long: "numeric-sort output= compress-program= key= debug version?",
        abbreviations: true,
        permute: true,
    };

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn opt(name: &str, value: Option<&str>) -> Token {
        Token::Opt { name: name.into(), value: value.map(String::from) }
    }

    #[test]
    fn abbreviations_resolve_to_the_one_option_they_start() {
        let t = parse(&SORT, "sort", &args(&["--outp=f", "--comp", "sh", "x"])).unwrap();
        assert_eq!(t, [opt("output", Some("f")), opt("compress-program", Some("sh")), Token::Operand("x".into())]);
        assert!(parse(&SORT, "sort", &args(&["--no-such"])).unwrap_err().contains("does not know"));
        let ambiguous = Spec { long: "output= output-delimiter=", ..SORT };
        assert!(parse(&ambiguous, "x", &args(&["--out=f"])).unwrap_err().contains("ambiguous"));
        let exact = Spec { abbreviations: false, ..SORT };
        assert!(parse(&exact, "x", &args(&["--outp=f"])).is_err());
    }

    #[test]
    fn short_clusters_take_attached_or_next_values() {
        let t = parse(&SORT, "sort", &args(&["-nbofile", "-k", "2", "a"])).unwrap();
        assert_eq!(
            t,
            [opt("n", None), opt("b", None), opt("o", Some("file")), opt("k", Some("2")), Token::Operand("a".into())]
        );
        assert!(parse(&SORT, "sort", &args(&["-x"])).is_err());
        assert!(parse(&SORT, "sort", &args(&["-o"])).unwrap_err().contains("needs a value"));
    }

    #[test]
    fn options_after_operands_count_unless_the_program_stops_at_the_first_operand() {
        let t = parse(&SORT, "sort", &args(&["a", "-o", "f", "--", "-o"])).unwrap();
        assert_eq!(t, [Token::Operand("a".into()), opt("o", Some("f")), Token::Operand("-o".into())]);
        let posix = Spec { permute: false, ..SORT };
        let t = parse(&posix, "x", &args(&["a", "-o", "f"])).unwrap();
        assert_eq!(t.len(), 3);
        assert!(t.iter().all(|t| matches!(t, Token::Operand(_))));
    }
}

//! `git`: read-only subcommands with every option they may take listed (git abbreviates long
//! options to a unique prefix, as getopt_long does), in the project's own repository only —
//! git in another repository (a nested or committed bare one, or one chosen with `-C`,
//! `--git-dir` or `-c`) runs that repository's configured programs (fsmonitor, pagers, diff
//! drivers), so it is not read-only.

use super::getopt::{self, Spec, Token};
use super::{Context, Reads};

/// The options of git's diff machinery (diff, show, log -p, …).
macro_rules! long_diff {
    () => {
        "patch no-patch unified= output= output-indicator-new= output-indicator-old= \
        output-indicator-context= raw patch-with-raw indent-heuristic no-indent-heuristic minimal patience \
        histogram anchored= diff-algorithm= stat? compact-summary numstat shortstat dirstat? cumulative \
        dirstat-by-file? summary patch-with-stat name-only name-status submodule? color? no-color \
        color-moved? no-color-moved color-moved-ws= no-color-moved-ws word-diff? word-diff-regex= \
        color-words? no-renames rename-empty no-rename-empty check ws-error-highlight= full-index binary \
        abbrev? no-abbrev break-rewrites? find-renames? find-copies? find-copies-harder irreversible-delete \
        diff-filter= find-object= pickaxe-all pickaxe-regex skip-to= rotate-to= relative? no-relative text \
        ignore-cr-at-eol ignore-space-at-eol ignore-space-change ignore-all-space ignore-blank-lines \
        ignore-matching-lines= inter-hunk-context= function-context exit-code quiet ext-diff no-ext-diff \
        textconv no-textconv ignore-submodules? src-prefix= dst-prefix= no-prefix default-prefix \
        line-prefix= ita-invisible-in-index ita-visible-in-index stat-width= stat-name-width= stat-count= \
        stat-graph-width= renames color-moved-ws cached staged merge-base no-index ours theirs base"
    };
}

/// The options of git's revision walk (log, rev-list, shortlog, …).
macro_rules! long_log {
    () => {
        "max-count= skip= since= after= until= before= author= committer= grep= grep-reflog= all-match \
        invert-grep regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp remove-empty \
        merges no-merges min-parents= max-parents= no-min-parents no-max-parents first-parent \
        exclude-first-parent-only not all branches? tags? remotes? glob= exclude= reflog alternate-refs \
        single-worktree ignore-missing bisect stdin cherry-mark cherry-pick left-only right-only cherry \
        walk-reflogs merge boundary simplify-by-decoration show-pulls full-history dense sparse \
        simplify-merges ancestry-path? date-order author-date-order topo-order reverse no-walk? do-walk \
        pretty? format= abbrev-commit no-abbrev-commit oneline encoding= expand-tabs? no-expand-tabs notes? \
        no-notes show-notes? show-notes-by-default standard-notes no-standard-notes show-signature \
        relative-date date= parents children left-right graph show-linear-break? cc dd diff-merges= \
        no-diff-merges combined-all-paths decorate? no-decorate decorate-refs= decorate-refs-exclude= \
        clear-decorations source mailmap no-mailmap use-mailmap no-use-mailmap full-diff log-size follow \
        since-as-filter= count no-graph graph-lane-limit= remerge-diff first-parent auto-merge"
    };
}

const SHORT_LOG: &str = "n:iEFPgmctL:puszwbaRM::C::B::Dl:S:G:U:O:X::";
const SHORT_DIFF: &str = "puszwbaRM::C::B::Dl:S:G:U:O:X::0123";

/// Options that run a program or write a file, for every subcommand.
const UNSAFE: &[(&str, &str)] = &[
    ("output", "`--output` writes a file"),
    ("ext-diff", "`--ext-diff` runs the configured external diff program"),
    ("show-signature", "`--show-signature` runs gpg"),
    ("O", "`git grep -O` opens the files in a program"),
    ("open-files-in-pager", "`--open-files-in-pager` opens the files in a program"),
];

fn spec(short: &'static str, long: &'static str) -> Spec {
    Spec { short, long, abbreviations: true, permute: true }
}

/// Subcommand options, built once.
fn specs() -> &'static Specs {
    static SPECS: std::sync::OnceLock<Specs> = std::sync::OnceLock::new();
    SPECS.get_or_init(|| Specs {
        log: spec(SHORT_LOG, concat!(long_log!(), " ", long_diff!(), " help")),
        diff: spec(SHORT_DIFF, concat!(long_diff!(), " help")),
        status: spec(
            "sbvzu::",
            "short branch show-stash porcelain? long verbose untracked-files? ignore-submodules? ignored? null \
                column? no-column ahead-behind no-ahead-behind renames no-renames find-renames? help",
        ),
        blame: spec(
            "btL:lS:pM::C::sefnwc",
            "root show-stats porcelain line-porcelain incremental encoding= contents= date= progress no-progress \
                ignore-rev= ignore-revs-file= color-lines color-by-age minimal show-email show-name show-number \
                abbrev? score-debug reverse first-parent since= help",
        ),
        grep: spec(
            "aiIrwvhHEGPFnlLO::zocpA:B:C:Wm:f:e:q0123456789",
            "text textconv no-textconv ignore-case max-depth= recursive no-recursive word-regexp invert-match \
                full-name extended-regexp basic-regexp perl-regexp fixed-strings line-number column \
                files-with-matches name-only files-without-match open-files-in-pager? null only-matching count \
                color? no-color break heading show-function after-context= before-context= context= function-context \
                max-count= threads= and or not all-match quiet cached untracked no-index exclude-standard \
                no-exclude-standard recurse-submodules help",
        ),
        ls_files: spec(
            "cdmoiskuztvfx:X:",
            "cached deleted modified others ignored stage killed unmerged directory no-empty-directory eol \
                full-name recurse-submodules abbrev? exclude= exclude-from= exclude-per-directory= exclude-standard \
                error-unmatch with-tree= format= debug deduplicate sparse resolve-undo help",
        ),
        ls_tree: spec("drtlz", "long name-only name-status object-only full-name full-tree abbrev? format= help"),
        cat_file: spec(
            "tsepZ",
            "textconv filters path= batch? batch-check? batch-command? batch-all-objects buffer follow-symlinks \
                unordered allow-unknown-type mailmap use-mailmap no-mailmap help",
        ),
        rev_parse: spec(
            "q",
            "short? verify abbrev-ref? show-toplevel git-dir git-common-dir is-inside-work-tree is-inside-git-dir \
                is-bare-repository absolute-git-dir show-prefix show-cdup symbolic symbolic-full-name all branches? \
                tags? remotes? glob= default= quiet sq sq-quote local-env-vars path-format= show-object-format? \
                show-ref-format git-path= show-superproject-working-tree shared-index-path since= until= before= \
                after= revs-only no-revs flags no-flags prefix= not disambiguate= exclude= exclude-hidden= \
                is-shallow-repository end-of-options help",
        ),
        describe: spec(
            "",
            "all tags contains abbrev? candidates= exact-match debug long match= exclude= always first-parent \
                dirty? broken? help",
        ),
        shortlog: spec("sneccw::", concat!(long_log!(), " group= committer summary numbered email format= help")),
        merge_base: spec("a", "all octopus independent is-ancestor fork-point help"),
        name_rev: spec("", "tags refs= exclude= all annotate-stdin name-only no-undefined always help"),
        show_ref: spec("dsq", "head heads branches tags dereference hash? verify abbrev? quiet exists help"),
        for_each_ref: spec(
            "spq",
            "count= shell perl python tcl sort= format= color? points-at= merged? no-merged? contains? \
                no-contains? ignore-case omit-empty exclude= include-root-refs help",
        ),
        count_objects: spec("vH", "verbose human-readable help"),
        check_ignore: spec("qvnz", "quiet verbose no-index non-matching stdin help"),
        words: spec("l", "help build-options"),
    })
}

struct Specs {
    log: Spec,
    diff: Spec,
    status: Spec,
    blame: Spec,
    grep: Spec,
    ls_files: Spec,
    ls_tree: Spec,
    cat_file: Spec,
    rev_parse: Spec,
    describe: Spec,
    shortlog: Spec,
    merge_base: Spec,
    name_rev: Spec,
    show_ref: Spec,
    for_each_ref: Spec,
    count_objects: Spec,
    check_ignore: Spec,
    words: Spec,
}

/// How a subcommand's output relates to file contents.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shows {
    /// Names, ids, messages: no file contents.
    Nothing,
    /// File contents (patches, matches, blobs) of its pathspecs, or of the whole repository.
    Contents,
    /// Contents only with `-p`/`--patch` and the like.
    ContentsWithPatch,
}

pub fn check(args: &[String], cx: &Context<'_>) -> Result<Reads, String> {
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-replace-objects"
            | "--no-lazy-fetch"
            | "--no-advice" => rest = tail,
            "--version" => return Ok(Reads::default()),
            a if a.starts_with('-') => {
                return Err(format!("`git {a}` changes which repository git works in or how it runs"));
            }
            _ => break,
        }
    }
    let Some((sub, sub_args)) = rest.split_first() else {
        return Ok(Reads::default());
    };
    let reads = subcommand_reads(sub, sub_args)?;
    own_repository(cx)?;
    Ok(reads)
}

fn subcommand_reads(sub: &str, sub_args: &[String]) -> Result<Reads, String> {
    let s = specs();
    let (spec, shows) = match sub {
        "log" | "whatchanged" | "rev-list" => (&s.log, Shows::ContentsWithPatch),
        "show" => (&s.log, Shows::Contents),
        "diff" | "diff-tree" | "diff-files" | "diff-index" => (&s.diff, Shows::Contents),
        "status" => (&s.status, Shows::Nothing),
        "blame" | "annotate" => (&s.blame, Shows::Contents),
        "grep" => (&s.grep, Shows::Contents),
        "ls-files" => (&s.ls_files, Shows::Nothing),
        "ls-tree" => (&s.ls_tree, Shows::Nothing),
        "cat-file" => (&s.cat_file, Shows::Contents),
        "rev-parse" => (&s.rev_parse, Shows::Nothing),
        "describe" => (&s.describe, Shows::Nothing),
        "shortlog" => (&s.shortlog, Shows::Nothing),
        "merge-base" => (&s.merge_base, Shows::Nothing),
        "name-rev" => (&s.name_rev, Shows::Nothing),
        "show-ref" => (&s.show_ref, Shows::Nothing),
        "for-each-ref" => (&s.for_each_ref, Shows::Nothing),
        "count-objects" => (&s.count_objects, Shows::Nothing),
        "check-ignore" => (&s.check_ignore, Shows::Nothing),
        "var" | "version" => (&s.words, Shows::Nothing),
        "branch" => return branch(sub_args),
        "tag" => return tag(sub_args),
        "remote" => {
            return match sub_args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                [] | ["-v"] | ["--verbose"] | ["get-url", ..] | ["show", "-n", ..] => Ok(Reads::default()),
                _ => Err("that `git remote` changes remotes or contacts one".into()),
            };
        }
        "stash" => {
            return match sub_args.split_first() {
                Some((list, more)) if list == "list" => subcommand(&s.log, "stash list", more, Shows::Nothing),
                Some((show, more)) if show == "show" => subcommand(&s.diff, "stash show", more, Shows::Contents),
                _ => Err("`git stash` changes the working tree".into()),
            };
        }
        "reflog" => {
            return match sub_args.split_first() {
                None => Ok(Reads::default()),
                Some((show, more)) if show == "show" => subcommand(&s.log, "reflog", more, Shows::ContentsWithPatch),
                Some((flag, _)) if flag.starts_with('-') => {
                    subcommand(&s.log, "reflog", sub_args, Shows::ContentsWithPatch)
                }
                Some(_) => Err("that `git reflog` changes the reflog".into()),
            };
        }
        "worktree" => {
            return match sub_args.first().map(String::as_str) {
                Some("list") => Ok(Reads::default()),
                _ => Err("that `git worktree` changes worktrees".into()),
            };
        }
        "config" => return config(sub_args),
        other => return Err(format!("`git {other}` is not read-only")),
    };
    subcommand(spec, sub, sub_args, shows)
}

/// git in the project's own repository: the project has its `.git`, and no folder the part
/// runs in is inside another repository (a nested one, or a bare one committed to the project).
fn own_repository(cx: &Context<'_>) -> Result<(), String> {
    if !cx.root.join(".git").exists() {
        return Err("the project is not a git repository, so git would look for one outside it".into());
    }
    for cwd in cx.cwds {
        let mut dir = cwd.as_path();
        while dir.starts_with(cx.root) && dir != cx.root {
            let bare = dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir();
            if dir.join(".git").exists() || bare || dir.file_name().is_some_and(|n| n == ".git") {
                return Err(format!(
                    "{} is another repository, whose configuration can choose programs git runs",
                    dir.display()
                ));
            }
            match dir.parent() {
                Some(parent) => dir = parent,
                None => break,
            }
        }
        if !cwd.starts_with(cx.root) {
            return Err(format!("git would run in {}, outside the project", cwd.display()));
        }
    }
    Ok(())
}

fn subcommand(spec: &Spec, sub: &str, args: &[String], shows: Shows) -> Result<Reads, String> {
    // `-5`: the last five commits.
    let args: Vec<String> = args.iter().filter(|a| !is_count(a)).cloned().collect();
    let program = format!("git {sub}");
    let mut after_dashdash = Vec::new();
    let (before, after) = match args.iter().position(|a| a == "--") {
        Some(at) => {
            after_dashdash.extend(args[at + 1..].iter().cloned());
            (&args[..at], true)
        }
        None => (&args[..], false),
    };
    let mut reads = Reads::default();
    let mut patch = false;
    let mut operands = Vec::new();
    for token in getopt::parse(spec, &program, before)? {
        match token {
            Token::Opt { name, value } => {
                if let Some((_, why)) = UNSAFE.iter().find(|(o, _)| *o == name && !(name == "O" && sub != "grep")) {
                    return Err(format!("`{program}` {why}"));
                }
                patch |= matches!(
                    name.as_str(),
                    "p" | "u" | "patch" | "L" | "cc" | "full-diff" | "U" | "unified" | "word-diff" | "color-words"
                );
                match (name.as_str(), value) {
                    ("contents" | "ignore-revs-file" | "exclude-from", Some(file)) => reads.paths.push(file),
                    ("f", Some(file)) if sub == "grep" => reads.paths.push(file),
                    ("S", Some(file)) if sub == "blame" || sub == "annotate" => reads.paths.push(file),
                    ("O", Some(file)) if sub != "grep" => reads.paths.push(file),
                    _ => {}
                }
            }
            Token::Operand(o) => operands.push(o),
        }
    }
    let mut pathspecs = after_dashdash;
    for operand in operands {
        match operand.split_once(':') {
            // `HEAD:src/x`, `:src/x`, `:0:x`: a blob of the repository.
            Some((_, path))
                if !operand.starts_with(":(") && !operand.starts_with(":!") && !operand.starts_with(":^") =>
            {
                let path = path.rsplit_once(':').map_or(path, |(_, p)| p);
                if !path.is_empty() {
                    reads.repo_paths.push(path.to_string());
                }
            }
            _ if after || std::path::Path::new(&operand).exists() || operand.contains('/') => pathspecs.push(operand),
            _ => {}
        }
    }
    let contents = match shows {
        Shows::Nothing => false,
        Shows::Contents => true,
        Shows::ContentsWithPatch => patch,
    };
    // Exclusions (`:!x`) are not reads; what is left is read, or the whole repository.
    let included: Vec<String> = pathspecs
        .iter()
        .filter(|p| !p.starts_with(":!") && !p.starts_with(":^") && !p.starts_with(":(exclude)"))
        .cloned()
        .collect();
    if contents {
        reads.recursive = true;
        if included.is_empty() {
            reads.paths.push(".".into());
        }
    }
    reads.paths.extend(included.into_iter().map(|p| p.trim_start_matches(":/").to_string()));
    Ok(reads)
}

fn is_count(arg: &str) -> bool {
    arg.len() > 1 && arg.starts_with('-') && arg[1..].chars().all(|c| c.is_ascii_digit())
}

fn branch(args: &[String]) -> Result<Reads, String> {
    let spec = spec(
        "arvli",
        "all remotes verbose list show-current color? no-color column? no-column contains? no-contains? \
                merged? no-merged? points-at= ignore-case sort= format= abbrev? no-abbrev omit-empty",
    );
    let tokens = getopt::parse(&spec, "git branch", args)
        .map_err(|e| format!("{e}; `git branch` with it may change branches"))?;
    let listing = tokens.iter().any(|t| {
        matches!(t, Token::Opt { name, .. } if matches!(name.as_str(), "list" | "l" | "contains" | "no-contains" | "merged" | "no-merged" | "points-at"))
    });
    if tokens.iter().any(|t| matches!(t, Token::Operand(_))) && !listing {
        return Err("`git branch NAME` creates a branch".into());
    }
    Ok(Reads::default())
}

fn tag(args: &[String]) -> Result<Reads, String> {
    let spec = spec(
        "ln::i",
        "list contains? no-contains? points-at= merged? no-merged? sort= format= color? column? no-column \
                ignore-case omit-empty",
    );
    let tokens =
        getopt::parse(&spec, "git tag", args).map_err(|e| format!("{e}; `git tag` with it may change tags"))?;
    let listing = tokens.iter().any(|t| matches!(t, Token::Opt { name, .. } if name == "l" || name == "list"));
    if tokens.iter().any(|t| matches!(t, Token::Operand(_))) && !listing {
        return Err("`git tag NAME` creates a tag".into());
    }
    Ok(Reads::default())
}

/// `git config --get NAME`, `--list`: reading this repository's configuration.
fn config(args: &[String]) -> Result<Reads, String> {
    let spec = spec(
        "lz",
        "get get-all get-regexp get-urlmatch list show-origin show-scope name-only null type= bool int \
                bool-or-int path expiry-date local worktree includes no-includes default= all regexp value= \
                fixed-value url=",
    );
    let tokens = getopt::parse(&spec, "git config", args)
        .map_err(|e| format!("{e}; `git config` with it may set a value or read another file"))?;
    let reads_only = tokens.iter().any(|t| {
        matches!(t, Token::Opt { name, .. } if matches!(name.as_str(), "get" | "get-all" | "get-regexp" | "get-urlmatch" | "list" | "l"))
    }) || matches!(tokens.first(), Some(Token::Operand(verb)) if verb == "get" || verb == "list");
    if reads_only { Ok(Reads::default()) } else { Err("`git config` without --get or --list sets a value".into()) }
}

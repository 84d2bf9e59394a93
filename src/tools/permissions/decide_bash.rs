//! The decision for a `bash` call: each part of the line decided on its own, in order (a
//! `cd` moves where the following parts read), and the line gets the strongest answer.
//!
//! For each part: every program it runs (through wrappers, inline scripts, `find -exec`, git
//! aliases) is matched against the deny rules however it is named, and what cannot be known
//! before it runs is refused outright when a deny rule could match it — never asked, so
//! `--yes` cannot approve it. Then the read-only set; what it reads is checked like
//! `file_read` (patterns expanded, recursive reads walked, git's blobs included). An allow rule
//! covers a part only when it also covers, or the read-only set proves, every program the part
//! runs in turn.

use std::path::PathBuf;

use super::choices::{Choices, choices_for_bash};
use super::decide::{
    DecidedBy, Decision, PartDecision, Permission, Policy, denied_by_rule, describe_paths, plan_refusal,
};
use super::invocations::{Invocation, invocations};
use super::readonly::{self, Context, Reads};
use super::reads;
use super::rule::{Effect, Subject};
use super::shell::{self, Part, PartKind, Word, program_base};
use crate::conversation::Mode;
use crate::conversation::tool_names::{BASH, FILE_READ, FILE_WRITE};
use crate::tools::{Access, ProjectPath};

/// Where the parts of one line run, as far as the `cd`s before them tell.
struct Track {
    cwds: Vec<PathBuf>,
    /// A `cd` to a folder computed at run time came before.
    lost: bool,
}

impl Policy {
    pub(super) fn decide_bash(&self, mode: Mode, command: &str) -> Decision {
        // `deny bash` holds even for what cannot be parsed.
        if let Some(r) = self.rules.find(BASH, Subject::Nothing, Effect::Deny) {
            return Decision::deny(DecidedBy::rule(r), denied_by_rule(BASH, "every command", r));
        }
        let script = shell::parse(command);
        if let Some(why) = &script.unparsable {
            return self.unparsable(mode, why);
        }
        let mut track = Track { cwds: vec![self.root.clone()], lost: false };
        let mut extra_reads = Vec::new();
        let parts: Vec<PartDecision> =
            script.parts.iter().map(|p| self.decide_part(mode, p, &mut track, &mut extra_reads)).collect();
        let strongest = parts.iter().map(|p| p.permission).max().unwrap_or(Permission::Allow);
        let mut decision = match strongest {
            Permission::Deny => {
                let Some(first) = parts.iter().find(|p| p.permission == Permission::Deny) else {
                    return Decision::allow(DecidedBy::ReadOnlySet);
                };
                Decision::deny(first.decided_by.clone(), first.why.clone())
            }
            Permission::Ask => {
                let asking: Vec<&PartDecision> = parts.iter().filter(|p| p.permission == Permission::Ask).collect();
                // A line of one command needs no quoting of itself: just why.
                let reason = match asking.as_slice() {
                    [only] if parts.len() == 1 => only.why.clone(),
                    _ => asking.iter().map(|p| format!("`{}`: {}", p.text, p.why)).collect::<Vec<_>>().join("; "),
                };
                let by_rule = asking.iter().any(|p| matches!(p.decided_by, DecidedBy::Rule(_)));
                let choices = if by_rule {
                    Choices::default()
                } else {
                    let asking_parts: Vec<&Part> = script
                        .parts
                        .iter()
                        .zip(&parts)
                        .filter(|(_, d)| d.permission == Permission::Ask)
                        .map(|(p, _)| p)
                        .collect();
                    choices_for_bash(&asking_parts, &self.root)
                };
                let decided_by = asking.first().map(|p| p.decided_by.clone()).unwrap_or(DecidedBy::Mode(mode));
                let mut d = Decision::ask(decided_by, reason, choices);
                d.needs_user = asking.iter().any(|p| p.needs_user);
                d
            }
            Permission::Allow => {
                let by_rule = parts.iter().find(|p| matches!(p.decided_by, DecidedBy::Rule(_)));
                let by = by_rule.or(parts.first()).map(|p| p.decided_by.clone()).unwrap_or(DecidedBy::ReadOnlySet);
                let mut d = Decision::allow(by);
                // Nothing a rule allowed: every part is proven read-only, and runs confined so.
                d.read_only = by_rule.is_none();
                d.extra_reads = extra_reads;
                d
            }
        };
        decision.parts = parts;
        decision
    }

    fn unparsable(&self, mode: Mode, why: &str) -> Decision {
        // A deny rule could match whatever it runs: refused, not asked.
        if let Some(r) = self.rules.bash_pattern_rule(Effect::Deny) {
            return Decision::deny(
                DecidedBy::rule(r),
                format!(
                    "`bash` was not run: the command could not be split into simple commands ({why}), so cairn cannot tell whether it runs what the rule `{}` ({}) denies. Write it as plain commands, one per part of a pipeline or list.",
                    r.rule,
                    r.level.label()
                ),
            );
        }
        if mode == Mode::Edit
            && let Some(r) = self.rules.find(BASH, Subject::Nothing, Effect::Allow)
        {
            return Decision::allow(DecidedBy::rule(r));
        }
        match mode {
            Mode::Edit => Decision::ask(
                DecidedBy::Unparsable,
                format!("the command could not be split into simple commands ({why}), so its parts cannot be checked"),
                Choices::default(),
            ),
            Mode::Plan | Mode::Ask => Decision::deny(
                DecidedBy::Unparsable,
                format!(
                    "`bash` was not run: the command could not be split into simple commands ({why}), so plan mode cannot tell that it only reads. Use simpler read-only commands, one per line of a pipeline or list."
                ),
            ),
        }
    }

    fn decide_part(&self, mode: Mode, part: &Part, track: &mut Track, extra_reads: &mut Vec<PathBuf>) -> PartDecision {
        let text = part.display();
        let verdict = |permission: Permission, decided_by: DecidedBy, why: String| {
            PartDecision::new(&text, permission, decided_by, why)
        };
        if matches!(part.kind, PartKind::Write | PartKind::Read) {
            return self.redirection(mode, part, &text, track);
        }
        let runs = invocations(part);
        // For the deny rules, a program that is a file a command could have made (in the
        // project or a temp folder, or not there yet) could be any program, a copy of `rm`
        // under another name among them.
        let made: Vec<Invocation> = runs
            .iter()
            .filter_map(|run| match run {
                Invocation::Argv { words, .. } => self.made_program(words),
                Invocation::Opaque(_) => None,
            })
            .collect();
        // Deny rules, against every program it runs however it is named.
        for run in runs.iter().chain(&made) {
            let hit = match run {
                Invocation::Argv { env, words } => self
                    .rules
                    .could_match_bash(env, words, Effect::Deny)
                    .map(|r| (r, denied_by_rule(BASH, &format!("`{}`", shown(words, &text)), r))),
                Invocation::Opaque(why) => self.rules.bash_pattern_rule(Effect::Deny).map(|r| {
                    (
                        r,
                        format!(
                            "`bash` was not run: in `{text}`, {why}, so cairn cannot tell whether it runs what the rule `{}` ({}) denies. Do not retry it or work around it; run plain commands instead, or ask the user.",
                            r.rule,
                            r.level.label()
                        ),
                    )
                }),
            };
            if let Some((r, why)) = hit {
                return verdict(Permission::Deny, DecidedBy::rule(r), why);
            }
        }
        let cx = Context { root: &self.root, cwds: &track.cwds };
        let read_only = readonly::check(part, &cx);
        if part.name().is_some_and(|n| program_base(n) == "cd") {
            match &read_only {
                Ok(Reads { cd: Some(dir), .. }) => {
                    for p in reads::resolve(std::slice::from_ref(dir), &self.root, &track.cwds.clone()) {
                        if !track.cwds.contains(&p.absolute) {
                            track.cwds.push(p.absolute);
                        }
                    }
                }
                _ => track.lost = true,
            }
        }
        // Files a command names, read or not, under a `file_read` deny rule.
        if read_only.is_err()
            && let Some(d) = self.named_files_denied(&runs, &text, track)
        {
            return d;
        }
        if let (Mode::Plan, Err(why)) = (mode, &read_only) {
            return verdict(Permission::Deny, DecidedBy::Mode(mode), plan_refusal(&text, why));
        }
        let asked = runs.iter().find_map(|run| match run {
            Invocation::Argv { env, words } => self.rules.could_match_bash(env, words, Effect::Ask),
            Invocation::Opaque(_) => None,
        });
        if let Some(r) = asked {
            return verdict(Permission::Ask, DecidedBy::rule(r), format!("the rule `{}` asks for it", r.rule));
        }
        match read_only {
            Ok(reads) => {
                let by_rule = self.allowed_by_rules(part, &runs, track);
                self.reads(mode, &text, &reads, track, by_rule, extra_reads)
            }
            Err(why) => match self.allowed_by_rules(part, &runs, track) {
                Some(by) => verdict(Permission::Allow, by, String::new()),
                None => verdict(Permission::Ask, DecidedBy::Mode(mode), why),
            },
        }
    }

    /// `./x`, `/tmp/tool`, or a name PATH finds in such a place: a program cairn cannot tell
    /// from the ones the deny rules name.
    fn made_program(&self, words: &[Word]) -> Option<Invocation> {
        let name = words.first().filter(|w| w.is_plain())?.text.as_str();
        let found = if name.contains('/') {
            match std::fs::canonicalize(self.root.join(name)) {
                Ok(path) => path,
                Err(_) => {
                    return Some(Invocation::Opaque(format!(
                        "`{name}` is not there yet, so what it is cannot be known"
                    )));
                }
            }
        } else {
            readonly::find_in_path(name)?
        };
        let mut places = vec![self.root.clone()];
        places.extend(["/tmp", "/var/tmp", "/dev/shm"].iter().map(PathBuf::from));
        places.extend(std::env::var_os("TMPDIR").map(PathBuf::from));
        let place = places
            .iter()
            .find(|p| found.starts_with(p) || std::fs::canonicalize(p).is_ok_and(|c| found.starts_with(c)))?;
        Some(Invocation::Opaque(format!(
            "`{name}` runs {}, a file in {} that any command may have written",
            found.display(),
            place.display()
        )))
    }

    /// An allow rule covers the part itself, and every program it runs in turn is covered by
    /// one too or proven read-only; nothing it runs is unknown.
    fn allowed_by_rules(&self, part: &Part, runs: &[Invocation], track: &Track) -> Option<DecidedBy> {
        let subject = Subject::Command { env: &part.env, words: &part.words };
        let outer = self.rules.find(BASH, subject, Effect::Allow)?;
        let cx = Context { root: &self.root, cwds: &track.cwds };
        for run in runs.iter().skip(1) {
            match run {
                Invocation::Opaque(_) => return None,
                Invocation::Argv { env, words } => {
                    let inner = Subject::Command { env, words };
                    let inner_part = Part { kind: PartKind::Command, env: env.clone(), words: words.clone() };
                    if self.rules.find(BASH, inner, Effect::Allow).is_none()
                        && readonly::check(&inner_part, &cx).is_err()
                    {
                        return None;
                    }
                }
            }
        }
        Some(DecidedBy::rule(outer))
    }

    /// What a read-only part reads, checked like `file_read`: deny and ask rules, and reads
    /// outside the project (which ask, or in plan mode are refused, unless a rule allows them).
    fn reads(
        &self,
        mode: Mode,
        text: &str,
        r: &Reads,
        track: &Track,
        by_rule: Option<DecidedBy>,
        extra_reads: &mut Vec<PathBuf>,
    ) -> PartDecision {
        let verdict = |permission: Permission, decided_by: DecidedBy, why: String| {
            PartDecision::new(text, permission, decided_by, why)
        };
        let mut paths = reads::resolve(&r.paths, &self.root, &track.cwds);
        paths.extend(reads::repo_paths(&r.repo_paths, &self.root, &track.cwds));
        if let Some(rule) =
            self.rules.decide(FILE_READ, Subject::Paths(&paths)).filter(|rule| rule.effect != Effect::Allow)
        {
            return match rule.effect {
                Effect::Deny => verdict(
                    Permission::Deny,
                    DecidedBy::rule(rule),
                    denied_by_rule(BASH, &format!("`{text}` reads {}", describe_paths(&paths)), rule),
                ),
                Effect::Ask | Effect::Allow => verdict(
                    Permission::Ask,
                    DecidedBy::rule(rule),
                    format!("the rule `{}` asks for reading {}", rule.rule, describe_paths(&paths)),
                ),
            };
        }
        let mut outside: Vec<ProjectPath> = paths.iter().filter(|p| !p.inside_project).cloned().collect();
        if r.recursive {
            let denies = self.rules.has(FILE_READ, Effect::Deny);
            let confined = mode == Mode::Plan || outside.is_empty();
            if denies || (r.follows_links && confined) {
                let deny = |p: &ProjectPath| {
                    denies
                        && self
                            .rules
                            .decide(FILE_READ, Subject::Paths(std::slice::from_ref(p)))
                            .is_some_and(|rule| rule.effect == Effect::Deny)
                };
                let walked = reads::walk(&self.root, &paths, r.follows_links, &deny);
                if let Some(found) = &walked.denied
                    && let Some(rule) = self.rules.decide(FILE_READ, Subject::Paths(std::slice::from_ref(found)))
                {
                    return verdict(
                        Permission::Deny,
                        DecidedBy::rule(rule),
                        denied_by_rule(
                            BASH,
                            &format!(
                                "`{text}` reads everything under {}, {} among it,",
                                describe_paths(&paths),
                                found.display
                            ),
                            rule,
                        ),
                    );
                }
                if walked.cut && denies {
                    let rule = self.rules.iter().find(|x| x.effect == Effect::Deny && x.rule.names_tool(FILE_READ));
                    if let Some(rule) = rule {
                        return verdict(
                            Permission::Deny,
                            DecidedBy::rule(rule),
                            format!(
                                "`bash` was not run: `{text}` reads more than {} files, too many to check against the rule `{}`. Name the folders to read.",
                                reads::MAX_WALK,
                                rule.rule
                            ),
                        );
                    }
                }
                outside.extend(walked.escapes);
            }
        }
        if let Some(by) = by_rule {
            return verdict(Permission::Allow, by, String::new());
        }
        if outside.is_empty() {
            return verdict(Permission::Allow, DecidedBy::ReadOnlySet, String::new());
        }
        if let Some(rule) = self.rules.find(FILE_READ, Subject::Paths(&outside), Effect::Allow) {
            extra_reads.extend(outside.iter().map(|p| p.absolute.clone()));
            return verdict(Permission::Allow, DecidedBy::rule(rule), String::new());
        }
        let shown = describe_paths(&outside);
        match mode {
            Mode::Edit => {
                verdict(Permission::Ask, DecidedBy::Mode(mode), format!("reads outside the project: {shown}"))
            }
            Mode::Plan | Mode::Ask => verdict(
                Permission::Deny,
                DecidedBy::Mode(mode),
                format!(
                    "`bash` was not run: `{text}` reads {shown}, outside the project, and plan mode only reads inside it."
                ),
            ),
        }
    }

    /// For a part that is not read-only: a file it names (any argument, of any program it
    /// runs) that a `file_read` deny rule covers. `cp .env x` and `awk 1 .en?` are refused.
    fn named_files_denied(&self, runs: &[Invocation], text: &str, track: &Track) -> Option<PartDecision> {
        if !self.rules.has(FILE_READ, Effect::Deny) {
            return None;
        }
        let mut named = Vec::new();
        let refuse = |why: String| {
            let rule = self.rules.iter().find(|x| x.effect == Effect::Deny && x.rule.names_tool(FILE_READ))?;
            Some(PartDecision {
                text: text.to_string(),
                permission: Permission::Deny,
                decided_by: DecidedBy::rule(rule),
                why: format!(
                    "`bash` was not run: in `{text}`, {why}, so cairn cannot tell whether it reads what the rule `{}` ({}) denies. Do not retry it or work around it; name the files to read, or ask the user.",
                    rule.rule,
                    rule.level.label()
                ),
                needs_user: false,
            })
        };
        for run in runs {
            let Invocation::Argv { words, .. } = run else { continue };
            let base = words.first().map(|w| program_base(&w.text)).unwrap_or("");
            if matches!(base, "echo" | "printf") {
                continue;
            }
            // Searchers that read every file under the folder they run in.
            if RECURSIVE_SEARCHERS.contains(&base) {
                return refuse(format!("`{base}` reads every file under the folder"));
            }
            if let Some(w) = words.iter().skip(1).find(|w| !w.literal) {
                return refuse(format!("its argument `{}` is computed when it runs", w.text));
            }
            for w in words.iter().skip(1).filter(|w| w.literal) {
                let values = match &w.pattern {
                    Some(p) => {
                        track.cwds.iter().flat_map(|c| super::globbing::expand(p, c).unwrap_or_default()).collect()
                    }
                    None => vec![w.text.clone()],
                };
                for v in values {
                    // `--file=.env`, and `if=.env` as dd writes it.
                    let v = v
                        .split_once('=')
                        .filter(|(k, _)| {
                            k.starts_with('-')
                                || (!k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                        })
                        .map_or(v.as_str(), |(_, value)| value);
                    // `git show HEAD:.env`: the path after the revision.
                    let v = v.rsplit_once(':').filter(|(rev, _)| !rev.contains('/')).map_or(v, |(_, path)| path);
                    if !v.is_empty() && !v.starts_with('-') {
                        named.push(v.to_string());
                    }
                }
            }
        }
        let paths = reads::resolve(&named, &self.root, &track.cwds);
        let repo = reads::repo_paths(&named, &self.root, &track.cwds);
        for p in paths.iter().chain(&repo) {
            if let Some(rule) = self
                .rules
                .decide(FILE_READ, Subject::Paths(std::slice::from_ref(p)))
                .filter(|r| r.effect == Effect::Deny)
            {
                return Some(PartDecision {
                    text: text.to_string(),
                    permission: Permission::Deny,
                    decided_by: DecidedBy::rule(rule),
                    why: denied_by_rule(BASH, &format!("`{text}` names {}, which", p.display), rule),
                    needs_user: false,
                });
            }
        }
        None
    }

    /// A redirection: a write decided like `file_write`, a read like `file_read`.
    fn redirection(&self, mode: Mode, part: &Part, text: &str, track: &Track) -> PartDecision {
        let verdict = |permission: Permission, decided_by: DecidedBy, why: String| {
            PartDecision::new(text, permission, decided_by, why)
        };
        let (tool, access) =
            if part.kind == PartKind::Write { (FILE_WRITE, Access::Write) } else { (FILE_READ, Access::Read) };
        let words: Vec<String> = part.words.iter().filter(|w| w.literal).map(|w| w.text.clone()).collect();
        if words.len() != part.words.len() {
            // `> "$HOME/y"`: where it goes is known only when it runs.
            return match mode {
                Mode::Edit => {
                    verdict(Permission::Ask, DecidedBy::Mode(mode), "redirects to a path computed when it runs".into())
                }
                Mode::Plan | Mode::Ask => verdict(
                    Permission::Deny,
                    DecidedBy::Mode(mode),
                    plan_refusal(text, "it redirects to a path computed when it runs"),
                ),
            };
        }
        let paths = reads::resolve(&words, &self.root, &track.cwds);
        // `allow bash` with no pattern lets a command write where it likes.
        if mode == Mode::Edit
            && self.rules.decide(tool, Subject::Paths(&paths)).is_none()
            && let Some(r) = self.rules.find(BASH, Subject::Nothing, Effect::Allow)
            && !paths.iter().any(|p| super::protected::protection(&self.root, &p.absolute).is_some())
        {
            return verdict(Permission::Allow, DecidedBy::rule(r), String::new());
        }
        let d = self.decide_tool(mode, tool, access, Subject::Paths(&paths), &paths);
        let why = match (d.permission, mode, part.kind) {
            (Permission::Deny, Mode::Plan, PartKind::Write) if matches!(d.decided_by, DecidedBy::Mode(_)) => {
                plan_refusal(text, &format!("it writes to {}", describe_paths(&paths)))
            }
            (Permission::Deny, _, _) => d.reason,
            (Permission::Ask, _, _) if d.needs_user => d.reason,
            (Permission::Ask, _, _) => format!(
                "{} {}",
                if part.kind == PartKind::Write { "writes to" } else { "reads" },
                describe_paths(&paths)
            ),
            (Permission::Allow, _, _) => String::new(),
        };
        PartDecision { needs_user: d.needs_user, ..verdict(d.permission, d.decided_by, why) }
    }
}

/// Programs that search every file under the folder they run in when given no path, and that
/// cairn's read-only set does not know (grep -r and rg it follows itself).
const RECURSIVE_SEARCHERS: &[&str] = &["ag", "ack", "ack-grep", "pt", "sift", "ucg", "ugrep", "rga", "ripgrep-all"];

/// The program a deny rule matched, as the message shows it.
fn shown(words: &[Word], part: &str) -> String {
    let inner = Part::command(words.to_vec()).display();
    if inner == part { inner } else { format!("{inner}` (in `{part}`)") }
}

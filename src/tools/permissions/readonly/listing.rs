//! The programs of the read-only set that list, search and compare folders — most of them
//! recursively (`ls -R`, `du`, `tree`, `grep -r`, `rg`, `fd`, `diff -r`), so what they read is
//! walked for deny rules and links out of the project.

use super::getopt::Spec;
use super::programs::{BASE, FILES0, GNU, Operands, Program};

pub const LISTING: &[Program] = &[
    Program {
        names: &["ls", "dir", "vdir"],
        spec: Spec {
            short: "aAbBcCdDfFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ1",
            long: "all almost-all author escape block-size= ignore-backups color? directory dired classify? file-type \
                format= full-time group-directories-first no-group human-readable si dereference-command-line \
                dereference-command-line-symlink-to-dir hide= hyperlink? indicator-style= inode ignore= kibibytes \
                dereference numeric-uid-gid literal hide-control-chars show-control-chars quote-name quoting-style= \
                reverse recursive size sort= time= time-style= tabsize= width= context zero help version",
            ..GNU
        },
        recursive_opts: &["R", "recursive"],
        follow_opts: &["L", "dereference"],
        reads_here: true,
        ..BASE
    },
    Program {
        names: &["du"],
        spec: Spec {
            short: "0abB:cd:DhHklLmsSt:xX:",
            long: "null all apparent-size block-size= bytes total max-depth= human-readable inodes si summarize \
                threshold= time? time-style= exclude-from= exclude= files0-from= count-links dereference \
                dereference-args no-dereference separate-dirs one-file-system help version",
            ..GNU
        },
        unsafe_opts: &[FILES0],
        file_opts: &["X", "exclude-from"],
        follow_opts: &["L", "dereference"],
        always_recursive: true,
        reads_here: true,
        ..BASE
    },
    Program {
        names: &["diff"],
        spec: Spec {
            short: "0123456789abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwWx:X:y",
            long: "normal brief report-identical-files context? unified? ed rcs side-by-side width= left-column \
                suppress-common-lines show-c-function show-function-line= label= expand-tabs initial-tab tabsize= \
                suppress-blank-empty paginate recursive no-dereference new-file unidirectional-new-file \
                ignore-file-name-case no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= \
                to-file= ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space \
                ignore-blank-lines ignore-matching-lines= text strip-trailing-cr old-group-format= new-group-format= \
                unchanged-group-format= changed-group-format= line-format= old-line-format= new-line-format= \
                unchanged-line-format= ifdef= minimal horizon-lines= speed-large-files color? palette= binary help \
                version",
            ..GNU
        },
        unsafe_opts: &[("l", "`diff -l` runs `pr`"), ("paginate", "`diff --paginate` runs `pr`")],
        file_opts: &["X", "exclude-from", "from-file", "to-file"],
        recursive_opts: &["r", "recursive"],
        ..BASE
    },
    Program {
        names: &["grep", "egrep", "fgrep", "rgrep"],
        spec: Spec {
            short: "A:B:C:D:EFGHIPTUVZabcd:e:f:hiLlm:noqRrsuvwxyz0123456789",
            long: "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case \
                word-regexp line-regexp null-data no-messages invert-match version help max-count= byte-offset \
                line-number no-line-number line-buffered with-filename no-filename label= only-matching quiet silent \
                binary-files= text devices= directories= exclude= exclude-from= exclude-dir= include= recursive \
                dereference-recursive files-without-match files-with-matches count initial-tab null before-context= \
                after-context= context= color? colour? binary",
            ..GNU
        },
        file_opts: &["f", "file", "exclude-from"],
        pattern_opts: &["e", "regexp", "f", "file"],
        recursive_opts: &["r", "recursive", "R", "dereference-recursive"],
        follow_opts: &["R", "dereference-recursive"],
        operands: Operands::PatternThenFiles,
        ..BASE
    },
    Program {
        names: &["file"],
        spec: Spec {
            short: "bcCdEhiklLNnprsSvzZ0e:f:F:m:P:",
            long: "brief checking-printout compile debug exclude= exclude-quiet= extension files-from= separator= help \
                mime mime-type mime-encoding keep-going list dereference no-dereference magic-file= no-buffer no-pad \
                print0 preserve-date raw special-files uncompress uncompress-noreport parameter= version",
            ..GNU
        },
        unsafe_opts: &[
            ("C", "`file -C` writes a compiled magic file"),
            ("compile", "`file --compile` writes a compiled magic file"),
            ("p", "`file -p` changes the files' access times back"),
            ("preserve-date", "`file --preserve-date` changes the files' access times back"),
            ("f", "`file -f` reads the names of the files to read from a file cairn has not seen"),
            ("files-from", "`file --files-from` reads the names of the files to read from a file cairn has not seen"),
        ],
        file_opts: &["m", "magic-file"],
        ..BASE
    },
    Program {
        names: &["tree"],
        spec: Spec {
            short: "adlfxL:RP:I:iASnCXJQNpugshDFvtcUrH:T:o:",
            long: "gitignore gitfile= ignore-case matchdirs metafirst prune info infofile= noreport charset= filelimit= \
                timefmt= nolinks hintro= houtro= fromfile fromtabfile fflinks du si inodes device dirsfirst \
                filesfirst sort= help version condense",
            abbreviations: false,
            permute: true,
        },
        unsafe_opts: &[
            ("o", "`tree -o` writes a file"),
            ("fromfile", "`tree --fromfile` reads the listing from a file"),
            ("fromtabfile", "`tree --fromtabfile` reads the listing from a file"),
        ],
        file_opts: &["gitfile", "infofile"],
        follow_opts: &["l"],
        always_recursive: true,
        reads_here: true,
        ..BASE
    },
    Program {
        names: &["rg"],
        spec: Spec {
            short: "A:B:C:E:HILM:NPSTUVabcd:e:f:g:hij:lm:nopqr:st:uvwxz0",
            long: "after-context= before-context= context= encoding= with-filename no-filename follow max-columns= \
                no-line-number pcre2 smart-case type-not= multiline version text binary count max-depth= regexp= \
                file= glob= iglob= help ignore-case threads= files-with-matches files-without-match max-count= \
                line-number only-matching quiet replace= case-sensitive type= unrestricted invert-match word-regexp \
                line-regexp null null-data files type-list hidden no-hidden no-ignore no-ignore-vcs no-ignore-parent \
                no-ignore-dot no-ignore-global no-ignore-exclude no-ignore-files ignore-file= \
                ignore-file-case-insensitive json no-json vimgrep column no-column heading no-heading trim no-trim \
                stats no-stats sort= sortr= sort-files color= colors= colour= pretty byte-offset crlf no-crlf \
                dfa-size-limit= regex-size-limit= engine= fixed-strings no-fixed-strings glob-case-insensitive \
                no-glob-case-insensitive include-zero line-buffered block-buffered max-filesize= mmap no-mmap \
                multiline-dotall no-config no-messages no-require-git no-unicode one-file-system passthru \
                path-separator= context-separator= no-context-separator field-context-separator= \
                field-match-separator= auto-hybrid-regex no-pcre2-unicode stop-on-nonmatch type-add= type-clear= \
                debug trace unicode max-columns-preview hyperlink-format= count-matches search-zip pre= pre-glob= \
                hostname-bin= no-follow",
            abbreviations: false,
            permute: true,
        },
        unsafe_opts: &[
            ("pre", "`rg --pre` runs a program on every file"),
            ("hostname-bin", "`rg --hostname-bin` runs a program"),
            ("z", "`rg -z` runs decompression programs"),
            ("search-zip", "`rg --search-zip` runs decompression programs"),
        ],
        file_opts: &["f", "file", "ignore-file"],
        pattern_opts: &["e", "regexp", "f", "file", "files", "type-list"],
        follow_opts: &["L", "follow"],
        always_recursive: true,
        reads_here: true,
        operands: Operands::PatternThenFiles,
        ..BASE
    },
    Program {
        names: &["fd", "fdfind"],
        spec: Spec {
            short: "HIusiglFapL0d:t:e:E:c:S:o:j:1qhVx:X:",
            long: "hidden no-hidden no-ignore no-ignore-vcs no-ignore-parent no-require-git unrestricted case-sensitive \
                ignore-case glob regex fixed-strings and= absolute-path relative-path list-details follow no-follow \
                full-path print0 max-depth= min-depth= exact-depth= exclude= prune type= extension= size= \
                changed-within= changed-before= owner= format= color= hyperlink? threads= max-results= quiet \
                show-errors base-directory= path-separator= search-path= strip-cwd-prefix? one-file-system \
                ignore-file= help version exec= exec-batch= batch-size=",
            abbreviations: false,
            permute: true,
        },
        unsafe_opts: &[
            ("x", "`fd -x` runs a command on every result"),
            ("exec", "`fd --exec` runs a command on every result"),
            ("X", "`fd -X` runs a command on the results"),
            ("exec-batch", "`fd --exec-batch` runs a command on the results"),
            ("base-directory", "`fd --base-directory` changes the folder it searches from"),
        ],
        file_opts: &["ignore-file", "search-path"],
        follow_opts: &["L", "follow"],
        always_recursive: true,
        reads_here: true,
        operands: Operands::PatternThenFiles,
        ..BASE
    },
];

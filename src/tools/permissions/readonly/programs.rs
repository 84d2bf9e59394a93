//! The programs of the read-only set whose options a table can say: every option each one
//! takes, which of them make it write, run another program or read files named elsewhere
//! (not read-only), and which name files it reads. An option missing here is not read-only.

use super::getopt::Spec;

/// What a program's operands are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// Files (or folders) it reads.
    Files,
    /// Words that name no file: names, numbers, sets, strings.
    Words,
    /// A pattern, then files — unless an option gave the pattern.
    PatternThenFiles,
    /// At most this many files: one more is a file it writes.
    AtMost(usize),
}

/// One program of the read-only set.
#[derive(Clone, Copy, Debug)]
pub struct Program {
    pub names: &'static [&'static str],
    pub spec: Spec,
    /// Options that make it not read-only, with why.
    pub unsafe_opts: &'static [(&'static str, &'static str)],
    /// Options whose value is a file it reads.
    pub file_opts: &'static [&'static str],
    /// Options that give the pattern (so every operand is a file).
    pub pattern_opts: &'static [&'static str],
    /// Options that make it read folders recursively, and those that make it follow links.
    pub recursive_opts: &'static [&'static str],
    pub follow_opts: &'static [&'static str],
    /// It reads folders recursively whatever its options (du, rg, fd, tree).
    pub always_recursive: bool,
    /// With no file operand it reads the current folder.
    pub reads_here: bool,
    pub operands: Operands,
}

pub(super) const GNU: Spec = Spec { short: "", long: "help version", abbreviations: true, permute: true };

pub(super) const BASE: Program = Program {
    names: &[],
    spec: GNU,
    unsafe_opts: &[],
    file_opts: &[],
    pattern_opts: &[],
    recursive_opts: &[],
    follow_opts: &[],
    always_recursive: false,
    reads_here: false,
    operands: Operands::Files,
};

pub(super) const FILES0: (&str, &str) =
    ("files0-from", "it reads the names of the files to read from a file cairn has not seen");
const CHECK: (&str, &str) = ("check", "it reads the files named inside a checksum file cairn has not seen");

const SUMS: Spec = Spec {
    short: "bctwz",
    long: "binary check tag text ignore-missing quiet status strict warn zero help version",
    ..GNU
};

/// Every program of the table.
pub const PROGRAMS: &[Program] = &[
    Program {
        names: &["cat"],
        spec: Spec {
            short: "AbeEnstTuv",
            long: "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["head"],
        spec: Spec {
            short: "c:n:qvz0123456789",
            long: "bytes= lines= quiet silent verbose zero-terminated help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["tail"],
        spec: Spec {
            short: "c:fFn:qs:vz0123456789",
            long: "bytes= follow? lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= verbose \
                zero-terminated help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["wc"],
        spec: Spec {
            short: "clLmw",
            long: "bytes chars lines files0-from= max-line-length words total= help version",
            ..GNU
        },
        unsafe_opts: &[FILES0],
        ..BASE
    },
    Program {
        names: &["stat"],
        spec: Spec {
            short: "c:fLt",
            long: "dereference file-system format= printf= terse cached= help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["df"],
        spec: Spec {
            short: "ahHiklmPtTx:B:",
            long: "all block-size= human-readable si inodes local no-sync sync output? portability print-type type= \
                exclude-type= total help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["pwd"],
        spec: Spec { short: "LP", long: "logical physical help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["basename"],
        spec: Spec { short: "as:z", long: "multiple suffix= zero help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["dirname"],
        spec: Spec { short: "z", long: "zero help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["realpath"],
        spec: Spec {
            short: "eEmLPqsz",
            long: "canonicalize-existing canonicalize-missing logical physical quiet relative-to= relative-base= strip \
                no-symlinks zero help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["readlink"],
        spec: Spec {
            short: "efmnqsvz",
            long: "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero help \
                version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["nl"],
        spec: Spec {
            short: "b:d:f:h:i:l:n:ps:v:w:",
            long: "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= \
                join-blank-lines= number-format= no-renumber number-separator= starting-line-number= number-width= \
                help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["cut"],
        spec: Spec {
            short: "b:c:d:f:nsz",
            long: "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated \
                help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["tr"],
        spec: Spec { short: "cCdst", long: "complement delete squeeze-repeats truncate-set1 help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program { names: &["rev"], spec: Spec { short: "0hV", long: "zero help version", ..GNU }, ..BASE },
    Program {
        names: &["column"],
        spec: Spec {
            short: "c:d:eE:H:ilJLnN:o:O:r:R:s:tT:W:x",
            long: "columns= table-noheadings table-noextreme= table-header-as-columns table-hide= json keep-empty-lines \
                table-columns-limit= table-name= output-separator= table-order= table-right= separator= table \
                table-truncate= table-wrap= table-columns= fillrows help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["comm"],
        spec: Spec {
            short: "123z",
            long: "check-order nocheck-order output-delimiter= total zero-terminated help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["cmp"],
        spec: Spec {
            short: "bi:ln:sv",
            long: "print-bytes ignore-initial= verbose bytes= quiet silent help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["which"],
        spec: Spec { short: "as", long: "", abbreviations: false, permute: false },
        operands: Operands::Words,
        ..BASE
    },
    Program { names: &["whoami", "logname", "tty", "arch"], operands: Operands::Words, ..BASE },
    Program {
        names: &["id"],
        spec: Spec { short: "agGnruzZ", long: "context group groups name real user zero help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program { names: &["groups", "users"], operands: Operands::Words, ..BASE },
    Program {
        names: &["uname"],
        spec: Spec {
            short: "asnrvmpio",
            long: "all kernel-name nodename kernel-release kernel-version machine processor hardware-platform \
                operating-system help version",
            ..GNU
        },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["nproc"],
        spec: Spec { short: "", long: "all ignore= help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["uptime"],
        spec: Spec { short: "psrhV", long: "pretty since raw help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["free"],
        spec: Spec {
            short: "bkmgtpehlLs:c:wvS",
            long: "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi line total seconds= count= \
                wide committed help version",
            ..GNU
        },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum"],
        spec: SUMS,
        unsafe_opts: &[CHECK, ("c", CHECK.1)],
        ..BASE
    },
    Program {
        names: &["b2sum"],
        spec: Spec {
            short: "bctwzl:",
            long: "binary check length= tag text ignore-missing quiet status strict warn zero help version",
            ..GNU
        },
        unsafe_opts: &[CHECK, ("c", CHECK.1)],
        ..BASE
    },
    Program {
        names: &["cksum"],
        spec: Spec {
            short: "a:bcl:tw:z",
            long: "algorithm= base64 check length= raw tag untagged zero ignore-missing quiet status strict warn debug \
                help version",
            ..GNU
        },
        unsafe_opts: &[CHECK, ("c", CHECK.1)],
        ..BASE
    },
    Program {
        names: &["base64", "base32", "basenc"],
        spec: Spec {
            short: "diw:",
            long: "decode ignore-garbage wrap= base64 base64url base32 base32hex base16 base2msbf base2lsbf z85 help \
                version",
            ..GNU
        },
        operands: Operands::AtMost(1),
        ..BASE
    },
    Program {
        names: &["od"],
        spec: Spec {
            short: "A:bcdDfhHij:lLN:oOsS:t:vw::xX",
            long: "address-radix= endian= skip-bytes= read-bytes= format= output-duplicates strings? width? traditional \
                help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["hexdump"],
        spec: Spec {
            short: "bcCde:f:Ln:s:vxhV",
            long: "one-byte-octal one-byte-char canonical two-bytes-decimal format= format-file= color? length= skip= \
                no-squeezing two-bytes-hex help version",
            ..GNU
        },
        file_opts: &["f", "format-file"],
        ..BASE
    },
    Program {
        names: &["strings"],
        spec: Spec {
            short: "adfhn:ot:e:wsT:U:0123456789",
            long: "all data print-file-name bytes= radix= encoding= target= output-separator= include-all-whitespace \
                unicode= help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["printenv"],
        spec: Spec { short: "0", long: "null help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["seq"],
        spec: Spec { short: "f:s:w", long: "format= separator= equal-width help version", ..GNU },
        operands: Operands::Words,
        ..BASE
    },
    Program { names: &["sleep"], operands: Operands::Words, ..BASE },
    Program {
        names: &["tac"],
        spec: Spec { short: "brs:", long: "before regex separator= help version", ..GNU },
        ..BASE
    },
    Program { names: &["fold"], spec: Spec { short: "bsw:", long: "bytes spaces width= help version", ..GNU }, ..BASE },
    Program {
        names: &["fmt"],
        spec: Spec {
            short: "cp:stuw:g:0123456789",
            long: "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal= help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["expand"],
        spec: Spec { short: "it:0123456789,", long: "initial tabs= help version", ..GNU },
        ..BASE
    },
    Program {
        names: &["unexpand"],
        spec: Spec { short: "at:0123456789,", long: "all first-only tabs= help version", ..GNU },
        ..BASE
    },
    Program {
        names: &["join"],
        spec: Spec {
            short: "a:e:ij:o:t:v:z1:2:",
            long: "ignore-case check-order nocheck-order header zero-terminated help version",
            ..GNU
        },
        ..BASE
    },
    Program {
        names: &["paste"],
        spec: Spec { short: "d:sz", long: "delimiters= serial zero-terminated help version", ..GNU },
        ..BASE
    },
    Program {
        names: &["numfmt"],
        spec: Spec {
            short: "d:z",
            long: "debug delimiter= field= format= from= from-unit= grouping header? invalid= padding= round= suffix= \
                unit-separator= to= to-unit= zero-terminated help version",
            ..GNU
        },
        operands: Operands::Words,
        ..BASE
    },
    Program {
        names: &["sort"],
        spec: Spec {
            short: "bcCdfghiMmnRrsuVzk:o:S:t:T:",
            long: "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting \
                month-sort human-numeric-sort numeric-sort random-sort random-source= reverse sort= version-sort \
                batch-size= check? compress-program= debug files0-from= key= merge output= stable buffer-size= \
                field-separator= temporary-directory= parallel= unique zero-terminated help version",
            ..GNU
        },
        unsafe_opts: &[
            ("o", "`sort -o` writes a file"),
            ("output", "`sort --output` writes a file"),
            ("compress-program", "`sort --compress-program` runs a program"),
            ("T", "`sort -T` writes temporary files in a folder"),
            ("temporary-directory", "`sort --temporary-directory` writes temporary files in a folder"),
            FILES0,
        ],
        file_opts: &["random-source"],
        ..BASE
    },
    Program {
        names: &["uniq"],
        spec: Spec {
            short: "cdD::f:is:uw:z",
            long: "count repeated all-repeated? group? skip-fields= ignore-case skip-chars= unique zero-terminated \
                check-chars= help version",
            ..GNU
        },
        operands: Operands::AtMost(1),
        ..BASE
    },
    Program {
        names: &["date"],
        spec: Spec {
            short: "d:f:I::r:Rs:u",
            long: "date= debug file= iso-8601? resolution rfc-email rfc-3339= reference= set= universal utc help \
                version",
            ..GNU
        },
        unsafe_opts: &[("s", "`date -s` sets the clock"), ("set", "`date --set` sets the clock")],
        file_opts: &["f", "file", "r", "reference"],
        operands: Operands::Words,
        ..BASE
    },
];

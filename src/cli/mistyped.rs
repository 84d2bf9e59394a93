//! A lone word on the command line that is a letter or two from a subcommand is a typo, not a
//! prompt: `cairn sesions` says which command it probably meant.

use super::error::CliError;

/// `cairn sesions` is a typo, not a prompt: a lone word a letter or two from a subcommand is
/// refused with the command it probably meant.
pub fn check(prompt: &str) -> Result<(), CliError> {
    use clap::CommandFactory;
    let word = prompt.trim();
    if word.contains(char::is_whitespace) || word.is_empty() {
        return Ok(());
    }
    let command = super::Cli::command();
    let meant = command.get_subcommands().map(|c| c.get_name().to_string()).find(|name| {
        let d = edit_distance(&word.to_lowercase(), name);
        d > 0 && d <= 2 && name.len() > 3
    });
    match meant {
        Some(name) => Err(CliError::Usage(format!(
            "`{word}` looks like the command `cairn {name}`; to send it as a prompt, write a few more words"
        ))),
        None => Ok(()),
    }
}

/// Levenshtein distance, for the handful of short words above.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_lone_word_near_a_command_is_taken_for_a_typo() {
        assert!(super::check("sesions").is_err());
        assert!(super::check("docter").is_err());
        assert!(super::check("fix the sessions test").is_ok());
        assert!(super::check("refactor").is_ok());
        assert_eq!(super::edit_distance("kitten", "sitting"), 3);
    }
}

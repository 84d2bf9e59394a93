//! Words for matching: lower-cased, split on anything not a letter or digit, stopwords and very
//! short words dropped. Shared by memory scoring, de-duplication and full-text queries.

use std::collections::BTreeSet;

/// Words that carry no topic: they must not make two unrelated texts look alike.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was", "one", "our", "out",
    "has", "have", "him", "his", "how", "its", "let", "may", "new", "now", "old", "see", "two", "way", "who", "did",
    "get", "got", "use", "used", "uses", "using", "that", "this", "with", "from", "they", "them", "then", "than",
    "there", "their", "these", "those", "what", "when", "where", "which", "while", "will", "would", "should", "could",
    "into", "onto", "over", "under", "about", "after", "before", "again", "also", "just", "only", "very", "some",
    "such", "more", "most", "other", "each", "every", "both", "few", "many", "much", "same", "own", "does", "doing",
    "done", "been", "being", "were", "your", "yours", "please", "thanks", "thank", "make", "made", "like", "want",
    "need", "needs", "file", "files", "code", "here", "yes", "okay",
];

/// The distinct meaningful words of `text`.
pub fn terms(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// Jaccard similarity of two term sets, 0–1.
pub fn similarity(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}

/// An FTS5 query matching any of the terms, each quoted (so no word is read as syntax).
pub fn fts_query(text: &str) -> Option<String> {
    let terms = terms(text);
    (!terms.is_empty())
        .then(|| terms.iter().map(|t| format!("\"{}\"", t.replace('"', ""))).collect::<Vec<_>>().join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_and_short_words_do_not_count() {
        let t = terms("The API uses PostgreSQL with UUID keys, and the tests use it.");
        assert_eq!(t.into_iter().collect::<Vec<_>>(), ["api", "keys", "postgresql", "tests", "uuid"]);
        assert_eq!(fts_query("it is a"), None);
        assert_eq!(fts_query("\"quoted\" words").unwrap(), "\"quoted\" OR \"words\"");
    }
}

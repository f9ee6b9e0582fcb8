//! The syntax the tenacious retry toolkit's users write in two places, the
//! `#[retry]` attribute (read at compile time by `tenacious-macros`) and
//! the policy files of `tenacious::config` (read at start-up), so the two
//! accept the same text with the same meaning and answer a mistake alike:
//! [`duration`] strings, and the [`closest`] known word to a misspelt one.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod duration;

/// The candidate `word` is most likely a typo of, if any is close enough
/// (an edit distance of at most a third of the candidate's length, and at
/// least 1). Case and `_` are ignored, so `rate_limited` finds
/// `RateLimited`; a word longer than 64 bytes is no typo of a short name.
///
/// ```
/// use tenacious_syntax::closest;
///
/// assert_eq!(closest("rate_limited", ["Transient", "RateLimited"]), Some("RateLimited"));
/// assert_eq!(closest("jiter", ["jitter", "max"]), Some("jitter"));
/// assert_eq!(closest("Timeout", ["Transient", "RateLimited"]), None);
/// ```
#[must_use]
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if word.len() > 64 {
        return None;
    }
    let fold = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let word = fold(word);
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(&word, &fold(candidate)), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

//! A set of policies from environment variables,
//! `{PREFIX}_{KIND}_{NAME}_{KEY}=value`, read into the same tree a file
//! gives, each value labelled with its variable.
use std::ffi::OsString;

use super::read::{At, KINDS, Kind, Reader, closest};
use super::value::{Table, Value, quoted};

/// The tree of the variables under `prefix` (`TENACIOUS` reads
/// `TENACIOUS_POLICY_OPENAI_MAX`); what cannot be read into it is a
/// problem of `r`'s.
pub(crate) fn tree(r: &mut Reader<'_>, prefix: &str, vars: Vec<(OsString, OsString)>) -> Value {
    let prefix = prefix.strip_suffix('_').unwrap_or(prefix);
    let head = format!("{prefix}_");
    let mut ours: Vec<(OsString, OsString)> = vars
        .into_iter()
        .filter(|(name, _)| name.as_encoded_bytes().starts_with(head.as_bytes()))
        .collect();
    ours.sort();
    let mut root = Table::default();
    for (name, value) in ours {
        let Some(name) = name.to_str() else {
            let at = At::var(&name.to_string_lossy());
            r.problem(
                &at,
                None,
                "the variable's name is not UTF-8; name it in ASCII, like \
                 `TENACIOUS_POLICY_OPENAI_MAX`",
            );
            continue;
        };
        let at = At::var(name);
        let Some(value) = value.to_str() else {
            r.problem(
                &at,
                Some(&Value::Str(value.to_string_lossy().into_owned())),
                "the value is not UTF-8",
            );
            continue;
        };
        let rest = &name[head.len()..];
        let (kind_text, rest) = rest.split_once('_').unwrap_or((rest, ""));
        let Some(kind) = KINDS
            .iter()
            .find(|kind| kind.singular.eq_ignore_ascii_case(kind_text) && is_upper(kind_text))
        else {
            r.problem(&at, None, unknown_kind(&head, kind_text));
            continue;
        };
        let Some((policy_name, key)) = split(kind, rest) else {
            r.problem(&at, None, no_key(&head, kind, rest));
            continue;
        };
        let kind_upper = kind.singular.to_ascii_uppercase();
        root.table_mut(kind.plural, &format!("{head}{kind_upper}_*"))
            .table_mut(
                &policy_name.to_ascii_lowercase(),
                &format!("{head}{kind_upper}_{policy_name}_*"),
            )
            .insert(
                key.to_ascii_lowercase(),
                Some(name.to_owned()),
                Value::Env(value.to_owned()),
            );
    }
    Value::Table(root)
}

fn is_upper(text: &str) -> bool {
    !text.chars().any(|c| c.is_ascii_lowercase())
}

/// `NAME_KEY` as the name and the key: the longest of the kind's keys the
/// text ends with, after a name; else its last `_`-separated word, which
/// the reader then reports as an unknown key.
fn split<'t>(kind: &Kind, text: &'t str) -> Option<(&'t str, &'t str)> {
    let known = kind
        .keys
        .iter()
        .filter_map(|key| {
            let key_len = key.len();
            let at = text.len().checked_sub(key_len + 1)?;
            let (name, tail) = (text.get(..at)?, text.get(at..)?);
            let matches = tail.starts_with('_')
                && tail[1..].eq_ignore_ascii_case(key)
                && is_upper(&tail[1..])
                && !name.is_empty();
            matches.then(|| (name, &tail[1..]))
        })
        .max_by_key(|(_, key)| key.len());
    known.or_else(|| {
        text.rsplit_once('_')
            .filter(|(name, key)| !name.is_empty() && !key.is_empty())
    })
}

fn unknown_kind(head: &str, kind: &str) -> String {
    let forms = KINDS
        .iter()
        .map(|kind| {
            format!(
                "`{head}{}_<NAME>_<KEY>`",
                kind.singular.to_ascii_uppercase()
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let upper: Vec<String> = KINDS
        .iter()
        .map(|kind| kind.singular.to_ascii_uppercase())
        .collect();
    let shown = if kind.len() > 64 {
        quoted(kind)
    } else {
        format!("`{kind}`")
    };
    match closest(kind, upper.iter().map(String::as_str)) {
        Some(guess) => format!(
            "unknown kind {shown} after `{head}`; did you mean `{guess}`? every variable under \
             `{head}` is one of {forms}"
        ),
        None => format!(
            "unknown kind {shown} after `{head}`; every variable under `{head}` is one of {forms}"
        ),
    }
}

fn no_key(head: &str, kind: &Kind, rest: &str) -> String {
    let upper = kind.singular.to_ascii_uppercase();
    let form = format!("`{head}{upper}_<NAME>_<KEY>`");
    let keys = kind.keys.join(", ");
    let example = kind.keys[0].to_ascii_uppercase();
    let what = kind.singular;
    if rest.is_empty() {
        format!(
            "names no {what} and key: write {form}, like `{head}{upper}_OPENAI_{example}`; the \
             keys of a {what} are: {keys}"
        )
    } else if kind.keys.iter().any(|key| key.eq_ignore_ascii_case(rest)) {
        format!("names no {what}: write {form}, like `{head}{upper}_OPENAI_{rest}`")
    } else {
        format!(
            "names no key: write {form}, like `{head}{upper}_{rest}_{example}`; the keys of a \
             {what} are: {keys}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{BREAKERS, POLICIES};

    #[test]
    fn the_longest_key_the_name_ends_with_wins() {
        assert_eq!(
            split(&POLICIES, "OPEN_AI_MAX_RETRY_AFTER"),
            Some(("OPEN_AI", "MAX_RETRY_AFTER"))
        );
        assert_eq!(split(&POLICIES, "OPENAI_MAX"), Some(("OPENAI", "MAX")));
        assert_eq!(split(&POLICIES, "CAP_BASE"), Some(("CAP", "BASE")));
        assert_eq!(
            split(&BREAKERS, "A_MIN_THROUGHPUT"),
            Some(("A", "MIN_THROUGHPUT"))
        );
        // No known key: the last word, for the reader to refuse.
        assert_eq!(split(&POLICIES, "OPENAI_MAXX"), Some(("OPENAI", "MAXX")));
        assert_eq!(split(&POLICIES, "MAX"), None);
        assert_eq!(split(&POLICIES, ""), None);
        assert_eq!(split(&POLICIES, "_MAX"), None);
    }
}

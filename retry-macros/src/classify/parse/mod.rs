//! Reading `#[classify(...)]` attributes.
//!
//! One receiver serves the type, its variants and its fields, so a key in the
//! wrong place gets a message saying where it belongs instead of a bare
//! "unknown field"; [`super::validate`] decides what each position accepts.
use darling::ast::NestedMeta;
use darling::{FromAttributes, FromMeta};
use proc_macro2::Span;
use syn::Attribute;

mod other_words;
mod values;

use other_words::without_other_words;
pub(crate) use values::{
    BaseKey, CratePathKey, HINT_NEEDS_STRING, HintValue, MaxKey, WithKey, Word,
};

/// The attribute's name.
pub(crate) const ATTR: &str = "classify";

/// One of the runtime's error classes: the key `#[classify(...)]` spells it
/// with, and the `ErrorClass` variant the impl returns for it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ErrorClassKey {
    pub(crate) key: &'static str,
    pub(crate) variant: &'static str,
}

/// The runtime's error classes, as `ErrorClass::ALL` lists them
/// (`tests/closed_lists.rs` ties the two).
pub(crate) const ERROR_CLASSES: &[ErrorClassKey] = &[
    ErrorClassKey {
        key: "transient",
        variant: "Transient",
    },
    ErrorClassKey {
        key: "rate_limited",
        variant: "RateLimited",
    },
    ErrorClassKey {
        key: "invalid",
        variant: "Invalid",
    },
    ErrorClassKey {
        key: "fatal",
        variant: "Fatal",
    },
];

/// The key of the one class whose server hint the retry loop reads: only
/// its cases may mark a `retry_after` field.
pub(crate) const HINTED: &str = "rate_limited";

/// What one variant (or struct) says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// One of the runtime's classes.
    Error(&'static ErrorClassKey),
    /// Ask the only field.
    Transparent,
    /// The variant a guard's refusal becomes: it holds the `Refused` and
    /// answers as it does.
    Refused,
}

impl Class {
    /// Every class a case can say, in the order the messages list them.
    pub(crate) fn all() -> impl Iterator<Item = Self> {
        ERROR_CLASSES
            .iter()
            .map(Self::Error)
            .chain([Self::Transparent, Self::Refused])
    }

    pub(crate) fn key(self) -> &'static str {
        match self {
            Self::Error(class) => class.key,
            Self::Transparent => "transparent",
            Self::Refused => "refused",
        }
    }

    fn from_key(key: &str) -> Option<Self> {
        Self::all().find(|class| class.key() == key)
    }
}

/// Every key `#[classify(...)]` knows, wherever it appears.
#[derive(Debug, Default, FromAttributes)]
#[darling(attributes(classify))]
pub(crate) struct Attrs {
    /// The class words: every key not named below.
    #[darling(flatten)]
    pub(crate) classes: ClassWords,
    pub(crate) hint: Option<HintValue>,
    pub(crate) retry_after: Word,
    pub(crate) with: Option<WithKey>,
    pub(crate) max: Option<MaxKey>,
    pub(crate) base: Option<BaseKey>,
    pub(crate) not_sent: Word,
    #[darling(rename = "crate")]
    pub(crate) krate: Option<CratePathKey>,
}

/// The keys of [`Attrs`] other than the classes, as darling names them.
const OTHER_KEYS: [&str; 7] = [
    "hint",
    "retry_after",
    "with",
    "max",
    "base",
    "not_sent",
    "crate",
];

impl Attrs {
    /// Reads every `#[classify(...)]` in `attrs`. A word other libraries
    /// use (`retryable`, `permanent`, ...) is reported with the key that
    /// means it here, and left out of what darling reads, so it is one error.
    pub(crate) fn read(attrs: &[Attribute]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let attrs = without_other_words(attrs, &mut errors);
        let read = errors.handle(Self::from_attributes(&attrs));
        errors.finish_with(read).and_then(|read| {
            read.ok_or_else(|| darling::Error::custom("`#[classify]` could not be read"))
        })
    }

    pub(crate) fn word(&self, class: Class) -> Word {
        self.classes
            .0
            .iter()
            .find(|(known, _)| *known == class)
            .map_or_else(Word::default, |(_, word)| *word)
    }

    /// The class words in the order they were written, across every
    /// `#[classify(...)]` on one item, each with its key's span: "two
    /// classes" is reported on the second one written.
    pub(crate) fn classes_in_order(&self) -> impl Iterator<Item = (Class, Span)> + '_ {
        self.classes
            .0
            .iter()
            .filter_map(|(class, word)| word.key.map(|key| (*class, key)))
    }
}

/// The class words of one item, in the order written: what darling hands
/// the flattened field, read the way it reads a named field (a duplicate is
/// an error, an unknown key suggests the closest of every key).
#[derive(Debug, Default)]
pub(crate) struct ClassWords(Vec<(Class, Word)>);

impl FromMeta for ClassWords {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut words = Vec::new();
        for item in items {
            let path = match item {
                NestedMeta::Meta(meta) => meta.path(),
                NestedMeta::NameValueInvalidExpr(pair) => &pair.path,
                NestedMeta::Lit(lit) => {
                    errors.push(darling::Error::unsupported_format("literal").with_span(lit));
                    continue;
                }
            };
            let name = darling::util::path_to_string(path);
            let Some(class) = Class::from_key(&name) else {
                let keys: Vec<&str> = Class::all().map(Class::key).collect();
                errors.push(darling::Error::unknown_field_with_alts(&name, &keys).with_span(item));
                continue;
            };
            if words.iter().any(|(known, _)| *known == class) {
                errors.push(darling::Error::duplicate_field(&name).with_span(item));
                continue;
            }
            let word = match item {
                NestedMeta::Meta(meta) => Word::from_meta(meta),
                NestedMeta::NameValueInvalidExpr(pair) => Word::from_invalid_expr(pair),
                NestedMeta::Lit(_) => continue,
            };
            if let Some(word) = errors.handle(word.map_err(|e| e.with_span(item).at(&name))) {
                words.push((class, word));
            }
        }
        errors.finish_with(Self(words))
    }
}

/// The keys, as an error lists them.
fn keys() -> String {
    Class::all()
        .map(Class::key)
        .chain(OTHER_KEYS)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    /// The derive's classes are the runtime's (a dev-dependency here), in
    /// `ErrorClass::ALL`'s order, spelled as `as_str` spells them.
    #[test]
    fn the_classes_are_the_runtimes() {
        let ours: Vec<(&str, &str)> = ERROR_CLASSES
            .iter()
            .map(|class| (class.key, class.variant))
            .collect();
        let runtime: Vec<(&str, String)> = tenacious::ErrorClass::ALL
            .iter()
            .map(|class| (class.as_str(), format!("{class:?}")))
            .collect();
        let runtime: Vec<(&str, &str)> =
            runtime.iter().map(|(key, v)| (*key, v.as_str())).collect();
        assert_eq!(ours, runtime);
    }

    #[test]
    fn reads_every_key() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[classify(rate_limited, hint = "slow down")]),
            parse_quote!(#[classify(retry_after, crate = my::facade)]),
            parse_quote!(#[classify(with = by_body)]),
        ];
        let read = Attrs::read(&attrs).unwrap();
        let rate_limited = Class::from_key("rate_limited").unwrap();
        assert!(read.word(rate_limited).is_present());
        assert!(
            !read
                .word(Class::from_key("transient").unwrap())
                .is_present()
        );
        assert!(read.retry_after.is_present());
        assert!(read.hint.is_some());
        assert!(read.krate.is_some());
        assert!(read.with.is_some());
    }

    #[test]
    fn with_takes_a_path_bare_or_quoted() {
        for attr in [
            parse_quote!(#[classify(with = by_body)]),
            parse_quote!(#[classify(with = self::errors::by_body)]),
            parse_quote!(#[classify(with = Self::by_body)]),
            parse_quote!(#[classify(with = "errors::by_body")]),
        ] {
            let attrs: Vec<Attribute> = vec![attr];
            assert!(Attrs::read(&attrs).unwrap().with.is_some());
        }
        for attr in [
            parse_quote!(#[classify(with)]),
            parse_quote!(#[classify(with(by_body))]),
            parse_quote!(#[classify(with = 1)]),
            parse_quote!(#[classify(with = "not a path")]),
            parse_quote!(#[classify(with = |e| e)]),
        ] {
            let attrs: Vec<Attribute> = vec![attr];
            let message = Attrs::read(&attrs).unwrap_err().to_string();
            assert!(message.contains("write `with = path::to::fn`"), "{message}");
        }
    }

    #[test]
    fn refused_is_a_class_word() {
        let attrs: Vec<Attribute> = vec![parse_quote!(#[classify(transient, refused)])];
        let read = Attrs::read(&attrs).unwrap();
        assert!(read.word(Class::Refused).is_present());
        let keys: Vec<&str> = read.classes_in_order().map(|(c, _)| c.key()).collect();
        assert_eq!(keys, ["transient", "refused"]);
    }

    #[test]
    fn a_value_on_a_word_is_kept_for_validation() {
        let attrs: Vec<Attribute> = vec![parse_quote!(#[classify(transient = 1)])];
        let read = Attrs::read(&attrs).unwrap();
        let transient = read.word(Class::from_key("transient").unwrap());
        assert!(transient.is_present());
        assert!(transient.stray_value.is_some());
    }

    #[test]
    fn an_unknown_key_suggests_the_closest() {
        let attrs: Vec<Attribute> = vec![parse_quote!(#[classify(transint)])];
        let message = Attrs::read(&attrs).unwrap_err().to_string();
        assert!(message.contains("transient"), "{message}");
    }

    #[test]
    fn words_of_other_libraries_name_the_key_meant() {
        for (word, key) in [
            ("retryable", "`#[classify(transient)]`"),
            ("Retriable", "`#[classify(transient)]`"),
            ("throttled", "`#[classify(rate_limited)]`"),
            ("rate_limit", "`#[classify(rate_limited)]`"),
            ("bad_request", "`#[classify(invalid)]`"),
            (
                "permanent",
                "`#[classify(fatal)]` or `#[classify(invalid)]`",
            ),
            ("inner", "`#[classify(transparent)]`"),
            ("classifier", "`#[classify(with = path::to::fn)]`"),
            (
                "circuit_open",
                "`#[classify(refused)]` on a variant holding a `tenacious::Refused`",
            ),
        ] {
            let word = syn::Ident::new(word, Span::call_site());
            let attrs: Vec<Attribute> = vec![parse_quote!(#[classify(#word, hint = "h")])];
            let error = Attrs::read(&attrs).unwrap_err();
            assert_eq!(error.len(), 1, "{word}: {error}");
            let message = error.to_string();
            assert!(message.contains(&format!("write {key}")), "{message}");
            assert!(message.contains("the keys are: transient"), "{message}");
        }
        // A value on the word does not hide it, nor an error after it.
        let attrs: Vec<Attribute> = vec![parse_quote!(#[classify(retry = true, transint)])];
        let error = Attrs::read(&attrs).unwrap_err();
        assert_eq!(error.len(), 2, "{error}");
    }

    #[test]
    fn classes_keep_their_written_order() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = "fatal"]),
            parse_quote!(#[classify(fatal, hint = "transient")]),
            parse_quote!(#[classify(transient)]),
        ];
        let read = Attrs::read(&attrs).unwrap();
        let keys: Vec<&str> = read.classes_in_order().map(|(c, _)| c.key()).collect();
        assert_eq!(keys, ["fatal", "transient"]);
    }
}

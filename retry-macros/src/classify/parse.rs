//! Reading `#[classify(...)]` attributes.
//!
//! One receiver serves the type, its variants and its fields, so a key in the
//! wrong place gets a message saying where it belongs instead of a bare
//! "unknown field"; [`super::validate`] decides what each position accepts.
use darling::ast::NestedMeta;
use darling::{FromAttributes, FromMeta};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Meta};

use crate::common::CratePath;

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

/// Words other error and retry libraries use, each with what means it here
/// and how to write that.
const OTHER_WORDS: &[(&[&str], &str, &str)] = &[
    (
        &[
            "retry",
            "retryable",
            "retriable",
            "retryable_error",
            "temporary",
            "temp",
            "transient_error",
            "recoverable",
            "flaky",
            "timeout",
            "network",
            "unavailable",
        ],
        "an error a retry can fix (a timeout, a reset connection, a 5xx) is `transient`",
        "`#[classify(transient)]`",
    ),
    (
        &[
            "throttled",
            "throttle",
            "throttling",
            "rate_limit",
            "ratelimit",
            "ratelimited",
            "rate_limits",
            "too_many_requests",
            "quota",
        ],
        "an error that asks to wait (a 429, an exhausted quota) is `rate_limited`",
        "`#[classify(rate_limited)]`",
    ),
    (
        &[
            "bad_request",
            "bad_input",
            "invalid_input",
            "invalid_request",
            "validation",
            "client_error",
            "user_error",
            "malformed",
            "unprocessable",
        ],
        "an error the request itself causes (a 400, a schema violation) is `invalid`",
        "`#[classify(invalid)]`",
    ),
    (
        &[
            "permanent",
            "non_retryable",
            "not_retryable",
            "non_retriable",
            "no_retry",
            "never",
        ],
        "an error never to retry is `fatal` (a human must fix it) or `invalid` (the caller \
         must change the request)",
        "`#[classify(fatal)]` or `#[classify(invalid)]`",
    ),
    (
        &[
            "unrecoverable",
            "abort",
            "terminal",
            "unauthorized",
            "forbidden",
            "auth",
        ],
        "an error only a human can fix (bad credentials, bad configuration) is `fatal`",
        "`#[classify(fatal)]`",
    ),
    (
        &[
            "forward", "delegate", "inner", "wrap", "wrapped", "from", "source",
        ],
        "an error that asks its only field is `transparent`",
        "`#[classify(transparent)]`",
    ),
    (
        &["refusal", "refuse", "circuit_open", "breaker_open"],
        "the variant a guard's refusal becomes (an open circuit breaker, a cooldown the call \
         cannot wait for) is `refused`",
        "`#[classify(refused)]` on a variant holding a `tenacious::Refused`",
    ),
    (
        &[
            "message",
            "msg",
            "help",
            "note",
            "advice",
            "suggestion",
            "reason",
            "description",
        ],
        "advice for the model or the operator is `hint`",
        "`#[classify(hint = \"...\")]`",
    ),
    (
        &["wait", "retry_after_ms", "retry_after_secs"],
        "the field holding the server's wait is marked `retry_after`",
        "`#[classify(retry_after)]` on that field",
    ),
    (
        &[
            "attempts",
            "max_attempts",
            "tries",
            "max_tries",
            "retries",
            "max_retries",
            "limit",
        ],
        "the call's attempts when this error is the last, the first attempt included, are \
         `max`",
        "`#[classify(transient, max = 5)]`",
    ),
    (
        &[
            "delay",
            "backoff",
            "base_delay",
            "initial_delay",
            "min_delay",
            "initial_backoff",
        ],
        "the backoff's base for the retry after this error is `base`",
        "`#[classify(transient, base = \"1s\")]`",
    ),
    (
        &[
            "unsent",
            "never_sent",
            "not_applied",
            "connect",
            "connect_error",
            "safe_to_retry",
            "idempotent",
        ],
        "an error that proves the request never reached the server, so even a call that is \
         not idempotent may be retried, is marked `not_sent`",
        "`#[classify(transient, not_sent)]`",
    ),
    (
        &[
            "classifier",
            "classify_with",
            "classify_by",
            "using",
            "by",
            "func",
            "function",
        ],
        "a fn that classifies the case is named by `with`",
        "`#[classify(with = path::to::fn)]`",
    ),
    (
        &["krate"],
        "the path to the `tenacious` crate is `crate`",
        "`#[classify(crate = path::to::tenacious)]`",
    ),
];

/// `attrs` with every key in [`OTHER_WORDS`] reported and taken out.
fn without_other_words(
    attrs: &[Attribute],
    errors: &mut darling::error::Accumulator,
) -> Vec<Attribute> {
    attrs
        .iter()
        .map(|attr| {
            let Meta::List(list) = &attr.meta else {
                return attr.clone();
            };
            if !list.path.is_ident(ATTR) {
                return attr.clone();
            }
            // Malformed lists are darling's to report.
            let Ok(metas) = list.parse_args_with(
                syn::punctuated::Punctuated::<Meta, syn::Token![,]>::parse_terminated,
            ) else {
                return attr.clone();
            };
            let before = metas.len();
            let kept: Vec<Meta> = metas
                .into_iter()
                .filter(|meta| {
                    let Some(ident) = meta.path().get_ident() else {
                        return true;
                    };
                    let word = ident.to_string().to_lowercase();
                    let Some((_, why, write)) = OTHER_WORDS
                        .iter()
                        .find(|(words, _, _)| words.contains(&word.as_str()))
                    else {
                        return true;
                    };
                    errors.push(
                        darling::Error::custom(format!(
                            "unknown key `{ident}`; {why}: write {write}; the keys are: {}",
                            keys()
                        ))
                        .with_span(ident),
                    );
                    false
                })
                .collect();
            if kept.len() == before {
                return attr.clone();
            }
            let path = &list.path;
            let mut attr = attr.clone();
            attr.meta = syn::parse_quote!(#path(#(#kept),*));
            attr
        })
        .collect()
}

/// A key that is a bare word (`transient`). Unlike darling's `Flag` it
/// accepts a value too, so validation can reject `transient = 1` with a
/// message that says to drop the value.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Word {
    /// Where the key was written; `None` when absent.
    pub(crate) key: Option<Span>,
    /// A value that should not be there: `= 1` or `(...)`.
    pub(crate) stray_value: Option<Span>,
}

impl Word {
    pub(crate) fn is_present(self) -> bool {
        self.key.is_some()
    }
}

impl FromMeta for Word {
    fn from_none() -> Option<Self> {
        Some(Self::default())
    }

    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let stray_value = match meta {
            Meta::Path(_) => None,
            Meta::List(list) => Some(list.delimiter.span().join()),
            Meta::NameValue(pair) => Some(pair.value.span()),
        };
        Ok(Self {
            key: Some(meta.path().span()),
            stray_value,
        })
    }
}

/// The value of `hint = ...`, kept as written: validation wants a string
/// literal and says so for anything else. (Darling's `Expr` would parse the
/// string's contents as an expression.)
#[derive(Debug, Clone)]
pub(crate) struct HintValue(pub(crate) Expr);

impl FromMeta for HintValue {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        match meta {
            Meta::NameValue(pair) => Ok(Self(pair.value.clone())),
            _ => Err(darling::Error::custom(HINT_NEEDS_STRING).with_span(meta)),
        }
    }
}

pub(crate) const HINT_NEEDS_STRING: &str = "`hint` takes a string literal: write `hint = \"...\"`";

/// `with = path`: the fn that classifies a case, bare (`with = by_body`)
/// or quoted (`with = "by_body"`), remembering where the key was written.
#[derive(Debug, Clone)]
pub(crate) struct WithKey {
    pub(crate) path: syn::ExprPath,
    pub(crate) key: Span,
}

pub(crate) const WITH_NEEDS_PATH: &str =
    "`with` takes the path of a fn that classifies the case: write `with = path::to::fn`";

impl FromMeta for WithKey {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let key = meta.path().span();
        let Meta::NameValue(pair) = meta else {
            return Err(darling::Error::custom(WITH_NEEDS_PATH).with_span(&key));
        };
        let path = match crate::common::ungroup(&pair.value) {
            Expr::Path(path) => Some(path.clone()),
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }) => lit.parse::<syn::ExprPath>().ok(),
            _ => None,
        };
        let path =
            path.ok_or_else(|| darling::Error::custom(WITH_NEEDS_PATH).with_span(&pair.value))?;
        Ok(Self { path, key })
    }
}

/// `crate = path`, remembering where the key was written.
#[derive(Debug, Clone)]
pub(crate) struct CratePathKey {
    pub(crate) path: CratePath,
    pub(crate) key: Span,
}

impl FromMeta for CratePathKey {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        Ok(Self {
            path: CratePath::from_meta(meta)?,
            key: meta.path().span(),
        })
    }
}

/// `max = N`: the call's attempts when this error is the last, an integer
/// of at least 1, remembering where the key was written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MaxKey {
    pub(crate) max: u32,
    pub(crate) key: Span,
}

pub(crate) const MAX_NEEDS_INT: &str = "`max` takes an integer literal, the call's attempts when \
     this error is the last, the first included: write `max = 5`";

impl FromMeta for MaxKey {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let key = meta.path().span();
        let Meta::NameValue(pair) = meta else {
            return Err(darling::Error::custom(MAX_NEEDS_INT).with_span(&key));
        };
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(lit),
            ..
        }) = crate::common::ungroup(&pair.value)
        else {
            return Err(darling::Error::custom(MAX_NEEDS_INT).with_span(&pair.value));
        };
        match lit.base10_parse::<u32>() {
            Ok(0) => Err(darling::Error::custom(
                "`max` counts every attempt, the first included, so it is at least 1; write \
                 `max = 1` for an error that ends the call at its first attempt",
            )
            .with_span(lit)),
            Ok(max) => Ok(Self { max, key }),
            Err(_) => Err(darling::Error::custom(
                "`max` must fit a `u32`: write a number of attempts up to 4294967295",
            )
            .with_span(lit)),
        }
    }
}

/// `base = "1s"`: the backoff's base after this error, in nanoseconds,
/// remembering where the key was written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BaseKey {
    pub(crate) nanos: u64,
    pub(crate) key: Span,
}

pub(crate) const BASE_NEEDS_DURATION: &str =
    "`base` takes a duration string with a unit: write `base = \"1s\"`";

impl FromMeta for BaseKey {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let key = meta.path().span();
        let Meta::NameValue(pair) = meta else {
            return Err(darling::Error::custom(BASE_NEEDS_DURATION).with_span(&key));
        };
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) = crate::common::ungroup(&pair.value)
        else {
            return Err(darling::Error::custom(BASE_NEEDS_DURATION).with_span(&pair.value));
        };
        match crate::retry::duration::parse(&lit.value()) {
            Ok(0) => Err(darling::Error::custom(
                "a zero `base` makes the backoff after this error zero, so its retries run in \
                 a tight loop against a failing service; give a positive duration, like \
                 `base = \"1s\"`",
            )
            .with_span(lit)),
            Ok(nanos) => Ok(Self { nanos, key }),
            Err(why) => Err(darling::Error::custom(format!(
                "invalid duration {}: {why}; {}",
                lit.token(),
                crate::retry::duration::FORMAT
            ))
            .with_span(lit)),
        }
    }
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

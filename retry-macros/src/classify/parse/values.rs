//! The values of `#[classify(...)]`'s keys: a bare word, `hint`, `with`,
//! `crate`, `max` and `base`, each remembering where it was written.
use darling::FromMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Meta};

use crate::common::CratePath;

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

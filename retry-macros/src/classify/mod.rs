//! `#[derive(Classify)]`: [`parse`] reads the attributes, [`validate`]
//! checks them against the type, [`generate`] writes the impl, and
//! [`fallback`] stands in for it when there are errors.
//!
//! Decisions worth knowing:
//! - `transparent` forwards every method, `variant()` and `signals()`
//!   included, so the error distribution shows the inner error's variant
//!   and the guards hear what it says of the provider (as thiserror's
//!   `transparent` forwards `source` and `Display`).
//! - `retry_after` is accepted only on `rate_limited` cases: the retry loop
//!   reads the hint of no other class, so elsewhere it would be dead.
//! - The type of a `retry_after` field is checked by the compiler through
//!   the runtime's `RetryAfterField` trait, not by matching its spelling, so
//!   aliases of `Duration` work.
//! - `refused` marks the one variant a guard's refusal becomes, and is a
//!   class of its own (it conflicts with any other on its variant). It
//!   forwards `classify`, `retry_after` and `hint` to its one unnamed field,
//!   the `Refused`, but `variant()` is the variant's own name (the
//!   distribution counts it as the user's variant, like any other), and it
//!   adds `refused()`, the variant's constructor. A unit variant is refused:
//!   it would drop which guard refused and leave its class to be invented.
//!   A struct cannot be `refused`: every attempt's error would be a refusal.
//!   The field's type is checked by the compiler (the constructor must be a
//!   `fn(Refused) -> Self`), so aliases of `Refused` work.
//! - `with = path` hands a variant's only field (`fn(&Field)`) to the fn,
//!   as `transparent` forwards to it, or on the type the whole error
//!   (`fn(&Self)`); on an enum that fn answers for every variant, so they
//!   carry no key of their own. The fn returns an `ErrorClass` or a
//!   `Classified`, read through the runtime's `WithOutput` trait, so the
//!   compiler checks both its argument and its result at the path (spanned
//!   there), and no bound is added for a generic field: the fn's own
//!   signature says what it needs. `variant()` stays the case's name, as
//!   for a class: the fn decides the class, not the error distribution's
//!   label. It is called once per method asked; the impl keeps no cache.
//! - `max`, `base` and `not_sent` are read only where an error may be
//!   retried: beside `transient` or `rate_limited`, or on a `transparent`
//!   or `with` case, whose class is known only at run time (their keys
//!   then override what the wrapped error says). Elsewhere they would be
//!   dead, so they are errors, as `retry_after` is off `rate_limited`.
//!   `base` is parsed by `#[retry]`'s own duration parser.
use proc_macro2::TokenStream;

use crate::common::NotADependency;

mod fallback;
mod generate;
mod hint;
mod inner;
mod parse;
mod validate;

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let (krate, derive) = validate::validate(&input);
    let krate = match krate.resolve() {
        Ok(krate) => krate,
        // Said once, on the derive; no stub impl, as its trait cannot be named.
        Err(NotADependency) => {
            return syn::Error::new(
                proc_macro2::Span::call_site(),
                "`derive(Classify)` cannot find the `tenacious` crate: it is not a dependency \
                 in this crate's Cargo.toml; if another crate re-exports it, say where with \
                 `#[classify(crate = path::to::tenacious)]` on the type, or add `tenacious` \
                 to [dependencies]",
            )
            .to_compile_error();
        }
    };
    match derive {
        Ok(mut derive) => {
            derive.krate = krate;
            generate::generate(&derive)
        }
        Err(errors) => {
            let mut tokens = errors.write_errors();
            tokens.extend(fallback::stub(&input, &krate.private()));
            tokens
        }
    }
}

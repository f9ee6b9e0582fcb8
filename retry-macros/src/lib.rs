//! Procedural macros of the `tenacious` retry toolkit. Use them through the
//! `tenacious` facade: `tenacious::retry` and `tenacious::Classify`.
//!
//! Each macro converts tokens and hands them to its module, which works on
//! `proc_macro2` so it can be unit-tested.
#![deny(missing_docs)]

mod classify;
mod common;
mod retry;

use proc_macro::TokenStream;

/// Retries a fn returning `Result<T, E>` where `E: Classify`. See the
/// `tenacious` crate documentation.
#[proc_macro_attribute]
pub fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    retry::expand(args.into(), item.into()).into()
}

/// Derives `Classify` for an error enum or struct. See the `tenacious`
/// crate documentation.
#[proc_macro_derive(Classify, attributes(classify))]
pub fn derive_classify(input: TokenStream) -> TokenStream {
    classify::expand(input.into()).into()
}

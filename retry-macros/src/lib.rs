//! Procedural macros of the `tenacious` retry toolkit. Use them through the
//! `tenacious` facade: `tenacious::retry` and `tenacious::Classify`.
//!
//! Each macro converts tokens and hands them to its module, which works on
//! `proc_macro2` so it can be unit-tested.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod classify;
mod common;
mod retry;

use proc_macro::TokenStream;

#[doc = include_str!("../docs/retry.md")]
#[proc_macro_attribute]
pub fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    retry::expand(args.into(), item.into()).into()
}

#[doc = include_str!("../docs/classify.md")]
#[proc_macro_derive(Classify, attributes(classify))]
pub fn derive_classify(input: TokenStream) -> TokenStream {
    classify::expand(input.into()).into()
}

//! `#[retry(...)]`: parse, validate, generate.
use proc_macro2::TokenStream;

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let _ = args;
    item
}

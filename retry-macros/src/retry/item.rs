//! The fn `#[retry]` sits on, read without parsing its body.
//!
//! The body stays a token stream: it is pasted into each attempt as the user
//! wrote it, so a body that does not parse still expands (the compiler then
//! reports the user's own syntax error, and IDEs keep working), and nothing
//! in it is re-printed with other spans.
use proc_macro2::{TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream};
use syn::token::Brace;
use syn::{Attribute, Signature, Token, Visibility, braced};

pub(super) struct RetryFn {
    pub(super) outer_attrs: Vec<Attribute>,
    pub(super) inner_attrs: Vec<Attribute>,
    pub(super) vis: Visibility,
    pub(super) sig: Signature,
    pub(super) brace_token: Brace,
    pub(super) body: TokenStream,
}

impl Parse for RetryFn {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let outer_attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        if let Some(semi) = input.parse::<Option<Token![;]>>()? {
            return Err(syn::Error::new_spanned(
                semi,
                "`#[retry]` needs the fn's body: put it on the fn in the `impl`, not on its \
                 declaration in the trait",
            ));
        }
        let content;
        let brace_token = braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let body = content.parse()?;
        Ok(Self {
            outer_attrs,
            inner_attrs,
            vis,
            sig,
            brace_token,
            body,
        })
    }
}

/// The error for an item that did not parse as a fn.
///
/// An item with a `fn` keyword is a fn with a syntax error the parser
/// describes best; anything else (a struct, an impl, a closure) is the wrong
/// place for the attribute.
pub(super) fn not_a_fn(item: &TokenStream, err: syn::Error) -> syn::Error {
    let has_fn = item
        .clone()
        .into_iter()
        .any(|token| matches!(&token, TokenTree::Ident(ident) if ident == "fn"));
    if has_fn {
        err
    } else {
        syn::Error::new(
            err.span(),
            "`#[retry]` goes on a fn or method with a body, like \
             `#[retry] async fn call(&self) -> Result<T, E> { .. }`",
        )
    }
}

//! What the fn's arguments add to the call: the fingerprint in a nested
//! call's idempotency key, and the marks of the arguments every attempt
//! shares.
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::Type;
use syn::ext::IdentExt;

use crate::common::strip_groups;

/// The closure that writes the fingerprint of the fn's arguments into
/// the idempotency key of a nested call: each argument bound to a plain
/// name, but `self` and `&mut` arguments (state the call works on, not what
/// it asks for), hashed if its type is `Hash` and marked otherwise (the
/// runtime's `HashArg` and `SkipArg`, picked by method resolution).
pub(super) fn fingerprint(sig: &syn::Signature, private: &TokenStream) -> TokenStream {
    let hasher = format_ident!("__tenacious_args", span = Span::mixed_site());
    let args: Vec<TokenStream> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => Some(typed),
            syn::FnArg::Receiver(_) => None,
        })
        .filter(|typed| {
            !matches!(strip_groups(&typed.ty), Type::Reference(reference) if reference.mutability.is_some())
        })
        .filter_map(|typed| {
            // Each statement carries the argument's `#[cfg]`s, so an
            // argument configured out is not named (and one kept is).
            let cfgs = cfg_attrs(&typed.attrs);
            match &*typed.pat {
                syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    let ident = &ident.ident;
                    Some(quote!(#(#cfgs)* (&#private::ArgProbe(&#ident)).hash_arg(#hasher);))
                }
                // An unused argument asks for nothing.
                syn::Pat::Wild(_) => None,
                // A destructured one cannot be named whole.
                _ => Some(quote!(#(#cfgs)* #hasher.mark_incomplete();)),
            }
        })
        .collect();
    if args.is_empty() {
        return quote!(|_| {});
    }
    // Every argument may be configured out: the hasher is then unused.
    quote! {
        |#[allow(unused_variables)] #hasher: &mut #private::ArgHasher| {
            #[allow(unused_imports)]
            use #private::{HashArg as _, SkipArg as _};
            #(#args)*
        }
    }
}

/// The marks of the arguments every attempt of an `async fn` (or of a
/// stream's opener) borrows where the fn itself would hold them by value:
/// `let NAME = SharedByEveryAttempt::of(&NAME);` for each argument bound to
/// a plain name that is not `mut` (a `mut` one may be borrowed mutably,
/// `&mut T`, which needs no `Sync`), whose type is not a reference and
/// which `body` may borrow whole ([`borrowed_whole`]: an argument the body
/// does not name, or names only to read its fields, `&arg.field`, as
/// async blocks capture, asks no `Sync` of its type, and gets no mark).
///
/// A mark is `Send` exactly when the borrow the attempts hold is, so it
/// adds no bound; it lives to the end of the call, so that when the
/// argument is not `Sync`, rustc's "future is not `Send`" note names it:
/// on the argument, under the argument's name (hygienic, so the body
/// still sees the argument itself), of the type
/// `SharedByEveryAttempt<'_, T>`, whose docs say what to do (see
/// `retry-runtime/src/shared_arg.rs`). Zero-sized; its drop does nothing.
pub(super) fn shared_marks(
    sig: &syn::Signature,
    body: &TokenStream,
    private: &TokenStream,
) -> TokenStream {
    sig.inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => Some(typed),
            syn::FnArg::Receiver(_) => None,
        })
        .filter(|typed| !matches!(strip_groups(&typed.ty), Type::Reference(_)))
        .filter_map(|typed| {
            let syn::Pat::Ident(binding) = &*typed.pat else {
                return None;
            };
            if binding.by_ref.is_some() || binding.mutability.is_some() || binding.subpat.is_some()
            {
                return None;
            }
            let argument = &binding.ident;
            if !borrowed_whole(body.clone(), &argument.unraw().to_string(), false) {
                return None;
            }
            let mut mark = argument.clone();
            mark.set_span(Span::mixed_site().located_at(argument.span()));
            let cfgs = cfg_attrs(&typed.attrs);
            Some(quote! {
                #(#cfgs)*
                #[allow(unused_variables)]
                let #mark = #private::SharedByEveryAttempt::of(&#argument);
            })
        })
        .collect()
}

/// Whether `tokens` (a body, and the groups and macro arguments in it) may
/// borrow the argument `name` whole: name it other than as `name.field`
/// (`name.0`), or, in a macro's arguments (`in_macro`), as an inline
/// argument of a format string. A method call `name.len()` borrows it
/// whole; so, conservatively, does any other use of the identifier as a
/// value, a shadowing one included.
fn borrowed_whole(tokens: TokenStream, name: &str, in_macro: bool) -> bool {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let punct_at = |index: usize, ch: char| is_punct(tokens.get(index), ch);
    for (index, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Ident(ident) if ident.unraw() == name => {
                // A field or method of something else (`.name`), or a
                // path's later segment (`::name`; a single `:` is before
                // a value, `Struct { field: name }`).
                let after_access = index > 0
                    && (punct_at(index - 1, '.')
                        || (index > 1 && punct_at(index - 1, ':') && punct_at(index - 2, ':')));
                if after_access {
                    continue;
                }
                // `name.field`, not followed by a call or a turbofish.
                let field = punct_at(index + 1, '.')
                    && match tokens.get(index + 2) {
                        Some(TokenTree::Literal(_)) => true,
                        Some(TokenTree::Ident(_)) => {
                            !matches!(
                                tokens.get(index + 3),
                                Some(TokenTree::Group(group))
                                    if group.delimiter() == Delimiter::Parenthesis
                            ) && !punct_at(index + 3, ':')
                        }
                        _ => false,
                    };
                if !field {
                    return true;
                }
            }
            TokenTree::Group(group) => {
                let macro_args = index > 0 && punct_at(index - 1, '!');
                if borrowed_whole(group.stream(), name, in_macro || macro_args) {
                    return true;
                }
            }
            TokenTree::Literal(literal)
                if in_macro
                    && super::super::validate::format_names(literal, &[name.to_owned()]) =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Whether `token` is the punctuation `ch`.
fn is_punct(token: Option<&TokenTree>, ch: char) -> bool {
    matches!(token, Some(TokenTree::Punct(punct)) if punct.as_char() == ch)
}

/// The attributes of an argument that decide whether it exists, `#[cfg]`
/// and `#[cfg_attr]` (which may hold a `cfg`): generated code that names
/// the argument carries them, as `#[async_trait]` forwards an argument's
/// `#[cfg]` to its move into the boxed future, so that an argument
/// configured out is named nowhere. (The only built-in attributes a
/// parameter takes, and so a `cfg_attr` on one can hold, are `cfg` and the
/// lint levels, which a statement takes too.)
pub(super) fn cfg_attrs(attrs: &[syn::Attribute]) -> impl Iterator<Item = &syn::Attribute> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg") || attr.path().is_ident("cfg_attr"))
}

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn an_argument_is_borrowed_whole_unless_only_its_fields_are_read() {
        use super::borrowed_whole;
        let whole = |body: proc_macro2::TokenStream| borrowed_whole(body, "req", false);
        for body in [
            quote!(req.send()),
            quote!(req.name.len() + req.len()),
            quote!(let r = &req;),
            quote!(Wrapper { inner: req }),
            quote!(Wrapper { req }),
            quote!(req.get::<u8>),
            quote!({ call(req) }),
            quote!(format!("{req:?}")),
            quote!(r#req.send()),
        ] {
            assert!(whole(body.clone()), "{body}");
        }
        for body in [
            quote!(),
            quote!(req.name.len() + req.0),
            quote!(other.req.send()),
            quote!(module::req()),
            quote!(format!("{}", req.name)),
            quote!(println!("req")),
        ] {
            assert!(!whole(body.clone()), "{body}");
        }
    }
}

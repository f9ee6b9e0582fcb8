//! Token helpers of the generated code: spans, runtime names, and the
//! fake return edge's type.
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::Type;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};

/// A runtime name (a table's, a builder's) as generated code writes it.
pub(super) fn runtime_ident(name: &str) -> syn::Ident {
    syn::Ident::new(name, Span::call_site())
}

/// The spans of the first and the last token of `tokens`.
pub(super) fn first_and_last_span(tokens: &impl ToTokens) -> (Span, Span) {
    let mut spans = tokens
        .to_token_stream()
        .into_iter()
        .map(|token| token.span());
    let first = spans.next().unwrap_or_else(Span::call_site);
    let last = spans.last().unwrap_or(first);
    (first, last)
}

/// `tokens` with every span set to `span`.
pub(super) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner = Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

/// Replaces every `impl Trait` in `ty` with `_`, wherever a type can hold
/// one (generic arguments, tuples, references, trait objects, fn pointer
/// types, ..): `syn`'s visitor walks them all.
pub(super) fn erase_impl_trait(ty: &mut Type) {
    struct Erase;

    impl VisitMut for Erase {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            if let Type::ImplTrait(impl_trait) = ty {
                *ty = Type::Infer(syn::TypeInfer {
                    attrs: Vec::new(),
                    underscore_token: syn::Token![_](impl_trait.span()),
                });
            } else {
                visit_mut::visit_type_mut(self, ty);
            }
        }
    }

    Erase.visit_type_mut(ty);
}

//! The derived `Classify::inner`: the error a `transparent` (or `refused`)
//! variant holds, so every method the derive does not write — one the
//! trait gains later included — is that error's, not a default.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::generate::{Arm, Shape};
use super::hint;
use super::validate::{Answer, Case};

/// `fn inner`, or nothing when no case holds an error of its own.
pub(super) fn inner(shape: &Shape, private: &TokenStream, cases: &[Case<'_>]) -> TokenStream {
    shape
        .some(private, cases, |case| match &case.answer {
            Answer::Transparent(field) | Answer::Refused(field) => {
                let ty = field.ty;
                let binding = hint::binding(&field.member);
                Some(Arm {
                    body: quote_spanned! {ty.span()=>
                        #private::Option::Some(<#ty as #private::Classify>::__as_dyn_classify(#binding))
                    },
                    bindings: vec![field.member.clone()],
                })
            }
            _ => None,
        })
        .map(|body| {
            quote! {
                fn inner(&self) -> #private::Option<&dyn #private::Classify> {
                    #body
                }
            }
        })
        .unwrap_or_default()
}

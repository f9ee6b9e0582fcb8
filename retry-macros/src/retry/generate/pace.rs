//! The guards' steps of the loop: asked before the first attempt
//! (`pace_first`, which returns the call's error made from a refusal, if
//! its type can say one), and again after a wait when one asked to be
//! (`pace`).
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

use super::super::args::{Args, PolicyArg};
use super::policy::{names_generic, policy_base};
use super::tokens::{first_and_last_span, respan};

/// The step before the first attempt of a fn with guards: `ret_first`
/// returns what the fn makes of a refusal, `first_output`.
pub(super) fn pace_first(
    args: &Args,
    private: &TokenStream,
    generics: &syn::Generics,
    is_async: bool,
    engine: &syn::Ident,
    first_output: &syn::Ident,
    ret_first: &TokenStream,
) -> TokenStream {
    // A guard written in the attribute may refuse the first attempt: the
    // fn's error type must be able to say so (`Refusable`), asked of it on
    // the first such guard's path.
    let refusal_span = args
        .statics()
        .find(|(name, _)| *name != "budget")
        .map(|(_, path)| first_and_last_span(path).0);
    let first = match (is_async, refusal_span) {
        (true, None) => quote!(#private::pace_first(&mut #engine).await),
        (false, None) => quote!(#private::pace_first_blocking(&mut #engine)),
        (is_async, Some(span)) => {
            // The whole call on the guard's path, so the error for its
            // bound is reported there and nowhere else.
            let span = Span::call_site().located_at(span);
            let glue = if is_async {
                quote!(#private::pace_first_refusable)
            } else {
                quote!(#private::pace_first_blocking_refusable)
            };
            let glue = respan(glue, span);
            let call = quote_spanned!(span=> #glue(&mut #engine));
            if is_async {
                quote_spanned!(span=> #call.await)
            } else {
                call
            }
        }
    };
    let pace_first = quote! {
        if let #private::Option::Some(#first_output) = #first {
            return #ret_first;
        }
    };
    // A named policy may have no guard: then no future of
    // `pace_first` is made and awaited. A `const` or `static` one
    // says so at compile time; one bound by name, at run time.
    let keyed_guards = args.statics().next().is_some();
    match &args.policy {
        // Read through the same `Policy::named(PATH)`, spanned alike,
        // so a path that is no `Policy` is the one error it is.
        Some(PolicyArg::Path(path)) if !keyed_guards => {
            let base = policy_base(args, private);
            // The policy's guards may refuse the first attempt too: the
            // error type must be `Refusable` when it has one, asked
            // through a const argument on the path. A const argument
            // cannot name a generic parameter (`Self::POLICY`, `T::P`):
            // such a path is read at run time, as a policy bound by
            // name is, and its first attempt is made if the type
            // cannot say it was refused.
            let pace_first = if names_generic(path, generics) {
                pace_first
            } else {
                let (span, _) = first_and_last_span(path);
                let span = Span::call_site().located_at(span);
                let glue = respan(
                    if is_async {
                        quote!(#private::pace_first_if)
                    } else {
                        quote!(#private::pace_first_blocking_if)
                    },
                    span,
                );
                let call = quote_spanned! {span=>
                    #glue::<_, { #private::policy_has_guards(&#base) }>(&mut #engine)
                };
                let first = if is_async {
                    quote_spanned!(span=> #call.await)
                } else {
                    call
                };
                quote! {
                    if let #private::Option::Some(#first_output) = #first {
                        return #ret_first;
                    }
                }
            };
            quote! {
                if const { #private::policy_has_guards(&#base) } {
                    #pace_first
                }
            }
        }
        Some(PolicyArg::Named(_)) if is_async => quote! {
            if #private::wants_pace(&#engine) {
                #pace_first
            }
        },
        _ => pace_first,
    }
}

/// The step after a wait, for a fn whose guards may stop the call then.
pub(super) fn pace(private: &TokenStream, is_async: bool, engine: &syn::Ident) -> TokenStream {
    if is_async {
        quote!(#private::pace(&mut #engine).await;)
    } else {
        quote!(#private::pace_blocking(&mut #engine);)
    }
}

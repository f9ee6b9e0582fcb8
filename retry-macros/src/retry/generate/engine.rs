//! The call's engine: its policy (built at compile time, or bound by name
//! and loaded), the fn's statistics record, the clock it sleeps on and its
//! idempotency key.
use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;

use super::super::args::{Args, PolicyArg, StatsArg};
use super::arguments::fingerprint;
use super::policy::{policy_base, policy_overrides};
use super::tokens::{first_and_last_span, respan};

/// The expression that makes the call's engine.
pub(super) fn engine_new(
    args: &Args,
    private: &TokenStream,
    sig: &syn::Signature,
    is_async: bool,
) -> TokenStream {
    // The fn's name keys the idempotency key of a call nested in another.
    let name = syn::LitStr::new(&sig.ident.unraw().to_string(), sig.ident.span());

    // A `const` block, so the policy is built at compile time, borrowed in
    // place: the borrow is promoted to a `&'static`, so the fn's future
    // holds a pointer rather than a copy. (A named `const` item in the fn
    // body would be in scope for the user's body and could capture one of
    // its names.)
    let mut overrides = policy_overrides(args, private);
    // The fn's statistics record: a `static` inside the `const` block, out
    // of the body's sight, one per fn (a generic fn's instantiations share
    // it), that the policy points at. Named after the fn's path unless
    // `stats = "name"` says otherwise.
    let site = quote!(::core::concat!(::core::module_path!(), "::", #name));
    let stats_item = match &args.stats {
        Some(StatsArg::Off) => None,
        named => {
            let record = format_ident!("__TENACIOUS_STATS", span = Span::mixed_site());
            let record_name = match named {
                Some(StatsArg::Named(name)) => name.to_token_stream(),
                _ => site.clone(),
            };
            overrides.extend(quote!(.stats(&#record)));
            Some(quote! {
                static #record: #private::CallStats = #private::CallStats::new(#record_name);
            })
        }
    };

    // The call's engine, on the clock the fn sleeps on. Its idempotency
    // key is the one `key = EXPR` names (evaluated once, before the first
    // attempt, spanned on EXPR so a value that is no `KeySource` is
    // reported there); otherwise random, or derived, for a call nested in
    // another's attempt, from that attempt's key, the fn's name and a
    // fingerprint of the arguments whose types are `Hash`.
    let clock = if is_async {
        quote!(#private::Clock::Tokio)
    } else {
        quote!(#private::Clock::System)
    };
    let policy_ref = match &args.policy {
        // The policy of that name in the loaded set, found by the fn's
        // `BoundPolicy` (a `static` in a block of its own, out of the
        // body's sight): the fallback is built at compile time as a path's
        // policy is, and the same overrides are applied onto the loaded
        // one. The name goes through `policy_name`, spanned on the
        // literal, which compiles only with feature `config`.
        Some(PolicyArg::Named(lit)) => {
            let bound = format_ident!("__TENACIOUS_POLICY", span = Span::mixed_site());
            let loaded = format_ident!("__tenacious_loaded", span = Span::mixed_site());
            let checked = respan(
                quote!(#private::policy_name),
                Span::call_site().located_at(lit.span()),
            );
            let mut checked_args = Group::new(Delimiter::Parenthesis, lit.to_token_stream());
            checked_args.set_span(lit.span());
            quote!({
                #stats_item
                static #bound: #private::BoundPolicy = #private::BoundPolicy::new(
                    #checked #checked_args,
                    #site,
                    &const { #private::Policy::new() #overrides },
                    |#loaded: #private::Policy| #loaded #overrides,
                );
                #bound.policy()
            })
        }
        _ => {
            let base = policy_base(args, private);
            quote!(&const { #stats_item #base #overrides })
        }
    };
    match &args.key {
        Some(key) => {
            let (key_span, _) = first_and_last_span(key);
            let source = quote_spanned!(key_span=> #private::KeySource::call_key(&(#key), #name));
            quote!(#private::Engine::keyed(#policy_ref, #clock, #source))
        }
        None => {
            let fingerprint = fingerprint(sig, private);
            quote!(#private::Engine::named(#policy_ref, #name, #clock, #fingerprint))
        }
    }
}

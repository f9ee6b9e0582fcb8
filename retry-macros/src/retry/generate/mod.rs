//! The fn written back with its body run once per attempt (see
//! `ARCHITECTURE.md`, "What `#[retry]` expands to").
//!
//! The signature is the user's own tokens, untouched. The body goes, as
//! written, into a non-`move` `async` block (async fn) or an immediately
//! called closure (sync fn) created afresh in each turn of an inline loop:
//! each attempt borrows the arguments and `self` again, and `return` or `?`
//! in the body end the attempt, not the fn.
//!
//! Locals get `Span::mixed_site()` so the user's body can neither see nor
//! shadow them; every path is absolute, through `#krate::__private`.
use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};

use super::item::RetryFn;
use super::shape::{failure_attempt_type, second_argument};
use super::validate::Retry;

mod arguments;
mod attempt;
mod engine;
mod pace;
mod policy;
mod tokens;

use arguments::shared_marks;
use policy::{policy_checks, statics_are_places};
use tokens::{erase_impl_trait, first_and_last_span, respan};

/// A local of the generated code, `__tenacious_NAME`: `Span::mixed_site()`,
/// so the user's body can neither see nor shadow it.
fn local(name: &str) -> syn::Ident {
    format_ident!("__tenacious_{}", name, span = Span::mixed_site())
}

pub(super) fn expand(retry: Retry) -> TokenStream {
    let Retry {
        args,
        krate,
        func,
        shape,
        stream,
    } = retry;
    let args = &args;
    let private = krate.private();

    let return_type = &shape.output;

    // `Result<T, Failure<E>>`: the body's attempts are `Result<T, E>` and
    // the engine records them; otherwise the attempts are the return type.
    let failure_attempt = failure_attempt_type(return_type);
    let attempt_type = failure_attempt.as_ref().unwrap_or(return_type);
    // A fn with a `fallback` records its attempts as one returning a
    // `Failure` does, for the fallback to read.
    let recorded = failure_attempt.is_some() || args.fallback.is_some();

    let engine = local("engine");
    let records = local("records");
    let result = local("result");
    let fake = local("fake");
    let output = local("output");
    let delay = local("delay");
    let timer = local("timer");
    // The call that checks the return type, and the attempt's result in
    // it, sit on the user's return type (the callee on its first token, the
    // parentheses on its last, so the call covers all of it): a fn that
    // does not return a `Result`, or whose error is not `Classify`, is
    // reported there rather than on the attribute.
    let (first_span, last_span) = first_and_last_span(return_type);
    let checked_result = format_ident!(
        "__tenacious_result",
        span = Span::mixed_site().located_at(first_span)
    );
    // A sync fn, and an async fn with a deadline, hold the failed
    // attempt's result through the wait, so that a wake-up too close to
    // the deadline for another attempt returns it (`resume`). Other async
    // fns drop it first: during their backoff the future holds tokio's
    // `Sleep` and nothing beside it.
    // So does a fn with a guard, which may stop the call after the wait.
    // A named policy may have any of these: one looked up by name at run
    // time, and a `const` or `static` one too, whose fields the macro
    // cannot read (its timeout, its guards); the loop is the one that can
    // serve them all. (For a `const`, the checks fold away.)
    let named = args.policy.is_some();
    let guarded = named || args.statics().any(|(name, _)| name != "budget");
    // A budget may stop the call after the wait too: one kept in a store
    // (feature `redis`) answers then, before the attempt.
    let paced = named || args.statics().next().is_some();
    let held = !shape.is_async || args.deadline.is_some() || paced;
    // The guards are asked before the first attempt (`pace_first`, which
    // returns the call's error made from a refusal, if its type can say
    // one), and again after a wait when one asked to be (`pace`); a fn
    // without guards has no such step.
    // What the fn returns for a result the loop ends with: the result, or
    // with a `fallback`, what the fallback makes of a give-up (spanned on
    // its path, so a fallback of the wrong shape is reported there).
    let ret = |value: &syn::Ident| -> TokenStream {
        match &args.fallback {
            Some(path) => {
                let (first, last) = first_and_last_span(path);
                let glue = if failure_attempt.is_some() {
                    quote!(#private::fall_back_failure)
                } else {
                    quote!(#private::fall_back)
                };
                // The callee on the path's first token, the parentheses on
                // its last, the result handed over on the path too: the
                // whole call, and so an unmet bound of it (which rustc may
                // blame on the argument its types come from), is on the
                // path.
                let mut call = respan(glue, Span::call_site().located_at(first));
                let mut value = value.clone();
                value.set_span(value.span().located_at(first));
                let mut call_args =
                    Group::new(Delimiter::Parenthesis, quote!(&#engine, #value, #path));
                call_args.set_span(Span::call_site().located_at(last));
                call.extend([TokenTree::Group(call_args)]);
                call
            }
            None => quote!(#value),
        }
    };
    let first_output = local("refused");
    let ret_first = ret(&first_output);
    let ret_output = ret(&output);
    let pace_first = guarded.then(|| {
        pace::pace_first(
            args,
            &private,
            &func.sig.generics,
            shape.is_async,
            &engine,
            &first_output,
            &ret_first,
        )
    });
    let pace = paced.then(|| pace::pace(&private, shape.is_async, &engine));
    let step_fn = match (recorded, held) {
        (true, true) => quote!(#private::step_failure_held),
        (true, false) => quote!(#private::step_failure),
        (false, true) => quote!(#private::step_held),
        (false, false) => quote!(#private::step),
    };
    let last = local("last");
    let resume = if recorded {
        quote!(#private::resume_failure(&mut #engine, &mut #records, #last))
    } else {
        quote!(#private::resume(&mut #engine, #last))
    };
    let step = respan(step_fn, Span::call_site().located_at(first_span));
    // A user's `when` goes through `when(..)`, which checks that it borrows
    // the error; spanned on the path, so that is the one error there.
    let when = args.when.as_ref().map_or_else(
        || quote!(#private::always),
        |path| {
            let (first, last) = first_and_last_span(path);
            let mut call = respan(quote!(#private::when), first);
            let mut args = Group::new(Delimiter::Parenthesis, path.to_token_stream());
            args.set_span(last);
            call.extend([TokenTree::Group(args)]);
            call
        },
    );
    let notify = args
        .notify
        .as_ref()
        .map_or_else(|| quote!(#private::ignore), ToTokens::to_token_stream);
    let step_args = if recorded {
        quote!(&mut #engine, &mut #records, #checked_result, #when, #notify)
    } else {
        quote!(&mut #engine, #checked_result, #when, #notify)
    };
    let mut step_args = Group::new(Delimiter::Parenthesis, step_args);
    step_args.set_span(Span::call_site().located_at(last_span));

    // The fake return edge gives the attempt its type before the body is
    // checked, so `?` knows what to convert errors into and a mistyped body
    // is reported against the return type the user wrote. `impl Trait`
    // cannot be named in a `let`, so it becomes `_` there.
    let mut fake_type = attempt_type.clone();
    erase_impl_trait(&mut fake_type);
    let fake_return = quote_spanned! {first_span=>
        #[allow(
            unreachable_code,
            clippy::diverging_sub_expression,
            clippy::empty_loop,
            clippy::let_unit_value,
            clippy::let_with_type_underscore,
            clippy::needless_return,
            clippy::unreachable
        )]
        if false {
            let #fake: #fake_type = loop {};
            return #fake;
        }
    };

    let mut attempt_body = TokenStream::new();
    shape.brace.surround(&mut attempt_body, |tokens| {
        fake_return.to_tokens(tokens);
        shape.body.to_tokens(tokens);
    });
    // Each attempt runs inside the runtime's wrapper, which sets the
    // attempt context (`Attempt::current()`) and, with `timeout`, bounds it.
    let (attempt, step_and_wait) = if shape.is_async {
        let attempt = attempt::async_attempt(
            args,
            &private,
            &func.sig.generics,
            &engine,
            &result,
            &attempt_body,
            named,
        );
        let wait = if held {
            // The timer is awaited in place, beside the held result; a
            // zero delay needs no timer.
            quote! {
                let #last = match #step #step_args {
                    #private::ControlFlow::Break(#output) => return #ret_output,
                    #private::ControlFlow::Continue((#delay, #last)) => {
                        if !#delay.is_zero() {
                            #private::sleep(#delay).await;
                        }
                        #last
                    }
                };
                #pace
                if let #private::ControlFlow::Break(#output) = #resume {
                    return #ret_output;
                }
            }
        } else {
            // The step's result is gone before the timer is awaited, which
            // happens in place: during a backoff the fn's future holds
            // tokio's `Sleep` and nothing beside it. A zero delay needs no
            // timer.
            quote! {
                let #timer = match #step #step_args {
                    #private::ControlFlow::Break(#output) => return #ret_output,
                    #private::ControlFlow::Continue(#delay) if #delay.is_zero() => continue,
                    #private::ControlFlow::Continue(#delay) => #private::sleep(#delay),
                };
                #timer.await;
            }
        };
        (attempt, wait)
    } else {
        (
            // A closure gives `return` and `?` in the body a scope of one
            // attempt.
            quote! {
                let #result = #private::attempt_blocking(&mut #engine, || #attempt_body);
            },
            quote! {
                let #last = match #step #step_args {
                    #private::ControlFlow::Break(#output) => return #ret_output,
                    #private::ControlFlow::Continue((#delay, #last)) => {
                        #private::sleep_blocking(#delay);
                        #last
                    }
                };
                #pace
                if let #private::ControlFlow::Break(#output) = #resume {
                    return #ret_output;
                }
            },
        )
    };
    // A `check` turns a bad `Ok` into the error it names, before the
    // engine sees the attempt; spanned on the path, so a fn of the wrong
    // shape is reported there.
    let attempt = match &args.check {
        Some(path) => {
            let (first, last) = first_and_last_span(path);
            let mut call = respan(quote!(#private::checked), first);
            let mut call_args = Group::new(Delimiter::Parenthesis, quote!(#result, #path));
            call_args.set_span(last);
            call.extend([TokenTree::Group(call_args)]);
            quote! {
                #attempt
                let #result = #call;
            }
        }
        None => attempt,
    };
    let records_decl = recorded.then(|| quote!(let mut #records = #private::Provenance::new();));
    let engine_new = engine::engine_new(args, &private, &func.sig, shape.is_async);

    if let Some(stream) = stream {
        // The fn becomes one returning the retried stream; its arguments
        // move into the driver, which opens once per attempt (see
        // `retry-runtime/src/stream.rs`, `Port`).
        let port = local("port");
        let link = local("link");
        let mut sig = func.sig.clone();
        sig.asyncness = None;
        let captured = super::stream::name_lifetimes(&mut sig);
        let item = &stream.item;
        let bounds = &stream.bounds;
        // The user's own path to `Stream` (so their import stays used),
        // yielding `Result<T, Failure<E>>`.
        // The output is spanned on the return type: an item that is not a
        // `Result` is one error there. The open is spanned on its error
        // type, when the return type names it: an open whose error is not
        // the items' is one error there.
        let yields = stream.bound_with_item(syn::parse_quote!(#private::StreamOutput<#item>));
        let on_output =
            second_argument(&shape.output).map_or(first_span, |error| first_and_last_span(error).0);
        let mut opening = respan(quote!(#private::opened::<#item, _, _>), on_output);
        let mut opened = Group::new(Delimiter::Parenthesis, quote!(async #attempt_body.await));
        opened.set_span(on_output);
        opening.extend([TokenTree::Group(opened)]);
        let output = quote_spanned! {first_span=>
            impl #yields
                #(+ #bounds)*
                + #private::Captures<(#(&#captured (),)*)>
        };
        sig.output = syn::parse_quote!(-> #output);
        let driven = respan(
            quote!(#private::RetriedStream::driven),
            Span::call_site().located_at(first_span),
        );
        let checks = policy_checks(args, &private, &func.sig.generics, true, true);
        let places = statics_are_places(args);
        let marks = shared_marks(&func.sig, &shape.body, &private);
        let body = quote! {
            #places
            #checks
            let #engine = #engine_new;
            let (#port, #link) = #private::stream_port();
            #driven(#engine, #link, async move {
                #marks
                loop {
                    #port.serve(async { #opening }).await;
                }
            })
        };
        return fn_with_body(RetryFn { sig, ..func }, body);
    }

    let checks = policy_checks(args, &private, &func.sig.generics, false, shape.is_async);
    let places = statics_are_places(args);
    let marks = shape
        .is_async
        .then(|| shared_marks(&func.sig, &shape.body, &private));
    let retry_loop = quote! {
        #places
        #checks
        #marks
        let mut #engine = #engine_new;
        #records_decl
        #pace_first
        loop {
            #attempt
            #step_and_wait
        }
    };
    let body = shape.wrap(retry_loop);
    fn_with_body(func, body)
}

/// The fn as the user wrote it, with `body` inside its braces.
///
/// The braces are the user's own (`brace_token`), so the fn's span is the
/// user's from `fn` to `}` and rustc's and clippy's lints on the fn itself
/// (`dead_code`, `missing_errors_doc`, ..) see the user's fn, not a macro's.
fn fn_with_body(func: RetryFn, body: TokenStream) -> TokenStream {
    let RetryFn {
        outer_attrs,
        inner_attrs,
        vis,
        sig,
        brace_token,
        body: _,
    } = func;
    // Inner attributes cannot stay inside the rewritten body; on the fn
    // they mean the same thing.
    let inner_attrs = inner_attrs.into_iter().map(|mut attr| {
        attr.style = syn::AttrStyle::Outer;
        attr
    });
    let mut out = quote! {
        #(#outer_attrs)*
        #(#inner_attrs)*
        #vis #sig
    };
    brace_token.surround(&mut out, |tokens| body.to_tokens(tokens));
    out
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::erase_impl_trait;
    use crate::retry::expand;

    #[test]
    fn the_new_keys_reach_the_policy_and_the_loop() {
        let out = expand(
            quote!(
                timeout = "1s",
                deadline = "2s",
                budget = B,
                nested = "retry"
            ),
            quote!(
                async fn f() -> Result<u8, Failure<E>> {
                    x
                }
            ),
        )
        .to_string();
        for part in [
            ". timeout (:: tenacious :: __private :: Duration :: from_nanos (1000000000))",
            ". deadline (:: tenacious :: __private :: Duration :: from_nanos (2000000000))",
            ". budget (:: tenacious :: __private :: shared_budget (& B))",
            ". nested (:: tenacious :: __private :: Nested :: Retry)",
            "attempt_timed",
            "timed_out",
            "step_failure",
            "Provenance :: new ()",
            // The policy is promoted to a `&'static`, not copied into the
            // future.
            "Engine :: named (& const {",
            "} , \"f\" , :: tenacious :: __private :: Clock :: Tokio , | _ | { })",
            // With a deadline, the failed attempt's result is held through
            // the wait, for a wake-up too late for another attempt.
            "step_failure_held",
            "resume_failure (& mut __tenacious_engine , & mut __tenacious_records , __tenacious_last)",
        ] {
            assert!(out.contains(part), "{part} not in {out}");
        }
        let sync = expand(
            quote!(),
            quote!(
                fn f() -> R {
                    x
                }
            ),
        )
        .to_string();
        assert!(sync.contains("attempt_blocking"), "{sync}");
        assert!(!sync.contains("step_failure") && !sync.contains("Provenance"));
    }

    #[test]
    fn the_record_is_a_static_in_the_policys_const_block() {
        let fn_item = quote!(
            fn search() -> R {
                x
            }
        );
        let default = expand(quote!(), fn_item.clone()).to_string();
        let record = quote!(
            const {
                static __TENACIOUS_STATS: ::tenacious::__private::CallStats =
                    ::tenacious::__private::CallStats::new(::core::concat!(
                        ::core::module_path!(),
                        "::",
                        "search"
                    ));
                ::tenacious::__private::Policy::new().stats(&__TENACIOUS_STATS)
            }
        )
        .to_string();
        assert!(default.contains(&record), "{default}");

        let named = expand(quote!(stats = "search tool"), fn_item.clone()).to_string();
        assert!(
            named.contains("CallStats :: new (\"search tool\")"),
            "{named}"
        );
        let off = expand(quote!(stats = false, max = 2), fn_item).to_string();
        assert!(
            !off.contains("CallStats") && !off.contains(". stats"),
            "{off}"
        );
        assert!(off.contains("const { :: tenacious :: __private :: Policy :: new () . max (2) }"));
    }

    #[test]
    fn a_policy_by_name_is_a_bound_static_with_the_keys_twice() {
        let out = expand(
            quote!(policy = "openai", max = 4),
            quote!(
                async fn chat() -> R {
                    x
                }
            ),
        )
        .to_string();
        for part in [
            "static __TENACIOUS_POLICY : :: tenacious :: __private :: BoundPolicy = \
             :: tenacious :: __private :: BoundPolicy :: new (:: tenacious :: __private :: \
             policy_name (\"openai\") ,",
            // The fallback, built at compile time, and the same keys for the
            // loaded policy, the record in both.
            "& const { :: tenacious :: __private :: Policy :: new () . max (4) . stats \
             (& __TENACIOUS_STATS) } ,",
            "| __tenacious_loaded : :: tenacious :: __private :: Policy | __tenacious_loaded \
             . max (4) . stats (& __TENACIOUS_STATS) ,",
            "__TENACIOUS_POLICY . policy () }",
            // The loop that serves any policy: guards, a held result, a
            // timeout if the loaded policy has one.
            "if :: tenacious :: __private :: wants_pace (& __tenacious_engine)",
            "step_held",
            ":: tenacious :: __private :: bounded (& __tenacious_engine , __tenacious_to_error)",
            "attempt_bounded",
        ] {
            assert!(out.contains(part), "{part} not in {out}");
        }
        let sync = expand(
            quote!(policy = "openai"),
            quote!(
                fn chat() -> R {
                    x
                }
            ),
        )
        .to_string();
        assert!(
            sync.contains("pace_first_blocking") && !sync.contains("bounded"),
            "{sync}"
        );
        // A path is read at compile time, as before.
        let path = expand(
            quote!(policy = OPENAI),
            quote!(
                fn chat() -> R {
                    x
                }
            ),
        )
        .to_string();
        assert!(
            path.contains("& const {") && path.contains("Policy :: named (OPENAI)"),
            "{path}"
        );
        assert!(!path.contains("BoundPolicy"), "{path}");
    }

    #[test]
    fn impl_trait_is_erased_wherever_it_nests() {
        let mut ty: syn::Type = syn::parse2(quote!(
            Result<(impl Display, Vec<impl Iterator<Item = impl Debug>>), E>
        ))
        .unwrap();
        erase_impl_trait(&mut ty);
        assert_eq!(
            quote!(#ty).to_string(),
            quote!(Result<(_, Vec<_>), E>).to_string()
        );
        // Inside trait objects and fn types too.
        let mut ty: syn::Type = syn::parse2(quote!(
            Result<Box<dyn Iterator<Item = impl Debug> + Send>, fn(&[impl Display]) -> E>
        ))
        .unwrap();
        erase_impl_trait(&mut ty);
        assert_eq!(
            quote!(#ty).to_string(),
            quote!(Result<Box<dyn Iterator<Item = _> + Send>, fn(&[_]) -> E>).to_string()
        );
    }

    #[test]
    fn the_policy_holds_only_the_given_keys() {
        let out = expand(
            quote!(
                max = 4,
                cap = "1m",
                jitter = "none",
                on = RateLimited,
                crate = my::t
            ),
            quote!(
                fn f() -> R {
                    x
                }
            ),
        )
        .to_string();
        let policy = quote!(
            my::t::__private::Policy::new()
                .max(4)
                .cap(my::t::__private::Duration::from_nanos(60000000000))
                .jitter(my::t::__private::Jitter::None)
                .on(my::t::__private::RetryOn::RATE_LIMITED)
        )
        .to_string();
        assert!(out.contains(&policy), "{out}");
    }

    #[test]
    fn sync_and_async_fns_sleep_their_own_way() {
        let sync = expand(
            quote!(),
            quote!(
                fn f() -> R {
                    x
                }
            ),
        )
        .to_string();
        assert!(
            sync.contains("sleep_blocking") && !sync.contains(". await"),
            "{sync}"
        );
        let asynchronous = expand(
            quote!(),
            quote!(
                async fn f() -> R {
                    x
                }
            ),
        )
        .to_string();
        for part in [
            // The attempt moves into the wrapper awaited in place, and so
            // does the timer, after a zero delay is skipped.
            "attempt (& mut __tenacious_engine , async",
            "if __tenacious_delay . is_zero () => continue",
            "sleep (__tenacious_delay)",
            "__tenacious_timer . await",
        ] {
            assert!(asynchronous.contains(part), "{part} not in {asynchronous}");
        }
    }

    #[test]
    fn attributes_are_kept_and_inner_ones_moved_out() {
        let out = expand(
            quote!(),
            quote!(
                /// Docs.
                #[inline]
                pub(crate) fn f() -> R {
                    #![allow(unused)]
                    x
                }
            ),
        )
        .to_string();
        let head = quote!(#[doc = r" Docs."] #[inline] #[allow(unused)] pub(crate) fn f() -> R)
            .to_string();
        assert!(out.starts_with(&head), "{out}");
    }
}

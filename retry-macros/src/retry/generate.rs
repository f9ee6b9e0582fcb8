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
use proc_macro2::{Delimiter, Group, Literal, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::Type;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};

use super::args::{Args, DurationArg, PolicyArg, RETRIED_CLASSES, StatsArg};
use super::duration;
use super::item::RetryFn;
use super::shape::{failure_attempt_type, second_argument};
use super::validate::Retry;
use crate::common::strip_groups;

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

    let local = |name: &str| format_ident!("__tenacious_{}", name, span = Span::mixed_site());
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
    // A guard written in the attribute may refuse the first attempt: the
    // fn's error type must be able to say so (`Refusable`), asked of it on
    // the first such guard's path.
    let refusal_span = args
        .statics()
        .find(|(name, _)| *name != "budget")
        .map(|(_, path)| first_and_last_span(path).0);
    let pace_first = guarded.then(|| {
        let first = match (shape.is_async, refusal_span) {
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
                let base = policy_base(args, &private);
                // The policy's guards may refuse the first attempt too: the
                // error type must be `Refusable` when it has one, asked
                // through a const argument on the path. A const argument
                // cannot name a generic parameter (`Self::POLICY`, `T::P`):
                // such a path is read at run time, as a policy bound by
                // name is, and its first attempt is made if the type
                // cannot say it was refused.
                let pace_first = if names_generic(path, &func.sig.generics) {
                    pace_first
                } else {
                    let (span, _) = first_and_last_span(path);
                    let span = Span::call_site().located_at(span);
                    let glue = respan(
                        if shape.is_async {
                            quote!(#private::pace_first_if)
                        } else {
                            quote!(#private::pace_first_blocking_if)
                        },
                        span,
                    );
                    let call = quote_spanned! {span=>
                        #glue::<_, { #private::policy_has_guards(&#base) }>(&mut #engine)
                    };
                    let first = if shape.is_async {
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
            Some(PolicyArg::Named(_)) if shape.is_async => quote! {
                if #private::wants_pace(&#engine) {
                    #pace_first
                }
            },
            _ => pace_first,
        }
    });
    let pace = paced.then(|| {
        if shape.is_async {
            quote!(#private::pace(&mut #engine).await;)
        } else {
            quote!(#private::pace_blocking(&mut #engine);)
        }
    });
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
        let attempt = match &args.timeout {
            Some(timeout) => {
                // The conversion of a timeout into the user's error sits on
                // the `timeout` key: without `From<Elapsed>` the error is
                // reported there.
                let key_span = timeout.key.span();
                let elapsed = format_ident!(
                    "__tenacious_elapsed",
                    span = Span::mixed_site().located_at(key_span)
                );
                let on_key = Span::call_site().located_at(key_span);
                let mut timed_out = respan(quote!(#private::timed_out), on_key);
                let mut timed_out_args =
                    Group::new(Delimiter::Parenthesis, quote!(&mut #engine, #elapsed));
                timed_out_args.set_span(on_key);
                timed_out.extend([TokenTree::Group(timed_out_args)]);
                quote! {
                    let #result = match #private::attempt_timed(&mut #engine, async #attempt_body).await {
                        #private::Result::Ok(#result) => #result,
                        #private::Result::Err(#elapsed) => #timed_out,
                    };
                }
            }
            // A policy looked up by name may have a `timeout`: it bounds
            // the attempt if the error can say it ran out (`From<Elapsed>`,
            // found by method resolution on the attempt's future), as
            // `timeout = "..."` would; otherwise the attempt is unbounded.
            None if named => {
                let fut = local("attempt");
                let to_error = local("to_error");
                let bound = local("bound");
                // Two awaits, one taken: an unbounded attempt (the loaded
                // policy has no `timeout`) is awaited as any fn's is.
                // A `const` or `static` policy says at compile time whether
                // it has a `timeout`: without one the bound is never made.
                let may_bound = match &args.policy {
                    Some(PolicyArg::Path(_)) => {
                        let base = policy_base(args, &private);
                        quote!(const { #private::policy_has_timeout(&#base) })
                    }
                    _ => quote!(true),
                };
                // A `const` or `static` one read at compile time asks the
                // error to be `From<Elapsed>` when it has a `timeout`, as
                // the key does: spanned on its path, so a policy whose
                // timeout could not apply is an error there, not a bound
                // dropped. (A const argument cannot name a generic
                // parameter: a path that does is read at run time, as a
                // policy bound by name is.)
                let to_output = match &args.policy {
                    Some(PolicyArg::Path(path)) if !names_generic(path, &func.sig.generics) => {
                        let base = policy_base(args, &private);
                        let (span, _) = first_and_last_span(path);
                        let span = Span::call_site().located_at(span);
                        let glue = respan(quote!(#private::elapsed_into_if), span);
                        quote_spanned! {span=>
                            #glue::<_, { #private::policy_has_timeout(&#base) }, _>(&#fut)
                        }
                    }
                    _ => quote! {{
                        #[allow(unused_imports)]
                        use #private::{ElapsedInto as _, ElapsedNot as _};
                        (&#private::OutputOf::of(&#fut)).elapsed_into()
                    }},
                };
                quote! {
                    let #fut = async #attempt_body;
                    let #to_error = if #may_bound {
                        #to_output
                    } else {
                        #private::Option::None
                    };
                    let #result = match #private::bounded(&#engine, #to_error) {
                        #private::Option::None => #private::attempt(&mut #engine, #fut).await,
                        #private::Option::Some(#bound) => {
                            match #private::attempt_bounded(&mut #engine, #bound, #fut).await {
                                #private::Result::Ok(#result) => #result,
                                #private::Result::Err(#result) => {
                                    #private::timed_out_as(&mut #engine, #result)
                                }
                            }
                        }
                    };
                }
            }
            None => quote! {
                let #result = #private::attempt(&mut #engine, async #attempt_body).await;
            },
        };
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
    // The fn's name keys the idempotency key of a call nested in another.
    let name = syn::LitStr::new(&func.sig.ident.unraw().to_string(), func.sig.ident.span());

    // A `const` block, so the policy is built at compile time, borrowed in
    // place: the borrow is promoted to a `&'static`, so the fn's future
    // holds a pointer rather than a copy. (A named `const` item in the fn
    // body would be in scope for the user's body and could capture one of
    // its names.)
    let mut overrides = policy_overrides(args, &private);
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
    let clock = if shape.is_async {
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
            let base = policy_base(args, &private);
            quote!(&const { #stats_item #base #overrides })
        }
    };
    let engine_new = match &args.key {
        Some(key) => {
            let (key_span, _) = first_and_last_span(key);
            let source = quote_spanned!(key_span=> #private::KeySource::call_key(&(#key), #name));
            quote!(#private::Engine::keyed(#policy_ref, #clock, #source))
        }
        None => {
            let fingerprint = fingerprint(&func.sig, &private);
            quote!(#private::Engine::named(#policy_ref, #name, #clock, #fingerprint))
        }
    };

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

/// The closure that writes the fingerprint of the fn's arguments into
/// the idempotency key of a nested call: each argument bound to a plain
/// name, but `self` and `&mut` arguments (state the call works on, not what
/// it asks for), hashed if its type is `Hash` and marked otherwise (the
/// runtime's `HashArg` and `SkipArg`, picked by method resolution).
fn fingerprint(sig: &syn::Signature, private: &TokenStream) -> TokenStream {
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
fn shared_marks(sig: &syn::Signature, body: &TokenStream, private: &TokenStream) -> TokenStream {
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
                if in_macro && super::validate::format_names(literal, &[name.to_owned()]) =>
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

/// The policy the keys override: `Policy::new()`, or the one `policy =
/// PATH` names (spanned on its path, so a path that is no `const Policy`
/// is reported there).
/// Whether `path` starts at `Self` or at one of the fn's generic
/// parameters, which a const argument cannot name.
fn names_generic(path: &syn::ExprPath, generics: &syn::Generics) -> bool {
    let Some(first) = path.path.segments.first() else {
        return false;
    };
    path.qself.is_some()
        || first.ident == "Self"
        || generics
            .type_params()
            .any(|param| param.ident == first.ident)
}

/// The checks of the keys against the `const` or `static` policy they
/// override that the keys get against each other (see `validate`): a
/// `timeout` longer than the policy's `deadline`, a `base` above its
/// `cap`, ... One `const _` item per key that has its other half in the
/// policy, evaluated at compile time (by `cargo check` too), whose panic
/// sits on the key's value: the error is there, saying what the keys'
/// would. None for a path naming a generic parameter, which an item
/// cannot, nor for a policy bound by name, read at run time.
fn policy_checks(
    args: &Args,
    private: &TokenStream,
    generics: &syn::Generics,
    opens_stream: bool,
    is_async: bool,
) -> TokenStream {
    let Some(PolicyArg::Path(path)) = &args.policy else {
        return TokenStream::new();
    };
    if names_generic(path, generics) {
        return TokenStream::new();
    }
    let base = policy_base(args, private);
    let named = path_text(path);
    let policy = format_ident!("__tenacious_policy", span = Span::mixed_site());
    let limit = format_ident!("__tenacious_limit", span = Span::mixed_site());
    let mut checks = TokenStream::new();
    // `key` is given, with `nanos`; the policy's `getter` is the other
    // half, an `Option<Duration>` if `optional`; the key is wrong when
    // the policy's value is `below` it (or, if not, above it).
    let mut check = |key: &DurationArg, getter: &str, optional: bool, below: bool, why: String| {
        let nanos = Literal::u128_unsuffixed(u128::from(key.nanos));
        let getter = runtime_ident(getter);
        let wrong = if below {
            quote!(#limit.as_nanos() < #nanos)
        } else {
            quote!(#limit.as_nanos() > #nanos)
        };
        let message = syn::LitStr::new(&why, key.lit.span());
        let panic = respan(
            quote!(::core::panic!(#message)),
            Span::call_site().located_at(key.lit.span()),
        );
        let test = if optional {
            quote! {
                if let #private::Option::Some(#limit) = #policy.#getter() {
                    if #wrong {
                        #panic
                    }
                }
            }
        } else {
            quote! {
                let #limit = #policy.#getter();
                if #wrong {
                    #panic
                }
            }
        };
        checks.extend(quote! {
            const _: () = {
                let #policy = #base;
                #test
            };
        });
    };
    let shown = |key: &DurationArg| format!("`{}` ({})", key.key, duration::display(key.nanos));
    if let (Some(timeout), None) = (&args.timeout, &args.deadline) {
        let why = format!(
            "{} is longer than the `deadline` of `{named}`: no attempt can run longer than \
             the whole call; lower `timeout` or raise the policy's `deadline`",
            shown(timeout)
        );
        check(timeout, "get_deadline", true, true, why);
    }
    // (A sync fn's attempts are not bounded: the policy's `timeout` is
    // no limit there.)
    if let (Some(deadline), None, true, false) =
        (&args.deadline, &args.timeout, is_async, opens_stream)
    {
        let why = format!(
            "{} is shorter than the `timeout` of `{named}`: no attempt can run longer than \
             the whole call; raise `deadline` or lower the policy's `timeout`",
            shown(deadline)
        );
        check(deadline, "get_timeout", true, false, why);
    }
    if let (Some(base), None) = (&args.base, &args.cap) {
        let why = format!(
            "{} is above the `cap` of `{named}`: `cap` is the ceiling of every backoff, so \
             it must be at least `base`; lower `base` or raise `cap` too",
            shown(base)
        );
        check(base, "get_cap", false, true, why);
    }
    if let (Some(cap), None) = (&args.cap, &args.base) {
        let why = format!(
            "{} is below the `base` of `{named}`: `cap` is the ceiling of every backoff, so \
             it must be at least `base`; raise `cap` or lower `base` too",
            shown(cap)
        );
        check(cap, "get_base", false, false, why);
    }
    if opens_stream {
        for timer in [&args.first_item, &args.idle].into_iter().flatten() {
            if args.deadline.is_none() {
                let why = format!(
                    "{} is longer than the `deadline` of `{named}`: the deadline ends the \
                     stream first; lower `{}` or raise the policy's `deadline`",
                    shown(timer),
                    timer.key
                );
                check(timer, "get_deadline", true, true, why);
            }
        }
        if let Some(deadline) = &args.deadline {
            for (getter, key, given) in [
                ("get_first_item", "first_item", &args.first_item),
                ("get_idle", "idle", &args.idle),
            ] {
                if given.is_none() {
                    let why = format!(
                        "{} is shorter than the `{key}` of `{named}`: the deadline ends the \
                         stream first; raise `deadline` or lower the policy's `{key}`",
                        shown(deadline)
                    );
                    check(deadline, getter, true, false, why);
                }
            }
        }
    }
    checks
}

/// A path as written, `a::B`, without the spaces of its tokens.
fn path_text(path: &syn::ExprPath) -> String {
    let mut text = String::new();
    if path.path.leading_colon.is_some() {
        text.push_str("::");
    }
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|segment| segment.ident.unraw().to_string())
        .collect();
    text.push_str(&segments.join("::"));
    text
}

fn policy_base(args: &Args, private: &TokenStream) -> TokenStream {
    match &args.policy {
        Some(PolicyArg::Path(path)) => {
            let (span, _) = first_and_last_span(path);
            quote_spanned!(span=> #private::Policy::named(#path))
        }
        _ => quote!(#private::Policy::new()),
    }
}

/// A builder call for every key the user gave, to apply onto the policy
/// they override; the others keep its settings.
fn policy_overrides(args: &Args, private: &TokenStream) -> TokenStream {
    // `.method(Duration::from_nanos(N))` for a duration key the user gave.
    let duration = |policy: &mut TokenStream, method: &str, arg: &Option<DurationArg>| {
        if let Some(arg) = arg {
            let method = runtime_ident(method);
            let nanos = Literal::u64_unsuffixed(arg.nanos);
            policy.extend(quote!(.#method(#private::Duration::from_nanos(#nanos))));
        }
    };
    let mut policy = TokenStream::new();
    if let Some(max) = args.max {
        let max = Literal::u32_unsuffixed(max);
        policy.extend(quote!(.max(#max)));
    }
    duration(&mut policy, "base", &args.base);
    duration(&mut policy, "cap", &args.cap);
    if let Some(jitter) = args.jitter {
        let variant = runtime_ident(jitter.runtime);
        policy.extend(quote!(.jitter(#private::Jitter::#variant)));
    }
    if let Some(on) = &args.on {
        let set = |name: &str| {
            let name = runtime_ident(name);
            quote!(#private::RetryOn::#name)
        };
        let classes = match on.as_slice() {
            [] => None,
            [class] => Some(set(class.runtime)),
            // Every retryable class: the runtime's name for that set.
            all if all.len() == RETRIED_CLASSES.len() => Some(set("DEFAULT")),
            [first, rest @ ..] => {
                let mut union = set(first.runtime);
                for class in rest {
                    let class = set(class.runtime);
                    union = quote!(#union.union(#class));
                }
                Some(union)
            }
        };
        if let Some(classes) = classes {
            policy.extend(quote!(.on(#classes)));
        }
    }
    duration(&mut policy, "max_retry_after", &args.max_retry_after);
    duration(&mut policy, "timeout", &args.timeout);
    duration(&mut policy, "deadline", &args.deadline);
    duration(&mut policy, "first_item", &args.first_item);
    duration(&mut policy, "idle", &args.idle);
    // Whatever its value: beside a policy that says the opposite, an
    // override means what it says.
    if let Some((_, resume)) = &args.resume {
        policy.extend(quote!(.resume(#resume)));
    }
    if let Some((_, idempotent)) = &args.idempotent {
        policy.extend(quote!(.idempotent(#idempotent)));
    }
    // Each shared `static` on its path, through the runtime's fn of the
    // key's name (`shared_breaker(&PATH)`), which takes it by its own
    // type: a path that is not a `static` of the builder's type
    // (`RetryBudget`, `Breaker`, ...; for `guard`, one implementing
    // `Guard`), such as a `LazyLock<Arc<Breaker>>`, is one type error there,
    // in the words of the key, where the builder would deref-coerce it (a
    // "non-const deref coercion" error per layer) or report a mismatch.
    for (name, path) in args.statics() {
        let (span, last) = first_and_last_span(path);
        // The builder's name on the path too, so the whole call is there;
        // and the call of the runtime's fn spans the path, as its argument
        // does, so that an error of either is one on the path.
        let builder = syn::Ident::new(name, span);
        let checked = format_ident!("shared_{}", name);
        let mut shared = respan(quote!(#private::#checked), span);
        let mut shared_args = Group::new(Delimiter::Parenthesis, quote_spanned!(span=> &#path));
        shared_args.set_span(last);
        shared.extend([TokenTree::Group(shared_args)]);
        policy.extend(quote_spanned!(span=> .#builder(#shared)));
    }
    if let Some(nested) = args.nested {
        let variant = runtime_ident(nested.runtime);
        policy.extend(quote!(.nested(#private::Nested::#variant)));
    }
    policy
}

/// The check that each shared `static` the attribute names (`budget`,
/// `breaker`, ...) is one: `let _ = &raw const PATH;`, on its path. A
/// `static` is a place, whose address this takes (and throws away: it
/// compiles to nothing); a `const` is a value, a fresh guard at every use
/// that no other call would share, and taking its address is E0745
/// ("cannot take address of a temporary"), on the path, the one error for
/// it: the borrow `&PATH` the policy's builder takes (E0716, "temporary
/// value dropped while borrowed", on the whole attribute, for a guard with
/// state) is not reported once the fn's body has an error.
///
/// Tokens cannot tell a `const` from a `static`, and no trait can (both are
/// of the same type), so the message cannot be this crate's own on stable
/// Rust; the paths the tokens do show are no `static` (`Self::HEALTH`) are
/// refused with one in `validate`.
fn statics_are_places(args: &Args) -> TokenStream {
    args.statics()
        .map(|(_, path)| {
            let (span, _) = first_and_last_span(path);
            quote_spanned!(span=> let _ = &raw const #path;)
        })
        .collect()
}

/// A runtime name (a table's, a builder's) as generated code writes it.
fn runtime_ident(name: &str) -> syn::Ident {
    syn::Ident::new(name, Span::call_site())
}

/// The spans of the first and the last token of `tokens`.
fn first_and_last_span(tokens: &impl ToTokens) -> (Span, Span) {
    let mut spans = tokens
        .to_token_stream()
        .into_iter()
        .map(|token| token.span());
    let first = spans.next().unwrap_or_else(Span::call_site);
    let last = spans.last().unwrap_or(first);
    (first, last)
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
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
fn erase_impl_trait(ty: &mut Type) {
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

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
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, ReturnType, Type};

use super::args::{Args, DurationArg, JitterKind, RetryOn};
use super::item::RetryFn;
use crate::common::CratePath;

pub(super) fn expand(args: &Args, func: RetryFn) -> TokenStream {
    let RetryFn {
        outer_attrs,
        inner_attrs,
        vis,
        sig,
        brace_token,
        body,
    } = func;
    let private = CratePath::from(args.krate.clone()).private();

    let ReturnType::Type(_, return_type) = &sig.output else {
        unreachable!("validation rejects a fn without a return type")
    };

    let local = |name: &str| format_ident!("__tenacious_{}", name, span = Span::mixed_site());
    let policy = local("policy");
    let engine = local("engine");
    let result = local("result");
    let fake = local("fake");
    let output = local("output");
    let delay = local("delay");
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
    let step = respan(
        quote!(#private::step),
        Span::call_site().located_at(first_span),
    );
    let when = args
        .when
        .as_ref()
        .map_or_else(|| quote!(#private::always), ToTokens::to_token_stream);
    let notify = args
        .notify
        .as_ref()
        .map_or_else(|| quote!(#private::ignore), ToTokens::to_token_stream);
    let mut step_args = Group::new(
        Delimiter::Parenthesis,
        quote!(&mut #engine, #checked_result, #when, #notify),
    );
    step_args.set_span(Span::call_site().located_at(last_span));

    // The fake return edge gives the attempt its type before the body is
    // checked, so `?` knows what to convert errors into and a mistyped body
    // is reported against the return type the user wrote. `impl Trait`
    // cannot be named in a `let`, so it becomes `_` there.
    let mut fake_type = (**return_type).clone();
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
    brace_token.surround(&mut attempt_body, |tokens| {
        fake_return.to_tokens(tokens);
        body.to_tokens(tokens);
    });
    let (attempt, sleep) = if sig.asyncness.is_some() {
        (
            quote!(let #result = async #attempt_body.await;),
            quote!(#private::sleep(#delay).await),
        )
    } else {
        (
            // Calling the closure in place is the point: it gives `return`
            // and `?` in the body a scope of one attempt.
            quote! {
                #[allow(clippy::redundant_closure_call)]
                let #result = (|| #attempt_body)();
            },
            quote!(#private::sleep_blocking(#delay)),
        )
    };

    // A `const` block, so the policy is still built at compile time, bound
    // to a hygienic local: a named `const` item in the fn body would be in
    // scope for the user's body and could capture one of its names.
    let policy_value = policy_expr(args, &private);

    // Inner attributes cannot stay inside the rewritten body; on the fn
    // they mean the same thing.
    let inner_attrs = inner_attrs.into_iter().map(|mut attr| {
        attr.style = syn::AttrStyle::Outer;
        attr
    });

    quote! {
        #(#outer_attrs)*
        #(#inner_attrs)*
        #vis #sig {
            let #policy: #private::Policy = const { #policy_value };
            let mut #engine = #private::Engine::new(&#policy);
            loop {
                #attempt
                match #step #step_args {
                    #private::ControlFlow::Break(#output) => return #output,
                    #private::ControlFlow::Continue(#delay) => #sleep,
                }
            }
        }
    }
}

/// `Policy::new()` with a builder call for every key the user gave; the
/// others keep the runtime's defaults.
fn policy_expr(args: &Args, private: &TokenStream) -> TokenStream {
    let duration = |d: &DurationArg| {
        let nanos = Literal::u64_unsuffixed(d.nanos);
        quote!(#private::Duration::from_nanos(#nanos))
    };
    let mut policy = quote!(#private::Policy::new());
    if let Some(max) = args.max {
        let max = Literal::u32_unsuffixed(max);
        policy.extend(quote!(.max(#max)));
    }
    if let Some(base) = &args.base {
        let base = duration(base);
        policy.extend(quote!(.base(#base)));
    }
    if let Some(cap) = &args.cap {
        let cap = duration(cap);
        policy.extend(quote!(.cap(#cap)));
    }
    if let Some(jitter) = args.jitter {
        let variant = match jitter {
            JitterKind::Full => quote!(Full),
            JitterKind::Equal => quote!(Equal),
            JitterKind::Decorrelated => quote!(Decorrelated),
            JitterKind::None => quote!(None),
        };
        policy.extend(quote!(.jitter(#private::Jitter::#variant)));
    }
    if let Some(RetryOn {
        transient,
        rate_limited,
    }) = args.on
    {
        let set = match (transient, rate_limited) {
            (true, false) => quote!(TRANSIENT),
            (false, true) => quote!(RATE_LIMITED),
            _ => quote!(DEFAULT),
        };
        policy.extend(quote!(.on(#private::RetryOn::#set)));
    }
    if let Some(max_retry_after) = &args.max_retry_after {
        let max_retry_after = duration(max_retry_after);
        policy.extend(quote!(.max_retry_after(#max_retry_after)));
    }
    policy
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

/// Replaces every `impl Trait` in `ty` with `_`.
fn erase_impl_trait(ty: &mut Type) {
    match ty {
        Type::ImplTrait(impl_trait) => {
            *ty = Type::Infer(syn::TypeInfer {
                attrs: Vec::new(),
                underscore_token: syn::Token![_](impl_trait.span()),
            });
        }
        Type::Array(array) => erase_impl_trait(&mut array.elem),
        Type::Group(group) => erase_impl_trait(&mut group.elem),
        Type::Paren(paren) => erase_impl_trait(&mut paren.elem),
        Type::Ptr(ptr) => erase_impl_trait(&mut ptr.elem),
        Type::Reference(reference) => erase_impl_trait(&mut reference.elem),
        Type::Slice(slice) => erase_impl_trait(&mut slice.elem),
        Type::Tuple(tuple) => tuple.elems.iter_mut().for_each(erase_impl_trait),
        Type::Path(path) => {
            if let Some(qself) = &mut path.qself {
                erase_impl_trait(&mut qself.ty);
            }
            for segment in &mut path.path.segments {
                if let PathArguments::AngleBracketed(generics) = &mut segment.arguments {
                    for arg in &mut generics.args {
                        match arg {
                            GenericArgument::Type(ty) => erase_impl_trait(ty),
                            GenericArgument::AssocType(assoc) => erase_impl_trait(&mut assoc.ty),
                            _ => {}
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::erase_impl_trait;
    use crate::retry::expand;

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
        assert!(
            asynchronous.contains("sleep (__tenacious_delay) . await"),
            "{asynchronous}"
        );
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

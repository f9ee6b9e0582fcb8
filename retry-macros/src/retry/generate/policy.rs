//! The policy a fn's keys build: the one they override, the overrides,
//! and the compile-time checks of the keys against a `const` policy.
use proc_macro2::{Delimiter, Group, Literal, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;

use super::super::args::{Args, DurationArg, PolicyArg, RETRIED_CLASSES};
use super::super::duration;
use super::tokens::{first_and_last_span, respan, runtime_ident};

/// Whether `path` starts at `Self` or at one of the fn's generic
/// parameters, which a const argument cannot name.
pub(super) fn names_generic(path: &syn::ExprPath, generics: &syn::Generics) -> bool {
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
pub(super) fn policy_checks(
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

/// The policy the keys override: `Policy::new()`, or the one `policy =
/// PATH` names (spanned on its path, so a path that is no `const Policy`
/// is reported there).
pub(super) fn policy_base(args: &Args, private: &TokenStream) -> TokenStream {
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
pub(super) fn policy_overrides(args: &Args, private: &TokenStream) -> TokenStream {
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
pub(super) fn statics_are_places(args: &Args) -> TokenStream {
    args.statics()
        .map(|(_, path)| {
            let (span, _) = first_and_last_span(path);
            quote_spanned!(span=> let _ = &raw const #path;)
        })
        .collect()
}

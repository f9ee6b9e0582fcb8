//! Checks that need more than one key, or the fn itself; what passes them
//! all is the checked model, [`Retry`].
//!
//! Whether the return type is a `Result` whose error is `Classify`, and
//! whether `when` and `notify` have the right signatures, cannot be seen in
//! tokens (type aliases, imports); the generated code leaves those to the
//! runtime's traits, spanned on the user's tokens. What tokens do show is
//! checked here.
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Attribute, FnArg, ReceiverKind, ReturnType, Signature, Type};
use tenacious_syntax::rules::{self, Setting};

use super::args::Args;
use super::item::RetryFn;
use super::lifetimes;
use super::shape::{Shape, failure_error};
use super::stream::StreamReturn;
use crate::common::{CratePath, Errors, strip_groups};

mod arguments;

pub(super) use arguments::format_names;
use arguments::{check_key, check_shared_paths};

/// The runtime's defaults (`Policy::DEFAULT`), needed to compare a lone
/// `cap` with `base`; a unit test below compares them with the runtime's.
const DEFAULT_BASE_NANOS: u64 = 200_000_000;
const DEFAULT_CAP_NANOS: u64 = 20_000_000_000;

/// A `#[retry]` that passed every check, with the fn's shape found: all
/// [`super::generate`] needs, so it checks nothing again.
pub(super) struct Retry {
    pub(super) args: Args,
    /// The crate generated paths start from, resolved.
    pub(super) krate: CratePath,
    pub(super) func: RetryFn,
    pub(super) shape: Shape,
    /// The fn opens a stream: what it returns, taken apart.
    pub(super) stream: Option<StreamReturn>,
}

/// The checked model, or every error found (`errors` holds those of the
/// attribute, `func` says whether the item is a fn).
pub(super) fn check(
    args: Args,
    krate: CratePath,
    func: syn::Result<RetryFn>,
    mut errors: Errors,
) -> syn::Result<Retry> {
    let func = match func {
        Ok(func) => func,
        Err(err) => return Err(errors.fail(err)),
    };
    let shape = Shape::of(&func);
    let stream = StreamReturn::of(&shape.output);
    check_backoff(&args, &mut errors);
    check_stream(&args, &func, &shape, stream.is_some(), &mut errors);
    if let Some(item) = stream
        .as_ref()
        .and_then(|stream| super::stream::never_a_result(&stream.item))
    {
        errors.at(
            item,
            "a retried stream's items are `Result<T, E>`: a read that fails is an item \
             `Err(e)`, classified and retried like a failed open; declare \
             `impl Stream<Item = Result<String, Cut>>`, with `Cut` the fn's error type",
        );
    }
    check_limits(&args, &shape, stream.is_some(), &mut errors);
    check_signature(&func.sig, &mut errors);
    check_attributes(&func.outer_attrs, &mut errors);
    check_borrowed_output(&func.sig, &shape.output, &mut errors);
    check_key(&args, &func.sig, &shape, stream.is_some(), &mut errors);
    check_shared_paths(&args, &func.sig, &mut errors);
    errors.finish()?;
    Ok(Retry {
        args,
        krate,
        func,
        shape,
        stream,
    })
}

/// Attributes `#[retry]` cannot honour, among the fn's others (those above
/// it have expanded already, or are inert; those below it are all here).
fn check_attributes(attrs: &[Attribute], errors: &mut Errors) {
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("track_caller") {
            errors.at(
                attr,
                "`#[track_caller]` cannot work under `#[retry]`: the body runs in a closure \
                 (or an async block) inside the retry loop, so a panic in it reports the \
                 body's location, not the caller's; remove `#[track_caller]` (to report the \
                 caller, take a `&'static Location<'static>` argument that a \
                 `#[track_caller]` wrapper fills with `Location::caller()`)",
            );
        } else if path
            .segments
            .last()
            .is_some_and(|last| last.ident == "retry")
        {
            errors.at(
                attr,
                "`#[retry]` is already on this fn: the two retry loops would nest, this \
                 lower one's running the upper one's, so neither policy is the one \
                 written; merge the keys into one `#[retry(...)]`",
            );
        }
    }
}

/// A returned borrow of an `&mut` input does not compile in a loop that
/// borrows the input again for the next attempt: the attempt's result may
/// be returned, so its borrow must last past the loop, which today's borrow
/// checker (NLL) then extends over every turn of it (Polonius accepts it;
/// no safe rewrite of the loop does). Said here, on the return type, rather
/// than as rustc's "two closures require unique access".
fn check_borrowed_output(sig: &Signature, output: &Type, errors: &mut Errors) {
    let Some(through) = lifetimes::mut_input_in_output(sig, output) else {
        return;
    };
    errors.at(
        output,
        format_args!(
            "`#[retry]` cannot return a borrow of {through}, a `&mut` input: every attempt \
             borrows it mutably again, and the borrow checker rejects a loop whose result \
             keeps a mutable borrow from an earlier turn (a known limitation of NLL, lifted \
             only by Polonius); retry a fn that returns an owned value or `Result<(), E>`, \
             and borrow after it returns"
        ),
    );
}

/// The keys of a retried stream need a fn that opens one, and such a fn
/// needs to be an `async fn` the macro sees as written.
fn check_stream(
    args: &Args,
    func: &RetryFn,
    shape: &Shape,
    opens_stream: bool,
    errors: &mut Errors,
) {
    let name = &func.sig.ident;
    if !opens_stream {
        let keys = [
            args.first_item.as_ref().map(|arg| &arg.key),
            args.idle.as_ref().map(|arg| &arg.key),
            args.resume.as_ref().map(|(key, _)| key),
        ];
        for key in keys.into_iter().flatten() {
            errors.at(
                key,
                format_args!(
                    "`{key}` applies to a retried stream, but `{name}` returns no stream: a fn \
                     that opens a stream returns `Result<impl Stream<Item = Result<T, E>>, E>` \
                     and its body opens the stream once per attempt; remove `{key}`, or \
                     return the stream"
                ),
            );
        }
        return;
    }
    if !shape.is_async {
        errors.at(
            func.sig.fn_token,
            format_args!(
                "`{name}` opens a stream, so `#[retry]` needs it to be an `async fn`: each \
                 attempt awaits the opening (connect, send, read the head) before reading \
                 the stream; add `async`"
            ),
        );
    } else if !shape.is_plain() {
        errors.at(
            &shape.output,
            "`#[retry]` on a fn that opens a stream rewrites the fn into one returning the \
             retried stream, which it cannot do once `#[async_trait]` or \
             `#[tracing::instrument]` above it rewrote the fn; put `#[retry]` above them, or \
             open the stream in a plain `async fn` they call",
        );
    }
    for (key, path) in [
        ("when", &args.when),
        ("notify", &args.notify),
        ("check", &args.check),
        ("fallback", &args.fallback),
    ] {
        if let Some(path) = path {
            errors.at(
                path,
                format_args!(
                    "`{key}` is not supported on a fn that opens a stream yet: the retried \
                     stream decides with the policy's classes alone and reports each retry \
                     to the statistics (`tenacious::stats`) and, with the features, to \
                     `tracing` and `metrics`; narrow the classes in `Classify`, or wrap \
                     the opened stream (`inspect`) to see each attempt"
                ),
            );
        }
    }
    if let Some(timeout) = &args.timeout {
        errors.at(
            &timeout.key,
            "`timeout` bounds one attempt of a call, but a stream's attempt lasts as long as \
             the stream; bound its wait for the first content item with `first_item` and its \
             time without progress with `idle` (`deadline` bounds the whole stream)",
        );
    }
    if let Some(failure) = failure_error(&shape.output) {
        errors.at(
            failure,
            "a retried stream's items already carry a `Failure<E>` (the consumer gets \
             `Result<T, Failure<E>>`); declare the plain error type `E` here",
        );
    }
    let deadline = Setting::written(args.deadline.as_ref().map(|arg| arg.nanos));
    for timer in [&args.first_item, &args.idle].into_iter().flatten() {
        let key = if timer.key.unraw() == "idle" {
            "idle"
        } else {
            "first_item"
        };
        let limit = Setting::written(Some(timer.nanos));
        if let Some(broken) = rules::within_deadline(key, limit, deadline, "the default") {
            errors.at(&timer.lit, broken.message);
        }
    }
}

fn check_limits(args: &Args, shape: &Shape, opens_stream: bool, errors: &mut Errors) {
    if let Some(timeout) = &args.timeout
        && !shape.is_async
        && !opens_stream
    {
        errors.at(
            &timeout.key,
            "`timeout` needs an `async fn`: a running sync fn cannot be interrupted; bound \
             the blocking call itself (a socket or client timeout), or make the fn `async`; \
             `deadline` works on sync fns too",
        );
    }
    if let Some(timeout) = &args.timeout
        && let Some(broken) = rules::within_deadline(
            "timeout",
            Setting::written(Some(timeout.nanos)),
            Setting::written(args.deadline.as_ref().map(|arg| arg.nanos)),
            "the default",
        )
    {
        errors.at(&timeout.lit, broken.message);
    }
}

fn check_backoff(args: &Args, errors: &mut Errors) {
    // Against a named policy, a lone `base` or `cap` meets its other half,
    // which the tokens do not show: the runtime keeps every delay at or
    // under `cap` whatever `base` says. Else the missing half is the
    // default's.
    let inherited = |default| args.policy.is_none().then_some(default);
    let base = Setting::or(
        args.base.as_ref().map(|arg| arg.nanos),
        inherited(DEFAULT_BASE_NANOS),
    );
    let cap = Setting::or(
        args.cap.as_ref().map(|arg| arg.nanos),
        inherited(DEFAULT_CAP_NANOS),
    );
    let Some(broken) = rules::backoff(base, cap, "the default") else {
        return;
    };
    let blamed = if broken.key == "cap" {
        &args.cap
    } else {
        &args.base
    };
    if let Some(blamed) = blamed {
        errors.at(&blamed.lit, broken.message);
    }
}

fn check_signature(sig: &Signature, errors: &mut Errors) {
    if let Some(constness) = &sig.constness {
        errors.at(
            constness,
            "`#[retry]` cannot go on a `const fn`: retrying sleeps between attempts, which \
             a `const fn` cannot do; remove `const`",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(
            abi,
            "`#[retry]` cannot go on an `extern` fn: the retry loop is Rust code; remove \
             the ABI and call the retried fn from a separate `extern` wrapper",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(
            variadic,
            "`#[retry]` cannot go on a variadic fn: every attempt must see the same arguments",
        );
    }
    if let Some(FnArg::Receiver(receiver)) = sig.inputs.first() {
        // `Pin<&mut Self>` and `Pin<&Self>` are references: each attempt
        // reborrows them (`self.as_mut()`), as with `&mut self`.
        let (by_value, pinned) = match &receiver.kind {
            ReceiverKind::Reference(..) => (false, false),
            ReceiverKind::Typed(_, ty) => match pin_argument(ty) {
                Some(inner) => (!matches!(strip_groups(inner), Type::Reference(_)), true),
                None => (!matches!(strip_groups(ty), Type::Reference(_)), false),
            },
            _ => (true, false),
        };
        if by_value && pinned {
            errors.at(
                receiver,
                "`#[retry]` runs the body again after a failure, so it cannot take a pinned \
                 `self` by value (the first attempt would consume it); take \
                 `self: Pin<&mut Self>` and reborrow it in the body with `self.as_mut()`",
            );
        } else if by_value {
            errors.at(
                receiver,
                "`#[retry]` runs the body again after a failure, so it cannot take `self` by \
                 value (the first attempt would consume it); take `&self` or `&mut self` \
                 (or `self: &Arc<Self>` for a smart pointer)",
            );
        }
    }
    match &sig.output {
        ReturnType::Default => {
            // From `fn` to the closing parenthesis: the place a `-> ...` goes.
            let mut tokens = proc_macro2::TokenStream::new();
            sig.fn_token.to_tokens(&mut tokens);
            sig.ident.to_tokens(&mut tokens);
            sig.paren_token
                .surround(&mut tokens, |t| sig.inputs.to_tokens(t));
            errors.at(
                tokens,
                format_args!(
                    "`{}` returns nothing, but `#[retry]` needs a fn returning `Result<T, E>` \
                     with `E: Classify` to decide whether to retry; add `-> Result<T, E>`",
                    sig.ident
                ),
            );
        }
        ReturnType::Type(_, ty) => check_return_type(ty, errors),
    }
}

/// Rejects return types that cannot be a `Result` whatever is in scope.
///
/// A path (`Result<T, E>`, `io::Result<T>`, an alias) may or may not be
/// one: that is the runtime trait's call.
fn check_return_type(ty: &Type, errors: &mut Errors) {
    let ty = strip_groups(ty);
    let what = match ty {
        Type::Path(_) | Type::Macro(_) | Type::Verbatim(_) => return,
        Type::ImplTrait(_) => {
            errors.at(
                ty,
                "`#[retry]` needs a fn returning `Result<T, E>` with `E: Classify`, not \
                 `impl Trait`; for a future, write an `async fn` returning `Result<T, E>`",
            );
            return;
        }
        Type::Tuple(tuple) if tuple.elems.is_empty() => "`()`".to_owned(),
        _ => format!("`{}`", ty.to_token_stream()),
    };
    errors.at(
        ty,
        format_args!(
            "`#[retry]` needs a fn returning `Result<T, E>` with `E: Classify`, found {what}; \
             return a `Result` whose error type says whether to retry"
        ),
    );
}

/// `P` of a `Pin<P>` (by its last path segment, so `std::pin::Pin` too).
fn pin_argument(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = strip_groups(ty) else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Pin" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(inner) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::{DEFAULT_BASE_NANOS, DEFAULT_CAP_NANOS};
    use crate::retry::expand;
    use crate::retry::tests::errors_of;

    /// The copies of the runtime's defaults are the runtime's defaults.
    #[test]
    fn the_default_backoff_is_the_runtimes() {
        let policy = tenacious::Policy::DEFAULT;
        assert_eq!(u128::from(DEFAULT_BASE_NANOS), policy.get_base().as_nanos());
        assert_eq!(u128::from(DEFAULT_CAP_NANOS), policy.get_cap().as_nanos());
    }

    fn errors(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> Vec<String> {
        errors_of(&expand(args, item))
    }

    #[test]
    fn cap_below_base_is_an_error_on_cap() {
        let e = errors(
            quote!(base = "1s", cap = "500ms"),
            quote!(
                fn f() -> R {
                    x
                }
            ),
        );
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("`cap` (500ms) is below `base` (1s)"), "{e:?}");
        let e = errors(
            quote!(cap = "100ms"),
            quote!(
                fn f() -> R {
                    x
                }
            ),
        );
        assert!(e[0].contains("the default `base` (200ms)"), "{e:?}");
        let e = errors(
            quote!(base = "1m"),
            quote!(
                fn f() -> R {
                    x
                }
            ),
        );
        assert!(e[0].contains("above the default `cap` (20s)"), "{e:?}");
        assert!(
            errors(
                quote!(base = "1s", cap = "1s"),
                quote!(
                    fn f() -> R {
                        x
                    }
                )
            )
            .is_empty()
        );
    }

    #[test]
    fn timeout_needs_an_async_fn_and_fits_the_deadline() {
        let e = errors(
            quote!(timeout = "1s"),
            quote!(
                fn f() -> R {
                    x
                }
            ),
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("`timeout` needs an `async fn`"), "{e:?}");
        let e = errors(
            quote!(timeout = "2m", deadline = "1m"),
            quote!(
                async fn f() -> R {
                    x
                }
            ),
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].contains("`timeout` (2m) is longer than `deadline` (1m)"),
            "{e:?}"
        );
        for args in [
            quote!(timeout = "1m", deadline = "1m"),
            quote!(timeout = "1s"),
            quote!(deadline = "1s"),
        ] {
            assert!(
                errors(
                    args,
                    quote!(
                        async fn f() -> R {
                            x
                        }
                    )
                )
                .is_empty()
            );
        }
        assert!(
            errors(
                quote!(deadline = "1s"),
                quote!(
                    fn f() -> R {
                        x
                    }
                )
            )
            .is_empty()
        );
    }

    #[test]
    fn receivers_by_value_are_errors() {
        for receiver in [
            quote!(self),
            quote!(mut self),
            quote!(self: Self),
            quote!(self: Box<Self>),
            quote!(self: std::sync::Arc<Self>),
        ] {
            let e = errors(quote!(), quote!(fn f(#receiver) -> R { x }));
            assert_eq!(e.len(), 1, "{receiver}: {e:?}");
            assert!(e[0].contains("cannot take `self` by value"), "{e:?}");
        }
        for receiver in [
            quote!(&self),
            quote!(&mut self),
            quote!(&'a self),
            quote!(self: &Self),
            quote!(self: &mut Self),
            quote!(self: &std::sync::Arc<Self>),
            quote!(self: Pin<&mut Self>),
            quote!(mut self: Pin<&mut Self>),
            quote!(self: std::pin::Pin<&Self>),
        ] {
            assert!(errors(quote!(), quote!(fn f(#receiver) -> R { x })).is_empty());
        }
        for receiver in [quote!(self: Pin<Box<Self>>), quote!(self: Pin<Self>)] {
            let e = errors(quote!(), quote!(fn f(#receiver) -> R { x }));
            assert_eq!(e.len(), 1, "{receiver}: {e:?}");
            assert!(e[0].contains("`self: Pin<&mut Self>`"), "{e:?}");
        }
    }

    #[test]
    fn impossible_return_types_are_errors() {
        for ret in [
            quote!(),
            quote!(-> ()),
            quote!(-> &str),
            quote!(-> impl Future<Output = R>),
            quote!(-> (R, R)),
        ] {
            let e = errors(quote!(), quote!(fn f() #ret { x }));
            assert_eq!(e.len(), 1, "{ret}: {e:?}");
            assert!(e[0].contains("Result<T, E>"), "{e:?}");
        }
        for ret in [
            quote!(-> Result<u8, E>),
            quote!(-> io::Result<u8>),
            quote!(-> Fallible),
        ] {
            assert!(errors(quote!(), quote!(fn f() #ret { x })).is_empty());
        }
    }

    #[test]
    fn const_extern_and_declarations_are_errors() {
        let e = errors(
            quote!(),
            quote!(
                const fn f() -> R {
                    x
                }
            ),
        );
        assert!(e[0].contains("`const fn`"), "{e:?}");
        let e = errors(
            quote!(),
            quote!(
                extern "C" fn f() -> R {
                    x
                }
            ),
        );
        assert!(e[0].contains("`extern` fn"), "{e:?}");
        let e = errors(
            quote!(),
            quote!(
                fn f(&self) -> R;
            ),
        );
        assert!(e[0].contains("needs the fn's body"), "{e:?}");
        let e = errors(
            quote!(),
            quote!(
                struct S;
            ),
        );
        assert!(e[0].contains("goes on a fn"), "{e:?}");
    }

    #[test]
    fn a_second_retry_and_track_caller_are_errors() {
        for attr in [quote!(#[retry]), quote!(#[tenacious::retry(max = 2)])] {
            let e = errors(quote!(), quote!(#attr fn f() -> R { x }));
            assert_eq!(e.len(), 1, "{attr}: {e:?}");
            assert!(e[0].contains("already on this fn"), "{e:?}");
        }
        let e = errors(
            quote!(),
            quote!(
                #[track_caller]
                fn f() -> R {
                    x
                }
            ),
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("`#[track_caller]` cannot work"), "{e:?}");
        let fine = quote!(
            #[inline]
            #[retry_later]
            #[my::retry_policy]
            fn f() -> R {
                x
            }
        );
        assert!(errors(quote!(), fine).is_empty());
    }

    #[test]
    fn a_returned_borrow_of_a_mut_input_is_an_error_on_the_return_type() {
        let e = errors(
            quote!(),
            quote!(
                fn f(&mut self) -> Result<&str, E> {
                    x
                }
            ),
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("borrow of `self`, a `&mut` input"), "{e:?}");
        assert!(
            errors(
                quote!(),
                quote!(
                    fn f(&self) -> Result<&str, E> {
                        x
                    }
                )
            )
            .is_empty()
        );
    }

    #[test]
    fn unsafe_fns_are_allowed() {
        assert!(
            errors(
                quote!(),
                quote!(
                    unsafe fn f() -> R {
                        x
                    }
                )
            )
            .is_empty()
        );
    }

    /// `key = EXPR` names the call from the call: a key that names no
    /// argument, no `self` and no local is one error on it, with the fix.
    #[test]
    fn a_key_that_names_no_argument_is_an_error_on_it() {
        let item = quote!(
            fn f(&self, order: &Order, a: u64, b: u64) -> R {
                x
            }
        );
        for key in [
            quote!("order-1"),
            quote!(7),
            quote!(KEY),
            quote!(Self::KEY),
            quote!(order::KEY),
            quote!(format!("{}-{}", KEY, 1)),
            quote!(format!("{{order}}")),
            quote!(concat!("a", "b")),
            quote!({
                let k = "k";
                k
            }),
            quote!(KEYS.order),
            quote!(Key { order: 1 }),
            quote!(order!()),
        ] {
            let e = errors(quote!(key = #key), item.clone());
            assert_eq!(e.len(), 1, "{key}: {e:?}");
            assert!(e[0].contains("names no argument of the call"), "{e:?}");
            assert!(
                e[0].contains("name the key from the call: `key = order`"),
                "{e:?}"
            );
        }
        for key in [
            quote!(order.id),
            quote!(self.id),
            quote!(self),
            quote!(format!("{}-{}", a, b)),
            quote!(format!("{a}-{b:>4}")),
            quote!((a, b)),
            quote!(IdempotencyKey::derive("task", &order.sku)),
            quote!(order.key()),
            quote!(r#order.id),
            quote!(&*order.sku),
            quote!(if a > 1 { "x" } else { "y" }),
            quote!(Key { order }),
            quote!(Key { id: order.id }),
        ] {
            let e = errors(quote!(key = #key), item.clone());
            assert!(e.is_empty(), "{key}: {e:?}");
        }
        // A receiver alone, then nothing to name it from.
        let e = errors(
            quote!(key = KEY),
            quote!(
                fn f(&self) -> R {
                    x
                }
            ),
        );
        assert!(e[0].contains("`key = self.request_id`"), "{e:?}");
        let e = errors(
            quote!(key = "k"),
            quote!(
                fn f() -> R {
                    x
                }
            ),
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("this fn takes no argument"), "{e:?}");
        // The names a pattern binds, and async-trait's moves of them.
        assert!(
            errors(
                quote!(key = b),
                quote!(
                    fn f((a, b): (u64, u64), Order { id, .. }: Order) -> R {
                        x
                    }
                )
            )
            .is_empty()
        );
        assert!(
            errors(
                quote!(key = id),
                quote!(
                    fn f<'life0, 'async_trait>(
                        &'life0 self,
                        __arg1: Order,
                    ) -> ::core::pin::Pin<
                        Box<
                            dyn ::core::future::Future<Output = R>
                                + ::core::marker::Send
                                + 'async_trait,
                        >,
                    > {
                        Box::pin(async move {
                            let __self = self;
                            let Order { id, .. } = {
                                let __arg1 = __arg1;
                                __arg1
                            };
                            let __ret: R = { x };
                            #[allow(unreachable_code)]
                            __ret
                        })
                    }
                )
            )
            .is_empty()
        );
    }

    /// A guard named by an associated item is a `const`, and a guard or a
    /// policy named by an argument a run-time value: one error on the path.
    #[test]
    fn guards_and_policies_the_path_shows_are_no_static_are_errors() {
        let item = quote!(
            fn f<T>(&self, policy: Policy, b: &'static Breaker) -> R {
                x
            }
        );
        for (args, says) in [
            (
                quote!(breaker = Self::HEALTH),
                "`Self::HEALTH` is an associated `const`",
            ),
            (
                quote!(guard = T::GUARD),
                "`T::GUARD` is an associated `const`",
            ),
            (
                quote!(budget = Self::inner::B),
                "declare `static RETRY_BUDGET: tenacious::RetryBudget",
            ),
            (
                quote!(breaker = b),
                "`breaker = b` names an argument of the fn",
            ),
            (
                quote!(policy = policy),
                "`policy = policy` names an argument of the fn",
            ),
        ] {
            let e = errors(args.clone(), item.clone());
            assert_eq!(e.len(), 1, "{args}: {e:?}");
            assert!(e[0].contains(says), "{args}: {e:?}");
        }
        let e = errors(quote!(breaker = Self::HEALTH), item.clone());
        assert!(
            e[0].contains(
                "declare `static PROVIDER_BREAKER: tenacious::Breaker = \
                 tenacious::Breaker::new();` at module level and write \
                 `breaker = PROVIDER_BREAKER`"
            ),
            "{e:?}"
        );
        let e = errors(quote!(policy = policy), item.clone());
        assert!(
            e[0].contains("`policy.retry(|| async { .. }).await`"),
            "{e:?}"
        );
        // A module's item, a `const` policy of `Self`: not refused here.
        for args in [
            quote!(breaker = HEALTH),
            quote!(breaker = health::HEALTH),
            quote!(policy = Self::POLICY),
            quote!(policy = POLICY),
        ] {
            assert!(errors(args.clone(), item.clone()).is_empty(), "{args}");
        }
    }
}

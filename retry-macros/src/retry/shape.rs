//! Where the user's body is, in a fn another attribute has already rewritten.
//!
//! Attributes above `#[retry]` expand first and hand it their output. Two
//! common ones move the body into a block that takes the arguments by value
//! once, which a loop around the whole fn body would run again:
//!
//! - `#[async_trait]` leaves a plain fn returning
//!   `Pin<Box<dyn Future<Output = R> + Send + 'async_trait>>` whose body is
//!   `Box::pin(async move { <type hint>; <moves of the arguments>; let __ret: R = { BODY }; __ret })`;
//! - `#[tracing::instrument]` leaves the fn with `BODY` inside
//!   `{ <fake return edge> { BODY } }`, in an `async move` block (async fn),
//!   a `move` closure (sync fn with `err` or `ret`) or a plain block, behind
//!   the span's setup.
//!
//! Like tracing-attributes' `AsyncInfo` (which finds async-trait's block to
//! instrument it), [`Shape::of`] finds the block holding the user's body; the
//! retry loop replaces that block only, so the moves happen once, outside
//! the loop, and one span covers every attempt.
//!
//! The output it finds is read here too: whether it is
//! `Result<T, Failure<E>>` ([`failure_attempt_type`], [`failure_error`])
//! and its error type ([`second_argument`]), which both the checks and the
//! generated loop ask.
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::parse::Parser;
use syn::token::Brace;
use syn::{
    Block, Expr, GenericArgument, Pat, PathArguments, ReturnType, Stmt, Type, TypeParamBound,
};

use super::item::RetryFn;
use crate::common::strip_groups;

/// The local tracing-attributes' fake return edge declares.
const TRACING_FAKE_RETURN: &str = "__tracing_attr_fake_return";

/// The user's body, and how to put the retry loop back in its place.
pub(super) struct Shape {
    kind: Kind,
    /// Whether an attempt is a future: an `async fn`'s body, or the future
    /// `#[async_trait]` boxes.
    pub(super) is_async: bool,
    /// The type of the call's result: the fn's return type, or the `Output`
    /// of the future `#[async_trait]` boxes.
    pub(super) output: Type,
    /// The braces around the user's body, the body run by each attempt.
    pub(super) brace: Brace,
    pub(super) body: TokenStream,
}

enum Kind {
    /// The fn as the user wrote it: the loop is the fn's body.
    Plain,
    /// The block at `path` in `fn_body` (the indices of the groups leading
    /// to it) holds the user's body: the loop replaces its contents, after
    /// `setup` (async-trait's moves of the arguments, which run once).
    Nested {
        fn_body: TokenStream,
        path: Vec<usize>,
        setup: TokenStream,
    },
}

impl Shape {
    pub(super) fn of(func: &RetryFn) -> Self {
        let ReturnType::Type(_, return_type) = &func.sig.output else {
            // Validation rejects it; the shape is not used.
            return Self::plain(func, syn::parse_quote!(()));
        };
        let mut path = Vec::new();
        // async-trait's block, wherever it is: at the top of the fn, or
        // inside the future `#[instrument]` (expanded after async-trait,
        // before `#[retry]`) made of it.
        if func.sig.asyncness.is_none()
            && let Some(output) = boxed_future_output(return_type)
            && let Some(block) = find_async_trait_block(&func.body, &mut path)
        {
            return Self {
                kind: Kind::Nested {
                    fn_body: func.body.clone(),
                    path,
                    setup: block.setup,
                },
                is_async: true,
                output,
                brace: Brace {
                    span: block.user.delim_span(),
                },
                body: block.user.stream(),
            };
        }
        path.clear();
        if let Some(group) = find_instrumented(&func.body, &mut path) {
            return Self {
                kind: Kind::Nested {
                    fn_body: func.body.clone(),
                    path,
                    setup: TokenStream::new(),
                },
                is_async: func.sig.asyncness.is_some(),
                output: (**return_type).clone(),
                brace: Brace {
                    span: group.delim_span(),
                },
                body: group.stream(),
            };
        }
        Self::plain(func, (**return_type).clone())
    }

    fn plain(func: &RetryFn, output: Type) -> Self {
        Self {
            kind: Kind::Plain,
            is_async: func.sig.asyncness.is_some(),
            output,
            brace: func.brace_token,
            body: func.body.clone(),
        }
    }

    /// Whether the fn is as the user wrote it (no attribute above
    /// `#[retry]` rewrote it).
    pub(super) const fn is_plain(&self) -> bool {
        matches!(self.kind, Kind::Plain)
    }

    /// The patterns of the locals bound before the user's body and in scope
    /// of the retry loop: async-trait's moves of the arguments (`let (a, b)
    /// = ..;` for an argument it took apart), none for a plain fn.
    pub(super) fn setup_locals(&self) -> Vec<Pat> {
        let Kind::Nested { setup, .. } = &self.kind else {
            return Vec::new();
        };
        Block::parse_within
            .parse2(setup.clone())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|stmt| match stmt {
                Stmt::Local(local) => Some(local.pat),
                _ => None,
            })
            .collect()
    }

    /// The fn's body with `retry_loop` in the user's body's place.
    pub(super) fn wrap(self, retry_loop: TokenStream) -> TokenStream {
        match self.kind {
            Kind::Plain => retry_loop,
            Kind::Nested {
                fn_body,
                path,
                setup,
            } => replace_at(fn_body, &path, quote!(#setup #retry_loop)),
        }
    }
}

/// async-trait's block, split.
struct AsyncTraitBlock {
    /// The type hint and the moves of the arguments.
    setup: TokenStream,
    /// The user's body in its braces.
    user: Group,
}

/// The `{ .. }` of an `async move { .. }` whose statements are async-trait's
/// `<type hint>; <moves>; let __ret: R = { BODY }; __ret`, depth first,
/// with the indices of the groups leading to it in `path`.
fn find_async_trait_block(tokens: &TokenStream, path: &mut Vec<usize>) -> Option<AsyncTraitBlock> {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (index, token) in tokens.iter().enumerate() {
        let TokenTree::Group(group) = token else {
            continue;
        };
        let after_async_move = index >= 2
            && matches!(
                (&tokens[index - 2], &tokens[index - 1]),
                (TokenTree::Ident(a), TokenTree::Ident(m)) if a == "async" && m == "move"
            );
        if after_async_move
            && group.delimiter() == Delimiter::Brace
            && let Ok(mut stmts) = Block::parse_within.parse2(group.stream())
        {
            let setup_end = stmts
                .iter()
                .position(|stmt| !is_async_trait_setup(stmt))
                .unwrap_or(stmts.len());
            let rest = stmts.split_off(setup_end);
            if let Some(user) = user_block(&rest) {
                path.push(index);
                return Some(AsyncTraitBlock {
                    setup: stmts.iter().map(ToTokens::to_token_stream).collect(),
                    user,
                });
            }
        }
        path.push(index);
        if let Some(found) = find_async_trait_block(&group.stream(), path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

/// The `Output` of `Pin<Box<dyn Future<Output = R> + ..>>` (any paths ending
/// in those names): the return type `#[async_trait]` gives a method.
fn boxed_future_output(ty: &Type) -> Option<Type> {
    let pin = last_segment_args(ty, "Pin")?;
    let Some(GenericArgument::Type(boxed)) = pin.first() else {
        return None;
    };
    let boxed = last_segment_args(boxed, "Box")?;
    let Some(GenericArgument::Type(Type::TraitObject(object))) = boxed.first() else {
        return None;
    };
    object.bounds.iter().find_map(|bound| {
        let TypeParamBound::Trait(bound) = bound else {
            return None;
        };
        let future = bound.path.segments.last()?;
        let PathArguments::AngleBracketed(args) = &future.arguments else {
            return None;
        };
        if future.ident != "Future" {
            return None;
        }
        args.args.iter().find_map(|arg| match arg {
            GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(assoc.ty.clone()),
            _ => None,
        })
    })
}

/// The generic arguments of a path type whose last segment is `name`.
fn last_segment_args<'t>(
    ty: &'t Type,
    name: &str,
) -> Option<&'t syn::punctuated::Punctuated<GenericArgument, syn::Token![,]>> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    match &last.arguments {
        PathArguments::AngleBracketed(args) if last.ident == name => Some(&args.args),
        _ => None,
    }
}

/// For `Result<T, Failure<E>>` (any path ending in `Result` with two
/// arguments, the second any path ending in `Failure` with one), the type
/// of one attempt: `Result<T, E>`. `None` for any other return type.
///
/// Matched on the tokens: a type alias of `Failure<E>` is not seen, and
/// is then an ordinary error type (which `Failure<E>` is, as `Classify`).
pub(super) fn failure_attempt_type(return_type: &Type) -> Option<Type> {
    let Type::Path(path) = strip_groups(return_type) else {
        return None;
    };
    let last = path.path.segments.last()?;
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    if last.ident != "Result" || args.args.len() != 2 {
        return None;
    }
    let Some(GenericArgument::Type(error)) = args.args.iter().nth(1) else {
        return None;
    };
    let Type::Path(error_path) = strip_groups(error) else {
        return None;
    };
    let failure = error_path.path.segments.last()?;
    let PathArguments::AngleBracketed(failure_args) = &failure.arguments else {
        return None;
    };
    if failure.ident != "Failure" || failure_args.args.len() != 1 {
        return None;
    }
    let Some(GenericArgument::Type(inner)) = failure_args.args.first() else {
        return None;
    };
    let mut attempt = path.clone();
    if let Some(segment) = attempt.path.segments.last_mut()
        && let PathArguments::AngleBracketed(args) = &mut segment.arguments
        && let Some(GenericArgument::Type(error)) = args.args.iter_mut().nth(1)
    {
        *error = inner.clone();
    }
    Some(Type::Path(attempt))
}

/// The error type of `Result<T, Failure<E>>` (as [`failure_attempt_type`]
/// reads it), the `Failure<E>` itself; `None` for any other type.
pub(super) fn failure_error(return_type: &Type) -> Option<&Type> {
    failure_attempt_type(return_type)?;
    second_argument(return_type)
}

/// `E` of a return type written `R<T, E>`.
pub(super) fn second_argument(return_type: &Type) -> Option<&Type> {
    let Type::Path(path) = strip_groups(return_type) else {
        return None;
    };
    let PathArguments::AngleBracketed(args) = &path.path.segments.last()?.arguments else {
        return None;
    };
    match args.args.iter().nth(1)? {
        GenericArgument::Type(error) => Some(error),
        _ => None,
    }
}

/// async-trait's statements before the body: the type hint
/// `if let Some(__ret) = None::<R> { return __ret; }` and the moves of the
/// arguments into the block, `let x = x;`, `let __self = self;`,
/// `let (a, b) = { let __arg1 = __arg1; __arg1 };`.
fn is_async_trait_setup(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Expr(Expr::If(hint), None) => mentions(&hint.cond.to_token_stream(), "__ret"),
        Stmt::Local(local) => {
            let Some(init) = &local.init else {
                return false;
            };
            if init.diverge.is_some() {
                return false;
            }
            match &*init.expr {
                Expr::Path(path) => path.qself.is_none() && path.path.get_ident().is_some(),
                Expr::Block(block) => {
                    matches!(
                        block.block.stmts.as_slice(),
                        [Stmt::Local(_), Stmt::Expr(Expr::Path(_), None)]
                    )
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether `tokens` hold the identifier `name`, at any depth.
fn mentions(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|token| match &token {
        TokenTree::Ident(ident) => ident == name,
        TokenTree::Group(group) => mentions(&group.stream(), name),
        _ => false,
    })
}

/// The user's block in async-trait's `let __ret: R = { BODY }; __ret`.
fn user_block(rest: &[Stmt]) -> Option<Group> {
    let [Stmt::Local(local), Stmt::Expr(Expr::Path(ret), None)] = rest else {
        return None;
    };
    let Pat::Type(typed) = &local.pat else {
        return None;
    };
    let Pat::Ident(binding) = &*typed.pat else {
        return None;
    };
    let init = local.init.as_ref()?;
    if binding.ident != "__ret" || !ret.path.is_ident("__ret") || init.diverge.is_some() {
        return None;
    }
    let Expr::Block(block) = &*init.expr else {
        return None;
    };
    if block.label.is_some() || !block.attrs.is_empty() {
        return None;
    }
    let mut tokens = block.block.to_token_stream().into_iter();
    match (tokens.next(), tokens.next()) {
        (Some(TokenTree::Group(group)), None) => Some(group),
        _ => None,
    }
}

/// The `{ BODY }` of tracing-attributes'
/// `{ #[allow(..)] if false { let __tracing_attr_fake_return: R = loop {}; .. } { BODY } }`,
/// depth first, with the indices of the groups leading to it in `path`.
fn find_instrumented(tokens: &TokenStream, path: &mut Vec<usize>) -> Option<Group> {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    if let [
        TokenTree::Punct(pound),
        TokenTree::Group(_),
        TokenTree::Ident(if_token),
        TokenTree::Ident(false_token),
        TokenTree::Group(fake),
        TokenTree::Group(body),
    ] = tokens.as_slice()
        && pound.as_char() == '#'
        && if_token == "if"
        && false_token == "false"
        && body.delimiter() == Delimiter::Brace
        && mentions(&fake.stream(), TRACING_FAKE_RETURN)
    {
        path.push(5);
        return Some(body.clone());
    }
    for (index, token) in tokens.iter().enumerate() {
        if let TokenTree::Group(group) = token {
            path.push(index);
            if let Some(found) = find_instrumented(&group.stream(), path) {
                return Some(found);
            }
            path.pop();
        }
    }
    None
}

/// `tokens` with the group at `path` holding `replacement` instead.
fn replace_at(tokens: TokenStream, path: &[usize], replacement: TokenStream) -> TokenStream {
    let Some((&index, rest)) = path.split_first() else {
        return replacement;
    };
    tokens
        .into_iter()
        .enumerate()
        .map(|(i, token)| match token {
            TokenTree::Group(group) if i == index => TokenTree::Group(regroup(
                &group,
                replace_at(group.stream(), rest, replacement.clone()),
            )),
            other => other,
        })
        .collect()
}

/// A group with `group`'s delimiter and spans around `stream`.
fn regroup(group: &Group, stream: TokenStream) -> Group {
    let mut new = Group::new(group.delimiter(), stream);
    new.set_span(group.span());
    new
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::{Kind, Shape, failure_attempt_type};

    fn shape(item: proc_macro2::TokenStream) -> Shape {
        Shape::of(&syn::parse2(item).unwrap())
    }

    #[test]
    fn async_trait_moves_stay_outside_the_attempt() {
        let shape = shape(quote! {
            fn f<'life0, 'async_trait>(&'life0 mut self, x: String)
                -> ::core::pin::Pin<Box<dyn ::core::future::Future<Output = Result<u8, E>>
                    + ::core::marker::Send + 'async_trait>>
            {
                Box::pin(async move {
                    if let ::core::option::Option::Some(__ret) = ::core::option::Option::None::<Result<u8, E>> {
                        #[allow(unreachable_code)]
                        return __ret;
                    }
                    let mut __self = self;
                    let x = x;
                    let __ret: Result<u8, E> = { __self.n += 1; Ok(x.len()) };
                    #[allow(unreachable_code)]
                    __ret
                })
            }
        });
        assert!(shape.is_async);
        let output = &shape.output;
        assert_eq!(
            quote!(#output).to_string(),
            quote!(Result<u8, E>).to_string()
        );
        assert_eq!(
            shape.body.to_string(),
            quote!(__self.n += 1; Ok(x.len())).to_string()
        );
        let Kind::Nested { setup, .. } = &shape.kind else {
            panic!("not recognised")
        };
        assert!(
            setup
                .to_string()
                .ends_with("let mut __self = self ; let x = x ;"),
            "{setup}"
        );
        let out = shape.wrap(quote!(LOOP)).to_string();
        assert!(out.starts_with("Box :: pin (async move { if let"), "{out}");
        assert!(out.ends_with("let x = x ; LOOP })"), "{out}");
    }

    #[test]
    fn instrumented_bodies_are_found_where_tracing_puts_them() {
        let shape = shape(quote! {
            async fn f(x: String) -> Result<u8, E> {
                {}
                let __tracing_attr_span = span();
                let __tracing_instrument_future = async move {
                    let __match_scrutinee = async move {
                        #[allow(unreachable_code)]
                        if false {
                            let __tracing_attr_fake_return: Result<u8, E> = loop {};
                            return __tracing_attr_fake_return;
                        }
                        { Ok(x.len()) }
                    }.await;
                    __match_scrutinee
                };
                __tracing_instrument_future.await
            }
        });
        assert!(shape.is_async);
        assert_eq!(shape.body.to_string(), quote!(Ok(x.len())).to_string());
        let out = shape.wrap(quote!(LOOP)).to_string();
        assert!(
            out.contains("return __tracing_attr_fake_return ; } { LOOP } } . await"),
            "{out}"
        );
    }

    #[test]
    fn async_trait_blocks_are_found_inside_instrument() {
        let shape = shape(quote! {
            fn f<'life0, 'async_trait>(&'life0 self, x: String)
                -> Pin<Box<dyn Future<Output = Result<u8, E>> + Send + 'async_trait>>
            {
                Box::pin(async move {
                    let __tracing_attr_span = span();
                    let __tracing_instrument_future = async move {
                        let __self = self;
                        let x = x;
                        let __ret: Result<u8, E> = { Ok(x.len()) };
                        __ret
                    };
                    __tracing_instrument_future.await
                })
            }
        });
        assert!(shape.is_async);
        assert_eq!(shape.body.to_string(), quote!(Ok(x.len())).to_string());
        let out = shape.wrap(quote!(LOOP)).to_string();
        assert!(
            out.contains("let __tracing_instrument_future = async move { let __self = self ; let x = x ; LOOP } ;"),
            "{out}"
        );
    }

    #[test]
    fn other_bodies_are_plain() {
        for item in [
            quote!(
                fn f() -> Result<u8, E> {
                    Box::pin(async move { x })
                }
            ),
            quote!(
                fn f() -> Pin<Box<dyn Future<Output = R>>> {
                    other(async move { x })
                }
            ),
            quote!(
                async fn f() -> Pin<Box<dyn Future<Output = R>>> {
                    Box::pin(async move { x })
                }
            ),
            quote!(
                fn f() -> R {
                    if false {
                        let __tracing_attr_fake_return = 1;
                    }
                    { x }
                }
            ),
        ] {
            assert!(matches!(shape(item.clone()).kind, Kind::Plain), "{item}");
        }
    }

    #[test]
    fn a_failure_return_type_attempts_its_inner_error() {
        let attempt = |ty: proc_macro2::TokenStream| {
            failure_attempt_type(&syn::parse2(ty).unwrap()).map(|t| quote!(#t).to_string())
        };
        assert_eq!(
            attempt(quote!(Result<u8, Failure<E>>)),
            Some(quote!(Result<u8, E>).to_string())
        );
        assert_eq!(
            attempt(quote!(
                std::result::Result<Vec<T>, ::tenacious::Failure<my::Error>>
            )),
            Some(quote!(std::result::Result<Vec<T>, my::Error>).to_string())
        );
        for other in [
            quote!(Result<u8, E>),
            quote!(io::Result<u8>),
            quote!(Result<u8, Failure>),
            quote!(Result<u8, Failure<A, B>>),
            quote!(Option<Failure<E>>),
            quote!(Failure<E>),
        ] {
            assert_eq!(attempt(other.clone()), None, "{other}");
        }
    }
}

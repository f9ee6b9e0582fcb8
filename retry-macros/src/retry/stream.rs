//! `#[retry]` on a fn that opens a stream: the fn returns
//! `Result<impl Stream<Item = X>, E>` and becomes a plain fn returning
//! `impl Stream<Item = Result<T, Failure<E>>>` (for `X = Result<T, E>`),
//! the runtime's `RetriedStream`, whose attempts each run the fn's body.
//!
//! [`StreamReturn::of`] recognises the return type; [`name_lifetimes`]
//! names the elided lifetimes of the inputs, so the returned stream can
//! say it captures them in any edition (an `impl Trait` of edition 2021
//! captures the fn's type parameters, not its lifetimes, unless told).
use proc_macro2::Span;
use syn::visit_mut::{self, VisitMut};
use syn::{
    FnArg, GenericArgument, GenericParam, Lifetime, LifetimeParam, PathArguments, ReceiverKind,
    Signature, Type, TypeParamBound,
};

use crate::common::strip_groups;

/// The return type of a fn that opens a stream, taken apart.
pub(super) struct StreamReturn {
    /// `X` of `impl Stream<Item = X>`: an item of one attempt's stream.
    pub(super) item: Type,
    /// The `Stream<Item = X>` bound as written (the user's path to the
    /// trait, which the returned stream keeps, with its `Item` replaced).
    pub(super) stream: syn::TraitBound,
    /// The `impl`'s other bounds (`Send`, a lifetime), kept on the
    /// returned stream.
    pub(super) bounds: Vec<TypeParamBound>,
}

impl StreamReturn {
    /// For `R<impl P::Stream<Item = X> + B, ..>` — a path type whose first
    /// generic argument is an `impl` with a bound whose last segment is
    /// `Stream` and binds `Item` — its parts; `None` for any other type.
    pub(super) fn of(output: &Type) -> Option<Self> {
        let Type::Path(path) = strip_groups(output) else {
            return None;
        };
        let last = path.path.segments.last()?;
        let PathArguments::AngleBracketed(args) = &last.arguments else {
            return None;
        };
        let Some(GenericArgument::Type(first)) = args.args.first() else {
            return None;
        };
        let Type::ImplTrait(opened) = strip_groups(first) else {
            return None;
        };
        let mut item = None;
        let mut bounds = Vec::new();
        for bound in &opened.bounds {
            if item.is_none()
                && let Some(found) = stream_item(bound)
            {
                item = Some(found);
            } else if kept(bound) {
                bounds.push(bound.clone());
            }
        }
        let (stream, item) = item?;
        Some(Self {
            item,
            stream,
            bounds,
        })
    }

    /// The stream bound with `Item = item`.
    pub(super) fn bound_with_item(&self, item: Type) -> syn::TraitBound {
        let mut bound = self.stream.clone();
        if let Some(last) = bound.path.segments.last_mut()
            && let PathArguments::AngleBracketed(args) = &mut last.arguments
        {
            for arg in &mut args.args {
                if let GenericArgument::AssocType(assoc) = arg
                    && assoc.ident == "Item"
                {
                    assoc.ty = item.clone();
                }
            }
        }
        bound
    }
}

/// `item` if it is a type that is no `Result` whatever it names: a
/// reference, tuple, slice, array, or a path to a standard type (`String`,
/// `Vec<u8>`, `Option<T>`, a number) or to `Bytes`. An item spelled
/// otherwise may be an alias of a `Result` (`type Chunk = Result<..>`):
/// the runtime's `StreamItemResult` tells then.
pub(super) fn never_a_result(item: &Type) -> Option<&Type> {
    const NOT_RESULTS: &[&str] = &[
        "String", "str", "Vec", "VecDeque", "Box", "Option", "Cow", "Arc", "Rc", "Bytes", "u8",
        "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
        "f64", "bool", "char",
    ];
    let never = match strip_groups(item) {
        Type::Reference(_)
        | Type::Tuple(_)
        | Type::Slice(_)
        | Type::Array(_)
        | Type::Ptr(_)
        | Type::Never(_) => true,
        Type::Path(path) => {
            path.qself.is_none()
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|last| NOT_RESULTS.iter().any(|name| last.ident == name))
        }
        _ => false,
    };
    never.then_some(item)
}

/// Whether the returned stream keeps `bound` of the opened one: a trait
/// like `Send` it keeps (it holds the opened stream), but not what holds of
/// the opened stream only — a lifetime or a `use<..>` (the returned stream
/// also borrows the arguments, to open again, and captures every lifetime
/// of the inputs, named anew), nor `Unpin` (it holds the future that opens,
/// which is not).
fn kept(bound: &TypeParamBound) -> bool {
    match bound {
        TypeParamBound::Trait(bound) => bound
            .path
            .segments
            .last()
            .is_none_or(|last| last.ident != "Unpin"),
        TypeParamBound::Lifetime(_) | TypeParamBound::PreciseCapture(_) => false,
        _ => true,
    }
}

/// A bound `path::Stream<Item = X>`, and `X`.
fn stream_item(bound: &TypeParamBound) -> Option<(syn::TraitBound, Type)> {
    let TypeParamBound::Trait(bound) = bound else {
        return None;
    };
    let trait_bound = bound;
    let last = bound.path.segments.last()?;
    if last.ident != "Stream" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|arg| match arg {
        GenericArgument::AssocType(assoc) if assoc.ident == "Item" => {
            Some((trait_bound.clone(), assoc.ty.clone()))
        }
        _ => None,
    })
}

/// Names every elided lifetime of `sig`'s inputs (`&T`, `&self`, `'_`)
/// with a fresh lifetime parameter, and returns every lifetime parameter
/// the fn then has: what the returned stream captures.
///
/// Elided lifetimes inside fn pointer types and `Fn(..)` bounds belong
/// to those (they are higher-ranked), and are left alone.
pub(super) fn name_lifetimes(sig: &mut Signature) -> Vec<Lifetime> {
    struct Namer {
        fresh: Vec<Lifetime>,
    }

    impl Namer {
        fn next(&mut self) -> Lifetime {
            let lifetime = Lifetime::new(
                &format!("'__tenacious_l{}", self.fresh.len()),
                Span::call_site(),
            );
            self.fresh.push(lifetime.clone());
            lifetime
        }
    }

    impl VisitMut for Namer {
        fn visit_type_reference_mut(&mut self, reference: &mut syn::TypeReference) {
            if reference.lifetime.is_none() {
                reference.lifetime = Some(self.next());
            }
            visit_mut::visit_type_reference_mut(self, reference);
        }

        fn visit_lifetime_mut(&mut self, lifetime: &mut Lifetime) {
            if lifetime.ident == "_" {
                *lifetime = self.next();
            }
        }

        fn visit_type_fn_ptr_mut(&mut self, _: &mut syn::TypeFnPtr) {}

        fn visit_parenthesized_generic_arguments_mut(
            &mut self,
            _: &mut syn::ParenthesizedGenericArguments,
        ) {
        }
    }

    let mut namer = Namer { fresh: Vec::new() };
    for input in &mut sig.inputs {
        match input {
            FnArg::Receiver(receiver) => match &mut receiver.kind {
                ReceiverKind::Reference(_, Some(named), _) => namer.visit_lifetime_mut(named),
                ReceiverKind::Reference(_, lifetime, _) => *lifetime = Some(namer.next()),
                ReceiverKind::Typed(_, ty) => namer.visit_type_mut(ty),
                _ => {}
            },
            FnArg::Typed(typed) => namer.visit_type_mut(&mut typed.ty),
        }
    }
    let mut all: Vec<Lifetime> = sig
        .generics
        .lifetimes()
        .map(|param| param.lifetime.clone())
        .collect();
    for (at, lifetime) in namer.fresh.iter().enumerate() {
        sig.generics.params.insert(
            at,
            GenericParam::Lifetime(LifetimeParam::new(lifetime.clone())),
        );
    }
    if sig.generics.lt_token.is_none() {
        sig.generics.lt_token = Some(syn::Token![<](Span::call_site()));
        sig.generics.gt_token = Some(syn::Token![>](Span::call_site()));
    }
    all.extend(namer.fresh);
    all
}

#[cfg(test)]
mod tests {
    use quote::{ToTokens, quote};

    use super::{StreamReturn, name_lifetimes};

    #[test]
    fn a_result_of_an_impl_stream_is_a_stream_and_others_are_not() {
        let of = |ty: proc_macro2::TokenStream| StreamReturn::of(&syn::parse2(ty).unwrap());
        let found = of(quote!(
            Result<impl Stream<Item = Result<Tok, E>> + Send + 'a, E>
        ))
        .unwrap();
        assert_eq!(
            found.item.to_token_stream().to_string(),
            quote!(Result<Tok, E>).to_string()
        );
        // `Send` is kept; the lifetime holds of the opened stream only.
        assert_eq!(found.bounds.len(), 1);
        assert!(of(quote!(Result<impl futures::Stream<Item = u8>, E>)).is_some());
        for ty in [
            quote!(Result<u8, E>),
            quote!(Result<impl Iterator<Item = u8>, E>),
            quote!(Result<impl Stream, E>),
            quote!(Option<u8>),
        ] {
            assert!(of(ty.clone()).is_none(), "{ty}");
        }
    }

    #[test]
    fn elided_lifetimes_are_named_and_higher_ranked_ones_kept() {
        let mut sig: syn::Signature = syn::parse2(quote!(
            fn f<'a, T>(&self, x: &'a str, y: &[u8], c: Cow<'_, str>, g: fn(&u8), t: T)
        ))
        .unwrap();
        let lifetimes = name_lifetimes(&mut sig);
        let names: Vec<String> = lifetimes.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "'a",
                "'__tenacious_l0",
                "'__tenacious_l1",
                "'__tenacious_l2"
            ]
        );
        let text = sig.to_token_stream().to_string();
        assert!(text.contains("& '__tenacious_l0 self"), "{text}");
        assert!(text.contains("fn (& u8)"), "{text}");
    }
}

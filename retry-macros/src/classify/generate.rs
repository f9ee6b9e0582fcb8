//! Writes the `Classify` impl.
//!
//! Each method is one `match self` over the variants (a `let` destructuring
//! for a struct) whose arms bind only the fields that method reads.
//! `retry_after` and `hint` are left out when no case has anything to say:
//! the trait's default `None` is then the right answer.
use std::collections::HashSet;

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Generics, Member, Type, WherePredicate};

use super::hint::{self, Hint};
use super::validate::{Answer, Body, Case, Derive, FieldRef};

pub(crate) fn generate(derive: &Derive<'_>) -> TokenStream {
    let private = derive.krate.private();
    let ty = &derive.input.ident;
    let generics = with_bounds(derive, &private);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let shape = Shape {
        is_struct: matches!(derive.body, Body::Struct(_)),
    };
    let cases = derive.cases();

    let methods = if cases.is_empty() {
        // An enum without variants has no values; matching `*self` is
        // exhaustive with no arms, matching the reference `self` is not.
        quote! {
            fn classify(&self) -> #private::ErrorClass {
                match *self {}
            }
        }
    } else {
        let classify = shape.every(cases, |case| match &case.answer {
            Answer::Own { class, .. } => {
                let class = Ident::new(class.variant, Span::call_site());
                Arm::plain(quote!(#private::ErrorClass::#class))
            }
            Answer::Transparent(field) | Answer::Refused(field) => {
                forward(&private, field, "classify")
            }
            Answer::With { path, field } => with_arm(&private, path, Some(field), "class"),
            Answer::WithSelf(path) => with_arm(&private, path, None, "class"),
        });
        let variant = shape.every(cases, |case| match &case.answer {
            Answer::Own { .. } | Answer::Refused(_) | Answer::With { .. } | Answer::WithSelf(_) => {
                let name = case.name.to_string();
                let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
                Arm::plain(quote!(#name))
            }
            Answer::Transparent(field) => forward(&private, field, "variant"),
        });
        let retry_after = shape
            .some(&private, cases, |case| match &case.answer {
                Answer::Own {
                    retry_after: Some(field),
                    ..
                } => Some(retry_after_arm(&private, field)),
                Answer::Own { .. } => None,
                Answer::Transparent(field) | Answer::Refused(field) => {
                    Some(forward(&private, field, "retry_after"))
                }
                Answer::With { path, field } => {
                    Some(with_arm(&private, path, Some(field), "retry_after"))
                }
                Answer::WithSelf(path) => Some(with_arm(&private, path, None, "retry_after")),
            })
            .map(|body| {
                quote! {
                    fn retry_after(&self) -> #private::Option<#private::Duration> {
                        #body
                    }
                }
            });
        let hint = shape
            .some(&private, cases, |case| match &case.answer {
                Answer::Own { hint: Some(hint), .. } => Some(hint_arm(&private, hint)),
                Answer::Own { .. } => None,
                Answer::Transparent(field) | Answer::Refused(field) => {
                    Some(forward(&private, field, "hint"))
                }
                Answer::With { path, field } => {
                    Some(with_arm(&private, path, Some(field), "into_hint"))
                }
                Answer::WithSelf(path) => Some(with_arm(&private, path, None, "into_hint"))
            })
            .map(|body| {
                quote! {
                    fn hint(&self) -> #private::Option<#private::Cow<'static, ::core::primitive::str>> {
                        #body
                    }
                }
            });
        // What the inner error says about the provider (overloaded, its
        // rate-limit window) is the guards' to hear through a wrapper too.
        let signals = shape
            .some_or(
                cases,
                &quote!(#private::Signals::NONE),
                |case| match &case.answer {
                    Answer::Own { .. } => None,
                    Answer::Transparent(field) | Answer::Refused(field) => {
                        Some(forward(&private, field, "signals"))
                    }
                    Answer::With { path, field } => {
                        Some(with_arm(&private, path, Some(field), "signals"))
                    }
                    Answer::WithSelf(path) => Some(with_arm(&private, path, None, "signals")),
                },
            )
            .map(|body| {
                quote! {
                    fn signals(&self) -> #private::Signals {
                        #body
                    }
                }
            });
        // Whether nothing was sent, and the error's own limits: the case's
        // keys, over what a wrapped error says.
        let not_sent = shape
            .some_or(cases, &quote!(false), |case| {
                if case.limits.not_sent {
                    return Some(Arm::plain(quote!(true)));
                }
                match &case.answer {
                    Answer::Transparent(field) | Answer::Refused(field) => {
                        Some(forward(&private, field, "not_sent"))
                    }
                    _ => None,
                }
            })
            .map(|body| {
                quote! {
                    fn not_sent(&self) -> ::core::primitive::bool {
                        #body
                    }
                }
            });
        let limits = shape
            .some_or(cases, &quote!(#private::Limits::NONE), |case| {
                limits_arm(&private, case)
            })
            .map(|body| {
                quote! {
                    fn limits(&self) -> #private::Limits {
                        #body
                    }
                }
            });
        let refused = refused(derive, &private, cases);
        let inner = super::inner::inner(&shape, &private, cases);
        quote! {
            fn classify(&self) -> #private::ErrorClass {
                #classify
            }
            #retry_after
            #hint
            #signals
            #not_sent
            #limits
            fn variant(&self) -> &'static ::core::primitive::str {
                #variant
            }
            #refused
            #inner
        }
    };

    // A type with a `refused` variant can say a guard refused a call, so
    // `#[retry]` lets a guard stop its first attempt.
    let refusable = cases
        .iter()
        .any(|case| matches!(case.answer, Answer::Refused(_)))
        .then(|| {
            quote! {
                #[automatically_derived]
                impl #impl_generics #private::Refusable for #ty #ty_generics #where_clause {}
            }
        });
    quote! {
        // Absolute paths keep the user's imports from changing what the impl
        // means; older compilers flag them as unused qualifications. A
        // deprecated variant or field is still the user's to classify.
        #[allow(unused_qualifications, deprecated)]
        #[automatically_derived]
        impl #impl_generics #private::Classify for #ty #ty_generics #where_clause {
            #methods
        }
        #refusable
    }
}

impl Derive<'_> {
    fn cases(&self) -> &[Case<'_>] {
        match &self.body {
            Body::Enum(cases) => cases,
            Body::Struct(case) => std::slice::from_ref(case),
        }
    }
}

/// One arm's body and the fields it needs bound.
pub(super) struct Arm {
    pub(super) body: TokenStream,
    pub(super) bindings: Vec<Member>,
}

impl Arm {
    fn plain(body: TokenStream) -> Self {
        Self {
            body,
            bindings: Vec::new(),
        }
    }
}

/// How a method reaches the cases: a `match` over variants or a struct's
/// one destructuring.
pub(super) struct Shape {
    is_struct: bool,
}

impl Shape {
    /// A method body where every case has an answer.
    fn every(&self, cases: &[Case<'_>], arm: impl Fn(&Case<'_>) -> Arm) -> TokenStream {
        self.dispatch(cases.iter().map(|case| (case, arm(case))))
    }

    /// A method body where some cases may answer `None`; `None` if none
    /// answers anything.
    pub(super) fn some(
        &self,
        private: &TokenStream,
        cases: &[Case<'_>],
        arm: impl Fn(&Case<'_>) -> Option<Arm>,
    ) -> Option<TokenStream> {
        self.some_or(cases, &quote!(#private::Option::None), arm)
    }

    /// [`some`](Shape::some) with `default` for the cases without an arm.
    fn some_or(
        &self,
        cases: &[Case<'_>],
        default: &TokenStream,
        arm: impl Fn(&Case<'_>) -> Option<Arm>,
    ) -> Option<TokenStream> {
        let arms: Vec<Option<Arm>> = cases.iter().map(arm).collect();
        if arms.iter().all(Option::is_none) {
            return None;
        }
        let arms = cases
            .iter()
            .zip(arms)
            .map(|(case, arm)| (case, arm.unwrap_or_else(|| Arm::plain(default.clone()))));
        Some(self.dispatch(arms))
    }

    fn dispatch<'c, 'a: 'c>(&self, arms: impl Iterator<Item = (&'c Case<'a>, Arm)>) -> TokenStream {
        if self.is_struct {
            let mut body = TokenStream::new();
            for (case, arm) in arms {
                let Arm {
                    body: expr,
                    bindings,
                } = arm;
                body = if bindings.is_empty() {
                    expr
                } else {
                    let pattern = self.pattern(case, &bindings);
                    quote! {
                        let #pattern = self;
                        #expr
                    }
                };
            }
            body
        } else {
            let arms = arms.map(|(case, arm)| {
                let pattern = self.pattern(case, &arm.bindings);
                let body = arm.body;
                quote!(#pattern => #body,)
            });
            quote! {
                match self {
                    #(#arms)*
                }
            }
        }
    }

    fn pattern(&self, case: &Case<'_>, bindings: &[Member]) -> TokenStream {
        let path = if self.is_struct {
            quote!(Self)
        } else {
            let name = case.name;
            quote!(Self::#name)
        };
        let fields = bindings.iter().map(|member| {
            let binding = hint::binding(member);
            quote!(#member: #binding)
        });
        quote!(#path { #(#fields,)* .. })
    }
}

/// A transparent case's arm: the same method on the inner error, spanned on
/// the field's type so "does not implement `Classify`" points at it.
fn forward(private: &TokenStream, field: &FieldRef<'_>, method: &str) -> Arm {
    let ty = field.ty;
    let binding = hint::binding(&field.member);
    let method = Ident::new(method, Span::call_site());
    Arm {
        body: quote_spanned! {ty.span()=>
            <#ty as #private::Classify>::#method(#binding)
        },
        bindings: vec![field.member.clone()],
    }
}

/// A `with` case's arm: the fn called on the case's only field (`field`;
/// on the whole error for a `with` on the type, `None`), its result made a `Classified`
/// and asked for `part`. Spanned on the path, so a fn that takes another
/// type or returns neither an `ErrorClass` nor a `Classified` is reported
/// there.
fn with_arm(
    private: &TokenStream,
    path: &syn::ExprPath,
    field: Option<&FieldRef<'_>>,
    part: &str,
) -> Arm {
    let part = Ident::new(part, Span::call_site());
    let (argument, bindings) = match field {
        Some(field) => {
            let mut binding = hint::binding(&field.member);
            binding.set_span(path.span());
            (quote!(#binding), vec![field.member.clone()])
        }
        None => (quote!(self), Vec::new()),
    };
    Arm {
        body: quote_spanned! {path.span()=>
            #private::WithOutput::into_classified(#path(#argument)).#part()
        },
        bindings,
    }
}

/// `refused()` of an enum with a `refused` variant: that variant's
/// constructor. `Refused` is named through the crate's root, where it is
/// public. The constructor is spanned on the field's type, so a field that
/// is not a `Refused` is reported there.
fn refused(derive: &Derive<'_>, private: &TokenStream, cases: &[Case<'_>]) -> Option<TokenStream> {
    let (name, field) = cases.iter().find_map(|case| match &case.answer {
        Answer::Refused(field) => Some((case.name, field)),
        Answer::Own { .. } | Answer::Transparent(_) | Answer::With { .. } | Answer::WithSelf(_) => {
            None
        }
    })?;
    let krate = &derive.krate;
    let mut name = name.clone();
    name.set_span(field.ty.span());
    let make = quote_spanned! {field.ty.span()=> Self::#name};
    Some(quote! {
        fn refused() -> #private::Option<fn(#krate::Refused) -> Self> {
            let make: fn(#krate::Refused) -> Self = #make;
            #private::Option::Some(make)
        }
    })
}

/// A case's `limits()`: its `max` and `base` over the wrapped error's
/// limits (a transparent case) or over none; `None` when it has nothing
/// to say.
fn limits_arm(private: &TokenStream, case: &Case<'_>) -> Option<Arm> {
    let mut arm = match &case.answer {
        Answer::Transparent(field) => forward(private, field, "limits"),
        _ if case.limits.sets_limits() => Arm::plain(quote!(#private::Limits::NONE)),
        _ => return None,
    };
    if let Some(max) = case.limits.max {
        arm.body.extend(quote!(.max(#max)));
    }
    if let Some(nanos) = case.limits.base {
        arm.body
            .extend(quote!(.base(#private::Duration::from_nanos(#nanos))));
    }
    Some(arm)
}

/// `retry_after` of the marked field, spanned on its type so a type that is
/// not a `Duration` is reported there.
fn retry_after_arm(private: &TokenStream, field: &FieldRef<'_>) -> Arm {
    let ty = field.ty;
    let binding = hint::binding(&field.member);
    Arm {
        body: quote_spanned! {ty.span()=>
            <#ty as #private::RetryAfterField>::get(#binding)
        },
        bindings: vec![field.member.clone()],
    }
}

fn hint_arm(private: &TokenStream, hint: &Hint) -> Arm {
    let text = &hint.text;
    if hint.args.is_empty() {
        return Arm::plain(quote! {
            #private::Option::Some(#private::Cow::Borrowed(#text))
        });
    }
    let args = hint.args.iter().map(|arg| {
        let binding = hint::binding(&arg.member);
        quote!(#binding = #binding)
    });
    Arm {
        body: quote! {
            #private::Option::Some(#private::Cow::Owned(#private::format!(#text, #(#args),*)))
        },
        bindings: hint.args.iter().map(|arg| arg.member.clone()).collect(),
    }
}

/// The type's generics plus the bounds the impl relies on: `Classify` for a
/// transparent field, `RetryAfterField` for the hint field, the `core::fmt`
/// traits a hint uses. Only fields whose type mentions a type parameter get
/// one: for a concrete type the error is clearer at its use, where the
/// message names the type, than as an unsatisfiable `where` clause.
fn with_bounds(derive: &Derive<'_>, private: &TokenStream) -> Generics {
    let mut generics = derive.input.generics.clone();
    let params: HashSet<String> = generics
        .type_params()
        .map(|param| param.ident.to_string())
        .collect();
    if params.is_empty() {
        return generics;
    }
    let mut bounds: Vec<WherePredicate> = Vec::new();
    let mut push = |ty: &Type, bound: TokenStream| {
        if !mentions(ty.to_token_stream(), &params) {
            return;
        }
        let predicate: WherePredicate = syn::parse_quote!(#ty: #bound);
        let text = predicate.to_token_stream().to_string();
        if !bounds
            .iter()
            .any(|known| known.to_token_stream().to_string() == text)
        {
            bounds.push(predicate);
        }
    };
    for case in derive.cases() {
        match &case.answer {
            Answer::Transparent(field) | Answer::Refused(field) => {
                push(field.ty, quote!(#private::Classify));
            }
            // The fn's signature says what it takes; the compiler checks
            // the call, so no bound is needed.
            Answer::With { .. } | Answer::WithSelf(_) => {}
            Answer::Own {
                retry_after, hint, ..
            } => {
                if let Some(field) = retry_after {
                    push(field.ty, quote!(#private::RetryAfterField));
                }
                for arg in hint.iter().flat_map(|hint| &hint.args) {
                    for fmt_trait in &arg.traits {
                        let fmt_trait = format_ident!("{fmt_trait}");
                        push(&arg.ty, quote!(::core::fmt::#fmt_trait));
                    }
                }
            }
        }
    }
    if !bounds.is_empty() {
        generics.make_where_clause().predicates.extend(bounds);
    }
    generics
}

/// Whether `tokens` name one of `params`. A path segment that happens to
/// share a parameter's name counts too; the extra bound is then harmless.
fn mentions(tokens: TokenStream, params: &HashSet<String>) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => params.contains(&ident.to_string()),
        TokenTree::Group(group) => mentions(group.stream(), params),
        TokenTree::Punct(_) | TokenTree::Literal(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(names: &[&str]) -> HashSet<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn mentions_finds_parameters_at_any_depth() {
        let params = params(&["T"]);
        assert!(mentions(quote!(T), &params));
        assert!(mentions(quote!(Vec<Option<T>>), &params));
        assert!(mentions(quote!([T; 4]), &params));
        assert!(mentions(quote!((u8, Box<dyn Fn(T)>)), &params));
        assert!(!mentions(quote!(Vec<Top>), &params));
        assert!(!mentions(quote!(std::io::Error), &params));
    }
}

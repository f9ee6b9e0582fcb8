//! What the attribute's expressions name among the fn's arguments: a
//! `key` must name one (else every call sends the same key), and a shared
//! guard or a policy must not (a `static` cannot read one).
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{FnArg, Signature};

use crate::common::Errors;
use crate::retry::args::{self, Args, PolicyArg, SharedStatic};
use crate::retry::shape::Shape;

/// `key = EXPR` names the call's idempotency key from the call: an
/// expression that names no argument, no `self` and no local the call binds
/// before its first attempt (a literal, a constant) is the same key for
/// every call, and a server that honours it answers every later call with
/// the first one's result.
///
/// A stream fn's key is computed once, when the fn is called, before the
/// stream opens: the fn itself is no longer `async` (it returns the
/// retried stream), so a key that awaits is an error on its `.await`.
pub(super) fn check_key(
    args: &Args,
    sig: &Signature,
    shape: &Shape,
    stream: bool,
    errors: &mut Errors,
) {
    let Some(key) = &args.key else {
        return;
    };
    if stream && let Some(awaited) = first_await(key.to_token_stream()) {
        errors.at(
            awaited,
            "a retried stream's `key` is computed once, when the fn is called and before \
             the stream opens, outside any async context, so it cannot `.await`: compute \
             the key in the caller and pass it as an argument, `key = order_id`",
        );
        return;
    }
    let mut names = input_names(sig);
    // The arguments as the user wrote them: the example names one.
    let written = names.len();
    for pat in shape.setup_locals() {
        bindings(&pat, &mut names);
    }
    if mentions(key.to_token_stream(), &names, false) {
        return;
    }
    let arguments = &names[..written];
    let example = match arguments
        .iter()
        .find(|name| *name != "self" && !name.starts_with("__"))
    {
        Some(name) => format!("`key = {name}` (or a field of it, `key = {name}.id`)"),
        None if arguments.is_empty() => "`key = order.id`".to_owned(),
        None => "`key = self.request_id`".to_owned(),
    };
    let hint = if arguments.is_empty() {
        format!(
            "this fn takes no argument to name it from: take the value that tells one call \
             from another as an argument and write {example}, or leave `key` out (each call \
             then gets a random key of its own)"
        )
    } else {
        format!("name the key from the call: {example}")
    };
    errors.at(
        key,
        format_args!(
            "this `key` names no argument of the call, so every call would send the same \
             idempotency key, and a server that honours it would answer every later call \
             with the first one's result; {hint}"
        ),
    );
}

/// The first `.await` in `tokens`, at any depth: its two tokens, so an
/// error spans both.
fn first_await(tokens: proc_macro2::TokenStream) -> Option<proc_macro2::TokenStream> {
    use proc_macro2::TokenTree;
    let mut previous: Option<proc_macro2::Punct> = None;
    for token in tokens {
        match token {
            TokenTree::Ident(ident) if ident == "await" => {
                if let Some(dot) = previous.take() {
                    return Some(
                        [TokenTree::Punct(dot), TokenTree::Ident(ident)]
                            .into_iter()
                            .collect(),
                    );
                }
            }
            TokenTree::Punct(punct) if punct.as_char() == '.' => previous = Some(punct),
            TokenTree::Group(group) => {
                if let Some(found) = first_await(group.stream()) {
                    return Some(found);
                }
                previous = None;
            }
            _ => previous = None,
        }
    }
    None
}

/// The names the fn's inputs bind: `self` for a receiver, and the names
/// each argument's pattern binds.
fn input_names(sig: &Signature) -> Vec<String> {
    let mut names = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(_) => names.push("self".to_owned()),
            FnArg::Typed(typed) => bindings(&typed.pat, &mut names),
        }
    }
    names
}

/// The paths `#[retry]` reads where the fn is written, checked for what the
/// tokens show they cannot be: a guard (`budget`, `breaker`, `cooldown`,
/// `throttle`, `guard`) named by an associated item (`Self::HEALTH`, `T::X`:
/// Rust has no associated `static`, so it is a `const`, a fresh guard at
/// every use), and a guard or a policy named by an argument of the fn (a
/// value known only at run time, which no `const` or `static` can read).
///
/// A module-level `const` guard (`breaker = HEALTH`) looks like a `static`
/// here; `generate` refuses it with the check only a place passes.
pub(super) fn check_shared_paths(args: &Args, sig: &Signature, errors: &mut Errors) {
    let names = input_names(sig);
    let argument = |path: &syn::ExprPath| {
        path.path
            .get_ident()
            .map(|ident| ident.unraw().to_string())
            .filter(|name| names.contains(name))
    };
    for (key, path) in args.statics() {
        let SharedStatic { what, declare } = args::shared_static(key);
        let example = args::example(key);
        let first = path.path.segments.first().map(|segment| &segment.ident);
        let associated = path.path.segments.len() > 1
            && first.is_some_and(|first| {
                first == "Self"
                    || sig
                        .generics
                        .type_params()
                        .any(|param| param.ident == *first)
            });
        if associated {
            errors.at(
                path,
                format_args!(
                    "`{key}` takes the path of {what}, shared by every call that names it, \
                     but `{}` is an associated `const` (Rust has no associated `static`): \
                     each use of a `const` is a fresh value, shared by no other call; \
                     declare `{declare}` at module level and write `{example}`",
                    shown(&path.path)
                ),
            );
        } else if let Some(name) = argument(path) {
            errors.at(
                path,
                format_args!(
                    "`{key} = {name}` names an argument of the fn, but `{key}` takes the path \
                     of {what}, read where the fn is written and shared by every call that \
                     names it: declare `{declare}` and write `{example}`; for one chosen at \
                     run time, build the policy by hand, `Policy::new().{key}({name})` (it \
                     takes a `&'static`), and run the call through it with `Policy::retry`"
                ),
            );
        }
    }
    if let Some(PolicyArg::Path(path)) = &args.policy
        && let Some(name) = argument(path)
    {
        errors.at(
            path,
            format_args!(
                "`policy = {name}` names an argument of the fn, but `#[retry]` reads its \
                 policy where the fn is written, from the path of a `const` or `static` \
                 `Policy`; for a policy known only at run time, run the call through it by \
                 hand: `{name}.retry(|| async {{ .. }}).await` (`Policy::retry`; \
                 `Policy::retry_blocking` for a sync fn)"
            ),
        );
    }
}

/// A path as written, without spaces: `Self::HEALTH`.
fn shown(path: &syn::Path) -> String {
    let segments: Vec<String> = path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    let lead = if path.leading_colon.is_some() {
        "::"
    } else {
        ""
    };
    format!("{lead}{}", segments.join("::"))
}

/// The names a pattern binds, `a` of `a: T`, both of `(a, b): (T, U)`.
fn bindings(pat: &syn::Pat, names: &mut Vec<String>) {
    match pat {
        syn::Pat::Ident(ident) => {
            names.push(ident.ident.unraw().to_string());
            if let Some((_, sub)) = &ident.subpat {
                bindings(sub, names);
            }
        }
        syn::Pat::Tuple(tuple) => tuple.elems.iter().for_each(|p| bindings(p, names)),
        syn::Pat::TupleStruct(tuple) => tuple.elems.iter().for_each(|p| bindings(p, names)),
        syn::Pat::Struct(fields) => {
            for field in &fields.fields {
                bindings(&field.pat, names);
            }
        }
        syn::Pat::Reference(reference) => bindings(&reference.pat, names),
        syn::Pat::Slice(slice) => slice.elems.iter().for_each(|p| bindings(p, names)),
        syn::Pat::Paren(paren) => bindings(&paren.pat, names),
        syn::Pat::Type(typed) => bindings(&typed.pat, names),
        syn::Pat::Or(or) => or.cases.iter().for_each(|p| bindings(p, names)),
        _ => {}
    }
}

/// Whether `tokens` (inside groups and macro arguments too) name one of
/// `names` as a value: an identifier not after `.` or `::` (a field, a
/// method, an item's path) nor before `::`, `:` or `!` (a module, a
/// struct literal's field, a macro), or, in a macro's arguments
/// (`in_macro`), an inline argument of a format string,
/// `format!("{order_id}")`.
fn mentions(tokens: proc_macro2::TokenStream, names: &[String], in_macro: bool) -> bool {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    // Whether the identifier at `index` names something other than a value.
    let before_item = |index: usize| {
        matches!(
            tokens.get(index + 1),
            Some(TokenTree::Punct(punct)) if matches!(punct.as_char(), ':' | '!')
        )
    };
    // `.` or `::` just before: the identifier is a field, a method or a
    // path's later segment.
    let mut after_access = false;
    let mut previous_colon = false;
    // `name !` just before: the group is a macro's arguments.
    let mut after_bang = false;
    let mut previous_ident = false;
    for (index, token) in tokens.iter().enumerate() {
        let (access, colon, bang, ident) = match token {
            TokenTree::Ident(ident) => {
                if !after_access
                    && !before_item(index)
                    && names.contains(&ident.unraw().to_string())
                {
                    return true;
                }
                (false, false, false, true)
            }
            TokenTree::Group(group) => {
                if mentions(group.stream(), names, in_macro || after_bang) {
                    return true;
                }
                (false, false, false, false)
            }
            TokenTree::Punct(punct) => {
                let ch = punct.as_char();
                let joint = punct.spacing() == proc_macro2::Spacing::Joint;
                (
                    ch == '.' || (ch == ':' && previous_colon),
                    ch == ':' && joint,
                    ch == '!' && previous_ident,
                    false,
                )
            }
            TokenTree::Literal(literal) => {
                if in_macro && format_names(literal, names) {
                    return true;
                }
                (false, false, false, false)
            }
        };
        after_access = access;
        previous_colon = colon;
        after_bang = bang;
        previous_ident = ident;
    }
    false
}

/// Whether a string literal, read as a format string, has an inline
/// argument (`{name}`, `{name:?}`) that is one of `names`.
pub(crate) fn format_names(literal: &proc_macro2::Literal, names: &[String]) -> bool {
    let Ok(text) = syn::parse2::<syn::LitStr>(literal.to_token_stream()) else {
        return false;
    };
    let text = text.value();
    let mut rest = text.as_str();
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if let Some(escaped) = rest.strip_prefix('{') {
            rest = escaped;
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..end];
        if names.iter().any(|known| known == name) {
            return true;
        }
        rest = &rest[end..];
    }
    false
}

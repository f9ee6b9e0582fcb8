//! Which input a fn's returned borrows come from, read from the signature's
//! tokens with Rust's elision rules: an elided lifetime in the output is the
//! receiver's if `self` is a reference, else the one lifetime of the inputs
//! if there is exactly one.
//!
//! Only references and lifetimes written in the tokens are seen: a path
//! with a hidden lifetime parameter (`Ref<T>`) is not, and is left to rustc.
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{FnArg, Signature, Type};

/// A lifetime position: a reference, or a lifetime written out.
struct Position {
    /// `None` when elided (`&T`, `'_`).
    name: Option<String>,
    /// A `&mut` reference.
    mutable: bool,
    /// The input it is in, for the message: `` `&mut self` ``, `` `log` ``.
    input: usize,
}

/// The input, described for a message, whose `&mut` borrow the output of
/// `sig` (`output`, the attempt's type) may hold; `None` if it holds none.
pub(super) fn mut_input_in_output(sig: &Signature, output: &Type) -> Option<String> {
    let mut inputs = Vec::new();
    let mut receiver_position = None;
    for (index, arg) in sig.inputs.iter().enumerate() {
        match arg {
            FnArg::Receiver(receiver) => {
                let tokens = match &receiver.kind {
                    syn::ReceiverKind::Typed(_, ty) => ty.to_token_stream(),
                    _ => receiver.to_token_stream(),
                };
                let first = inputs.len();
                positions(tokens, index, &mut inputs);
                // `&self`, `&'a mut self`, `self: &Self`: a reference
                // receiver, the target of elided output lifetimes.
                if inputs.len() > first && is_reference(receiver) {
                    receiver_position = Some(first);
                }
            }
            FnArg::Typed(typed) => positions(typed.ty.to_token_stream(), index, &mut inputs),
        }
    }
    let mut returned = Vec::new();
    positions(output.to_token_stream(), usize::MAX, &mut returned);
    let elided_out = returned.iter().any(|p| p.name.is_none());
    let named_out: Vec<&str> = returned.iter().filter_map(|p| p.name.as_deref()).collect();
    let elision_target = receiver_position.or((inputs.len() == 1).then_some(0));

    let conflict = inputs.iter().enumerate().find(|(i, position)| {
        if !position.mutable {
            return false;
        }
        let through_elision = elided_out
            && elision_target.is_some_and(|target| {
                target == *i || (position.name.is_some() && inputs[target].name == position.name)
            });
        let named = position
            .name
            .as_deref()
            .is_some_and(|name| name != "static" && named_out.contains(&name));
        through_elision || named
    })?;
    let (_, position) = conflict;
    Some(match &sig.inputs[position.input] {
        FnArg::Receiver(_) => "`self`".to_owned(),
        FnArg::Typed(typed) => format!("`{}`", typed.pat.to_token_stream()),
    })
}

/// Whether the receiver is a reference (`&self`, `&mut self`, `self: &..`).
fn is_reference(receiver: &syn::Receiver) -> bool {
    match &receiver.kind {
        syn::ReceiverKind::Reference(..) => true,
        syn::ReceiverKind::Typed(_, ty) => matches!(
            ty.to_token_stream().into_iter().next(),
            Some(TokenTree::Punct(p)) if p.as_char() == '&'
        ),
        _ => false,
    }
}

/// Every lifetime position in `tokens`, at any depth.
fn positions(tokens: TokenStream, input: usize, out: &mut Vec<Position>) {
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match &token {
            TokenTree::Group(group) => positions(group.stream(), input, out),
            TokenTree::Punct(punct) if punct.as_char() == '&' => {
                let mut name = None;
                if matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '\'') {
                    tokens.next();
                    if let Some(TokenTree::Ident(ident)) = tokens.next() {
                        name = Some(ident.to_string()).filter(|n| n != "_");
                    }
                }
                let mutable = matches!(tokens.peek(), Some(TokenTree::Ident(i)) if i == "mut");
                out.push(Position {
                    name,
                    mutable,
                    input,
                });
            }
            TokenTree::Punct(punct) if punct.as_char() == '\'' => {
                if let Some(TokenTree::Ident(ident)) = tokens.next() {
                    out.push(Position {
                        name: Some(ident.to_string()).filter(|n| n != "_"),
                        mutable: false,
                        input,
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::mut_input_in_output;

    fn conflict(item: proc_macro2::TokenStream) -> Option<String> {
        let sig: syn::Signature = syn::parse2(item).unwrap();
        let syn::ReturnType::Type(_, output) = &sig.output else {
            panic!("no output")
        };
        mut_input_in_output(&sig, output)
    }

    #[test]
    fn mut_borrows_in_the_output_are_found() {
        for (sig, input) in [
            (quote!(fn f(&mut self) -> Result<&str, E>), "`self`"),
            (
                quote!(fn f(&mut self, x: &str) -> Result<&mut Self, E>),
                "`self`",
            ),
            (
                quote!(fn f<'a>(&'a mut self) -> Result<&'a str, E>),
                "`self`",
            ),
            (
                quote!(fn f<'a>(&'a mut self, x: &str) -> Result<Vec<&str>, E>),
                "`self`",
            ),
            (quote!(fn f(self: &mut Self) -> Result<&str, E>), "`self`"),
            (quote!(fn f(log: &mut Vec<u8>) -> Result<&u8, E>), "`log`"),
            (
                quote!(fn f(log: &mut Vec<u8>) -> Result<Item<'_>, E>),
                "`log`",
            ),
            (
                quote!(fn f<'a>(log: &'a mut Vec<u8>, x: &str) -> Result<&'a u8, E>),
                "`log`",
            ),
            (
                quote!(fn f<'a>(&'a self, log: &'a mut Vec<u8>) -> Result<&str, E>),
                "`log`",
            ),
            // async-trait names every elided input lifetime.
            (
                quote!(fn f<'life0, 'async_trait>(&'life0 mut self) -> Result<&'life0 str, E>),
                "`self`",
            ),
        ] {
            assert_eq!(conflict(sig.clone()).as_deref(), Some(input), "{sig}");
        }
    }

    #[test]
    fn shared_and_unrelated_borrows_are_fine() {
        for sig in [
            quote!(fn f(&self) -> Result<&str, E>),
            quote!(fn f(&mut self) -> Result<String, E>),
            quote!(fn f(&mut self) -> Result<&'static str, E>),
            quote!(fn f<'a>(&mut self, x: &'a str) -> Result<&'a str, E>),
            quote!(fn f<'a>(x: &'a [u8], y: &mut Vec<u8>) -> Result<&'a u8, E>),
            quote!(fn f(&self, y: &mut Vec<u8>) -> Result<&u8, E>),
            // Elision fails here; rustc says so.
            quote!(fn f(x: &mut u8, y: &u8) -> Result<&u8, E>),
            quote!(fn f(x: &mut u8) -> Result<u8, E>),
        ] {
            assert_eq!(conflict(sig.clone()), None, "{sig}");
        }
    }
}

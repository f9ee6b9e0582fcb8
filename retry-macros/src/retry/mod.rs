//! `#[retry(...)]`: parse the arguments and the fn, validate them, generate
//! the retry loop.
//!
//! - [`args`] reads `key = value` pairs into typed settings ([`duration`]
//!   turns duration literals into nanoseconds);
//! - [`item`] reads the fn, keeping its body as tokens;
//! - [`shape`] finds the user's body in what `#[async_trait]` or
//!   `#[tracing::instrument]`, expanded first, made of it;
//! - [`validate`] checks the fn's shape and the settings against each other
//!   ([`lifetimes`] finds which input a returned borrow comes from) and
//!   returns the checked model, or every error;
//! - [`generate`] writes the fn back from the model, with its body run once
//!   per attempt.
//!
//! Every mistake is collected before anything is generated; on any mistake
//! the errors are emitted next to the fn exactly as the user wrote it, so a
//! typo in the attribute gives one error, not one per use of the fn.
mod args;
pub(crate) mod duration;
mod generate;
mod item;
mod lifetimes;
mod shape;
mod stream;
mod validate;

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::common::{CratePath, Errors, NotADependency};

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = args::parse(args, &mut errors);
    let krate = match CratePath::from(args.krate.clone()).resolve() {
        Ok(krate) => krate,
        // Said once, on the attribute, instead of once per generated path.
        Err(NotADependency) => {
            errors.push(syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[retry]` cannot find the `tenacious` crate: it is not a dependency in this \
                 crate's Cargo.toml; if another crate re-exports it, say where with \
                 `#[retry(crate = path::to::tenacious)]`, or add `tenacious` to [dependencies]",
            ));
            CratePath::default()
        }
    };
    let func = syn::parse2::<item::RetryFn>(item.clone()).map_err(|err| item::not_a_fn(&item, err));
    match validate::check(args, krate, func, errors) {
        Ok(checked) => generate::expand(checked),
        Err(err) => {
            let mut out = err.to_compile_error();
            item.to_tokens(&mut out);
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::expand;

    /// The messages of the `compile_error!`s `expand` emitted, in order.
    pub(super) fn errors_of(out: &proc_macro2::TokenStream) -> Vec<String> {
        let mut messages = Vec::new();
        let mut tokens = out.clone().into_iter().peekable();
        while let Some(token) = tokens.next() {
            if let proc_macro2::TokenTree::Ident(ident) = &token
                && ident == "compile_error"
            {
                tokens.next(); // `!`
                if let Some(proc_macro2::TokenTree::Group(group)) = tokens.next() {
                    let lit: syn::LitStr = syn::parse2(group.stream()).unwrap();
                    messages.push(lit.value());
                }
            }
        }
        messages
    }

    #[test]
    fn every_mistake_is_reported_and_the_fn_is_kept() {
        let item = quote! {
            const fn f(self) -> u32 { 1 }
        };
        let out = expand(quote!(max = 0, base = "0s", jitter = "ful"), item.clone());
        let errors = errors_of(&out);
        assert_eq!(errors.len(), 5, "{errors:#?}");
        assert!(out.to_string().ends_with(&item.to_string()));
    }

    #[test]
    fn a_clean_fn_expands_without_errors() {
        let out = expand(
            quote!(
                max = 5,
                base = "1s",
                cap = "1m",
                jitter = "equal",
                on = Transient
            ),
            quote!(
                async fn f(&self, x: &str) -> Result<u32, E> {
                    Ok(1)
                }
            ),
        );
        assert!(errors_of(&out).is_empty(), "{out}");
    }
}

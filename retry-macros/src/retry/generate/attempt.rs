//! How an `async fn`'s attempt runs: inside the runtime's wrapper, which
//! sets the attempt context (`Attempt::current()`), bounded by `timeout`,
//! or by the `timeout` of a policy looked up by name.
use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};

use super::super::args::{Args, PolicyArg};
use super::local;
use super::policy::{names_generic, policy_base};
use super::tokens::{first_and_last_span, respan};

/// The statements that run one attempt of an `async fn`'s body,
/// `attempt_body`, into `result`; `named`: the fn's policy is a named one.
pub(super) fn async_attempt(
    args: &Args,
    private: &TokenStream,
    generics: &syn::Generics,
    engine: &syn::Ident,
    result: &syn::Ident,
    attempt_body: &TokenStream,
    named: bool,
) -> TokenStream {
    match &args.timeout {
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
                    let base = policy_base(args, private);
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
                Some(PolicyArg::Path(path)) if !names_generic(path, generics) => {
                    let base = policy_base(args, private);
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
    }
}

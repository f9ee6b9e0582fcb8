//! What is emitted next to the errors when the derive fails: a stub impl,
//! so the user's uses of the type as `Classify` (a `#[retry]` fn returning
//! it, a `transparent` wrapper around it) do not each add a "does not
//! implement `Classify`" error to the one mistake being reported.
use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

pub(crate) fn stub(input: &DeriveInput, private: &TokenStream) -> TokenStream {
    let ty = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[allow(unused_qualifications)]
        #[automatically_derived]
        impl #impl_generics #private::Classify for #ty #ty_generics #where_clause {
            fn classify(&self) -> #private::ErrorClass {
                ::core::unreachable!()
            }
        }
    }
}

//! Helpers shared by `#[retry]` and `#[derive(Classify)]`.
use darling::FromMeta;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

/// The facade crate as generated code names it: `crate = path` if the user
/// gave one (they re-export or rename `tenacious`), else `::tenacious`.
///
/// Parses from `crate = path` (bare or quoted) as a darling field; build it
/// by hand from `Option<syn::Path>` (`None` for the default).
#[derive(Debug, Clone, Default)]
pub(crate) struct CratePath(Option<syn::Path>);

impl From<Option<syn::Path>> for CratePath {
    fn from(path: Option<syn::Path>) -> Self {
        Self(path)
    }
}

/// The facade's package name, as a `Cargo.toml` lists it.
const FACADE: &str = "tenacious";

/// `tenacious` is not among the dependencies of the crate being compiled
/// (it is reached through a crate that re-exports it) and no `crate = path`
/// says where it is.
#[derive(Debug)]
pub(crate) struct NotADependency;

impl CratePath {
    /// The path the user gave; else `tenacious` under the name the user's
    /// `Cargo.toml` gives it (`retry_kit = { package = "tenacious", .. }`
    /// gives `::retry_kit`), so a renamed dependency needs no `crate =`.
    ///
    /// `::tenacious` when the manifest cannot be read (not built by cargo)
    /// and inside the `tenacious` package itself, whose tests, examples and
    /// doc tests name it so; `Err` only when the manifest is read and does
    /// not list `tenacious`, where `::tenacious` would fail once per use.
    pub(crate) fn resolve(self) -> Result<Self, NotADependency> {
        if self.0.is_some() {
            return Ok(self);
        }
        match proc_macro_crate::crate_name(FACADE) {
            Ok(proc_macro_crate::FoundCrate::Name(name)) if name != FACADE => {
                let name = syn::Ident::new(&name, proc_macro2::Span::call_site());
                Ok(Self(Some(syn::parse_quote!(::#name))))
            }
            Err(proc_macro_crate::Error::CrateNotFound { .. }) => Err(NotADependency),
            Ok(_) | Err(_) => Ok(self),
        }
    }

    /// The path generated code starts from, if not `::tenacious`.
    pub(crate) fn path(self) -> Option<syn::Path> {
        self.0
    }

    /// The hidden module generated code goes through: `#krate::__private`.
    pub(crate) fn private(&self) -> TokenStream {
        match &self.0 {
            Some(path) => quote!(#path::__private),
            None => quote!(::tenacious::__private),
        }
    }
}

impl ToTokens for CratePath {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match &self.0 {
            Some(path) => path.to_tokens(tokens),
            None => tokens.extend(quote!(::tenacious)),
        }
    }
}

impl FromMeta for CratePath {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        syn::Path::from_expr(expr).map(|path| Self(Some(path)))
    }

    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        syn::Path::from_value(value).map(|path| Self(Some(path)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(meta: TokenStream) -> darling::Result<CratePath> {
        CratePath::from_meta(&syn::parse2(meta).unwrap())
    }

    #[test]
    fn default_is_the_facade() {
        let krate = CratePath::default();
        assert_eq!(krate.to_token_stream().to_string(), ":: tenacious");
        assert_eq!(krate.private().to_string(), ":: tenacious :: __private");
    }

    #[test]
    fn bare_and_quoted_paths_are_accepted() {
        for meta in [quote!(krate = my::facade), quote!(krate = "my::facade")] {
            let krate = parse(meta).unwrap();
            assert_eq!(krate.private().to_string(), "my :: facade :: __private");
        }
    }

    #[test]
    fn built_by_hand() {
        let path: syn::Path = syn::parse_quote!(crate::reexport);
        let krate = CratePath::from(Some(path));
        assert_eq!(
            krate.private().to_string(),
            "crate :: reexport :: __private"
        );
        assert_eq!(
            CratePath::from(None).private().to_string(),
            ":: tenacious :: __private"
        );
    }

    #[test]
    fn a_given_path_is_kept_and_the_macro_crates_own_manifest_names_the_facade() {
        let path: syn::Path = syn::parse_quote!(my::facade);
        let krate = CratePath::from(Some(path)).resolve().unwrap();
        assert_eq!(krate.to_token_stream().to_string(), "my :: facade");
        // These tests run with this crate's manifest, where `tenacious` is a
        // dev-dependency under its own name.
        let krate = CratePath::default().resolve().unwrap();
        assert_eq!(krate.to_token_stream().to_string(), ":: tenacious");
    }

    #[test]
    fn a_non_path_is_rejected() {
        assert!(parse(quote!(krate = 1)).is_err());
    }
}

//! Helpers shared by `#[retry]` and `#[derive(Classify)]`: the error
//! collector, the `crate = path` value and the crate it names, and the
//! stripping of the invisible groups `macro_rules!` leaves around fragments.
use darling::FromMeta;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Expr, Lit, Type};

/// Every error found so far, in the order found, each spanned on the token
/// it is about: both macros collect every mistake before giving up.
///
/// `#[retry]` collects `syn` errors (their span runs from the first to the
/// last token of what is wrong); `derive(Classify)` collects darling's, as
/// its receivers report them.
pub(crate) struct Errors<E = syn::Error>(Vec<E>);

impl<E> Default for Errors<E> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

/// An error type whose errors can be reported as one.
pub(crate) trait Combine: Sized {
    /// All of `errors` as one error; `errors` is never empty.
    fn combine(errors: Vec<Self>) -> Self;
}

impl Combine for syn::Error {
    fn combine(errors: Vec<Self>) -> Self {
        let mut errors = errors.into_iter();
        let mut all = errors.next().expect("`Errors` combines at least one error");
        all.extend(errors);
        all
    }
}

impl Combine for darling::Error {
    fn combine(errors: Vec<Self>) -> Self {
        Self::multiple(errors)
    }
}

impl<E: Combine> Errors<E> {
    pub(crate) fn push(&mut self, error: impl Into<E>) {
        self.0.push(error.into());
    }

    /// The value of `result`, or `None` with its error recorded.
    pub(crate) fn handle<T>(&mut self, result: Result<T, impl Into<E>>) -> Option<T> {
        result.map_err(|error| self.push(error)).ok()
    }

    /// How many errors were found: compared before and after a step, whether
    /// the step found any.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// `Ok` if nothing was found, else every error as one.
    pub(crate) fn finish(self) -> Result<(), E> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(E::combine(self.0))
        }
    }

    /// Every error found, `error` last: for a step that cannot go on.
    pub(crate) fn fail(mut self, error: impl Into<E>) -> E {
        self.push(error);
        E::combine(self.0)
    }
}

impl Errors<syn::Error> {
    /// An error covering `tokens` (from their first to their last token).
    pub(crate) fn at<T: ToTokens>(&mut self, tokens: T, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }
}

/// `items` as prose: `a`, `a or b`, `a, b or c`: how messages list the
/// values of a closed list, built from its table.
pub(crate) fn or_list(items: impl IntoIterator<Item = String>) -> String {
    let mut items: Vec<String> = items.into_iter().collect();
    match items.pop() {
        None => String::new(),
        Some(last) if items.is_empty() => last,
        Some(last) => format!("{} or {last}", items.join(", ")),
    }
}

/// Strips the invisible groups `macro_rules!` wraps around `$e:expr`.
pub(crate) fn ungroup(mut expr: &Expr) -> &Expr {
    while let Expr::Group(group) = expr {
        expr = &group.expr;
    }
    expr
}

/// Strips the invisible groups `macro_rules!` wraps around `$t:ty`, and
/// parentheses.
pub(crate) fn strip_groups(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(group) => ty = &group.elem,
            Type::Paren(paren) => ty = &paren.elem,
            _ => return ty,
        }
    }
}

/// What `crate = ...` takes, said the same way by both macros.
const CRATE_PATH_EXPECTED: &str = "`crate` takes the path the `tenacious` crate is reachable \
                                   at, like `crate = ::tenacious` or \
                                   `crate = my_facade::tenacious`";

/// The path in `crate = value`, bare (`crate = ::tenacious`) or quoted as
/// serde and tokio take it (`crate = "::tenacious"`); the error is on the
/// value, or on the string that is no path.
pub(crate) fn crate_path(value: &Expr) -> syn::Result<syn::Path> {
    match ungroup(value) {
        Expr::Path(path) if path.qself.is_none() => Ok(path.path.clone()),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit
            .parse::<syn::Path>()
            .map_err(|_| syn::Error::new_spanned(lit, CRATE_PATH_EXPECTED)),
        _ => Err(syn::Error::new_spanned(value, CRATE_PATH_EXPECTED)),
    }
}

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
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        crate_path(expr)
            .map(|path| Self(Some(path)))
            .map_err(darling::Error::from)
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
    fn a_non_path_is_rejected_the_same_way_by_both_macros() {
        for meta in [quote!(krate = 1), quote!(krate = "not a path")] {
            let message = parse(meta).unwrap_err().to_string();
            assert!(message.starts_with("`crate` takes the path"), "{message}");
        }
    }

    #[test]
    fn errors_are_collected_in_order_and_reported_as_one() {
        let mut errors: Errors = Errors::default();
        assert_eq!(errors.len(), 0);
        errors.at(quote!(a), "first");
        assert_eq!(errors.handle(Ok::<_, syn::Error>(1)), Some(1));
        let second = syn::Error::new(proc_macro2::Span::call_site(), "second");
        assert_eq!(errors.handle(Err::<u8, _>(second)), None);
        assert_eq!(errors.len(), 2);
        let all: Vec<String> = errors
            .finish()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(all, ["first", "second"]);

        let mut errors: Errors<darling::Error> = Errors::default();
        errors.push(darling::Error::custom("one"));
        let all = errors.fail(darling::Error::custom("two"));
        assert_eq!(all.len(), 2);
        assert!(Errors::<syn::Error>::default().finish().is_ok());
    }
}

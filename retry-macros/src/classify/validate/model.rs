//! The model of a derive that passed every check, which
//! `classify::generate` writes the impl from.
use syn::{DeriveInput, Ident, Member, Type};

use crate::classify::hint::Hint;
use crate::classify::parse::{Attrs, ErrorClassKey};
use crate::common::CratePath;

/// A derive input that passed every check.
#[derive(Debug)]
pub(crate) struct Derive<'a> {
    pub(crate) input: &'a DeriveInput,
    pub(crate) krate: CratePath,
    pub(crate) body: Body<'a>,
}

#[derive(Debug)]
pub(crate) enum Body<'a> {
    Enum(Vec<Case<'a>>),
    Struct(Case<'a>),
}

/// One variant, or the struct.
#[derive(Debug)]
pub(crate) struct Case<'a> {
    pub(crate) name: &'a Ident,
    pub(crate) answer: Answer<'a>,
    /// What the case sets for the call beyond the policy (`max`, `base`,
    /// `not_sent`); empty where they are not allowed.
    pub(crate) limits: CaseLimits,
}

/// `max`, `base` and `not_sent` of one case, as written.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CaseLimits {
    pub(crate) max: Option<u32>,
    /// Nanoseconds.
    pub(crate) base: Option<u64>,
    pub(crate) not_sent: bool,
}

impl CaseLimits {
    pub(super) fn of(attrs: &Attrs) -> Self {
        Self {
            max: attrs.max.map(|max| max.max),
            base: attrs.base.map(|base| base.nanos),
            not_sent: attrs.not_sent.is_present(),
        }
    }

    pub(crate) fn sets_limits(self) -> bool {
        self.max.is_some() || self.base.is_some()
    }
}

#[derive(Debug)]
pub(crate) enum Answer<'a> {
    /// The case answers for itself.
    Own {
        class: &'static ErrorClassKey,
        retry_after: Option<FieldRef<'a>>,
        hint: Option<Hint>,
    },
    /// Every method forwards to this field.
    Transparent(FieldRef<'a>),
    /// The variant a guard's refusal becomes: `classify`, `retry_after` and
    /// `hint` forward to this field, the `Refused`; `variant()` is the
    /// variant's own name.
    Refused(FieldRef<'a>),
    /// `with = path` on a variant: `path(&field)` of its only field answers
    /// `classify`, `retry_after`, `hint` and `signals`; `variant()` is the
    /// variant's own name.
    With {
        path: syn::ExprPath,
        field: FieldRef<'a>,
    },
    /// `with = path` on the type: `path(self)` answers as `With` does, for
    /// the struct or every variant of the enum.
    WithSelf(syn::ExprPath),
}

#[derive(Debug, Clone)]
pub(crate) struct FieldRef<'a> {
    pub(crate) member: Member,
    pub(crate) ty: &'a Type,
}

//! A case's one class, and the class words that take no value.
use darling::Error;
use proc_macro2::Span;
use syn::Ident;

use super::{Errors, Position};
use crate::classify::parse::{Attrs, Class, Word};
use crate::common::or_list;

pub(super) fn reject_value(word: Word, key: &str, errors: &mut Errors) {
    if let Some(value) = word.stray_value {
        errors.push(
            Error::custom(format!(
                "`{key}` takes no value: write `#[classify({key})]`"
            ))
            .with_span(&value),
        );
    }
}

/// The case's one class, or an error saying what to write.
pub(super) fn one_class(
    name: &Ident,
    position: Position,
    attrs: &Attrs,
    errors: &mut Errors,
) -> Option<Class> {
    let present: Vec<Class> = Class::all()
        .filter(|class| attrs.word(*class).is_present())
        .collect();
    match present.as_slice() {
        [] => {
            let (what, place) = match position {
                Position::Struct => ("struct", "above the struct"),
                Position::Variant {
                    enum_has_class: true,
                } => return None,
                Position::Variant { .. } => ("variant", "on the variant"),
            };
            errors.push(
                Error::custom(format!(
                    "{what} `{name}` has no error class; add one of {} {place}",
                    or_list(
                        Class::all()
                            .filter(|class| *class != Class::Refused)
                            .map(|class| format!("`#[classify({})]`", class.key()))
                    )
                ))
                .with_span(name),
            );
            None
        }
        [class] => Some(*class),
        _ => {
            let written: Vec<(Class, Span)> = attrs.classes_in_order().collect();
            let first = written.first().map_or(present[0], |&(class, _)| class);
            let mut reported = false;
            for &(class, span) in written.iter().skip(1) {
                if class != first {
                    reported = true;
                    errors.push(
                        Error::custom(format!(
                            "`{}` conflicts with `{}`: {} has exactly one class, keep one of them",
                            class.key(),
                            first.key(),
                            position.noun()
                        ))
                        .with_span(&span),
                    );
                }
            }
            if !reported {
                errors.push(
                    Error::custom(format!(
                        "{} has exactly one class, keep one of them",
                        position.noun()
                    ))
                    .with_span(name),
                );
            }
            None
        }
    }
}

//! `hint = "..."`: field interpolation, as thiserror's `#[error("...")]`.
//!
//! `{0}`, `{name}`, `{name:?}`, `{0:>8}` name fields of the variant; the
//! string is rewritten so each placeholder names a binding the generated
//! match arm introduces (`{wait:?}` becomes `{__tenacious_wait:?}`) and is
//! handed to `format!` with the bindings as named arguments. A hint with no
//! placeholder stays a `&'static str`, so it costs no allocation.
use syn::{Fields, Ident, LitStr, Member, Type};

/// A validated hint.
#[derive(Debug)]
pub(crate) struct Hint {
    /// The text: a format string when `args` is not empty, else the final
    /// text with `{{`/`}}` already unescaped. Keeps the user's span so type
    /// errors (a field that is not `Display`) point at the hint.
    pub(crate) text: LitStr,
    /// Interpolated fields, each once, in order of first use.
    pub(crate) args: Vec<Arg>,
}

/// One interpolated field.
#[derive(Debug)]
pub(crate) struct Arg {
    pub(crate) member: Member,
    pub(crate) ty: Type,
    /// The `core::fmt` traits its placeholders use (`Display`, `Debug`, ...),
    /// so a generic field can be given the bound it needs.
    pub(crate) traits: Vec<&'static str>,
}

/// The name the generated code binds a field to; the rewritten hint names
/// it too.
pub(crate) fn binding(member: &Member) -> Ident {
    match member {
        Member::Named(ident) => {
            let name = ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name);
            Ident::new(&format!("__tenacious_{name}"), ident.span())
        }
        Member::Unnamed(index) => Ident::new(&format!("__tenacious_{}", index.index), index.span),
    }
}

/// Reads `lit` against the fields of `owner` (a variant or struct name).
pub(crate) fn parse(lit: &LitStr, owner: &Ident, fields: &Fields) -> Result<Hint, String> {
    let source = lit.value();
    let mut format = String::with_capacity(source.len());
    let mut plain = String::with_capacity(source.len());
    let mut args: Vec<Arg> = Vec::new();
    let mut rest = source.as_str();

    while let Some(at) = rest.find(['{', '}']) {
        let (before, from) = rest.split_at(at);
        format.push_str(before);
        plain.push_str(before);
        let brace = if from.starts_with('{') { "{" } else { "}" };
        if from[1..].starts_with(brace) {
            format.push_str(&from[..2]);
            plain.push_str(brace);
            rest = &from[2..];
            continue;
        }
        if brace == "}" {
            return Err("unmatched `}` in the hint; write `}}` for a literal brace".to_owned());
        }
        let Some(close) = from.find('}') else {
            return Err("unclosed `{` in the hint; write `{{` for a literal brace".to_owned());
        };
        let inner = &from[1..close];
        if inner.contains('{') {
            return Err(not_a_placeholder(inner, owner, fields));
        }
        let (name, spec) = match inner.split_once(':') {
            Some((name, spec)) => (name, Some(spec)),
            None => (inner, None),
        };
        let (member, ty) = field(name, inner, lit, owner, fields)?;
        let spec = spec.unwrap_or("");
        if spec.contains(['$', '*']) {
            return Err(format!(
                "`{{{inner}}}`: a hint's width and precision must be numbers, as in `{{{name}:>8}}`"
            ));
        }
        format.push('{');
        format.push_str(&binding(&member).to_string());
        if !spec.is_empty() {
            format.push(':');
            format.push_str(spec);
        }
        format.push('}');
        let fmt_trait = fmt_trait(spec);
        match args.iter_mut().find(|arg| arg.member == member) {
            Some(arg) if arg.traits.contains(&fmt_trait) => {}
            Some(arg) => arg.traits.push(fmt_trait),
            None => args.push(Arg {
                member,
                ty: ty.clone(),
                traits: vec![fmt_trait],
            }),
        }
        rest = &from[close + 1..];
    }
    format.push_str(rest);
    plain.push_str(rest);

    let text = if args.is_empty() { plain } else { format };
    Ok(Hint {
        text: LitStr::new(&text, lit.span()),
        args,
    })
}

/// Resolves a placeholder's argument to a field of `owner`.
fn field<'f>(
    name: &str,
    placeholder: &str,
    lit: &LitStr,
    owner: &Ident,
    fields: &'f Fields,
) -> Result<(Member, &'f Type), String> {
    // `{r#type}` names the field `r#type`, as in `format!`.
    let name = name.strip_prefix("r#").unwrap_or(name);
    let member = if name.is_empty() {
        return Err(not_a_placeholder(placeholder, owner, fields));
    } else if name.bytes().all(|b| b.is_ascii_digit()) {
        match name.parse::<u32>() {
            Ok(index) => Member::Unnamed(syn::Index {
                index,
                span: lit.span(),
            }),
            Err(_) => return Err(missing(name, owner, fields)),
        }
    } else if is_ident(name) {
        Member::Named(Ident::new(name, lit.span()))
    } else {
        return Err(not_a_placeholder(placeholder, owner, fields));
    };
    fields
        .iter()
        .zip(fields.members())
        .find(|(_, candidate)| same_member(candidate, &member))
        // The field's own member: `r#type` must stay raw in a pattern.
        .map(|(field, member)| (member, &field.ty))
        .ok_or_else(|| missing(name, owner, fields))
}

fn same_member(a: &Member, b: &Member) -> bool {
    match (a, b) {
        (Member::Named(a), Member::Named(b)) => {
            let a = a.to_string();
            *b == a.strip_prefix("r#").unwrap_or(&a)
        }
        (Member::Unnamed(a), Member::Unnamed(b)) => a.index == b.index,
        _ => false,
    }
}

fn is_ident(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first == '_' || first.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn missing(name: &str, owner: &Ident, fields: &Fields) -> String {
    let names = field_names(fields);
    if names.is_empty() {
        format!("the hint names `{name}`, but `{owner}` has no fields; remove `{{{name}}}`")
    } else {
        format!(
            "the hint names `{name}`, but `{owner}` has no such field; its fields are {}",
            names.join(", ")
        )
    }
}

/// `{}`, `{:?}`, `{"json": 1}`: braces that name no field.
fn not_a_placeholder(placeholder: &str, owner: &Ident, fields: &Fields) -> String {
    let names = field_names(fields);
    let name_one = match names.first() {
        Some(first) => format!(
            ", or name a field of `{owner}` as in `{{{}}}`",
            first.trim_matches('`')
        ),
        None => String::new(),
    };
    format!(
        "`{{{placeholder}}}` in a hint names no field; write `{{{{` and `}}}}` for literal braces{name_one}"
    )
}

fn field_names(fields: &Fields) -> Vec<String> {
    fields
        .members()
        .map(|member| match member {
            Member::Named(ident) => {
                let name = ident.to_string();
                format!("`{}`", name.strip_prefix("r#").unwrap_or(&name))
            }
            Member::Unnamed(index) => format!("`{}`", index.index),
        })
        .collect()
}

/// The `core::fmt` trait a format spec uses: the type is the spec's last
/// character (`?`, `x`, `X`, `o`, `b`, `e`, `E`), a fill character can only
/// come first and is always followed by an alignment, so it is never last.
fn fmt_trait(spec: &str) -> &'static str {
    match spec.chars().last() {
        Some('?') => "Debug",
        Some('x') => "LowerHex",
        Some('X') => "UpperHex",
        Some('o') => "Octal",
        Some('b') => "Binary",
        Some('e') => "LowerExp",
        Some('E') => "UpperExp",
        _ => "Display",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;
    use syn::parse_quote;

    fn named() -> Fields {
        let item: syn::ItemStruct = parse_quote!(
            struct S {
                user: String,
                r#type: u8,
                wait: u64,
            }
        );
        item.fields
    }

    fn tuple() -> Fields {
        let item: syn::ItemStruct = parse_quote!(
            struct S(String, u64);
        );
        item.fields
    }

    fn owner() -> Ident {
        Ident::new("Owner", Span::call_site())
    }

    fn run(text: &str, fields: &Fields) -> Result<Hint, String> {
        parse(&LitStr::new(text, Span::call_site()), &owner(), fields)
    }

    #[test]
    fn plain_text_is_unescaped_and_takes_no_arguments() {
        let hint = run("use {{braces}} freely", &named()).unwrap();
        assert_eq!(hint.text.value(), "use {braces} freely");
        assert!(hint.args.is_empty());
    }

    #[test]
    fn named_fields_are_rewritten_to_bindings() {
        let hint = run(
            "{user} waits {wait:?}, {{ok}} {user:>8} {type} {r#type}",
            &named(),
        )
        .unwrap();
        assert_eq!(
            hint.text.value(),
            "{__tenacious_user} waits {__tenacious_wait:?}, {{ok}} {__tenacious_user:>8} {__tenacious_type} {__tenacious_type}"
        );
        let args: Vec<(String, Vec<&str>)> = hint
            .args
            .iter()
            .map(|arg| (binding(&arg.member).to_string(), arg.traits.clone()))
            .collect();
        assert_eq!(
            args,
            [
                ("__tenacious_user".to_owned(), vec!["Display"]),
                ("__tenacious_wait".to_owned(), vec!["Debug"]),
                ("__tenacious_type".to_owned(), vec!["Display"]),
            ]
        );
    }

    #[test]
    fn positional_fields_and_format_traits() {
        let hint = run("{0} {1:#x} {1:08b} {0:?}", &tuple()).unwrap();
        assert_eq!(
            hint.text.value(),
            "{__tenacious_0} {__tenacious_1:#x} {__tenacious_1:08b} {__tenacious_0:?}"
        );
        assert_eq!(hint.args[0].traits, ["Display", "Debug"]);
        assert_eq!(hint.args[1].traits, ["LowerHex", "Binary"]);
    }

    #[test]
    fn a_missing_field_lists_the_fields() {
        let err = run("hello {usr}", &named()).unwrap_err();
        assert!(err.contains("`usr`"), "{err}");
        assert!(err.contains("`user`, `type`, `wait`"), "{err}");
        let err = run("{2}", &tuple()).unwrap_err();
        assert!(err.contains("`0`, `1`"), "{err}");
        let err = run("{0}", &Fields::Unit).unwrap_err();
        assert!(err.contains("has no fields"), "{err}");
    }

    #[test]
    fn placeholders_that_name_no_field_say_how_to_escape() {
        let err = run("{}", &tuple()).unwrap_err();
        assert_eq!(
            err,
            "`{}` in a hint names no field; write `{{` and `}}` for literal braces, \
             or name a field of `Owner` as in `{0}`"
        );
        let err = run(r#"{"a": 1}"#, &Fields::Unit).unwrap_err();
        assert_eq!(
            err,
            r#"`{"a": 1}` in a hint names no field; write `{{` and `}}` for literal braces"#
        );
    }

    #[test]
    fn malformed_placeholders_are_rejected() {
        for bad in [
            "{}",
            "{:?}",
            "a } b",
            "a { b",
            "{0.5}",
            "{user:>width$}",
            "{user:.*}",
            "{{user}",
            "{a{b}",
            "{99999999999999999999}",
        ] {
            assert!(run(bad, &named()).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn non_ascii_text_survives() {
        let hint = run("réessayez dans {wait} s — ok", &named()).unwrap();
        assert_eq!(
            hint.text.value(),
            "réessayez dans {__tenacious_wait} s — ok"
        );
    }
}

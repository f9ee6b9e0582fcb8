//! Words other error and retry libraries use in their attributes, each
//! reported with what means it here.
use syn::{Attribute, Meta};

use super::{ATTR, keys};

/// Words other error and retry libraries use, each with what means it here
/// and how to write that.
const OTHER_WORDS: &[(&[&str], &str, &str)] = &[
    (
        &[
            "retry",
            "retryable",
            "retriable",
            "retryable_error",
            "temporary",
            "temp",
            "transient_error",
            "recoverable",
            "flaky",
            "timeout",
            "network",
            "unavailable",
        ],
        "an error a retry can fix (a timeout, a reset connection, a 5xx) is `transient`",
        "`#[classify(transient)]`",
    ),
    (
        &[
            "throttled",
            "throttle",
            "throttling",
            "rate_limit",
            "ratelimit",
            "ratelimited",
            "rate_limits",
            "too_many_requests",
            "quota",
        ],
        "an error that asks to wait (a 429, an exhausted quota) is `rate_limited`",
        "`#[classify(rate_limited)]`",
    ),
    (
        &[
            "bad_request",
            "bad_input",
            "invalid_input",
            "invalid_request",
            "validation",
            "client_error",
            "user_error",
            "malformed",
            "unprocessable",
        ],
        "an error the request itself causes (a 400, a schema violation) is `invalid`",
        "`#[classify(invalid)]`",
    ),
    (
        &[
            "permanent",
            "non_retryable",
            "not_retryable",
            "non_retriable",
            "no_retry",
            "never",
        ],
        "an error never to retry is `fatal` (a human must fix it) or `invalid` (the caller \
         must change the request)",
        "`#[classify(fatal)]` or `#[classify(invalid)]`",
    ),
    (
        &[
            "unrecoverable",
            "abort",
            "terminal",
            "unauthorized",
            "forbidden",
            "auth",
        ],
        "an error only a human can fix (bad credentials, bad configuration) is `fatal`",
        "`#[classify(fatal)]`",
    ),
    (
        &[
            "forward", "delegate", "inner", "wrap", "wrapped", "from", "source",
        ],
        "an error that asks its only field is `transparent`",
        "`#[classify(transparent)]`",
    ),
    (
        &["refusal", "refuse", "circuit_open", "breaker_open"],
        "the variant a guard's refusal becomes (an open circuit breaker, a cooldown the call \
         cannot wait for) is `refused`",
        "`#[classify(refused)]` on a variant holding a `tenacious::Refused`",
    ),
    (
        &[
            "message",
            "msg",
            "help",
            "note",
            "advice",
            "suggestion",
            "reason",
            "description",
        ],
        "advice for the model or the operator is `hint`",
        "`#[classify(hint = \"...\")]`",
    ),
    (
        &["wait", "retry_after_ms", "retry_after_secs"],
        "the field holding the server's wait is marked `retry_after`",
        "`#[classify(retry_after)]` on that field",
    ),
    (
        &[
            "attempts",
            "max_attempts",
            "tries",
            "max_tries",
            "retries",
            "max_retries",
            "limit",
        ],
        "the call's attempts when this error is the last, the first attempt included, are \
         `max`",
        "`#[classify(transient, max = 5)]`",
    ),
    (
        &[
            "delay",
            "backoff",
            "base_delay",
            "initial_delay",
            "min_delay",
            "initial_backoff",
        ],
        "the backoff's base for the retry after this error is `base`",
        "`#[classify(transient, base = \"1s\")]`",
    ),
    (
        &[
            "unsent",
            "never_sent",
            "not_applied",
            "connect",
            "connect_error",
            "safe_to_retry",
            "idempotent",
        ],
        "an error that proves the request never reached the server, so even a call that is \
         not idempotent may be retried, is marked `not_sent`",
        "`#[classify(transient, not_sent)]`",
    ),
    (
        &[
            "classifier",
            "classify_with",
            "classify_by",
            "using",
            "by",
            "func",
            "function",
        ],
        "a fn that classifies the case is named by `with`",
        "`#[classify(with = path::to::fn)]`",
    ),
    (
        &["krate"],
        "the path to the `tenacious` crate is `crate`",
        "`#[classify(crate = path::to::tenacious)]`",
    ),
];

/// `attrs` with every key in [`OTHER_WORDS`] reported and taken out.
pub(super) fn without_other_words(
    attrs: &[Attribute],
    errors: &mut darling::error::Accumulator,
) -> Vec<Attribute> {
    attrs
        .iter()
        .map(|attr| {
            let Meta::List(list) = &attr.meta else {
                return attr.clone();
            };
            if !list.path.is_ident(ATTR) {
                return attr.clone();
            }
            // Malformed lists are darling's to report.
            let Ok(metas) = list.parse_args_with(
                syn::punctuated::Punctuated::<Meta, syn::Token![,]>::parse_terminated,
            ) else {
                return attr.clone();
            };
            let before = metas.len();
            let kept: Vec<Meta> = metas
                .into_iter()
                .filter(|meta| {
                    let Some(ident) = meta.path().get_ident() else {
                        return true;
                    };
                    let word = ident.to_string().to_lowercase();
                    let Some((_, why, write)) = OTHER_WORDS
                        .iter()
                        .find(|(words, _, _)| words.contains(&word.as_str()))
                    else {
                        return true;
                    };
                    errors.push(
                        darling::Error::custom(format!(
                            "unknown key `{ident}`; {why}: write {write}; the keys are: {}",
                            keys()
                        ))
                        .with_span(ident),
                    );
                    false
                })
                .collect();
            if kept.len() == before {
                return attr.clone();
            }
            let path = &list.path;
            let mut attr = attr.clone();
            attr.meta = syn::parse_quote!(#path(#(#kept),*));
            attr
        })
        .collect()
}

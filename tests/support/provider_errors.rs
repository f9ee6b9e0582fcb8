//! Error responses as the model providers send them: status, headers and
//! body, each following the provider's documentation named above it. Made
//! up: request ids, organisation names, token counts, and the wording of a
//! message the document does not quote; where a document names a code but
//! shows no body, the rest of the body follows that provider's documented
//! error shape, and the fixture says so. The presets read codes and types
//! (and, for Anthropic's invalid request, the message's documented start),
//! never the made-up parts.
//!
//! OpenAI's error shape (API reference, "Errors"; guide "Error codes",
//! <https://platform.openai.com/docs/guides/error-codes>):
//! `{"error": {"message", "type", "param", "code"}}`.
//! Anthropic's (Claude API, "Errors",
//! <https://platform.claude.com/docs/en/api/errors>):
//! `{"type": "error", "error": {"type", "message"}, "request_id"}`, and for
//! the usage tier's spend cap `error.details.error_code`.
#![allow(dead_code)] // each test file uses its own share of them

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One recorded error response.
#[derive(Debug, Clone, Copy)]
pub struct Recorded {
    /// The route it is served at in the loopback tests.
    pub name: &'static str,
    pub status: u16,
    pub headers: &'static [(&'static str, &'static str)],
    pub body: &'static str,
}

/// When they were recorded: the `date` header of each,
/// `Thu, 27 Jun 2024 18:25:00 GMT`.
pub fn recorded_at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_719_512_700)
}

/// OpenAI, guide "Error codes": "429 - You exceeded your current quota,
/// please check your plan and billing details": the account's credit is
/// spent. A 429, yet no rate limit: waiting does not refill the account.
pub const OPENAI_INSUFFICIENT_QUOTA: Recorded = Recorded {
    name: "openai-insufficient-quota",
    status: 429,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json; charset=utf-8"),
        ("x-request-id", "req_8c2f3c1b7d5e4a6f9e0d1c2b3a495867"),
    ],
    body: r#"{
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "type": "insufficient_quota",
        "param": null,
        "code": "insufficient_quota"
    }
}
"#,
};

/// OpenAI, guide "Rate limits" (<https://platform.openai.com/docs/guides/rate-limits>):
/// a 429 `rate_limit_exceeded` on requests per minute, with the
/// `x-ratelimit-*` headers that guide lists and the `retry-after` the
/// official SDKs wait.
pub const OPENAI_RATE_LIMIT_EXCEEDED: Recorded = Recorded {
    name: "openai-rate-limit-exceeded",
    status: 429,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json; charset=utf-8"),
        ("x-request-id", "req_1f0e2d3c4b5a69788796a5b4c3d2e1f0"),
        ("retry-after", "1"),
        ("x-ratelimit-limit-requests", "500"),
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "120ms"),
        ("x-ratelimit-limit-tokens", "30000"),
        ("x-ratelimit-remaining-tokens", "29438"),
        ("x-ratelimit-reset-tokens", "1.124s"),
    ],
    body: r#"{
    "error": {
        "message": "Rate limit reached for gpt-4o in organization org-abc123 on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms. Visit https://platform.openai.com/account/rate-limits to learn more.",
        "type": "requests",
        "param": null,
        "code": "rate_limit_exceeded"
    }
}
"#,
};

/// OpenAI, guide "Error codes" (`context_length_exceeded`, a 400
/// `invalid_request_error`): the prompt does not fit the model.
pub const OPENAI_CONTEXT_LENGTH_EXCEEDED: Recorded = Recorded {
    name: "openai-context-length-exceeded",
    status: 400,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json; charset=utf-8"),
        ("x-request-id", "req_0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ],
    body: r#"{
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded"
    }
}
"#,
};

/// OpenAI: the organisation's monthly hard limit, as the API reports it
/// (a 400 `invalid_request_error` with code `billing_hard_limit_reached`,
/// message "Billing hard limit has been reached").
pub const OPENAI_BILLING_HARD_LIMIT: Recorded = Recorded {
    name: "openai-billing-hard-limit",
    status: 400,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json; charset=utf-8"),
        ("x-request-id", "req_9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ],
    body: r#"{
    "error": {
        "code": "billing_hard_limit_reached",
        "message": "Billing hard limit has been reached",
        "param": null,
        "type": "invalid_request_error"
    }
}
"#,
};

/// OpenAI, guide "Spend limits"
/// (<https://developers.openai.com/api/docs/guides/spend-limits>): a project's
/// hard spend limit answers 429 with code `project_spend_limit_exceeded`.
/// The guide names the code only: the message and type follow OpenAI's
/// error shape.
pub const OPENAI_PROJECT_SPEND_LIMIT: Recorded = Recorded {
    name: "openai-project-spend-limit",
    status: 429,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json; charset=utf-8"),
        ("x-request-id", "req_5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d"),
    ],
    body: r#"{
    "error": {
        "message": "This project has reached its monthly spend limit.",
        "type": "invalid_request_error",
        "param": null,
        "code": "project_spend_limit_exceeded"
    }
}
"#,
};

/// Anthropic, "Errors": "529 - `overloaded_error`: the API is temporarily
/// overloaded" (for every customer, not this one's quota).
pub const ANTHROPIC_OVERLOADED: Recorded = Recorded {
    name: "anthropic-overloaded",
    status: 529,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json"),
        ("request-id", "req_011CSHoEeqs5C35K2UUqR7Fy"),
    ],
    body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}"#,
};

/// Anthropic, "Errors" and "Rate limits": the usage tier's monthly spend
/// cap is a 429 `rate_limit_error` whose `error.details.error_code` is
/// `enforced_spend_limit_reached`, with no `retry-after`; access resumes
/// next month, so retrying (the SDKs' own retries included) fails until
/// then. The message's wording is not quoted there.
pub const ANTHROPIC_SPEND_LIMIT: Recorded = Recorded {
    name: "anthropic-spend-limit",
    status: 429,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json"),
        ("request-id", "req_011CSHpF8rbT2XyZ4nQk9LmA"),
    ],
    body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"Your organization has reached its monthly usage tier spend limit. API access will resume on 2024-07-01 at 00:00 UTC.","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_011CSHpF8rbT2XyZ4nQk9LmA"}"#,
};

/// Anthropic, "Errors": a prompt over the model's context window is a 400
/// `invalid_request_error` whose message says "prompt is too long".
pub const ANTHROPIC_PROMPT_TOO_LONG: Recorded = Recorded {
    name: "anthropic-prompt-too-long",
    status: 400,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json"),
        ("request-id", "req_011CSHqA1bC2dE3fG4hI5jK6"),
    ],
    body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210317 tokens > 200000 maximum"},"request_id":"req_011CSHqA1bC2dE3fG4hI5jK6"}"#,
};

/// Anthropic, "Rate limits" (<https://platform.claude.com/docs/en/api/rate-limits>):
/// a 429 `rate_limit_error` with `retry-after` in seconds and the
/// `anthropic-ratelimit-requests-*` headers (the reset an RFC 3339 time).
pub const ANTHROPIC_RATE_LIMIT: Recorded = Recorded {
    name: "anthropic-rate-limit",
    status: 429,
    headers: &[
        ("date", "Thu, 27 Jun 2024 18:25:00 GMT"),
        ("content-type", "application/json"),
        ("request-id", "req_011CSHrB7cD8eF9gH0iJ1kL2"),
        ("retry-after", "30"),
        ("anthropic-ratelimit-requests-limit", "50"),
        ("anthropic-ratelimit-requests-remaining", "0"),
        ("anthropic-ratelimit-requests-reset", "2024-06-27T18:25:30Z"),
    ],
    body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits."},"request_id":"req_011CSHrB7cD8eF9gH0iJ1kL2"}"#,
};

pub const ALL: [Recorded; 9] = [
    OPENAI_INSUFFICIENT_QUOTA,
    OPENAI_RATE_LIMIT_EXCEEDED,
    OPENAI_CONTEXT_LENGTH_EXCEEDED,
    OPENAI_BILLING_HARD_LIMIT,
    OPENAI_PROJECT_SPEND_LIMIT,
    ANTHROPIC_OVERLOADED,
    ANTHROPIC_SPEND_LIMIT,
    ANTHROPIC_PROMPT_TOO_LONG,
    ANTHROPIC_RATE_LIMIT,
];

//! The event stream's lines: a byte order mark stripped, lines split on
//! any end of line across chunks, and each line's field.
use std::time::Duration;

use super::SseEvent;

/// What one line did.
pub(super) enum Line {
    Nothing,
    Comment(String),
    Dispatch(SseEvent),
}

/// The byte-order mark a body may start with.
pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// At the body's start, with `matched` bytes of a [`BOM`] seen before
/// `bytes`: the bytes held so far that turned out not to be a mark (those
/// of earlier chunks and of this one, to parse before the rest), and the
/// rest of `bytes`. Both empty while `bytes` could still
/// be the mark's next bytes (with `matched` updated); once the mark is
/// whole, `matched` is its length and it is dropped.
pub(super) fn strip_bom<'b>(bytes: &'b [u8], matched: &mut u8) -> (&'static [u8], &'b [u8]) {
    let mut at = usize::from(*matched);
    let mut used = 0;
    while at < BOM.len() {
        match bytes.get(used) {
            None => {
                #[allow(clippy::cast_possible_truncation)] // below 3
                {
                    *matched = at as u8;
                }
                return (&[], &[]);
            }
            Some(&byte) if byte == BOM[at] => {
                at += 1;
                used += 1;
            }
            // Not a mark: what was held is the body's start.
            Some(_) => {
                *matched = 0;
                return (&BOM[..at], &bytes[used..]);
            }
        }
    }
    #[allow(clippy::cast_possible_truncation)] // 3
    {
        *matched = BOM.len() as u8;
    }
    (&[], &bytes[used..])
}

/// Moves the lines `bytes` ends from `line` (plus `bytes`) into `pending`,
/// each ended with one LF whatever ended it; what is left of the last
/// line stays in `line`.
pub(super) fn split_lines(
    bytes: &[u8],
    line: &mut Vec<u8>,
    pending: &mut Vec<u8>,
    after_cr: &mut bool,
) {
    let mut bytes = bytes;
    let rest_of_crlf = *after_cr && bytes.first() == Some(&b'\n');
    if !bytes.is_empty() {
        *after_cr = false;
    }
    if rest_of_crlf {
        bytes = &bytes[1..];
    }
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                pending.extend_from_slice(line);
                pending.push(b'\n');
                line.clear();
            }
            b'\r' => {
                pending.extend_from_slice(line);
                pending.push(b'\n');
                line.clear();
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                } else if i + 1 == bytes.len() {
                    *after_cr = true;
                }
            }
            byte => line.push(byte),
        }
        i += 1;
    }
}

/// Applies one line to the event being read.
pub(super) fn field(
    line: &str,
    event: &mut String,
    data: &mut String,
    has_data: &mut bool,
    retry: &mut Option<Duration>,
    last_id: &mut Option<String>,
) -> Line {
    if line.is_empty() {
        // Dispatch, unless no data came: then the event is reset.
        let kind = std::mem::take(event);
        let retry = retry.take();
        if !std::mem::take(has_data) {
            data.clear();
            return Line::Nothing;
        }
        let mut body = std::mem::take(data);
        if body.ends_with('\n') {
            body.pop();
        }
        return Line::Dispatch(SseEvent {
            event: if kind.is_empty() {
                "message".to_owned()
            } else {
                kind
            },
            data: body,
            id: last_id.clone(),
            retry,
        });
    }
    if let Some(comment) = line.strip_prefix(':') {
        return Line::Comment(comment.to_owned());
    }
    let (name, value) = match line.split_once(':') {
        Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
        None => (line, ""),
    };
    match name {
        "event" => value.clone_into(event),
        "data" => {
            data.push_str(value);
            data.push('\n');
            *has_data = true;
        }
        // An empty one resets the last event id: a reconnection then sends
        // none, not an empty `Last-Event-ID`.
        "id" if value.is_empty() => *last_id = None,
        "id" if !value.contains('\0') => *last_id = Some(value.to_owned()),
        "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
            *retry = value.parse().ok().map(Duration::from_millis);
        }
        _ => {}
    }
    Line::Nothing
}

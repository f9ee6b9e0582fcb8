// Return types written through aliases and paths, `?` converting errors,
// and hooks given by path.
use std::io;

use tenacious::{RetryEvent, retry};

type Fallible<T> = Result<T, io::Error>;

mod hooks {
    pub fn transient_only(error: &std::io::Error) -> bool {
        error.kind() != std::io::ErrorKind::PermissionDenied
    }

    pub fn log(error: &std::io::Error, event: &tenacious::RetryEvent) {
        let _ = (error, event);
    }
}

fn generic_log<E>(error: &E, event: &RetryEvent) {
    let _ = (error, event.attempt);
}

#[retry(when = hooks::transient_only, notify = hooks::log)]
fn read(path: &str) -> io::Result<String> {
    let text = std::fs::read_to_string(path)?;
    Ok(text)
}

#[retry(notify = generic_log)]
fn aliased() -> Fallible<u8> {
    Ok(1)
}

#[retry(notify = generic_log::<io::Error>)]
fn qualified() -> std::result::Result<u8, std::io::Error> {
    Ok(2)
}

fn main() {
    let _ = read("/nonexistent/path");
    assert_eq!(aliased().unwrap(), 1);
    assert_eq!(qualified().unwrap(), 2);
}

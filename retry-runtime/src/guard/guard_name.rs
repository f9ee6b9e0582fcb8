//! The names of shared guards: what a config declares them by, and what a
//! store binds them to (its Redis key holds the name in braces, as its
//! hash tag). One check for both, so each refuses what the other would.

/// The longest name of a shared guard: 200 bytes.
pub const MAX_BYTES: usize = 200;

/// Why a name cannot name a shared guard, after the name in both
/// `BindError::BadName` and the config reader's problem.
pub const REFUSED: &str = "cannot name a shared guard: 1 to 200 bytes, no braces (a store \
     keys the guard by its name, in braces as the key's hash tag)";

/// Whether `name` can name a shared guard: 1 to [`MAX_BYTES`] bytes, no
/// brace; else [`REFUSED`].
pub fn check(name: &str) -> Result<(), &'static str> {
    if name.is_empty() || name.len() > MAX_BYTES || name.contains(['{', '}']) {
        Err(REFUSED)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_1_to_200_bytes_without_braces() {
        assert_eq!(check("openai"), Ok(()));
        assert_eq!(check(&"a".repeat(200)), Ok(()));
        // 200 bytes of 2-byte characters: bytes are counted, not chars.
        assert_eq!(check(&"é".repeat(100)), Ok(()));
        assert_eq!(check(&"é".repeat(101)), Err(REFUSED));
        for bad in ["", "a{b", "a}b", "{a}"] {
            assert_eq!(check(bad), Err(REFUSED), "{bad:?}");
        }
        assert_eq!(check(&"a".repeat(201)), Err(REFUSED));
    }
}

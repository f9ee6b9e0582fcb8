//! `Classify` for the standard library's types: pointers to an error
//! (`&E`, `Box<E>`, `Arc<E>`, forwarding every method), `Infallible`,
//! and `std::io`'s errors by their kind.
use std::borrow::Cow;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use super::{Classify, ErrorClass};

/// `Classify` for a pointer to an error: every method forwards to the
/// error it points at. By hand, not through `Classify::inner`: the
/// pointee may be unsized (`Box<dyn Classify>`), and an unsized `E` does
/// not coerce to `&dyn Classify`.
macro_rules! forward_classify {
    ($($(#[$doc:meta])* $pointer:ty;)*) => {$(
        $(#[$doc])*
        impl<E: Classify + ?Sized> Classify for $pointer {
            fn classify(&self) -> ErrorClass {
                (**self).classify()
            }
            fn retry_after(&self) -> Option<Duration> {
                (**self).retry_after()
            }
            fn hint(&self) -> Option<Cow<'static, str>> {
                (**self).hint()
            }
            fn variant(&self) -> &'static str {
                (**self).variant()
            }
            fn signals(&self) -> crate::Signals {
                (**self).signals()
            }
            fn not_sent(&self) -> bool {
                (**self).not_sent()
            }
            fn limits(&self) -> crate::Limits {
                (**self).limits()
            }
            fn rejected(&self) -> Option<crate::Reject> {
                (**self).rejected()
            }
            fn inner(&self) -> Option<&dyn Classify> {
                (**self).inner()
            }
        }
    )*};
}

forward_classify! {
    /// Forwards every method to the referenced error.
    &E;
    /// Forwards every method to the boxed error.
    Box<E>;
    /// Forwards every method to the shared error.
    Arc<E>;
}

/// The error of what cannot fail (an axum `Router`, a `service_fn` that
/// returns `Ok`): there is none to classify, so a retried call of it
/// retries only what its result is checked for.
impl Classify for std::convert::Infallible {
    fn classify(&self) -> ErrorClass {
        match *self {}
    }
}

/// Classifies by [`io::ErrorKind`], as [`io::Error`]'s impl does; `variant()`
/// is the kind's name (`"TimedOut"`). The table is on the
/// [`io::Error` impl](#impl-Classify-for-Error).
impl Classify for io::ErrorKind {
    fn classify(&self) -> ErrorClass {
        io_kind_class(*self)
    }
    fn variant(&self) -> &'static str {
        io_kind_name(*self)
    }
    fn not_sent(&self) -> bool {
        io_kind_not_sent(*self)
    }
}

/// The kinds that say a connection was never made, so nothing was sent:
/// refused, no route, no network, no address to send from.
fn io_kind_not_sent(kind: io::ErrorKind) -> bool {
    use io::ErrorKind as K;
    matches!(
        kind,
        K::ConnectionRefused
            | K::HostUnreachable
            | K::NetworkUnreachable
            | K::NetworkDown
            | K::AddrNotAvailable
    )
}

/// Classifies an I/O error by its [`kind()`](io::Error::kind).
///
/// | class | kinds | why |
/// |---|---|---|
/// | `Transient` | `TimedOut`, `Interrupted`, `WouldBlock`, `ConnectionReset`, `ConnectionRefused`, `ConnectionAborted`, `NotConnected`, `BrokenPipe`, `UnexpectedEof`, `WriteZero`, `HostUnreachable`, `NetworkUnreachable`, `NetworkDown`, `ResourceBusy`, `ExecutableFileBusy`, `Deadlock`, `StaleNetworkFileHandle`, `OutOfMemory` | the peer, the network or the machine may be fine a moment later |
/// | `Transient` | `Other` and any kind not listed here | an unknown I/O failure is presumed to pass, as most do; `max` bounds the cost of being wrong |
/// | `Invalid` | `NotFound`, `AlreadyExists`, `InvalidInput`, `InvalidData`, `InvalidFilename`, `Unsupported`, `NotADirectory`, `IsADirectory`, `DirectoryNotEmpty`, `NotSeekable`, `FileTooLarge`, `CrossesDevices`, `TooManyLinks`, `ArgumentListTooLong` | the request names the wrong thing or asks the impossible: it fails the same way until it changes |
/// | `Fatal` | `PermissionDenied`, `AddrInUse`, `AddrNotAvailable`, `ReadOnlyFilesystem`, `StorageFull`, `QuotaExceeded` | permissions, configuration or capacity a human must fix |
///
/// `retry_after()` and `hint()` are `None`; `variant()` is the kind's name,
/// e.g. `"ConnectionReset"` (`"Other"` for kinds this crate does not know).
///
/// ```
/// use std::io;
/// use tenacious::{Classify, ErrorClass};
///
/// let reset = io::Error::from(io::ErrorKind::ConnectionReset);
/// assert_eq!(reset.classify(), ErrorClass::Transient);
/// assert_eq!(reset.variant(), "ConnectionReset");
///
/// let denied = io::Error::from(io::ErrorKind::PermissionDenied);
/// assert_eq!(denied.classify(), ErrorClass::Fatal);
/// ```
impl Classify for io::Error {
    fn classify(&self) -> ErrorClass {
        io_kind_class(self.kind())
    }
    /// An [`io::ErrorKind::Other`] error holding the [`Refused`](crate::Refused).
    fn refused() -> Option<fn(crate::Refused) -> Self> {
        Some(io::Error::other)
    }
    /// For one holding a [`Refused`](crate::Refused), its
    /// [`retry_in`](crate::Refused::retry_in).
    fn retry_after(&self) -> Option<Duration> {
        io_refused(self).and_then(crate::Refused::retry_in)
    }
    fn variant(&self) -> &'static str {
        io_kind_name(self.kind())
    }
    /// `ConnectionRefused`, `HostUnreachable`, `NetworkUnreachable`,
    /// `NetworkDown` and `AddrNotAvailable`: no connection was made; nor
    /// was one for an error holding a [`Refused`](crate::Refused).
    fn not_sent(&self) -> bool {
        io_kind_not_sent(self.kind()) || io_refused(self).is_some()
    }
}

/// The [`Refused`](crate::Refused) an `io::Error` holds, if it is one a
/// guard's refusal made.
fn io_refused(error: &io::Error) -> Option<&crate::Refused> {
    error.get_ref()?.downcast_ref::<crate::Refused>()
}

fn io_kind_class(kind: io::ErrorKind) -> ErrorClass {
    use io::ErrorKind as K;
    match kind {
        K::NotFound
        | K::AlreadyExists
        | K::InvalidInput
        | K::InvalidData
        | K::InvalidFilename
        | K::Unsupported
        | K::NotADirectory
        | K::IsADirectory
        | K::DirectoryNotEmpty
        | K::NotSeekable
        | K::FileTooLarge
        | K::CrossesDevices
        | K::TooManyLinks
        | K::ArgumentListTooLong => ErrorClass::Invalid,
        K::PermissionDenied
        | K::AddrInUse
        | K::AddrNotAvailable
        | K::ReadOnlyFilesystem
        | K::StorageFull
        | K::QuotaExceeded => ErrorClass::Fatal,
        // Listed kinds and unknown ones alike: see the table on the impl.
        _ => ErrorClass::Transient,
    }
}

// `Debug` would give the same names but formats into a `String`; the error
// distribution wants a `&'static str` that costs nothing.
fn io_kind_name(kind: io::ErrorKind) -> &'static str {
    use io::ErrorKind as K;
    match kind {
        K::NotFound => "NotFound",
        K::PermissionDenied => "PermissionDenied",
        K::ConnectionRefused => "ConnectionRefused",
        K::ConnectionReset => "ConnectionReset",
        K::HostUnreachable => "HostUnreachable",
        K::NetworkUnreachable => "NetworkUnreachable",
        K::ConnectionAborted => "ConnectionAborted",
        K::NotConnected => "NotConnected",
        K::AddrInUse => "AddrInUse",
        K::AddrNotAvailable => "AddrNotAvailable",
        K::NetworkDown => "NetworkDown",
        K::BrokenPipe => "BrokenPipe",
        K::AlreadyExists => "AlreadyExists",
        K::WouldBlock => "WouldBlock",
        K::NotADirectory => "NotADirectory",
        K::IsADirectory => "IsADirectory",
        K::DirectoryNotEmpty => "DirectoryNotEmpty",
        K::ReadOnlyFilesystem => "ReadOnlyFilesystem",
        K::StaleNetworkFileHandle => "StaleNetworkFileHandle",
        K::InvalidInput => "InvalidInput",
        K::InvalidData => "InvalidData",
        K::TimedOut => "TimedOut",
        K::WriteZero => "WriteZero",
        K::StorageFull => "StorageFull",
        K::NotSeekable => "NotSeekable",
        K::QuotaExceeded => "QuotaExceeded",
        K::FileTooLarge => "FileTooLarge",
        K::ResourceBusy => "ResourceBusy",
        K::ExecutableFileBusy => "ExecutableFileBusy",
        K::Deadlock => "Deadlock",
        K::CrossesDevices => "CrossesDevices",
        K::TooManyLinks => "TooManyLinks",
        K::InvalidFilename => "InvalidFilename",
        K::ArgumentListTooLong => "ArgumentListTooLong",
        K::Interrupted => "Interrupted",
        K::Unsupported => "Unsupported",
        K::UnexpectedEof => "UnexpectedEof",
        K::OutOfMemory => "OutOfMemory",
        // `Other`, and kinds newer than this crate or still unstable.
        _ => "Other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use io::ErrorKind as K;

    /// A wrapper that names what it wraps.
    #[derive(Debug)]
    struct Wrapper(io::Error);

    impl Classify for Wrapper {
        fn classify(&self) -> ErrorClass {
            ErrorClass::Fatal
        }
        fn inner(&self) -> Option<&dyn Classify> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_pointer_to_a_wrapper_names_its_inner_error_too() {
        let wrapper = Wrapper(io::Error::from(K::TimedOut));
        // A `&&Wrapper` answered `None` before: `inner` was not forwarded.
        let by_ref: &&Wrapper = &&wrapper;
        assert_eq!(by_ref.inner().map(Classify::variant), Some("TimedOut"));
        let boxed: Box<dyn Classify> = Box::new(Wrapper(io::Error::from(K::TimedOut)));
        assert_eq!(boxed.inner().map(Classify::variant), Some("TimedOut"));
        assert_eq!(
            Arc::new(wrapper).inner().map(Classify::variant),
            Some("TimedOut")
        );
    }

    #[test]
    fn io_table() {
        let expected = [
            (K::TimedOut, ErrorClass::Transient),
            (K::Interrupted, ErrorClass::Transient),
            (K::WouldBlock, ErrorClass::Transient),
            (K::ConnectionReset, ErrorClass::Transient),
            (K::ConnectionRefused, ErrorClass::Transient),
            (K::ConnectionAborted, ErrorClass::Transient),
            (K::NotConnected, ErrorClass::Transient),
            (K::BrokenPipe, ErrorClass::Transient),
            (K::UnexpectedEof, ErrorClass::Transient),
            (K::WriteZero, ErrorClass::Transient),
            (K::HostUnreachable, ErrorClass::Transient),
            (K::NetworkUnreachable, ErrorClass::Transient),
            (K::NetworkDown, ErrorClass::Transient),
            (K::ResourceBusy, ErrorClass::Transient),
            (K::ExecutableFileBusy, ErrorClass::Transient),
            (K::Deadlock, ErrorClass::Transient),
            (K::StaleNetworkFileHandle, ErrorClass::Transient),
            (K::OutOfMemory, ErrorClass::Transient),
            (K::Other, ErrorClass::Transient),
            (K::NotFound, ErrorClass::Invalid),
            (K::AlreadyExists, ErrorClass::Invalid),
            (K::InvalidInput, ErrorClass::Invalid),
            (K::InvalidData, ErrorClass::Invalid),
            (K::InvalidFilename, ErrorClass::Invalid),
            (K::Unsupported, ErrorClass::Invalid),
            (K::NotADirectory, ErrorClass::Invalid),
            (K::IsADirectory, ErrorClass::Invalid),
            (K::DirectoryNotEmpty, ErrorClass::Invalid),
            (K::NotSeekable, ErrorClass::Invalid),
            (K::FileTooLarge, ErrorClass::Invalid),
            (K::CrossesDevices, ErrorClass::Invalid),
            (K::TooManyLinks, ErrorClass::Invalid),
            (K::ArgumentListTooLong, ErrorClass::Invalid),
            (K::PermissionDenied, ErrorClass::Fatal),
            (K::AddrInUse, ErrorClass::Fatal),
            (K::AddrNotAvailable, ErrorClass::Fatal),
            (K::ReadOnlyFilesystem, ErrorClass::Fatal),
            (K::StorageFull, ErrorClass::Fatal),
            (K::QuotaExceeded, ErrorClass::Fatal),
        ];
        for (kind, class) in expected {
            let error = io::Error::new(kind, "boom");
            assert_eq!(error.classify(), class, "{kind:?}");
            assert_eq!(kind.classify(), class, "{kind:?}");
            assert_eq!(error.retry_after(), None);
            assert!(error.hint().is_none());
            // The hand-written names must match the kinds' own.
            assert_eq!(error.variant(), format!("{kind:?}"));
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn an_io_error_from_the_os_is_classified_by_its_kind() {
        // 104 is ECONNRESET, 5 is EIO (which std leaves uncategorized).
        let reset = io::Error::from_raw_os_error(104);
        assert_eq!(reset.classify(), ErrorClass::Transient);
        assert_eq!(reset.variant(), "ConnectionReset");
        let eio = io::Error::from_raw_os_error(5);
        assert_eq!(eio.classify(), ErrorClass::Transient);
        assert_eq!(eio.variant(), "Other");
    }
}

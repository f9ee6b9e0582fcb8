use std::io;
use tenacious::{Classify, ErrorClass};

#[derive(Debug, Classify)]
enum StoreError {
    #[classify(transparent)]
    Io(io::Error),
    #[classify(transparent)]
    Named { source: Box<io::Error> },
}

fn main() {
    let reset = StoreError::Io(io::ErrorKind::ConnectionReset.into());
    assert_eq!(reset.classify(), ErrorClass::Transient);
    assert_eq!(reset.variant(), "ConnectionReset");
    let denied = StoreError::Named {
        source: Box::new(io::ErrorKind::PermissionDenied.into()),
    };
    assert_eq!(denied.classify(), ErrorClass::Fatal);
}

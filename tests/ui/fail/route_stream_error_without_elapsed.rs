// A routed stream's timers (first item, idle) end an attempt with
// `E::from(Elapsed)`: an error without it is refused where the stream is
// opened.
use futures_util::stream;
use tenacious::route::Route;
use tenacious::{Classify, ErrorClass};

#[derive(Debug)]
struct Cut;

impl Classify for Cut {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn open(route: &Route<()>) {
    let _stream = route.stream(|_, _| async {
        Ok::<_, Cut>(stream::iter(vec![Ok::<String, Cut>("a".to_owned())]))
    });
}

fn main() {
    let _ = open;
}

// A request with a streaming body cannot be sent again: handing the
// retried stack on as a service of such requests says so, and how to
// buffer the body.
use std::convert::Infallible;
use std::future::{Ready, ready};
use std::task::{Context, Poll};

use axum::body::Body;
use http::{Request, Response};
use tenacious::Policy;
use tenacious::tower::RetryLayer;
use tower::util::BoxCloneService;
use tower::{Service, ServiceBuilder};

static POLICY: Policy = Policy::new();

#[derive(Clone)]
struct Upstream;

impl Service<Request<Body>> for Upstream {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Ready<Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        ready(Ok(Response::new(request.into_body())))
    }
}

fn main() {
    let client = ServiceBuilder::new()
        .layer(RetryLayer::new(&POLICY))
        .service(Upstream);
    let _ = BoxCloneService::new(client);
}

//! A store's connection, to one server or to a cluster.
use ::redis as rs;

/// A store's connection: to one server (redis-rs's connection manager,
/// which reconnects), or to a cluster.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(rs::aio::ConnectionManager),
    Cluster(rs::cluster_async::ClusterConnection),
}

impl rs::aio::ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a rs::Cmd) -> rs::RedisFuture<'a, rs::Value> {
        match self {
            Self::Single(conn) => conn.req_packed_command(cmd),
            Self::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a rs::Pipeline,
        offset: usize,
        count: usize,
    ) -> rs::RedisFuture<'a, Vec<rs::Value>> {
        match self {
            Self::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Self::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(conn) => conn.get_db(),
            Self::Cluster(conn) => conn.get_db(),
        }
    }
}

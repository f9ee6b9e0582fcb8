//! A `redis-server` of a test's own, on a free loopback port: started,
//! killed, restarted empty, paused, and stopped when dropped.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `redis-server` on 127.0.0.1, with no persistence.
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
    /// Arguments beyond the defaults (a cluster node's).
    extra: Vec<String>,
}

const MISSING: &str = "redis-server is not installed: the Redis tests start their own. \
     Install it with `apt-get install -y redis-server` (`.ci/run` does), or see the README, \
     \"Tests that need a server\"";

impl RedisServer {
    /// Starts one on a free port, and waits (at most 5 s) for it to answer.
    pub fn start() -> Self {
        let port = free_port();
        let mut server = Self {
            port,
            child: None,
            extra: Vec::new(),
        };
        server.spawn();
        server
    }

    /// Starts one on `port` (a port a test kept free, where a store was
    /// told to connect before any server listened), and waits (at most
    /// 5 s) for it to answer.
    pub fn start_on(port: u16) -> Self {
        let mut server = Self {
            port,
            child: None,
            extra: Vec::new(),
        };
        server.spawn();
        server
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--enable-debug-command",
                "yes",
                "--protected-mode",
                "no",
            ])
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("{MISSING} ({error})"));
        self.child = Some(child);
        for _ in 0..500 {
            if self
                .command(&["PING"])
                .is_some_and(|reply| reply.starts_with("+PONG"))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!(
            "redis-server on port {} did not answer within 5 s",
            self.port
        );
    }

    /// Kills it (SIGKILL): every connection drops, nothing is kept.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, empty.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Stops the process (SIGSTOP): connections stay open, nothing answers.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("running").id();
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {pid}");
    }

    /// Sends one command in RESP and returns the raw reply, or `None` when
    /// the server does not answer within a second. A bulk string is read
    /// whole (`INFO`'s may come in more than one read).
    pub fn command(&self, args: &[&str]) -> Option<String> {
        let mut stream = self.send(args)?;
        stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
        let mut reply = Vec::new();
        let mut chunk = vec![0; 4096];
        loop {
            let n = stream.read(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&chunk[..n]);
            if !incomplete_bulk(&reply) {
                break;
            }
        }
        (!reply.is_empty()).then(|| String::from_utf8_lossy(&reply).into_owned())
    }

    /// Sends one command in RESP on a connection of its own and returns
    /// that connection, its reply unread: for a command the server takes
    /// its time over (`DEBUG SLEEP`), which runs even if it is dropped.
    pub fn send(&self, args: &[&str]) -> Option<TcpStream> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        let mut request = format!("*{}\r\n", args.len());
        for arg in args {
            request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        stream.write_all(request.as_bytes()).ok()?;
        Some(stream)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if self.child.is_some() {
            // A paused server would not die of SIGTERM; SIGKILL always does.
            self.kill();
        }
    }
}

/// Whether `reply` is the start of a bulk string (`$N\r\n…\r\n`) not all
/// read yet.
fn incomplete_bulk(reply: &[u8]) -> bool {
    let Some(header) = reply.strip_prefix(b"$") else {
        return false;
    };
    let Some(end) = header.windows(2).position(|w| w == b"\r\n") else {
        return true;
    };
    let Some(len) = std::str::from_utf8(&header[..end])
        .ok()
        .and_then(|len| len.parse::<usize>().ok())
    else {
        // `$-1`: a nil.
        return false;
    };
    header.len() < end + 2 + len + 2
}

/// A Redis Cluster of three masters on free loopback ports (no replicas),
/// created with `redis-cli --cluster create`, its slots all served.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
    dir: std::path::PathBuf,
}

impl RedisCluster {
    pub fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("tenacious-cluster-{}", free_port()));
        std::fs::create_dir_all(&dir).expect("a directory for the nodes' files");
        let nodes: Vec<RedisServer> = (0..3)
            .map(|_| {
                let port = free_port();
                let mut node = RedisServer {
                    port,
                    child: None,
                    extra: vec![
                        "--cluster-enabled".into(),
                        "yes".into(),
                        "--cluster-config-file".into(),
                        dir.join(format!("nodes-{port}.conf")).display().to_string(),
                        "--dir".into(),
                        dir.display().to_string(),
                    ],
                };
                node.spawn();
                node
            })
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|error| panic!("redis-cli (it comes with redis-server): {error}"));
        assert!(status.success(), "redis-cli --cluster create failed");
        for _ in 0..500 {
            if nodes.iter().all(|node| {
                node.command(&["CLUSTER", "INFO"])
                    .is_some_and(|info| info.contains("cluster_state:ok"))
            }) {
                return Self { nodes, dir };
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the cluster's state was not ok within 5 s");
    }

    /// The nodes' URLs.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port free on 127.0.0.1 now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free loopback port")
}

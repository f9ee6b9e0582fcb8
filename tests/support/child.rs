//! A process of a test's fleet: the test binary run again with one test
//! (`--exact NAME`), told its part by an environment variable. It prints
//! `READY` once set up, starts when told `go` on its stdin, and prints one
//! line of counts, which `parse` reads. Killed if still running when
//! dropped (the parent panicked). Shared by `tests/redis_fleet.rs` and
//! `tests/redis_concurrency.rs`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A child process and the lines it printed.
pub struct Proc<C> {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    parse: fn(&str) -> Option<C>,
    result: Option<C>,
}

impl<C: Copy> Proc<C> {
    /// Runs this binary's test `test` with `var=spec`, its counts read by
    /// `parse`.
    pub fn spawn(test: &str, var: &str, spec: &str, parse: fn(&str) -> Option<C>) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--nocapture", "--test-threads", "1"])
            .env(var, spec)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the test binary runs again");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
            parse,
            result: None,
        }
    }

    /// Whether it printed `READY` (reading what came so far).
    pub fn ready(&mut self) -> bool {
        let mut ready = false;
        while let Ok(line) = self.lines.try_recv() {
            // After libtest's `test NAME ... `, on its line.
            ready |= line.ends_with("READY");
            self.read(&line);
        }
        ready
    }

    fn read(&mut self, line: &str) {
        if let Some(counts) = (self.parse)(line) {
            self.result = Some(counts);
        }
    }

    /// Tells it to start.
    pub fn go(&mut self) {
        let mut stdin = self.stdin.take().expect("go once");
        stdin.write_all(b"go\n").unwrap();
    }

    /// Its counts, once it exited: `None` while it runs.
    pub fn finished(&mut self) -> Option<C> {
        let status = self.child.try_wait().unwrap()?;
        assert!(status.success(), "a child failed: {status}");
        // What it printed before exiting: the pipe closes with it.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.read(&line);
        }
        Some(self.result.expect("the child printed its counts"))
    }

    /// SIGKILL: no destructor runs in it.
    pub fn kill9(&mut self) {
        self.child.kill().unwrap();
        let _ = self.child.wait();
    }
}

impl<C> Drop for Proc<C> {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

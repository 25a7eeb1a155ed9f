//! A running `iogauge canary` for tests: its JSON lines and stderr lines gathered as they come,
//! its HTTP address, plain HTTP requests to it, and its end by a signal.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Canary {
    pub child: Child,
    pub docs: Arc<Mutex<Vec<Value>>>,
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Canary {
    /// `iogauge canary ARGS --format json` started (its stdout and stderr piped).
    pub fn start(args: &[&str]) -> Canary {
        let child = super::cmd(super::IOGAUGE)
            .arg("canary")
            .args(args)
            .args(["--format", "json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        Canary::watch(child)
    }

    /// Gathers a started canary's output (stdout and stderr must be piped).
    pub fn watch(mut child: Child) -> Canary {
        let docs = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let d = docs.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                d.lock().unwrap().push(v);
            }
        });
        let e = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                e.lock().unwrap().push(line);
            }
        });
        Canary {
            child,
            docs,
            stderr,
        }
    }

    /// Waits until `pred` holds for the documents so far; panics with stderr after `limit`.
    pub fn wait_docs(&self, limit: Duration, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let end = Instant::now() + limit;
        loop {
            let docs = self.docs.lock().unwrap().clone();
            if pred(&docs) {
                return docs;
            }
            assert!(
                Instant::now() < end,
                "the canary's documents never met the condition in {limit:?}; {} documents; stderr:\n{}",
                docs.len(),
                self.stderr.lock().unwrap().join("\n")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The address from the "serving http://ADDR/metrics" line.
    pub fn addr(&self) -> String {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(a) = self.stderr.lock().unwrap().iter().find_map(|l| {
                l.strip_prefix("iogauge canary: serving http://")
                    .and_then(|r| r.strip_suffix("/metrics and /healthz"))
                    .map(str::to_string)
            }) {
                return a;
            }
            assert!(Instant::now() < end, "no serving line");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends `sig` and waits for the end.
    pub fn stop(&mut self, sig: i32) -> ExitStatus {
        // SAFETY: kill with a pid of a child we own.
        unsafe { libc::kill(self.child.id() as i32, sig) };
        let status = self.child.wait().unwrap();
        // Let the readers take the last lines.
        std::thread::sleep(Duration::from_millis(200));
        status
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GET `path` from `addr` with an optional Accept header: (status line, head, body); all
/// empty when nothing answers there (yet).
pub fn http_get(addr: &str, path: &str, accept: Option<&str>) -> (String, String, String) {
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return Default::default();
    };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    let sent = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{accept}\r\n"
    );
    let mut text = String::new();
    if sent.is_err() || s.read_to_string(&mut text).is_err() {
        return Default::default();
    }
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return Default::default();
    };
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, head.to_string(), body.to_string())
}

/// The value of the sample `name{labels…}` whose labels include all of `want`.
pub fn sample(exposition: &str, name: &str, want: &[(&str, &str)]) -> Option<f64> {
    exposition.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?.strip_prefix('{')?;
        let (labels, value) = rest.rsplit_once("} ")?;
        want.iter()
            .all(|(k, v)| labels.contains(&format!("{k}=\"{v}\"")))
            .then(|| value.parse().ok())?
    })
}

//! `--listen`: `/metrics` (the latest document as a Prometheus exposition) and `/healthz` over
//! plain HTTP/1.1, one short-lived thread per connection. Scrapers are the only clients, so
//! the server is small and bounded: requests up to 8 KiB, 5 s to send one whole (a client that
//! trickles bytes is cut off at that deadline), at most 16 at once (more get 503 at once), GET
//! and HEAD only, every answer closes its connection.

use crate::report::document::CanaryDocument;
use crate::report::openmetrics::{render_openmetrics, Flavour, OPENMETRICS_TYPE, TEXT_TYPE};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest request head read.
const MAX_REQUEST: usize = 8192;
/// Time a client has to send its request, and to read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 16;

/// What the server answers from: the latest document and when the canary last finished a cycle.
#[derive(Debug)]
pub(crate) struct Latest {
    pub doc: Option<CanaryDocument>,
    /// When the latest cycle ended (or the canary started).
    pub at: Instant,
    /// The interval in use: healthy while the latest cycle ended less than 3 of them ago.
    pub interval: Duration,
}

pub(crate) type Shared = Arc<Mutex<Latest>>;

/// Binds `addr` and serves from `latest` on a thread of its own. Err: the line for the user.
pub(crate) fn start(addr: &str, latest: Shared) -> Result<std::net::SocketAddr, String> {
    let listener = TcpListener::bind(addr).map_err(|e| {
        format!("--listen {addr}: cannot listen there ({e}); choose another address or port, or --listen none")
    })?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("--listen {addr}: {e}"))?;
    let busy = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("canary-http".into())
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else {
                    // Out of descriptors (EMFILE) fails every accept until one closes: wait
                    // rather than spin.
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                };
                // Over the cap, a few more connections are answered 503 (after their request,
                // so that the answer is not lost to a reset); past those they are closed.
                let (slot, full) = match Slot::take(&busy, MAX_CONNECTIONS) {
                    Some(slot) => (slot, false),
                    None => match Slot::take(&refusing, MAX_CONNECTIONS) {
                        Some(slot) => (slot, true),
                        None => continue,
                    },
                };
                let latest = latest.clone();
                // A failed spawn drops the slot with the closure.
                let _ = std::thread::Builder::new()
                    .name("canary-conn".into())
                    .spawn(move || {
                        let _slot = slot;
                        if full {
                            refuse(conn);
                        } else {
                            serve(conn, &latest);
                        }
                    });
            }
        })
        .map_err(|e| format!("--listen {addr}: cannot start its thread: {e}"))?;
    Ok(local)
}

/// One of the [`MAX_CONNECTIONS`] places, given back when dropped (also by a panic).
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(busy: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
        if busy.fetch_add(1, Ordering::AcqRel) >= max {
            busy.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Slot(busy.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Reads the request head (up to its blank line), within the limits: [`IO_TIMEOUT`] for the
/// whole head, however slowly its bytes come.
fn read_head(conn: &mut TcpStream) -> Option<String> {
    let deadline = Instant::now() + IO_TIMEOUT;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && !buf.windows(2).any(|w| w == b"\n\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        conn.set_read_timeout(Some(left)).ok()?;
        let n = conn.read(&mut chunk).ok()?;
        if n == 0 || buf.len() + n > MAX_REQUEST {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8(buf).ok()
}

/// 503 to a connection over the cap, once its request is read (or its time is up).
fn refuse(mut conn: TcpStream) {
    let _ = conn.set_write_timeout(Some(IO_TIMEOUT));
    let _ = read_head(&mut conn);
    let _ = answer(
        &mut conn,
        false,
        "503 Service Unavailable",
        TEXT_TYPE,
        "busy: try again\n",
    );
}

fn serve(mut conn: TcpStream, latest: &Shared) {
    let _ = conn.set_read_timeout(Some(IO_TIMEOUT));
    let _ = conn.set_write_timeout(Some(IO_TIMEOUT));
    let Some(head) = read_head(&mut conn) else {
        let _ = answer(
            &mut conn,
            false,
            "400 Bad Request",
            TEXT_TYPE,
            "bad request\n",
        );
        return;
    };
    let mut words = head.lines().next().unwrap_or_default().split_whitespace();
    let (method, target) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        let _ = answer(
            &mut conn,
            false,
            "405 Method Not Allowed",
            TEXT_TYPE,
            "GET or HEAD only\n",
        );
        return;
    }
    let path = target.split('?').next().unwrap_or_default();
    let openmetrics = head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("accept:") && l.contains("application/openmetrics-text")
    });
    let (status, kind, body) = match path {
        "/metrics" => metrics(latest, openmetrics),
        "/healthz" => health(latest),
        "/" => (
            "200 OK",
            TEXT_TYPE,
            "iogauge canary: /metrics (Prometheus), /healthz\n".to_string(),
        ),
        _ => (
            "404 Not Found",
            TEXT_TYPE,
            "not found: try /metrics or /healthz\n".into(),
        ),
    };
    let _ = answer(&mut conn, head_only, status, kind, &body);
}

fn metrics(latest: &Shared, openmetrics: bool) -> (&'static str, &'static str, String) {
    let flavour = if openmetrics {
        Flavour::OpenMetrics
    } else {
        Flavour::Text
    };
    let kind = if openmetrics {
        OPENMETRICS_TYPE
    } else {
        TEXT_TYPE
    };
    // A poisoned lock only means a publisher panicked mid-update: the document is still whole.
    let l = latest.lock().unwrap_or_else(|e| e.into_inner());
    match &l.doc {
        Some(d) => ("200 OK", kind, render_openmetrics(d, flavour)),
        // Before the first cycle ends there is nothing to judge yet: an empty exposition is
        // what Prometheus reads as "no series", not an error.
        None => (
            "200 OK",
            kind,
            if openmetrics {
                "# EOF\n".into()
            } else {
                String::new()
            },
        ),
    }
}

/// Healthy while the latest cycle ended less than three intervals ago.
fn health(latest: &Shared) -> (&'static str, &'static str, String) {
    let l = latest.lock().unwrap_or_else(|e| e.into_inner());
    let age = l.at.elapsed();
    if age < l.interval.saturating_mul(3) {
        ("200 OK", TEXT_TYPE, "ok\n".into())
    } else {
        (
            "503 Service Unavailable",
            TEXT_TYPE,
            format!(
                "stale: the last probe cycle ended {:.0} s ago, more than 3 intervals of {:.0} s\n",
                age.as_secs_f64(),
                l.interval.as_secs_f64()
            ),
        )
    }
}

fn answer(
    conn: &mut TcpStream,
    head_only: bool,
    status: &str,
    kind: &str,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes())?;
    if !head_only {
        conn.write_all(body.as_bytes())?;
    }
    conn.flush()
}

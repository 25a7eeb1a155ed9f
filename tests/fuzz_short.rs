//! The short fuzz run CI does on every change (bench/fuzz.sh runs the long one): every target,
//! fed mutations of its corpus in fuzz/corpus/, must never panic.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use iogauge::fuzz::{corpus, fuzz, TARGETS};
use std::path::Path;
use std::time::Duration;

#[test]
fn no_parser_panics_on_mutated_input() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    // A fixed seed keeps CI repeatable; IOGAUGE_FUZZ_SEED explores elsewhere.
    let seed = std::env::var("IOGAUGE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261123);
    let mut found = Vec::new();
    for t in TARGETS {
        let c = corpus(&root, t).unwrap();
        assert!(!c.is_empty(), "fuzz/corpus/{} is empty", t.name);
        let o = fuzz(t, &c, 3_000, Duration::from_secs(20), seed);
        assert!(o.execs > 0);
        for (msg, (n, input)) in &o.panics {
            found.push(format!(
                "{}: {n} × {msg}\n  input: {:?}",
                t.name,
                String::from_utf8_lossy(input)
            ));
        }
    }
    assert!(found.is_empty(), "seed {seed}:\n{}", found.join("\n"));
}

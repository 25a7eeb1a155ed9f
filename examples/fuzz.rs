//! The fuzzer: `cargo run --release --example fuzz -- [TARGET|all] [--execs N] [--seconds S]
//! [--seed N]`. Feeds each target mutated inputs from `fuzz/corpus/<target>/`, reports executions
//! and panics per target, writes each panicking input to `fuzz/crashes/<target>/`, and exits 1
//! if anything panicked. This is the stable-Rust, coverage-blind fuzzer (no nightly needed);
//! the coverage-guided long run with time and memory limits is cargo fuzz's (bench/fuzz.sh,
//! docs/FUZZING.md).

use iogauge::fuzz::{corpus, fuzz, TARGETS};
use std::path::Path;
use std::time::Duration;

fn main() {
    let mut which = "all".to_string();
    let mut execs: u64 = 100_000;
    let mut seconds: u64 = 3600;
    let mut seed: u64 = 0x1234_5678;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> u64 {
            args.next()
                .and_then(|v| v.replace('_', "").parse().ok())
                .unwrap_or_else(|| {
                    eprintln!("fuzz: {name} needs a whole number");
                    std::process::exit(2)
                })
        };
        match a.as_str() {
            "--execs" => execs = num("--execs"),
            "--seconds" => seconds = num("--seconds"),
            "--seed" => seed = num("--seed"),
            "--list" => {
                for t in TARGETS {
                    println!("{:<18} {}", t.name, t.about);
                }
                return;
            }
            t if !t.starts_with('-') => which = t.to_string(),
            _ => {
                eprintln!("fuzz: unknown flag {a}; usage: fuzz [TARGET|all] [--execs N] [--seconds S] [--seed N] [--list]");
                std::process::exit(2)
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let targets: Vec<_> = TARGETS
        .iter()
        .filter(|t| which == "all" || t.name == which)
        .collect();
    if targets.is_empty() {
        eprintln!("fuzz: no target '{which}'; --list shows them");
        std::process::exit(2);
    }
    println!(
        "{:<18} {:>12} {:>10} {:>8} {:>8} {:>7} {:>10}",
        "target", "execs", "execs/s", "corpus", "panics", "unique", "slowest"
    );
    let (mut total, mut panics) = (0u64, 0u64);
    for t in targets {
        let c = corpus(&root.join("corpus"), t).unwrap_or_else(|e| {
            eprintln!("fuzz: {}: no corpus in fuzz/corpus/{}: {e}", t.name, t.name);
            std::process::exit(2)
        });
        let o = fuzz(t, &c, execs, Duration::from_secs(seconds), seed);
        let rate = o.execs as f64 / o.elapsed.as_secs_f64().max(1e-9);
        println!(
            "{:<18} {:>12} {:>10.0} {:>8} {:>8} {:>7} {:>8.3} s",
            t.name,
            o.execs,
            rate,
            c.len(),
            o.panic_count(),
            o.panics.len(),
            o.slowest.0.as_secs_f64()
        );
        for (i, (msg, (n, input))) in o.panics.iter().enumerate() {
            let dir = root.join("crashes").join(t.name);
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("crash-{seed}-{i}"));
            let _ = std::fs::write(&path, input);
            eprintln!("  {n} × {msg}\n    first input: {}", path.display());
        }
        // libFuzzer's -timeout in bench/fuzz.sh: an input slower than that is a finding too.
        if o.slowest.0 > Duration::from_secs(5) {
            let dir = root.join("crashes").join(t.name);
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("slow-{seed}"));
            let _ = std::fs::write(&path, &o.slowest.1);
            eprintln!("  slowest input ({:?}): {}", o.slowest.0, path.display());
        }
        total += o.execs;
        panics += o.panic_count();
    }
    println!("total: {total} executions, {panics} panics");
    if panics > 0 {
        std::process::exit(1);
    }
}

//! The integration tests, as one test binary (ripgrep's layout): each former `tests/NAME.rs` is
//! a module here, and `tests/common` is compiled once, so an edit in `src/` relinks one binary
//! instead of forty. Run one file's tests with `cargo test --test tests NAME::`.
//!
//! All of them run in one process, two at a time on a 2-core machine (libtest's threads): a test
//! that is disk- or time-sensitive or uses a host-wide resource calls `common::serial()` (fio
//! cross-checks do through `common::have_fio()`, loop devices through `common::loopfs`).
//! Two files stay binaries of their own (Cargo.toml), because cargo runs test binaries one after
//! another: tests/io_uring_disabled.rs flips a host-wide sysctl that every io_uring run in this
//! process would see, and tests/fuzz_short.rs swaps the process-wide panic hook.

// Tests unwrap: a failure is the test failing (tests/common too; each file also says so).
#![allow(clippy::unwrap_used)]

mod common;

mod architecture;
mod bad_input;
mod broken_pipe;
mod canary;
mod canary_rules;
mod check_sequential;
mod cli_check;
mod cli_compare;
mod cli_device;
mod cli_fio;
mod cli_preflight;
mod crosscheck_buffered;
mod crosscheck_disk;
mod crosscheck_samples;
mod crosscheck_verify;
mod documents;
mod engine_async;
mod engine_runs;
mod exit_codes;
mod fake_kube;
mod faults;
mod fdtable;
mod fio_breadth_blocks;
mod fio_breadth_engines;
mod fio_breadth_files;
mod fio_breadth_host;
mod fio_breadth_io;
mod fio_breadth_io_host;
mod fio_breadth_iolog;
mod fio_breadth_latency;
mod fio_breadth_logs;
mod fio_breadth_opts;
mod fio_breadth_output;
mod fio_breadth_stats;
mod fio_breadth_timing;
mod fio_breadth_verify;
mod fio_crosscheck;
mod fio_dir_engines;
mod fio_regress;
mod history;
mod html_report;
mod interrupts;
mod intervals;
mod kube_canary;
mod kube_canary_install;
mod kube_canary_manifests;
mod kube_canary_status;
mod kube_disruption;
mod kube_e2e;
mod kube_edges;
mod kube_fleet;
mod kube_flow;
mod kube_identity;
mod kube_image;
mod kube_image_auth;
mod kube_image_registry;
mod kube_image_use;
mod kube_manifests;
mod kube_pending;
mod kube_preflight;
mod kube_results;
mod kube_stops;
mod kube_transport;
mod kube_workloads;
mod newcomer_check;
mod newcomer_compare;
mod newcomer_fio;
mod preflight_sequential;
mod readme_examples;
mod report_consistency;
mod security_documents;
mod security_files;
mod security_history;
mod security_input;
mod security_output;
mod sigkill;

/// With `autotests = false` cargo compiles only what Cargo.toml names: a file of tests/ that is
/// neither a module here nor a [[test]] of its own would silently never run.
#[test]
fn every_file_of_tests_is_a_module_here_or_a_test_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let here = std::fs::read_to_string(root.join("tests/tests.rs")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(root.join("tests")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        let module = here.lines().any(|l| l == format!("mod {stem};"));
        let binary = manifest.contains(&format!("path = \"tests/{name}\""));
        if name != "tests.rs" && module == binary {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "each of {missing:?} must be a `mod` line in tests/tests.rs or (not both) a [[test]] in \
         Cargo.toml"
    );
}

//! The options of fio's built-in profiles (`tiobench`, `act`), which fio 3.33 registers for
//! every job: a plain job that sets one (fio's own examples write `threads=1`) runs as if it
//! had not. iogauge accepts them the same way, checks their values as fio does, and ignores
//! them; `input/fio` notes each one in the results. (`profile=` itself is refused.)

use super::Opt;
use crate::model::units::{parse_bool, parse_int, parse_time, TimeUnit};

/// Their names, for the note.
pub(in crate::input::fio) const NAMES: [&str; 11] = [
    "block",
    "numruns",
    "dir",
    "threads",
    "device-names",
    "load",
    "test-duration",
    "threads-per-queue",
    "read-req-num-512-blocks",
    "large-block-op-kbytes",
    "prep",
];

fn int(_: &mut crate::model::JobSpec, v: &str) -> Result<(), String> {
    parse_int(v).map(|_| ())
}

pub(super) static OPTIONS: &[Opt] = &[
    opt!("block", [], false, "tiobench profile's block size: accepted and ignored outside profile=tiobench, as fio 3.33 does", int),
    opt!("numruns", [], false, "tiobench profile's number of runs: accepted and ignored, as fio 3.33 does", int),
    opt!("dir", [], false, "tiobench profile's directory: accepted and ignored, as fio 3.33 does (directory= is the job option)", |_, _| Ok(())),
    opt!("threads", [], false, "tiobench profile's thread count: accepted and ignored, as fio 3.33 does (numjobs= is the job option)", int),
    opt!("device-names", [], false, "act profile's devices: accepted and ignored outside profile=act, as fio 3.33 does", |_, _| Ok(())),
    opt!("load", [], false, "act profile's load: accepted and ignored, as fio 3.33 does", int),
    opt!("test-duration", [], false, "act profile's duration: accepted and ignored, as fio 3.33 does", |_, v| {
        parse_time(v, TimeUnit::Seconds).map(|_| ())
    }),
    opt!("threads-per-queue", [], false, "act profile's threads per queue: accepted and ignored, as fio 3.33 does", int),
    opt!("read-req-num-512-blocks", [], false, "act profile's read size: accepted and ignored, as fio 3.33 does", int),
    opt!("large-block-op-kbytes", [], false, "act profile's large block size: accepted and ignored, as fio 3.33 does", int),
    opt!("prep", [], true, "act profile's prep flag: accepted and ignored, as fio 3.33 does", |_, v| {
        parse_bool(v).map(|_| ())
    }),
];

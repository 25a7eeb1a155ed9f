//! The loop of fio's `cpuio` engine: no I/O, CPU burnt in cycles, as fio's engines/cpu.c. Each
//! cycle is one "I/O" of 0 bytes in the job's direction (its time recorded as completion
//! latency, as fio does), followed by a sleep that makes the busy share `cpuload` percent:
//! cycle × (100 − cpuload) / cpuload. `cpumode=noop` spins on the clock for `cpuchunks` µs;
//! `cpumode=qsort` sorts 256 Ki integers four ways (ascending, descending, by byte, descending)
//! and the next sleep follows from how long that took. The job ends at its runtime, when stopped,
//! or (exit_on_io_done, run as a background job) when the phase's other jobs are done.
//!
//! Differs from fio on purpose: fio prints "NAME (noop): ioengine=cpuio, cpuload=…" on stdout at
//! start (which also precedes its JSON); iogauge prints nothing.

use super::clock::{now_ns, sleep_until};
use super::instance::{wait_for_start, Published, Timeline, WorkerInput, WorkerResult};
use crate::model::{CpuMode, RwKind, DDIR_READ, DDIR_WRITE};
use crate::workload::rng::Rng;
use std::sync::atomic::{AtomicBool, Ordering};

/// Integers fio's qsort mode sorts (256 Ki).
const QSORT_LEN: usize = 256 << 10;

/// Run one instance of a cpuio job.
pub(crate) fn run_cpuio_worker(
    input: &WorkerInput,
    published: &Published,
    stop: &AtomicBool,
    start_ns: u64,
    sample_budget: usize,
) -> WorkerResult {
    let job = &input.job;
    let e = &job.engines;
    let mut res = WorkerResult::new(sample_budget, false, job);
    let load = e.cpuload.clamp(1, 100) as u64;
    let mut cycle_ns = e.cpuchunks as u64 * 1000;
    // fio's qsort data: 256 Ki integers from its multiply-with-carry generator, made once.
    let mut data: Vec<i32> = match e.cpumode {
        CpuMode::Qsort => {
            let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
            (0..QSORT_LEN)
                .map(|_| {
                    z = 36969u32.wrapping_mul(z & 65535).wrapping_add(z >> 16);
                    w = 18000u32.wrapping_mul(w & 65535).wrapping_add(w >> 16);
                    (z << 16).wrapping_add(w) as i32
                })
                .collect()
        }
        CpuMode::Noop => Vec::new(),
    };
    wait_for_start(start_ns, job);
    let mut rng = Rng::new(input.seed);
    let timed = job.timed();
    let mut tl = Timeline::begin(job, published, &mut res);
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let dir = match job.rw.kind {
            RwKind::Write => DDIR_WRITE,
            RwKind::ReadWrite if rng.below(100) >= job.rwmixread as u64 => DDIR_WRITE,
            _ => DDIR_READ,
        };
        let t0 = now_ns();
        match e.cpumode {
            CpuMode::Noop => {
                let end = t0 + cycle_ns;
                while now_ns() < end {
                    std::hint::spin_loop();
                }
            }
            CpuMode::Qsort => qsort_cycle(&mut data),
        }
        let t1 = now_ns();
        if e.cpumode == CpuMode::Qsort {
            cycle_ns = t1 - t0;
        }
        if timed {
            res.tick(t1);
            res.clat[dir].record(t1 - t0);
        }
        res.ios[dir] += 1;
        published.ios[dir].store(res.ios[dir], Ordering::Relaxed);
        if tl.ramp_over(t1, &mut res, published) {
            continue;
        }
        if t1 >= tl.deadline {
            break;
        }
        // The think time that makes the load, in slices so that a stop is noticed.
        let wake = (t1 + cycle_ns * (100 - load) / load).min(tl.deadline);
        loop {
            let now = now_ns();
            if now >= wake || stop.load(Ordering::Relaxed) {
                break;
            }
            sleep_until(wake.min(now + 100_000_000));
        }
        if now_ns() >= tl.deadline {
            break;
        }
    }
    let end = tl.finish(&mut res, input, |_| Ok(()));
    Timeline::done(published, end, &mut res);
    res
}

/// fio's do_qsort: sort ascending, descending, by byte value, descending again.
fn qsort_cycle(data: &mut [i32]) {
    data.sort_unstable();
    data.sort_unstable_by(|a, b| b.cmp(a));
    // SAFETY: the i32 slice viewed as its bytes: same allocation, 4× the length, no padding.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<i8>(), data.len() * 4) };
    bytes.sort_unstable();
    data.sort_unstable_by(|a, b| b.cmp(a));
}

//! A trim in the queueing loop: fio's queueing engines trim synchronously once nothing is in
//! flight (FIO_ASYNCIO_SYNC_TRIM); the time of the call is its clat and lat, its slat is 0.

use super::instance::WorkerResult;
use super::source::NextIo;
use crate::engine::QueueEngine;
use crate::model::DDIR_TRIM;
use std::io;

/// Trims `io` through `engine` and books it; returns the completion instant.
pub(crate) fn sync_trim<E: QueueEngine>(
    engine: &mut E,
    res: &mut WorkerResult,
    io: NextIo,
    timed: bool,
) -> io::Result<u64> {
    let t0 = super::clock::now_ns();
    let n = engine.trim(io.file, io.offset, io.len)?;
    let t1 = super::clock::now_ns();
    if timed {
        res.tick(t1);
        res.clat[DDIR_TRIM].record(t1 - t0);
        res.lat[DDIR_TRIM].record(t1 - t0);
        res.slat[DDIR_TRIM].record(0);
    }
    if n < io.len {
        res.short[DDIR_TRIM] += 1;
    }
    res.bytes[DDIR_TRIM] += n as u64;
    res.ios[DDIR_TRIM] += 1;
    Ok(t1)
}

//! `null`: completes every I/O at once without touching a file, to measure iogauge's own
//! per-I/O overhead (fio's ioengine=null).

use super::{Engine, Op, SyncOp};
use std::io;

#[derive(Default)]
pub(crate) struct Null;

impl Engine for Null {
    #[inline(always)]
    unsafe fn io(
        &mut self,
        _file: usize,
        _op: Op,
        _buf: *mut u8,
        len: usize,
        _offset: u64,
    ) -> io::Result<usize> {
        Ok(len)
    }

    fn sync(&mut self, _file: usize, _op: SyncOp) -> io::Result<()> {
        Ok(())
    }
}

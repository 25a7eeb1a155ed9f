//! Settings of the extra ioengines (fio 3.33's per-engine options) and which engines are not
//! data engines: the `engines` field of [`JobSpec`](super::JobSpec).

use super::IoEngine;

/// The system call `filestat` times (fio's `stat_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatType {
    /// stat(2), fio's default.
    Stat,
    /// lstat(2).
    Lstat,
    /// statx(2) with STATX_ALL.
    Statx,
}

/// Per-engine options of the engines in `src/engine/` beyond sync, psync, null, io_uring and
/// libaio. `Default` is fio 3.33's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineSpec {
    /// pvsync2: percent of I/Os that get RWF_HIPRI when `hipri` is set (fio `hipri_percentage`).
    pub hipri_percentage: u32,
    /// pvsync2: RWF_NOWAIT on every I/O (fio `nowait`).
    pub nowait: bool,
    /// filestat: which stat call is timed (fio `stat_type`).
    pub stat_type: StatType,
}

impl Default for EngineSpec {
    fn default() -> Self {
        EngineSpec {
            hipri_percentage: 100,
            nowait: false,
            stat_type: StatType::Stat,
        }
    }
}

/// What a file operation engine does to each file (fio's fileoperations engines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileOp {
    /// open(O_CREAT|O_RDWR) of a file that need not exist (nothing is laid out).
    Create,
    /// stat/lstat/statx of a laid-out file.
    Stat,
    /// unlink of a laid-out file.
    Delete,
}

impl IoEngine {
    /// The file operation a metadata engine times, or None for a data engine.
    pub(crate) fn file_op(&self) -> Option<FileOp> {
        match self {
            IoEngine::Filecreate => Some(FileOp::Create),
            IoEngine::Filestat => Some(FileOp::Stat),
            IoEngine::Filedelete => Some(FileOp::Delete),
            _ => None,
        }
    }
}

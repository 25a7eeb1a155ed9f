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

/// How `cpuio` burns CPU (fio's `cpumode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuMode {
    /// Spin on the clock for `cpuchunks` microseconds, fio's default.
    Noop,
    /// Sort 256 Ki integers four ways; the cycle is as long as that takes.
    Qsort,
}

/// Per-engine options of the engines in `src/engine/` beyond sync, psync, null, io_uring and
/// libaio. `Default` is fio 3.33's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSpec {
    /// pvsync2: percent of I/Os that get RWF_HIPRI when `hipri` is set (fio `hipri_percentage`).
    pub hipri_percentage: u32,
    /// pvsync2: RWF_NOWAIT on every I/O (fio `nowait`).
    pub nowait: bool,
    /// filestat: which stat call is timed (fio `stat_type`).
    pub stat_type: StatType,
    /// cpuio: percent of one CPU to use (fio `cpuload`; 0 = unset, which cpuio refuses).
    pub cpuload: u32,
    /// cpuio: length of one burn cycle in microseconds (fio `cpuchunks`).
    pub cpuchunks: u32,
    /// cpuio: how the CPU is burnt (fio `cpumode`).
    pub cpumode: CpuMode,
    /// cpuio: stop when the phase's other jobs are done (fio `exit_on_io_done`).
    pub exit_on_io_done: bool,
    /// exec: the program to run (fio `program`; required).
    pub program: Option<String>,
    /// exec: its arguments, split on spaces, `%r` = runtime in seconds, `%n` = job name (fio
    /// `arguments`).
    pub arguments: Option<String>,
    /// exec: seconds between SIGTERM at the runtime and the job's end (fio `grace_time`).
    pub grace_time: u32,
    /// exec: the program's stdout and stderr go to NAME.stdout and NAME.stderr (fio
    /// `std_redirect`).
    pub std_redirect: bool,
}

impl Default for EngineSpec {
    fn default() -> Self {
        EngineSpec {
            hipri_percentage: 100,
            nowait: false,
            stat_type: StatType::Stat,
            cpuload: 0,
            cpuchunks: 50_000,
            cpumode: CpuMode::Noop,
            exit_on_io_done: false,
            program: None,
            arguments: None,
            grace_time: 1,
            std_redirect: true,
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
    /// mkdir of a directory that must not exist (fio 3.37's dircreate).
    DirCreate,
    /// stat/lstat/statx of a directory made before the job (dirstat).
    DirStat,
    /// rmdir of a directory made before the job (dirdelete).
    DirDelete,
}

impl FileOp {
    /// The engine's "files" are directories.
    pub(crate) fn on_dirs(self) -> bool {
        matches!(
            self,
            FileOp::DirCreate | FileOp::DirStat | FileOp::DirDelete
        )
    }
}

impl IoEngine {
    /// The file operation a metadata engine times, or None for a data engine.
    pub(crate) fn file_op(&self) -> Option<FileOp> {
        match self {
            IoEngine::Filecreate => Some(FileOp::Create),
            IoEngine::Filestat => Some(FileOp::Stat),
            IoEngine::Filedelete => Some(FileOp::Delete),
            IoEngine::Dircreate => Some(FileOp::DirCreate),
            IoEngine::Dirstat => Some(FileOp::DirStat),
            IoEngine::Dirdelete => Some(FileOp::DirDelete),
            _ => None,
        }
    }

    /// Engines that touch no file or disk (fio's FIO_DISKLESSIO): nothing is laid out or opened.
    pub(crate) fn diskless(&self) -> bool {
        matches!(self, IoEngine::Null | IoEngine::Cpuio | IoEngine::Exec)
    }
}

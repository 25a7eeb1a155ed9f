//! Settings of the extra ioengines (fio 3.33's per-engine options) and which engines are not
//! data engines: the `engines` field of [`JobSpec`](super::JobSpec).

use super::IoEngine;

/// Every engine iogauge runs, by fio name, in the order the help and the errors list them: the
/// one engine list. [`IoEngine::fio_name`] reads its name here, the `ioengine` option its values
/// and help (`input/fio`), and which engines a profile may set asks
/// [`IoEngine::does_file_io`]; the variants of [`IoEngine`] are declared in this order (the
/// check below refuses a table that does not match them). Add an engine here and there.
pub(crate) const ENGINES: &[(&str, IoEngine)] = &[
    ("sync", IoEngine::Sync),
    ("psync", IoEngine::Psync),
    ("vsync", IoEngine::Vsync),
    ("pvsync", IoEngine::Pvsync),
    ("pvsync2", IoEngine::Pvsync2),
    ("mmap", IoEngine::Mmap),
    ("null", IoEngine::Null),
    ("libaio", IoEngine::Libaio),
    ("io_uring", IoEngine::IoUring),
    ("posixaio", IoEngine::Posixaio),
    ("filecreate", IoEngine::Filecreate),
    ("filestat", IoEngine::Filestat),
    ("filedelete", IoEngine::Filedelete),
    // fio 3.37's directory engines (no fio 3.33 equivalent).
    ("dircreate", IoEngine::Dircreate),
    ("dirstat", IoEngine::Dirstat),
    ("dirdelete", IoEngine::Dirdelete),
    ("falloc", IoEngine::Falloc),
    ("ftruncate", IoEngine::Ftruncate),
    ("cpuio", IoEngine::Cpuio),
    ("exec", IoEngine::Exec),
];

// Each engine at its own index, so that `fio_name` is an index and no variant is missing (the
// last one ends the table).
const _: () = {
    let mut i = 0;
    while i < ENGINES.len() {
        assert!(
            ENGINES[i].1 as usize == i,
            "ENGINES is not in IoEngine's order"
        );
        i += 1;
    }
    assert!(
        IoEngine::Exec as usize + 1 == ENGINES.len(),
        "an IoEngine is not in ENGINES"
    );
};

impl IoEngine {
    /// Whether the engine does plain reads and writes on the job's files (what a profile may
    /// run): not null, the file and directory operations, falloc, ftruncate, cpuio or exec.
    pub(crate) fn does_file_io(self) -> bool {
        // falloc and ftruncate change the file's size and allocation, not its data.
        !self.diskless()
            && self.file_op().is_none()
            && !matches!(self, IoEngine::Falloc | IoEngine::Ftruncate)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's names are fio's, each engine once, and the engines a profile may run are the
    /// nine data engines (the list allowed.rs once kept by hand, in the table's order).
    #[test]
    fn one_table_of_engines() {
        for (name, e) in ENGINES {
            assert_eq!(e.fio_name(), *name);
            assert_eq!(ENGINES.iter().filter(|(n, _)| n == name).count(), 1);
        }
        let file: Vec<&str> = ENGINES
            .iter()
            .filter(|(_, e)| e.does_file_io())
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(
            file,
            [
                "sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "libaio", "io_uring",
                "posixaio"
            ]
        );
    }
}

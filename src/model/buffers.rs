//! What written buffers hold (fio's buffer options): a pattern, compressible and deduplicable
//! data, and the per-write scramble.

use super::verify::Pattern;

/// `dedupe_mode`: where a deduplicable buffer's content comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DedupeMode {
    /// `repeat` (fio's default): the most recent unique buffer again.
    #[default]
    Repeat,
    /// `working_set`: one of a fixed set of buffers, `dedupe_working_set_percentage` of the
    /// file's size.
    WorkingSet,
}

/// The buffer options of a job (fio 3.33's defaults, except `scramble_buffers`: see field).
#[derive(Debug, Clone, PartialEq)]
pub struct BufferSpec {
    /// `buffer_pattern`: fill buffers with this pattern (no `%o`).
    pub pattern: Option<Pattern>,
    /// `buffer_compress_percentage`: this share of each chunk is zeros (or the pattern).
    pub compress_percentage: u32,
    /// `buffer_compress_chunk` (0: the block size).
    pub compress_chunk: u64,
    /// `dedupe_percentage`: this share of the writes repeats earlier data.
    pub dedupe_percentage: u32,
    /// `dedupe_mode`
    pub dedupe_mode: DedupeMode,
    /// `dedupe_working_set_percentage` (fio's default 5).
    pub dedupe_working_set_percentage: u32,
    /// `dedupe_global`: the working set is shared by every job that says so, so their
    /// repeated buffers repeat each other's (working_set mode).
    pub dedupe_global: bool,
    /// `scramble_buffers`: stamp the offset and time into every 512 bytes of each write. fio's
    /// default is 1; iogauge's is 0 unless the option is given, so that a job without buffer
    /// options keeps its untouched I/O loop (see the report in docs).
    pub scramble: bool,
}

impl BufferSpec {
    /// Whether any option changes what each write holds.
    pub(crate) fn active(&self) -> bool {
        self.pattern.is_some()
            || self.compress_percentage > 0
            || self.dedupe_percentage > 0
            || self.scramble
    }
}

impl Default for BufferSpec {
    fn default() -> Self {
        BufferSpec {
            pattern: None,
            compress_percentage: 0,
            compress_chunk: 0,
            dedupe_percentage: 0,
            dedupe_mode: DedupeMode::Repeat,
            dedupe_working_set_percentage: 5,
            dedupe_global: false,
            scramble: false,
        }
    }
}

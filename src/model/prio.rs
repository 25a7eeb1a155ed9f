//! fio's job-wide I/O priority (`prio`, `prioclass`), with fio 3.33's defaults (unset).

/// The I/O priority a job's thread runs with (Linux ioprio_set), unset by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IoPrioSpec {
    /// `prioclass`: 0 none (taken as best-effort), 1 real-time, 2 best-effort, 3 idle.
    pub class: Option<u32>,
    /// `prio`: the level within the class, 0 (highest) to 7.
    pub level: Option<u32>,
}

impl IoPrioSpec {
    /// The ioprio value (class << 13 | level) when either option is set: fio's ioprio_value,
    /// where no class means best-effort.
    pub(crate) fn value(&self) -> Option<u16> {
        if self.class.is_none() && self.level.is_none() {
            return None;
        }
        let class = match self.class.unwrap_or(0) {
            0 => 2,
            c => c,
        };
        Some(((class << 13) | self.level.unwrap_or(0)) as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_fios_ioprio_value() {
        let v = |class, level| IoPrioSpec { class, level }.value();
        assert_eq!(v(None, None), None);
        // No class (or class 0) is best-effort.
        assert_eq!(v(None, Some(4)), Some(0x4004));
        assert_eq!(v(Some(0), Some(7)), Some(0x4007));
        assert_eq!(v(Some(1), None), Some(0x2000));
        assert_eq!(v(Some(3), Some(4)), Some(0x6004));
    }
}

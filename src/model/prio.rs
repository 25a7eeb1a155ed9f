//! fio's job-wide I/O priority (`prio`, `prioclass`), with fio 3.33's defaults (unset).

/// One `cmdprio_bssplit` entry: I/Os of `bs` bytes take priority `prio` (None: the
/// direction's cmdprio_class/cmdprio) with a `perc` % chance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdPrioSplit {
    /// The block size the entry applies to.
    pub bs: u64,
    /// The share (1 to 100) of I/Os of that size sent with this priority.
    pub perc: u32,
    /// The entry's own ioprio value (class << 13 | level), if it names one.
    pub prio: Option<u16>,
}

/// The I/O priority a job's thread runs with (Linux ioprio_set), unset by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoPrioSpec {
    /// `prioclass`: 0 none (taken as best-effort), 1 real-time, 2 best-effort, 3 idle.
    pub class: Option<u32>,
    /// `prio`: the level within the class, 0 (highest) to 7.
    pub level: Option<u32>,
    /// `cmdprio_percentage` per direction (read, write): the share of I/Os sent with the
    /// command priority below (queueing engines); 0 = none.
    pub cmd_percentage: [u32; 2],
    /// `cmdprio_class` per direction: 1 real-time (fio's default), 2 best-effort, 3 idle.
    pub cmd_class: [u32; 2],
    /// `cmdprio` per direction: the level within that class, 0 to 7.
    pub cmd_level: [u32; 2],
    /// `cmdprio_bssplit` per direction (read, write), sorted by block size; empty = unused.
    pub cmd_bssplit: [Vec<CmdPrioSplit>; 2],
}

impl Default for IoPrioSpec {
    fn default() -> Self {
        IoPrioSpec {
            class: None,
            level: None,
            cmd_percentage: [0; 2],
            cmd_class: [1; 2],
            cmd_level: [0; 2],
            cmd_bssplit: [Vec::new(), Vec::new()],
        }
    }
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

    /// Whether some I/Os carry a command priority (cmdprio_percentage above 0, or a
    /// cmdprio_bssplit).
    pub(crate) fn cmd_active(&self) -> bool {
        self.cmd_percentage.iter().any(|&p| p > 0) || self.bssplit_active()
    }

    /// Whether cmdprio_bssplit has an entry (fio's CMDPRIO_MODE_BSSPLIT).
    pub(crate) fn bssplit_active(&self) -> bool {
        self.cmd_bssplit.iter().any(|s| !s.is_empty())
    }

    /// The command priority of direction `dir` (class << 13 | level).
    pub(crate) fn cmd_value(&self, dir: usize) -> u16 {
        ((self.cmd_class[dir] << 13) | self.cmd_level[dir]) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_fios_ioprio_value() {
        let v = |class, level| {
            IoPrioSpec {
                class,
                level,
                ..Default::default()
            }
            .value()
        };
        assert_eq!(v(None, None), None);
        // No class (or class 0) is best-effort.
        assert_eq!(v(None, Some(4)), Some(0x4004));
        assert_eq!(v(Some(0), Some(7)), Some(0x4007));
        assert_eq!(v(Some(1), None), Some(0x2000));
        assert_eq!(v(Some(3), Some(4)), Some(0x6004));
    }
}

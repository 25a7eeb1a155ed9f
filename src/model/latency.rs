//! fio's latency_target family (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`) and flow family (`flow_id`, `flow`, `flow_sleep`), with fio 3.33's defaults.

/// A job's queue-depth search for a latency target, and its share in a flow group.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencySpec {
    /// `latency_target` in ns (fio keeps it in ns after init); 0 = off.
    pub target_ns: u64,
    /// `latency_window` in µs: how long each queue depth is tried (0: checked after every I/O,
    /// as fio).
    pub window_us: u64,
    /// `latency_percentile`: the share (0 to 100) of I/Os that must meet the target.
    pub percentile: f64,
    /// `latency_run`: keep adjusting the depth for the whole run instead of ending the job once
    /// the search has settled.
    pub run: bool,
    /// `flow_id`: the flow group the job belongs to.
    pub flow_id: i32,
    /// `flow`: the job's weight in its flow group (0 = not flow-controlled), at most 1000.
    pub flow: u32,
    /// `flow_sleep`: µs to sleep when the job is ahead of its share (0: retry at once).
    pub flow_sleep_us: u32,
}

impl Default for LatencySpec {
    fn default() -> Self {
        LatencySpec {
            target_ns: 0,
            window_us: 0,
            percentile: 100.0,
            run: false,
            flow_id: 0,
            flow: 0,
            flow_sleep_us: 0,
        }
    }
}

impl LatencySpec {
    /// Whether the queue-depth search is on.
    pub(crate) fn target_on(&self) -> bool {
        self.target_ns > 0
    }
}

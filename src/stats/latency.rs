//! TEMPORARY shim (exact samples only) until the stats branch lands.
use crate::report::{LatSummary, PercentileMethod};
pub const DEFAULT_SAMPLE_BUDGET: usize = 1 << 18;
#[derive(Debug, Clone, Default)]
pub struct LatRecorder {
    v: Vec<u64>,
}
impl LatRecorder {
    pub fn new(b: usize) -> Self {
        LatRecorder { v: Vec::with_capacity(b) }
    }
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.v.push(ns)
    }
    pub fn reset(&mut self) {
        self.v.clear()
    }
    pub fn merge(&mut self, o: &LatRecorder) {
        self.v.extend_from_slice(&o.v)
    }
    pub fn count(&self) -> u64 {
        self.v.len() as u64
    }
    pub fn summary(&self, p: &[f64], wp: bool, _b: bool) -> LatSummary {
        let mut s = self.v.clone();
        s.sort_unstable();
        let n = s.len();
        if n == 0 {
            return LatSummary::default();
        }
        let mean = s.iter().sum::<u64>() as f64 / n as f64;
        let var = s.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n.max(2) - 1) as f64;
        LatSummary {
            n: n as u64,
            min: s[0],
            max: s[n - 1],
            mean,
            stddev: var.sqrt(),
            percentiles: if wp {
                p.iter()
                    .map(|&q| (q, s[(((q / 100.0) * n as f64).ceil() as usize).clamp(1, n) - 1]))
                    .collect()
            } else {
                vec![]
            },
            method: Some(PercentileMethod::Exact),
            bins: vec![],
        }
    }
}

//! The numbers a `filesystemPerformance` result holds and the `when` keywords that name them
//! (shared by the analyzer grammar and the message templates).

/// A statistic of the collector's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    Min,
    Max,
    Average,
    /// Index into [`PERCENTILES`].
    P(usize),
    /// iogauge's extension: operations per second (a number, not a duration).
    Iops,
}

/// troubleshoot's percentile keys and the percentiles they stand for.
pub const PERCENTILES: [(&str, f64); 17] = [
    ("P1", 1.0),
    ("P5", 5.0),
    ("P10", 10.0),
    ("P20", 20.0),
    ("P30", 30.0),
    ("P40", 40.0),
    ("P50", 50.0),
    ("P60", 60.0),
    ("P70", 70.0),
    ("P80", 80.0),
    ("P90", 90.0),
    ("P95", 95.0),
    ("P99", 99.0),
    ("P995", 99.5),
    ("P999", 99.9),
    ("P9995", 99.95),
    ("P9999", 99.99),
];

impl Stat {
    /// A `when` keyword, case-insensitive (`avg` is iogauge's alias of `average`).
    pub fn from_keyword(k: &str) -> Option<Stat> {
        let k = k.to_ascii_lowercase();
        Some(match k.as_str() {
            "min" => Stat::Min,
            "max" => Stat::Max,
            "average" | "avg" => Stat::Average,
            "iops" => Stat::Iops,
            _ => Stat::P(
                PERCENTILES
                    .iter()
                    .position(|(n, _)| n.eq_ignore_ascii_case(&k))?,
            ),
        })
    }
}

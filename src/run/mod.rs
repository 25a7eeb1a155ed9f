//! The orchestrator: threads, groups, ramp, time limits, monitor, signals.

//! Recorders (latency histograms, counters), periodic sampler, CPU and disk statistics, merging.

//! TEMPORARY shim until the stats branch lands (replaced wholesale by the merge).
pub mod cpu;
pub mod latency;

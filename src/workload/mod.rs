//! Offsets, rw mix, rate pacing, buffers, file layout and cleanup.

pub mod buffers;
pub mod cleanup;
pub mod dist;
pub mod fs;
pub mod layout;
pub mod offsets;
pub mod randmap;
pub mod rate;
pub mod rng;

//! Offsets, rw mix, rate pacing, buffers, file layout and cleanup.

pub(crate) mod bsize;
pub(crate) mod buffers;
pub(crate) mod cleanup;
pub(crate) mod device;
pub(crate) mod dist;
pub(crate) mod fileservice;
pub(crate) mod fs;
pub(crate) mod identity;
pub mod layout;
pub(crate) mod marker;
pub(crate) mod offsets;
pub(crate) mod openfiles;
pub(crate) mod randmap;
pub(crate) mod rate;
pub(crate) mod relink;
pub(crate) mod rng;
pub(crate) mod tag;
pub(crate) mod verify;
pub(crate) mod write_hint;

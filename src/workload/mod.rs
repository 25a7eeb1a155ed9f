//! Offsets, rw mix, rate pacing, buffers, file layout and cleanup.

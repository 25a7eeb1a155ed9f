//! The `iogauge` command: everything happens in [`iogauge::cli::main`].

fn main() {
    // One malloc arena for all threads instead of one per thread: the worker threads allocate
    // only before and after their I/O loop (and once per 100 ms interval), never per I/O, so
    // they gain nothing from their own arenas, and each arena costs resident memory
    // (≈ 1 MiB less peak RSS with numjobs=4; docs/MEASUREMENT.md, "Memory").
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a glibc malloc parameter; it is called before any other thread
    // exists, and an unsupported value is simply refused (return value 0, ignored).
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    std::process::exit(iogauge::cli::main());
}

//! The `iogauge` command: everything happens in [`iogauge::cli::main`].

fn main() {
    std::process::exit(iogauge::cli::main());
}

fn main() {
    std::process::exit(iogauge::cli::main());
}

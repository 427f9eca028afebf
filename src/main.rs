//! The `idiolect` command: parse, stream and render model-output dialects as JSON.

mod cli;

fn main() {
    std::process::exit(cli::main());
}

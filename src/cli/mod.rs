//! The command line: argument definitions, option assembly, and the commands.
//!
//! Exit codes: 0 success; 1 the document has errors (for dialects that report
//! them, such as plurnk), a batch record failed or its document has errors, or a
//! conformance case failed; 2 usage and IO errors, always with a one-line message
//! on stderr.

mod args;
mod batch;
mod commands;
mod conformance;
mod input;
mod server;

use clap::Parser as _;

/// A failure that ends the program with exit code 2 and one line on stderr.
#[derive(Debug)]
pub struct CliError(pub String);

impl CliError {
    fn new(message: impl Into<String>) -> Self {
        CliError(message.into())
    }
}

/// Runs the program and returns its exit code.
pub fn main() -> i32 {
    let args = match args::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return e.exit_code();
        }
    };
    match commands::run(args) {
        Ok(code) => code,
        Err(CliError(message)) => {
            eprintln!("idiolect: {message}");
            2
        }
    }
}

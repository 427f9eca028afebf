//! Running the `idiolect` binary from the CLI tests.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_idiolect");

/// Runs `idiolect ARGS` from the crate root with `stdin` as its input.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the idiolect binary runs");
    let mut input = child.stdin.take().expect("stdin");
    // Written from another thread while the output is read: a filter such as
    // `batch` writes output before it has read all its input, and a pipe holds only
    // so much. A command that does not read stdin may exit first; a broken pipe
    // here is fine.
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let output = child
        .wait_with_output()
        .expect("the idiolect binary finishes");
    writer.join().expect("the stdin writer");
    output
}

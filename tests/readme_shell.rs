//! Every shell example of README.md runs as written (issue 38): each command of each
//! ```` ```sh ```` block is run by bash with the built `idiolect` first on `PATH`, in a
//! scratch folder that sees the repository's `examples/`, `grammar/`, `conformance/` and
//! `ports/` (so the examples that write files write them there), and must exit 0. The
//! quick start's `cargo run -- ARGS` runs as `idiolect ARGS`; its `cargo test` is this
//! test suite and is not run again. Comment lines are skipped; a line ending in `\`
//! continues on the next.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The commands of the README's `sh` blocks, in order, continuation lines joined.
fn commands(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in readme.lines() {
        if !in_block {
            in_block = line.trim_end() == "```sh";
            continue;
        }
        if line.trim_end() == "```" {
            in_block = false;
            continue;
        }
        let line = line.trim();
        if pending.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(line);
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    out
}

/// A scratch folder with the repository's folders the examples read.
fn scratch(root: &Path) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("idiolect-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    for name in ["examples", "grammar", "conformance", "ports"] {
        let link = dir.join(name);
        if !link.exists() {
            std::os::unix::fs::symlink(root.join(name), &link).expect("symlink");
        }
    }
    dir
}

#[test]
fn every_shell_example_of_the_readme_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let commands = commands(&readme);
    assert!(
        commands.len() >= 20,
        "the README's shell examples were not found: {commands:?}"
    );
    let exe = Path::new(env!("CARGO_BIN_EXE_idiolect"));
    let bin = exe.parent().expect("the binary's folder");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = scratch(root);
    let mut failed = Vec::new();
    for command in &commands {
        if command == "cargo test" {
            continue;
        }
        let command = match command.strip_prefix("cargo run -- ") {
            Some(args) => format!("idiolect {args}"),
            None => command.clone(),
        };
        let output = Command::new("bash")
            .args(["-o", "pipefail", "-c", &command])
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .expect("bash runs");
        if !output.status.success() || output.stdout.is_empty() && !command.contains('>') {
            failed.push(format!(
                "{command}\n  exit {:?}, {} bytes out; stderr: {}",
                output.status.code(),
                output.stdout.len(),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failed.is_empty(),
        "README examples that fail:\n{}",
        failed.join("\n")
    );
}

#[test]
fn the_example_reader_joins_continued_lines_and_skips_comments() {
    let readme = "text\n```sh\n# a comment\nprintf 'x' \\\n  | idiolect parse hermes\n\nidiolect dialects\n```\n```rust\nnot a command\n```\n";
    assert_eq!(
        commands(readme),
        ["printf 'x'  | idiolect parse hermes", "idiolect dialects"]
    );
}

//! The `idiolect` command as a user meets it: outputs and error messages, pinned
//! with insta snapshots, and promptness on a live pipe.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod support;

use support::{run, BIN};

/// Exit code, stdout and stderr in one text, for a snapshot.
fn transcript(out: &Output) -> String {
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A scratch folder, removed when the test ends.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("idiolect-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const ISSUE_EXAMPLE: &[u8] = b"<think>plan</think><create-file path=\"a.ts\">x<y</dyad-write>";

#[test]
fn parse_sections_prints_the_issue_example_as_two_closed_sections() {
    insta::assert_snapshot!(transcript(&run(&["parse", "sections"], ISSUE_EXAMPLE)));
}

#[test]
fn parse_compact_with_spans_prints_one_line_with_item_spans() {
    insta::assert_snapshot!(transcript(&run(
        &["parse", "sections", "-", "--compact", "--spans"],
        ISSUE_EXAMPLE
    )));
}

#[test]
fn parse_reads_a_file_argument() {
    insta::assert_snapshot!(transcript(&run(
        &["parse", "sections", "examples/agent-reply.txt", "--compact"],
        b""
    )));
}

#[test]
fn section_flags_replace_the_default_registry() {
    let input = b"<tool name=x>run</t><think>kept as text</think>";
    insta::assert_snapshot!(transcript(&run(
        &["parse", "sections", "--compact", "--section", "tool=t,call"],
        input
    )));
}

#[test]
fn stream_prints_one_event_per_line() {
    insta::assert_snapshot!(transcript(&run(
        &["stream", "sections", "--chunk-size", "7"],
        ISSUE_EXAMPLE
    )));
}

#[test]
fn dialects_lists_every_dialect() {
    insta::assert_snapshot!(transcript(&run(&["dialects"], b"")));
}

#[test]
fn unknown_dialect_is_a_usage_error_listing_the_known_ones() {
    let out = run(&["parse", "klingon"], b"");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.starts_with("idiolect: unknown dialect \"klingon\"; known dialects: sections"),
        "{stderr}"
    );
}

#[test]
fn missing_file_is_named_with_exit_code_2() {
    insta::assert_snapshot!(transcript(&run(
        &["parse", "sections", "no/such/file.txt"],
        b""
    )));
}

#[test]
fn directory_instead_of_file_is_an_error() {
    insta::assert_snapshot!(transcript(&run(&["parse", "sections", "conformance"], b"")));
}

#[test]
fn malformed_options_json_reports_line_and_column() {
    let dir = Scratch::new("cli");
    let path = dir.0.join("bad.json");
    std::fs::write(&path, "{\n  \"sections\": [,]\n}\n").expect("write options");
    let out = run(
        &[
            "parse",
            "sections",
            "--options",
            path.to_str().expect("utf-8 path"),
        ],
        b"x",
    );
    let text = transcript(&out).replace(path.to_str().expect("utf-8 path"), "BAD.json");
    insta::assert_snapshot!(text);
}

#[test]
fn wrongly_typed_options_are_rejected() {
    let dir = Scratch::new("cli-typed");
    let path = dir.0.join("typed.json");
    std::fs::write(&path, r#"{"max_tag_bytes": "big"}"#).expect("write options");
    let out = run(
        &[
            "parse",
            "sections",
            "--options",
            path.to_str().expect("utf-8 path"),
        ],
        b"x",
    );
    insta::assert_snapshot!(transcript(&out));
}

#[test]
fn a_flag_of_another_dialect_is_a_usage_error() {
    insta::assert_snapshot!(transcript(&run(
        &["parse", "sections", "--format", "chatml"],
        b""
    )));
}

#[test]
fn a_bad_chunk_size_is_a_usage_error() {
    let out = run(&["stream", "sections", "--chunk-size", "0"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--chunk-size"));
}

#[test]
fn stream_prints_the_section_end_and_text_while_the_input_is_still_open() {
    let mut child = Command::new(BIN)
        .args(["stream", "sections"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the idiolect binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (lines_tx, lines_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    stdin.write_all(b"<think>a</think>tail").expect("write");
    stdin.flush().expect("flush");
    // The input stays open: the end event must come from what has arrived so far.
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let arrived = |seen: &[String]| {
        seen.iter().any(|l| l.contains("\"section_end\""))
            && seen.iter().any(|l| l.contains("\"text\":\"tail\""))
    };
    while !arrived(&seen) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines_rx.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("the section end and the text were not printed while the input was open; saw {seen:?}"),
        }
    }
    stdin.write_all(b" more").expect("write");
    drop(stdin);
    let status = child.wait().expect("exit");
    assert!(status.success());
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let mut child = Command::new(BIN)
        .args(["stream", "sections", "--chunk-size", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the idiolect binary runs");
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    let _ = stdin.write_all(&b"<think>x</think>".repeat(10_000));
    drop(stdin);
    let out = child.wait_with_output().expect("exit");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn invalid_utf8_is_replaced_and_reported() {
    insta::assert_snapshot!(transcript(&run(
        &["stream", "sections"],
        b"a\xffb<think>\xc3"
    )));
}

/// The command that runs the Python port, started once per case and chunking
/// (some 1,800 times): the interpreter itself, found once, rather than a `python3`
/// on PATH that may be a version manager's shell shim, and `-S` (no `site`: the
/// port needs only the standard library), which makes each start several times
/// cheaper. `exec` spares the shell the runner starts it with a fork.
fn python_port_command() -> String {
    let found = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|exe| !exe.is_empty() && !exe.contains('\''));
    match found {
        Some(exe) => format!("exec '{exe}' -S ports/python/sections.py"),
        None => "python3 ports/python/sections.py".to_owned(),
    }
}

#[test]
fn the_python_port_passes_the_sections_corpus_whole_and_chunked() {
    let cases = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/conformance/sections"))
        .expect("the sections corpus")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "txt"))
        .count();
    let port = python_port_command();
    let out = run(
        &[
            "conformance",
            "--dialect",
            "sections",
            "--port",
            &port,
            "--chunks",
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    assert_eq!(last, format!("{cases} passed, 0 failed"), "{stdout}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn conformance_reports_failures_and_exits_1() {
    // `cat` echoes the input instead of a document: every case must fail.
    let out = run(
        &["conformance", "--dialect", "sections", "--port", "cat"],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .last()
            .unwrap_or("")
            .starts_with("0 passed, "),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL sections::basic-think-section"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn conformance_prints_cases_in_corpus_order_on_any_thread_count() {
    // A port that fails every case (it echoes its input), so each line is a
    // `FAIL` with its reason: the whole report must not depend on the threads.
    let report = |threads: &str| {
        let out = run(
            &[
                "conformance",
                "--dialect",
                "sections",
                "--port",
                "cat",
                "--threads",
                threads,
            ],
            b"",
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // The corpus order: the case files by name.
    let mut files: Vec<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/conformance/sections"))
            .expect("the sections corpus")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".txt"))
            .collect();
    files.sort();
    let corpus: Vec<String> = files
        .iter()
        .map(|name| format!("sections::{}", name.trim_end_matches(".txt")))
        .collect();
    // More cases than one block of parallel checks.
    assert!(corpus.len() > 64);
    for threads in ["1", "3"] {
        let report = report(threads);
        let failed: Vec<&str> = report
            .lines()
            .filter_map(|l| l.strip_prefix("FAIL "))
            .collect();
        assert_eq!(failed, corpus, "--threads {threads}");
    }
}

#[test]
fn a_skipped_case_that_passes_is_reported_as_stale() {
    let dir = Scratch::new("skip");
    let skip = dir.0.join("skip.txt");
    std::fs::write(
        &skip,
        "# known failures\nsections::basic-think-section  # passes in-process\n",
    )
    .expect("write");
    let out = run(
        &[
            "conformance",
            "--dialect",
            "sections",
            "--skip",
            skip.to_str().expect("utf-8"),
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("stale sections::basic-think-section"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .last()
            .unwrap_or("")
            .ends_with(" failed, 1 skipped"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_unknown_format_is_an_options_error() {
    insta::assert_snapshot!(transcript(&run(
        &["parse", "transcript", "--format", "bogus"],
        b""
    )));
}

#[test]
fn an_empty_stdin_is_an_empty_document() {
    insta::assert_snapshot!(transcript(&run(&["parse", "sections", "--compact"], b"")));
}

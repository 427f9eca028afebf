//! `cargo bench --bench user_path`: the path users take (issue 15), beside the
//! library rows, in one run.
//!
//! 1. In process, per dialect: the library's `parse`; `parse` plus serializing the
//!    typed document into a buffer (the floor for any JSON output), compact and
//!    pretty; the session path the CLI uses (`feed_document`/`finish_document`),
//!    compact and pretty, with its ratio to the floor; and the session's event
//!    stream at 4096-byte chunks (`feed_json`).
//! 2. The binary (this profile's `idiolect`) on 16 MB files: `parse` (pretty and
//!    `--compact`) and `stream` (default chunk) to /dev/null, as a share of the
//!    library's parse rate, and the peak memory of `parse` (VmHWM).
//! 3. `idiolect batch` over 10,000 JSON Lines records on 1 and 2 threads:
//!    records/s, MB/s and the speed-up.
//!
//! Inputs come from the generators in benches/support. `IDIOLECT_BENCH_QUICK=1`
//! gives a fast smoke run on smaller inputs.

// The generators are shared with the throughput bench; this one uses some.
#[allow(dead_code)]
mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use idiolect::fold::Layout;
use idiolect::{anthropic_xml, kindaxml, plurnk, sections, transcript};
use serde::Serialize;
use serde_json::{json, Value};
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_idiolect");

/// One input of the suite: how to make it and how to parse it with the library.
struct Case {
    name: &'static str,
    dialect: &'static str,
    options: Value,
    generate: fn(usize, u64) -> String,
    /// Whether parsing, not output, dominates (the markup-dense inputs).
    dense: bool,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "sections: prose-heavy",
            dialect: "sections",
            options: Value::Null,
            generate: sections_prose,
            dense: false,
        },
        Case {
            name: "sections: markup-dense",
            dialect: "sections",
            options: Value::Null,
            generate: sections_dense,
            dense: true,
        },
        Case {
            name: "anthropic-xml: prose-heavy",
            dialect: "anthropic-xml",
            options: Value::Null,
            generate: axml_prose,
            dense: false,
        },
        Case {
            name: "anthropic-xml: markup-dense",
            dialect: "anthropic-xml",
            options: Value::Null,
            generate: axml_dense,
            dense: true,
        },
        Case {
            name: "plurnk: prose and statements",
            dialect: "plurnk",
            options: Value::Null,
            generate: plurnk_mixed,
            dense: true,
        },
        Case {
            name: "kindaxml: annotated answer",
            dialect: "kindaxml",
            options: Value::Null,
            generate: kindaxml_annotated,
            dense: true,
        },
        Case {
            name: "transcript: parse a prompt",
            dialect: "transcript",
            options: Value::Null,
            generate: transcript_prompt,
            dense: false,
        },
    ]
}

/// The library's whole parse of `input` for the case's dialect, handed to `then`
/// as a serializable document.
fn library_parse(
    dialect: &str,
    input: &str,
    then: &mut dyn FnMut(&dyn ErasedDocument) -> usize,
) -> usize {
    match dialect {
        "sections" => then(&sections::parse(input, &Default::default()).expect("options")),
        "anthropic-xml" => {
            then(&anthropic_xml::parse(input, &Default::default()).expect("options"))
        }
        "plurnk" => then(&plurnk::parse(input, &Default::default()).expect("options")),
        "kindaxml" => then(&kindaxml::parse(input, &Default::default()).expect("options")),
        "transcript" => then(&transcript::parse(input, &Default::default()).expect("options")),
        other => panic!("no library parse for {other}"),
    }
}

/// A document serialized into a buffer, whatever its type.
trait ErasedDocument {
    fn write(&self, out: &mut Vec<u8>, layout: Layout);
}

impl<T: Serialize> ErasedDocument for T {
    fn write(&self, out: &mut Vec<u8>, layout: Layout) {
        idiolect::fold::write_json(out, self, layout).expect("documents serialize");
    }
}

fn session(case: &Case) -> Box<dyn idiolect::Session> {
    let dialect = idiolect::dialect(case.dialect).expect("a registered dialect");
    dialect.open(&case.options, false).expect("valid options")
}

fn in_process(bench: &Bench, case: &Case, input: &str) {
    let bytes = input.len();
    let mut buf: Vec<u8> = Vec::with_capacity(bytes * 3);
    let library = bench.time(|| library_parse(case.dialect, input, &mut |_| 1));
    let mut floor = |layout| {
        bench.time(|| {
            library_parse(case.dialect, input, &mut |doc| {
                buf.clear();
                doc.write(&mut buf, layout);
                buf.len()
            })
        })
    };
    let floor_compact = floor(Layout::Compact);
    let floor_pretty = floor(Layout::Pretty);
    let session_path = |layout| {
        let mut out: Vec<u8> = Vec::with_capacity(bytes * 3);
        bench.time(|| {
            out.clear();
            let mut s = session(case);
            s.feed_document(input.as_bytes(), layout, &mut out)
                .expect("memory");
            s.finish_document(layout, &mut out).expect("memory");
            out.len()
        })
    };
    let session_compact = session_path(Layout::Compact);
    let session_pretty = session_path(Layout::Pretty);
    let stream = bench.time(|| {
        let mut s = session(case);
        s.stop_folding();
        let mut lines = Vec::with_capacity(1 << 16);
        let mut n = 0;
        for chunk in input.as_bytes().chunks(4096) {
            lines.clear();
            s.feed_json(chunk, &mut lines);
            n += lines.len();
        }
        lines.clear();
        s.finish_json(&mut lines);
        n + lines.len()
    });
    let rate = |d: Duration| mb_per_s(bytes, d);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "| {} | {:.0} | {:.0} | {:.0} | {:.0} ({:.2}x) | {:.0} ({:.2}x) | {:.0} |",
        case.name,
        rate(library),
        rate(floor_compact),
        rate(floor_pretty),
        rate(session_compact),
        ratio(session_compact, floor_compact),
        rate(session_pretty),
        ratio(session_pretty, floor_pretty),
        rate(stream),
    );
}

struct Bench {
    min: Duration,
    scale: usize,
}

impl Bench {
    fn time(&self, f: impl FnMut() -> usize) -> Duration {
        best_of(self.min, f)
    }
}

/// Wall time and peak resident memory (KiB, VmHWM sampled every 2 ms) of one run
/// of the binary with stdout to /dev/null, or `None` when it failed to run.
fn run_binary(args: &[&str], stdin: Option<&[u8]>) -> Option<(Duration, u64)> {
    let started = Instant::now();
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let status_file = format!("/proc/{}/status", child.id());
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(Ordering::Relaxed) {
                let hwm = std::fs::read_to_string(&status_file).ok().and_then(|s| {
                    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
                    line.split_whitespace().nth(1)?.parse::<u64>().ok()
                });
                peak = peak.max(hwm.unwrap_or(0));
                std::thread::sleep(Duration::from_millis(2));
            }
            peak
        })
    };
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take()?;
        pipe.write_all(bytes).ok()?;
    }
    let status = child.wait().ok()?;
    let elapsed = started.elapsed();
    done.store(true, Ordering::Relaxed);
    let peak = sampler.join().ok()?;
    // Exit 1 means a document with errors: still a complete run.
    matches!(status.code(), Some(0) | Some(1)).then_some((elapsed, peak))
}

/// The best wall time of `runs` runs, and the largest peak.
fn best_binary(runs: usize, args: &[&str], stdin: Option<&[u8]>) -> Option<(Duration, u64)> {
    let mut best: Option<(Duration, u64)> = None;
    for _ in 0..runs {
        let (t, peak) = run_binary(args, stdin)?;
        best = Some(match best {
            None => (t, peak),
            Some((bt, bp)) => (bt.min(t), bp.max(peak)),
        });
    }
    best
}

fn binary_row(case: &Case, file: &Path, bytes: usize, library: f64, runs: usize) {
    let file = file.to_str().expect("a UTF-8 temp path");
    let parse = best_binary(runs, &["parse", case.dialect, file], None);
    let compact = best_binary(runs, &["parse", case.dialect, file, "--compact"], None);
    let stream = best_binary(runs, &["stream", case.dialect, file], None);
    let cell = |r: Option<(Duration, u64)>| match r {
        Some((t, _)) => {
            let rate = mb_per_s(bytes, t);
            format!("{rate:.0} ({:.2})", rate / library)
        }
        None => "failed".to_string(),
    };
    let limit_kib = (3 * bytes as u64 + (16 << 20)) / 1024;
    let memory = match parse {
        Some((_, peak)) => format!(
            "{:.1} MiB ({:.2} of limit)",
            peak as f64 / 1024.0,
            peak as f64 / limit_kib as f64
        ),
        None => "n/a".to_string(),
    };
    println!(
        "| {}{} | {:.1} MB | {library:.0} | {} | {} | {} | {memory} |",
        case.name,
        if case.dense { " (dense)" } else { "" },
        bytes as f64 / 1e6,
        cell(parse),
        cell(compact),
        cell(stream),
    );
}

fn batch_row(case: &Case, records: usize, scale: usize, runs: usize) {
    let mut jsonl = Vec::new();
    let mut text_bytes = 0;
    for i in 0..records {
        // Records of 0.5 to 4 KB.
        let size = (512 + (i * 7919) % 3584) / scale.min(4);
        let text = (case.generate)(size.max(64), i as u64);
        text_bytes += text.len();
        serde_json::to_writer(&mut jsonl, &json!({"id": i, "text": text})).expect("JSON");
        jsonl.push(b'\n');
    }
    let time = |threads: &str| {
        best_binary(
            runs,
            &["batch", case.dialect, "--threads", threads],
            Some(&jsonl),
        )
        .map(|(t, _)| t)
    };
    let (one, two) = (time("1"), time("2"));
    let cell = |t: Option<Duration>| match t {
        Some(t) => format!(
            "{:.0} rec/s, {:.0} MB/s",
            records as f64 / t.as_secs_f64(),
            mb_per_s(text_bytes, t)
        ),
        None => "failed".to_string(),
    };
    let speedup = match (one, two) {
        (Some(a), Some(b)) => format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64()),
        _ => "n/a".to_string(),
    };
    println!(
        "| {} | {records} | {:.1} MB | {} | {} | {speedup} |",
        case.name,
        text_bytes as f64 / 1e6,
        cell(one),
        cell(two),
    );
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "idiolect-user-path-{}-{name}.txt",
        std::process::id()
    ));
    std::fs::write(&path, bytes).expect("temp file");
    path
}

fn main() {
    let quick = std::env::var_os("IDIOLECT_BENCH_QUICK").is_some();
    let bench = Bench {
        min: Duration::from_millis(if quick { 20 } else { 600 }),
        scale: if quick { 16 } else { 1 },
    };
    let runs = if quick { 1 } else { 3 };
    // `IDIOLECT_BENCH_ONLY=session,binary,batch` (any of them) runs those parts only.
    let only = std::env::var("IDIOLECT_BENCH_ONLY").unwrap_or_default();
    let part = |name: &str| only.is_empty() || only.split(',').any(|p| p.trim() == name);
    // `IDIOLECT_BENCH_CASE=TEXT` keeps the inputs whose name contains TEXT.
    let keep = std::env::var("IDIOLECT_BENCH_CASE").unwrap_or_default();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.name.contains(keep.as_str()))
        .collect();
    // `IDIOLECT_BENCH_DUMP=DIR` writes the 16 MB inputs of the binary rows to DIR
    // (for profiling the binary by hand) and stops.
    if let Some(dir) = std::env::var_os("IDIOLECT_BENCH_DUMP") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("dump directory");
        for case in &cases {
            let name = case.name.replace([':', ' '], "-").replace("--", "-");
            let path = dir.join(format!("{name}.txt"));
            std::fs::write(&path, (case.generate)(16_000_000 / bench.scale, 22)).expect("dump");
            println!("{} ({})", path.display(), case.dialect);
        }
        return;
    }

    if part("session") {
        println!("## The session path beside the library (MB/s, 4 MB inputs, one thread)\n");
        println!("Floor: the library's parse plus serializing its typed document into a buffer. Session: what `idiolect parse` runs (`feed_document`/`finish_document`), with its time as a multiple of the floor's. Stream: the session's event lines at 4096-byte chunks (`idiolect stream`).\n");
        println!("| input | library parse | floor compact | floor pretty | session compact | session pretty | stream (4096 B) |");
        println!("|---|---|---|---|---|---|---|");
        let size = 4_000_000 / bench.scale;
        for case in &cases {
            let input = (case.generate)(size, 21);
            in_process(&bench, case, &input);
        }
    }

    if part("binary") {
        println!("\n## The binary on 16 MB files (MB/s, and in brackets the share of the library's parse rate; peak memory of `parse` against 3 x input + 16 MiB)\n");
        println!("| input | size | library parse | `parse` (pretty) | `parse --compact` | `stream` | `parse` peak memory |");
        println!("|---|---|---|---|---|---|---|");
        let big = 16_000_000 / bench.scale;
        for case in &cases {
            let input = (case.generate)(big, 22);
            let library = mb_per_s(
                input.len(),
                bench.time(|| library_parse(case.dialect, &input, &mut |_| 1)),
            );
            let file = temp_file(case.dialect, input.as_bytes());
            binary_row(case, &file, input.len(), library, runs);
            let _ = std::fs::remove_file(&file);
        }
    }

    if part("batch") {
        println!("\n## `idiolect batch` over JSON Lines records (records of 0.5–4 KB, output to /dev/null)\n");
        println!("| records of | records | text | 1 thread | 2 threads | speed-up |");
        println!("|---|---|---|---|---|---|");
        let records = 10_000 / bench.scale;
        for case in &cases {
            batch_row(case, records, bench.scale, runs);
        }
    }
}

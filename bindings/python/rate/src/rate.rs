//! The program of both binaries (see `main.rs`).

use std::time::{Duration, Instant};

use idiolect::fold::Layout;
use idiolect::{anthropic_xml, kindaxml, plurnk, sections, transcript};
use rayon::prelude::*;

#[path = "../../../../benches/support/mod.rs"]
#[allow(dead_code)]
mod support;

/// The inputs, by dialect: the throughput bench's main row for each.
fn inputs(size: usize) -> Vec<(&'static str, String)> {
    vec![
        ("sections", support::sections_mixed(size, 2)),
        ("anthropic-xml", support::axml_dense(size, 7)),
        ("plurnk", support::plurnk_mixed(size, 6)),
        ("kindaxml", support::kindaxml_annotated(size, 6)),
        ("transcript", support::transcript_prompt(size, 8)),
    ]
}

/// The typed library parse of `dialect` with default options; returns a size so
/// the work is not optimized away.
fn library_parse(dialect: &str, text: &str) -> usize {
    fn keep<T, E: std::fmt::Debug>(document: Result<T, E>) -> usize {
        std::hint::black_box(document.expect("default options"));
        1
    }
    match dialect {
        "sections" => keep(sections::parse(text, &Default::default())),
        "anthropic-xml" => keep(anthropic_xml::parse(text, &Default::default())),
        "plurnk" => keep(plurnk::parse(text, &Default::default())),
        "kindaxml" => keep(kindaxml::parse(text, &Default::default())),
        "transcript" => keep(transcript::parse(text, &Default::default())),
        other => panic!("no library parse for {other}"),
    }
}

/// The session path: the whole document written as compact JSON.
fn session_parse(dialect: &idiolect::Dialect, text: &[u8]) -> Vec<u8> {
    let mut session = dialect
        .open(&serde_json::json!({}), false)
        .expect("default options");
    let mut out = Vec::with_capacity(text.len() + text.len() / 4 + 256);
    session
        .feed_document(text, Layout::Compact, &mut out)
        .and_then(|_| session.finish_document(Layout::Compact, &mut out))
        .expect("writing to memory");
    out
}

/// The best time of `f` over at least `min` of runs (and at least 3 runs).
fn best_of(min: Duration, mut f: impl FnMut() -> usize) -> Duration {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut runs = 0;
    while runs < 3 || start.elapsed() < min {
        let t = Instant::now();
        std::hint::black_box(f());
        best = best.min(t.elapsed());
        runs += 1;
    }
    best
}

fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

/// Runs the command line (see the binaries' docs).
pub fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let min = Duration::from_millis(700);
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen", dir, size] => {
            let size: usize = size.parse().expect("SIZE is a number of bytes");
            for (dialect, text) in inputs(size) {
                let path = std::path::Path::new(dir).join(format!("{dialect}.txt"));
                std::fs::write(&path, text).expect("writing an input");
            }
        }
        ["whole", dialect, file] => {
            let text = std::fs::read_to_string(file).expect("reading the input");
            let found = idiolect::dialect(dialect).expect("a known dialect");
            let library = best_of(min, || library_parse(dialect, &text));
            let session = best_of(min, || session_parse(found, text.as_bytes()).len());
            println!(
                "{{\"library\":{:.1},\"session\":{:.1}}}",
                mb_per_s(text.len(), library),
                mb_per_s(text.len(), session)
            );
        }
        ["many", dialect, file, threads] => {
            let found = idiolect::dialect(dialect).expect("a known dialect");
            let records: Vec<String> = std::fs::read_to_string(file)
                .expect("reading the records")
                .lines()
                .map(|l| serde_json::from_str(l).expect("a JSON string per line"))
                .collect();
            let bytes: usize = records.iter().map(String::len).sum();
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads.parse().expect("THREADS is a number"))
                .build()
                .expect("a thread pool");
            let library = best_of(min, || {
                pool.install(|| records.par_iter().map(|r| library_parse(dialect, r)).sum())
            });
            let session = best_of(min, || {
                pool.install(|| {
                    records
                        .par_iter()
                        .map(|r| session_parse(found, r.as_bytes()).len())
                        .sum()
                })
            });
            println!(
                "{{\"library\":{:.1},\"session\":{:.1}}}",
                mb_per_s(bytes, library),
                mb_per_s(bytes, session)
            );
        }
        _ => {
            eprintln!("usage: idiolect-rate gen DIR SIZE | whole DIALECT FILE | many DIALECT RECORDS THREADS");
            std::process::exit(2);
        }
    }
}

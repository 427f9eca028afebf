//! A bench-only driver for profiling the parsing machine: runs one row of the
//! throughput bench's markup-dense inputs, whole-document, so that a profiler
//! (callgrind's instruction counts, robust under load) or a wall clock can compare
//! builds of the crate row by row.
//!
//! `cargo bench --bench machine_rows -- <row> [size in bytes] [runs]` parses the
//! row's input `runs` times inside `parse_rows` (callgrind: `--toggle-collect=*parse_rows*`)
//! and prints the best time in MB/s and the event count. Rows: `sections-dense`,
//! `axml-dense`, `kindaxml-annotated`, `plurnk-mixed`. Without a row it runs every
//! row once on a small input.

// The generators of the rows this driver does not run are unused here.
#[allow(dead_code, unused_imports)]
mod support;

use std::time::{Duration, Instant};

use idiolect::fold::WHOLE_PARSE_PIECE;
use idiolect::{anthropic_xml, kindaxml, plurnk, sections};
use idiolect::{Machine, Stream};
use support::*;

const ROWS: [&str; 4] = [
    "sections-dense",
    "axml-dense",
    "kindaxml-annotated",
    "plurnk-mixed",
];

fn count<M: Machine>(mut stream: Stream<M>, input: &[u8]) -> usize {
    let mut n = 0;
    for piece in input.chunks(WHOLE_PARSE_PIECE) {
        n += stream.feed(piece).count();
    }
    n + stream.finish().count()
}

fn input(row: &str, size: usize) -> String {
    match row {
        "sections-dense" => sections_dense(size, 3),
        "axml-dense" => axml_dense(size, 7),
        "kindaxml-annotated" => kindaxml_annotated(size, 6),
        "plurnk-mixed" => plurnk_mixed(size, 6),
        other => panic!("unknown row `{other}`; rows: {ROWS:?}"),
    }
}

fn parse_once(row: &str, input: &[u8]) -> usize {
    match row {
        "sections-dense" => count(
            sections::Parser::with_options(&sections::Options::default()).expect("options"),
            input,
        ),
        "axml-dense" => count(
            anthropic_xml::Parser::with_options(&anthropic_xml::Options::default())
                .expect("options"),
            input,
        ),
        "kindaxml-annotated" => count(
            kindaxml::Parser::with_options(&kindaxml::Options::default()).expect("options"),
            input,
        ),
        _ => count(
            plurnk::Parser::with_options(&plurnk::Options::default()).expect("options"),
            input,
        ),
    }
}

/// Every parse of the measurement, and nothing else (the profiler's window).
#[inline(never)]
fn parse_rows(row: &str, input: &[u8], runs: usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut events = 0;
    for _ in 0..runs {
        let t = Instant::now();
        events = std::hint::black_box(parse_once(row, input));
        best = best.min(t.elapsed());
    }
    (best, events)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rows: Vec<&str> = match args.first() {
        Some(row) => vec![row.as_str()],
        None => ROWS.to_vec(),
    };
    let size = args.get(1).map_or(100_000, |s| s.parse().expect("size"));
    let runs = args.get(2).map_or(1, |s| s.parse().expect("runs"));
    for row in rows {
        let text = input(row, size);
        // Warm the grammar's compilation up outside the measured window.
        parse_once(row, &text.as_bytes()[..text.len().min(64)]);
        let (best, events) = parse_rows(row, text.as_bytes(), runs);
        println!(
            "{row}: {} bytes, {events} events, best of {runs}: {:.3} ms, {:.1} MB/s",
            text.len(),
            best.as_secs_f64() * 1e3,
            mb_per_s(text.len(), best)
        );
    }
}

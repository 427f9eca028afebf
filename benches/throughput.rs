//! `cargo bench`: throughput of every dialect, whole and streamed, and its scaling.
//!
//! Prints Markdown tables (the README's performance section is copied from them).
//! Inputs come from deterministic generators in benches/support; nothing large is
//! committed. Set `IDIOLECT_BENCH_QUICK=1` for a fast smoke run.

mod support;

use std::time::Duration;

use idiolect::{anthropic_xml, kindaxml, plurnk, sections};
use support::plurnk::plurnk_mixed;
use support::*;

fn sections_events(input: &[u8], chunk: usize) -> usize {
    let mut parser =
        sections::Parser::with_options(&sections::Options::default()).expect("default options");
    let mut n = 0;
    for piece in chunks(input, chunk) {
        n += parser.feed(piece).count();
    }
    n + parser.finish().count()
}

fn axml_events(input: &[u8], chunk: usize) -> usize {
    let mut parser = anthropic_xml::Parser::with_options(&anthropic_xml::Options::default())
        .expect("default options");
    let mut n = 0;
    for piece in chunks(input, chunk) {
        n += parser.feed(piece).count();
    }
    n + parser.finish().count()
}

fn plurnk_events(input: &[u8], chunk: usize) -> usize {
    let mut parser =
        plurnk::Parser::with_options(&plurnk::Options::default()).expect("default options");
    let mut n = 0;
    for piece in chunks(input, chunk) {
        n += parser.feed(piece).count();
    }
    n + parser.finish().count()
}

fn kindaxml_events(input: &[u8], chunk: usize) -> usize {
    let mut parser =
        kindaxml::Parser::with_options(&kindaxml::Options::default()).expect("default options");
    let mut n = 0;
    for piece in chunks(input, chunk) {
        n += parser.feed(piece).count();
    }
    n + parser.finish().count()
}

/// The whole-document parse including the folded document (segments and markers).
fn kindaxml_document(input: &[u8], _chunk: usize) -> usize {
    let text = std::str::from_utf8(input).expect("generated inputs are UTF-8");
    let doc = kindaxml::parse(text, &kindaxml::Options::default()).expect("default options");
    doc.segments.len() + doc.markers.len()
}

struct Bench {
    min: Duration,
    scale: usize,
}

impl Bench {
    fn row(&self, name: &str, input: &str, run: impl Fn(&[u8], usize) -> usize) {
        let bytes = input.as_bytes();
        let mut cells = Vec::new();
        for chunk in [idiolect::session::WHOLE_PARSE_PIECE, 4096, 16, 1] {
            let t = best_of(self.min, || run(bytes, chunk.min(bytes.len().max(1))));
            cells.push(format!("{:.0}", mb_per_s(bytes.len(), t)));
        }
        println!(
            "| {name} | {:.1} MB | {} |",
            bytes.len() as f64 / 1e6,
            cells.join(" | ")
        );
    }

    fn scaling(
        &self,
        name: &str,
        generate: impl Fn(usize) -> String,
        run: impl Fn(&[u8], usize) -> usize,
    ) {
        let mut times = Vec::new();
        for mb in [1usize, 4, 16] {
            let input = generate(mb * 1_000_000 / self.scale);
            let t = best_of(self.min, || {
                run(input.as_bytes(), idiolect::session::WHOLE_PARSE_PIECE)
            });
            let t16 = best_of(self.min, || run(input.as_bytes(), 16));
            times.push((t, t16));
        }
        let ratio = times[2].0.as_secs_f64() / times[0].0.as_secs_f64();
        let ratio16 = times[2].1.as_secs_f64() / times[0].1.as_secs_f64();
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {:.1} ms | {ratio:.1}x | {ratio16:.1}x |",
            times[0].0.as_secs_f64() * 1e3,
            times[1].0.as_secs_f64() * 1e3,
            times[2].0.as_secs_f64() * 1e3,
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported here.
    let quick = std::env::var_os("IDIOLECT_BENCH_QUICK").is_some();
    let bench = Bench {
        min: if quick {
            Duration::from_millis(20)
        } else {
            Duration::from_millis(700)
        },
        scale: if quick { 16 } else { 1 },
    };
    let size = 4_000_000 / bench.scale;

    println!(
        "## Throughput (MB/s; whole input, then streamed in chunks of 4096, 16 and 1 bytes)\n"
    );
    println!("| input | size | whole | 4096 B | 16 B | 1 B |");
    println!("|---|---|---|---|---|---|");
    bench.row(
        "sections: prose-heavy",
        &sections_prose(size, 1),
        sections_events,
    );
    bench.row(
        "sections: mixed (code dense with `<`)",
        &sections_mixed(size, 2),
        sections_events,
    );
    bench.row(
        "sections: markup-dense",
        &sections_dense(size, 3),
        sections_events,
    );
    bench.row(
        "sections: one 1 MB section body",
        &sections_big_body(1_000_000 / bench.scale, 4),
        sections_events,
    );
    bench.row(
        "anthropic-xml: prose-heavy",
        &axml_prose(size, 6),
        axml_events,
    );
    bench.row(
        "anthropic-xml: markup-dense (calls, code values, results)",
        &axml_dense(size, 7),
        axml_events,
    );
    bench.row(
        "kindaxml: annotated answer",
        &kindaxml_annotated(size, 6),
        kindaxml_events,
    );
    bench.row(
        "kindaxml: 100k unclosed cites on one line",
        &kindaxml_unclosed_line(100_000 / bench.scale),
        kindaxml_events,
    );
    bench.row(
        "plurnk: prose and statements of every OP",
        &plurnk_mixed(size, 6),
        plurnk_events,
    );

    println!("\n## Scaling (whole-input time at 1, 4 and 16 MB; 16 MB / 1 MB whole and at 16-byte chunks)\n");
    println!("| input | 1 MB | 4 MB | 16 MB | 16/1 whole | 16/1 at 16 B |");
    println!("|---|---|---|---|---|---|");
    bench.scaling("sections: mixed", |n| sections_mixed(n, 5), sections_events);
    bench.scaling(
        "anthropic-xml: markup-dense",
        |n| axml_dense(n, 8),
        axml_events,
    );
    bench.scaling(
        "kindaxml: annotated answer",
        |n| kindaxml_annotated(n, 7),
        kindaxml_events,
    );
    bench.scaling(
        "kindaxml: annotated answer, folded document",
        |n| kindaxml_annotated(n, 7),
        kindaxml_document,
    );
    bench.scaling(
        "kindaxml: unclosed cites on one line",
        |n| kindaxml_unclosed_line(n / 16),
        kindaxml_events,
    );
    bench.scaling("plurnk: mixed", |n| plurnk_mixed(n, 7), plurnk_events);
}

//! `cargo bench`: the performance suite of DESIGN §7 for every dialect.
//!
//! Prints Markdown tables (the README's performance section is copied from them):
//! 1. throughput in MB/s, whole-document and streamed at 4096-, 16- and 1-byte chunks;
//! 2. pathological inputs (unclosed tags, huge bodies, attribute and parameter values,
//!    deep nesting), whole and at 1-byte chunks;
//! 3. scaling: whole-document time at 1, 4 and 16 MB, and the 16 MB / 1 MB ratios;
//! 4. kindaxml side by side with the reference crate (kindaxml 0.1.0);
//! 5. peak memory of `idiolect stream` on 10 MB and 100 MB inputs (sampled).
//!
//! Inputs come from deterministic generators in benches/support; nothing large is
//! committed. `IDIOLECT_BENCH_QUICK=1` gives a fast smoke run on smaller inputs.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use idiolect::fold::WHOLE_PARSE_PIECE;
use idiolect::Fold;
use idiolect::{anthropic_xml, kindaxml, plurnk, sections, transcript};
use idiolect::{Machine, Stream};
use support::*;

/// Feeds `input` in chunks of `chunk` bytes and counts the events (a whole-document
/// parse is `chunk == WHOLE_PARSE_PIECE`: the way `parse` feeds).
fn count<M: Machine>(mut stream: Stream<M>, input: &[u8], chunk: usize) -> usize {
    let mut n = 0;
    for piece in input.chunks(chunk.max(1)) {
        n += stream.feed(piece).count();
    }
    n + stream.finish().count()
}

fn sections_run(options: sections::Options) -> impl Fn(&[u8], usize) -> usize {
    move |input, chunk| {
        count(
            sections::Parser::with_options(&options).expect("options"),
            input,
            chunk,
        )
    }
}

fn axml_run(input: &[u8], chunk: usize) -> usize {
    let parser =
        anthropic_xml::Parser::with_options(&anthropic_xml::Options::default()).expect("options");
    count(parser, input, chunk)
}

fn kindaxml_run(input: &[u8], chunk: usize) -> usize {
    kindaxml_with(kindaxml::Options::default())(input, chunk)
}

fn kindaxml_with(options: kindaxml::Options) -> impl Fn(&[u8], usize) -> usize {
    move |input, chunk| {
        count(
            kindaxml::Parser::with_options(&options).expect("options"),
            input,
            chunk,
        )
    }
}

/// Like [`kindaxml_with`], but folds the events into the document, as
/// `kindaxml::parse` does: where overlapping `retro_line` spans cost (KX-27).
fn kindaxml_document_with(options: kindaxml::Options) -> impl Fn(&[u8], usize) -> usize {
    move |input, chunk| {
        let mut parser = kindaxml::Parser::with_options(&options).expect("options");
        let mut folder = kindaxml::DocumentFolder::new().hollow();
        for piece in input.chunks(chunk.max(1)) {
            for event in parser.feed(piece) {
                folder.push(&event);
            }
        }
        for event in parser.finish() {
            folder.push(&event);
        }
        let doc = folder.into_document();
        doc.segments.iter().map(|s| s.annotations.len()).sum()
    }
}

fn plurnk_run(input: &[u8], chunk: usize) -> usize {
    count(
        plurnk::Parser::with_options(&plurnk::Options::default()).expect("options"),
        input,
        chunk,
    )
}

fn transcript_parse_run(input: &[u8], chunk: usize) -> usize {
    let machine = transcript::PromptMachine::new(&transcript::Options::default()).expect("options");
    count(Stream::new(machine), input, chunk)
}

fn transcript_scan_run(input: &[u8], chunk: usize) -> usize {
    let stops = vec!["\nUser:".to_string(), "\n\nHuman:".to_string()];
    count(
        Stream::new(transcript::ScanMachine::new(stops, true)),
        input,
        chunk,
    )
}

/// The floor of streaming cost: a machine that decides every chunk at once and
/// emits it as one text event (an inline string and a span, like a sections text
/// event). Its rate at small chunks is what the re-entry layer and one owned event
/// per feed cost, before any dialect work: S4 requires that event at every feed.
struct Floor;

/// The event of [`Floor`].
struct FloorEvent {
    _text: compact_str::CompactString,
    _span: (usize, usize),
}

impl Machine for Floor {
    type Event = FloorEvent;

    fn advance(
        &mut self,
        pending: &str,
        base: usize,
        _eof: bool,
        out: &mut Vec<FloorEvent>,
    ) -> usize {
        if !pending.is_empty() {
            out.push(FloorEvent {
                _text: pending.into(),
                _span: (base, base + pending.len()),
            });
        }
        pending.len()
    }
}

fn floor_run(input: &[u8], chunk: usize) -> usize {
    count(Stream::new(Floor), input, chunk)
}

/// Below the floor: no parser at all. Each chunk is checked as UTF-8 (a partial
/// character at a chunk's end is carried to the next) and lent, as borrowed text
/// with its span, to a callback. This bounds what any API that emits per feed
/// could reach, even one that lends its events instead of building them.
fn bare_run(input: &[u8], chunk: usize) -> usize {
    #[inline(never)]
    fn lend(
        carry: &mut Vec<u8>,
        offset: &mut usize,
        bytes: &[u8],
        f: &mut impl FnMut(&str, usize),
    ) {
        let owned;
        let bytes = if carry.is_empty() {
            bytes
        } else {
            carry.extend_from_slice(bytes);
            owned = std::mem::take(carry);
            &owned[..]
        };
        let valid = if bytes.len() <= 64 && bytes.is_ascii() {
            // SAFETY: every byte is ASCII, so the slice is valid UTF-8 (the same
            // shortcut the re-entry layer takes).
            unsafe { std::str::from_utf8_unchecked(bytes) }
        } else {
            match std::str::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => {
                    // The generated inputs are valid UTF-8: only a character split
                    // at the chunk's end is left over.
                    if e.error_len().is_none() {
                        carry.extend_from_slice(&bytes[e.valid_up_to()..]);
                    }
                    std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default()
                }
            }
        };
        if !valid.is_empty() {
            f(valid, *offset);
        }
        *offset += valid.len();
    }
    let (mut carry, mut offset, mut n) = (Vec::new(), 0, 0usize);
    let mut sink = |text: &str, at: usize| n = n.wrapping_add(text.len() ^ at);
    for piece in input.chunks(chunk.max(1)) {
        lend(&mut carry, &mut offset, piece, &mut sink);
    }
    n
}

struct Bench {
    min: Duration,
    /// Divides every input size (quick runs).
    scale: usize,
}

impl Bench {
    fn mb(&self, n: usize) -> usize {
        n * 1_000_000 / self.scale
    }

    fn time(&self, input: &[u8], chunk: usize, run: &impl Fn(&[u8], usize) -> usize) -> Duration {
        best_of(self.min, || run(input, chunk))
    }

    fn throughput(&self, name: &str, input: &str, run: impl Fn(&[u8], usize) -> usize) {
        let bytes = input.as_bytes();
        let cells: Vec<String> = [WHOLE_PARSE_PIECE, 4096, 16, 1]
            .iter()
            .map(|&chunk| {
                format!(
                    "{:.0}",
                    mb_per_s(bytes.len(), self.time(bytes, chunk, &run))
                )
            })
            .collect();
        println!(
            "| {name} | {:.1} MB | {} |",
            bytes.len() as f64 / 1e6,
            cells.join(" | ")
        );
    }

    fn pathological(&self, name: &str, input: &str, run: impl Fn(&[u8], usize) -> usize) {
        let bytes = input.as_bytes();
        let whole = self.time(bytes, WHOLE_PARSE_PIECE, &run);
        let single = self.time(bytes, 1, &run);
        println!(
            "| {name} | {:.1} MB | {:.1} ms | {:.0} | {:.1} ms | {:.0} |",
            bytes.len() as f64 / 1e6,
            whole.as_secs_f64() * 1e3,
            mb_per_s(bytes.len(), whole),
            single.as_secs_f64() * 1e3,
            mb_per_s(bytes.len(), single),
        );
    }

    fn scaling(
        &self,
        name: &str,
        generate: impl Fn(usize) -> String,
        run: impl Fn(&[u8], usize) -> usize,
    ) {
        let inputs: Vec<String> = [1, 4, 16].iter().map(|&mb| generate(self.mb(mb))).collect();
        let whole: Vec<Duration> = inputs
            .iter()
            .map(|i| self.time(i.as_bytes(), WHOLE_PARSE_PIECE, &run))
            .collect();
        let at16 = [&inputs[0], &inputs[2]].map(|i| self.time(i.as_bytes(), 16, &run));
        // Whole again, with the core's caches cleared before each run: then the 1 MB
        // input does not run from L2 while the 16 MB one cannot fit there.
        let mut evict = vec![0u8; EVICT_BYTES];
        let cold = [&inputs[0], &inputs[2]].map(|i| {
            cold_best_of(self.min, &mut evict, || {
                run(i.as_bytes(), WHOLE_PARSE_PIECE)
            })
        });
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1}x | {:.1}x | {:.1}x |",
            ms(whole[0]),
            ms(whole[1]),
            ms(whole[2]),
            whole[2].as_secs_f64() / whole[0].as_secs_f64(),
            at16[1].as_secs_f64() / at16[0].as_secs_f64(),
            cold[1].as_secs_f64() / cold[0].as_secs_f64(),
        );
    }
}

/// How much to write between cold runs: four times the core's L2 cache.
const EVICT_BYTES: usize = 16 << 20;

/// Like `best_of`, but before each timed run writes one byte per cache line of
/// `evict` (not timed), so every run starts with the input out of the core's
/// private caches.
fn cold_best_of(min: Duration, evict: &mut [u8], mut f: impl FnMut() -> usize) -> Duration {
    let start = std::time::Instant::now();
    let mut best = Duration::MAX;
    let mut runs = 0;
    let mut sink = 0usize;
    while runs < 2 || start.elapsed() < min {
        for (k, line) in evict.chunks_mut(64).enumerate() {
            line[0] = (k + runs) as u8;
        }
        std::hint::black_box(&evict);
        let t = std::time::Instant::now();
        sink = sink.wrapping_add(f());
        best = best.min(t.elapsed());
        runs += 1;
    }
    std::hint::black_box(sink);
    best
}

/// Peak resident memory (KiB) of one `idiolect stream DIALECT` run over `input`:
/// the child's own high-water mark (`VmHWM` in /proc/PID/status, which starts afresh
/// at exec), sampled every 2 ms until it exits. (getrusage would not do: a child
/// spawned with vfork inherits the parent's peak.)
fn stream_peak_kib(dialect: &str, args: &[&str], input: &[u8]) -> Option<u64> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_idiolect"))
        .args(["stream", dialect])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let status_file = format!("/proc/{}/status", child.id());
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut peak = None;
            while !done.load(Ordering::Relaxed) {
                let hwm = std::fs::read_to_string(&status_file).ok().and_then(|s| {
                    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
                    line.split_whitespace().nth(1)?.parse::<u64>().ok()
                });
                if let Some(kib) = hwm {
                    peak = Some(peak.unwrap_or(0).max(kib));
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            peak
        })
    };
    let mut stdin = child.stdin.take()?;
    for piece in input.chunks(1 << 20) {
        stdin.write_all(piece).ok()?;
    }
    drop(stdin);
    let exited = child.wait().ok()?.success();
    done.store(true, Ordering::Relaxed);
    let peak = sampler.join().ok()?;
    peak.filter(|_| exited)
}

fn memory_row(
    name: &str,
    dialect: &str,
    args: &[&str],
    generate: impl Fn(usize) -> String,
    scale: usize,
) {
    let small = generate(10_000_000 / scale);
    let big = generate(100_000_000 / scale);
    let (a, b) = (
        stream_peak_kib(dialect, args, small.as_bytes()),
        stream_peak_kib(dialect, args, big.as_bytes()),
    );
    let show = |v: Option<u64>| {
        v.map_or("n/a".to_string(), |k| {
            format!("{:.1} MiB", k as f64 / 1024.0)
        })
    };
    println!("| {name} | {} | {} |", show(a), show(b));
}

/// The reference crate on the same input; `None` if it panicked.
fn reference_kindaxml(input: &str) -> Option<usize> {
    std::panic::catch_unwind(|| {
        let result = kindaxml_ref::parse(input, &reference_config());
        result.segments.len() + result.markers.len()
    })
    .ok()
}

fn main() {
    let quick = std::env::var_os("IDIOLECT_BENCH_QUICK").is_some();
    let bench = Bench {
        min: Duration::from_millis(if quick { 20 } else { 600 }),
        scale: if quick { 16 } else { 1 },
    };
    let size = bench.mb(4);
    let big_tags = sections::Options {
        max_tag_bytes: 2 << 20,
        ..Default::default()
    };

    println!(
        "## Throughput (MB/s: whole document, then streamed in chunks of 4096, 16 and 1 bytes)\n"
    );
    println!("| input | size | whole | 4096 B | 16 B | 1 B |");
    println!("|---|---|---|---|---|---|");
    let default_sections = || sections_run(sections::Options::default());
    bench.throughput(
        "sections: prose-heavy",
        &sections_prose(size, 1),
        default_sections(),
    );
    bench.throughput(
        "sections: code inside sections (`<` every ~20 B)",
        &sections_mixed(size, 2),
        default_sections(),
    );
    bench.throughput(
        "sections: markup-dense",
        &sections_dense(size, 3),
        default_sections(),
    );
    bench.throughput("anthropic-xml: prose-heavy", &axml_prose(size, 6), axml_run);
    bench.throughput(
        "anthropic-xml: markup-dense",
        &axml_dense(size, 7),
        axml_run,
    );
    bench.throughput(
        "plurnk: prose and statements",
        &plurnk_mixed(size, 6),
        plurnk_run,
    );
    bench.throughput(
        "kindaxml: annotated answer",
        &kindaxml_annotated(size, 6),
        kindaxml_run,
    );
    bench.throughput(
        "transcript: parse a prompt",
        &transcript_prompt(size, 8),
        transcript_parse_run,
    );
    bench.throughput(
        "transcript: scan a continuation",
        &transcript_continuation(size, 9),
        transcript_scan_run,
    );
    bench.throughput(
        "floor: the re-entry layer alone, one event per feed (prose)",
        &sections_prose(size, 1),
        floor_run,
    );
    bench.throughput(
        "no parser: UTF-8 check and a callback lent the text, per feed (prose)",
        &sections_prose(size, 1),
        bare_run,
    );

    println!("\n## Pathological inputs (whole document and 1-byte chunks)\n");
    println!("| input | size | whole | MB/s | 1-byte chunks | MB/s |");
    println!("|---|---|---|---|---|---|");
    bench.pathological(
        "sections: 100k unclosed `<think>`",
        &sections_unclosed(100_000 / bench.scale),
        default_sections(),
    );
    bench.pathological(
        "sections: 10 MB section body",
        &sections_big_body(bench.mb(10), 4),
        default_sections(),
    );
    bench.pathological(
        "sections: 1 MB attribute value",
        &sections_big_attribute(bench.mb(1)),
        sections_run(big_tags.clone()),
    );
    bench.pathological(
        "sections: one opener with 100k attributes (keys repeat)",
        &sections_many_attributes(100_000 / bench.scale),
        sections_run(big_tags.clone()),
    );
    bench.pathological(
        "kindaxml: one tag with 100k attributes (keys repeat)",
        &kindaxml_many_attributes(100_000 / bench.scale),
        kindaxml_with(kindaxml::Options {
            max_tag_bytes: 4 << 20,
            ..Default::default()
        }),
    );
    bench.pathological(
        "anthropic-xml: 1 MB parameter value",
        &axml_big_parameter(bench.mb(1), 5),
        axml_run,
    );
    bench.pathological(
        "plurnk: suffixes nested 2000 deep",
        &plurnk_nested(2000 / bench.scale),
        plurnk_run,
    );
    bench.pathological(
        "kindaxml: 100k unclosed tags on one line",
        &kindaxml_unclosed_line(100_000 / bench.scale),
        kindaxml_run,
    );
    // The same line folded into the document: each cite's `retro_line` span reaches
    // back to the line start, past at most 15 earlier cites (`max_retro_overlap`).
    bench.pathological(
        "kindaxml: document of 100k postfix cites on one line (retro spans overlap 16 deep)",
        &kindaxml_unclosed_line(100_000 / bench.scale),
        kindaxml_document_with(kindaxml::Options::default()),
    );
    bench.pathological(
        "kindaxml: document of 100k postfix cites on one line, `retro_anchor: previous_tag`",
        &kindaxml_unclosed_line(100_000 / bench.scale),
        kindaxml_document_with(kindaxml::Options {
            retro_anchor: kindaxml::RetroAnchor::PreviousTag,
            ..Default::default()
        }),
    );

    println!("\n## Scaling (whole-document time at 1, 4 and 16 MB; 16 MB / 1 MB: whole, at 16-byte chunks, and whole with the core's caches cleared before each run)\n");
    println!("| input | 1 MB | 4 MB | 16 MB | 16/1 whole | 16/1 at 16 B | 16/1 whole, cold |");
    println!("|---|---|---|---|---|---|---|");
    bench.scaling(
        "sections: code inside sections",
        |n| sections_mixed(n, 5),
        default_sections(),
    );
    bench.scaling(
        "anthropic-xml: markup-dense",
        |n| axml_dense(n, 8),
        axml_run,
    );
    bench.scaling(
        "plurnk: prose and statements",
        |n| plurnk_mixed(n, 7),
        plurnk_run,
    );
    bench.scaling(
        "kindaxml: annotated answer",
        |n| kindaxml_annotated(n, 7),
        kindaxml_run,
    );
    bench.scaling(
        "transcript: parse a prompt",
        |n| transcript_prompt(n, 10),
        transcript_parse_run,
    );

    // 16-byte cites: 1 MB is 62,500 unclosed tags on one line, 16 MB a million.
    bench.scaling(
        "kindaxml: unclosed tags on one line",
        |n| kindaxml_unclosed_line(n / 16),
        kindaxml_run,
    );

    println!("\n## kindaxml against the reference crate (kindaxml 0.1.0), same ASCII input\n");
    println!("| input | idiolect (document) | reference | reference time / idiolect time |");
    println!("|---|---|---|---|");
    let inputs = [
        (
            "annotated answer",
            kindaxml_annotated_ascii(250_000 / bench.scale, 11),
        ),
        (
            "annotated answer",
            kindaxml_annotated_ascii(1_000_000 / bench.scale, 11),
        ),
        (
            "annotated answer",
            kindaxml_annotated_ascii(2_000_000 / bench.scale, 11),
        ),
        (
            "unclosed tags on one line",
            kindaxml_unclosed_line(10_000 / bench.scale),
        ),
        (
            "unclosed tags on one line",
            kindaxml_unclosed_line(20_000 / bench.scale),
        ),
        (
            "unclosed tags on one line",
            kindaxml_unclosed_line(40_000 / bench.scale),
        ),
    ];
    for (what, input) in &inputs {
        let ours = best_of(bench.min, || {
            let doc = kindaxml::parse(input, &kindaxml::Options::default()).expect("options");
            doc.segments.len() + doc.markers.len()
        });
        let t = std::time::Instant::now();
        let theirs = reference_kindaxml(input).map(|_| t.elapsed());
        let cell = |d: Duration| {
            format!(
                "{:.1} ms ({:.1} MB/s)",
                d.as_secs_f64() * 1e3,
                mb_per_s(input.len(), d)
            )
        };
        match theirs {
            Some(d) => println!(
                "| {what}, {:.2} MB | {} | {} | {:.1}x |",
                input.len() as f64 / 1e6,
                cell(ours),
                cell(d),
                d.as_secs_f64() / ours.as_secs_f64()
            ),
            None => println!(
                "| {what}, {:.2} MB | {} | panicked | n/a |",
                input.len() as f64 / 1e6,
                cell(ours)
            ),
        }
    }

    println!("\n## Peak memory of `idiolect stream` (release binary, NDJSON to /dev/null; VmHWM sampled every 2 ms)\n");
    println!("| input | 10 MB | 100 MB |");
    println!("|---|---|---|");
    memory_row(
        "sections: code inside sections",
        "sections",
        &[],
        |n| sections_mixed(n, 12),
        bench.scale,
    );
    memory_row(
        "anthropic-xml: markup-dense",
        "anthropic-xml",
        &[],
        |n| axml_dense(n, 13),
        bench.scale,
    );
    memory_row(
        "plurnk: prose and statements",
        "plurnk",
        &[],
        |n| plurnk_mixed(n, 14),
        bench.scale,
    );
    memory_row(
        "kindaxml: annotated answer",
        "kindaxml",
        &[],
        |n| kindaxml_annotated(n, 15),
        bench.scale,
    );
    memory_row(
        "transcript: scan a continuation",
        "transcript",
        &["--stop", "\nUser:"],
        |n| transcript_continuation(n, 16),
        bench.scale,
    );
}

/// The reference crate configured like idiolect's kindaxml defaults: the same
/// recognized tags (its default recognizes none); both auto-close on unknown tags.
fn reference_config() -> kindaxml_ref::ParserConfig {
    kindaxml_ref::ParserConfig {
        recognized_tags: ["cite", "claim", "note", "todo", "metric", "risk", "label"]
            .into_iter()
            .map(String::from)
            .collect(),
        ..Default::default()
    }
}

//! idiolect's field families side by side with smg's `tool-parser` crate: the same
//! generated inputs, whole and streamed at 4-byte (a token) and 64-byte chunks, both
//! in one run, with the ratio; and whether the two agree on those inputs (calls,
//! names, arguments as JSON values, text).
//!
//! The families are those of issue 16 that tool-parser 1.10.0 has a parser for:
//! hermes (smg's `qwen`), qwen3-coder (`qwen_xml`), deepseek-v3 (`deepseek`),
//! deepseek-v3.1 (`deepseek31`) and mistral (`mistral`); it has none for harmony
//! (gpt-oss).
//!
//! Times are the CPU time of the benchmark's thread (the best of repeated runs), so
//! that a run on a machine shared with other work measures the parsers, not the
//! scheduler; the wall time of a run that got preempted says nothing about either
//! parser.
//!
//! `cd benches/smg && cargo run --release [-- CALLS]` (default 10,000 calls);
//! `cargo run --release -- scaling` times idiolect alone at 1,000, 4,000 and 16,000
//! calls; `cargo run --release -- profile FAMILY CALLS CHUNK RUNS` runs idiolect alone
//! on one input (CHUNK 0: whole), for a profiler.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use idiolect::field::{self, DeltaMode, DeltaProjection, Event, Item, Options};
use idiolect::{Machine, Stream};
use openai_protocol::common::Tool;
use serde_json::{json, Value};
use tool_parser::parsers::qwen_xml::QwenXmlParser;
use tool_parser::parsers::{DeepSeek31Parser, DeepSeekParser, MistralParser};
use tool_parser::{QwenParser, ToolParser};

/// Drives a future that never waits on anything outside it (smg's parsers are
/// async only in signature).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Hermes,
    Qwen3Coder,
    DeepseekV3,
    DeepseekV31,
    Mistral,
}

const FAMILIES: [Family; 5] = [
    Family::Hermes,
    Family::Qwen3Coder,
    Family::DeepseekV3,
    Family::DeepseekV31,
    Family::Mistral,
];

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Hermes => "hermes",
            Family::Qwen3Coder => "qwen3-coder",
            Family::DeepseekV3 => "deepseek-v3",
            Family::DeepseekV31 => "deepseek-v3.1",
            Family::Mistral => "mistral",
        }
    }

    fn from_name(name: &str) -> Option<Family> {
        FAMILIES.into_iter().find(|f| f.name() == name)
    }
}

const PROSE: &str =
    "I will look up the forecast for the city, then compare it with yesterday's numbers.\n";

/// A turn of `calls` calls with prose, as the family writes it. The prose has no
/// markers; arguments hold a string with escapes, an integer and a boolean.
///
/// In hermes, qwen3-coder and the deepseek families each call follows its own line
/// of prose (a deepseek call in a calls section of its own). In mistral the prose
/// comes first and the calls follow in one `[TOOL_CALLS]` array, as mistral writes
/// several calls: smg's mistral parser reads only the first array of a turn, so a
/// group per call would let it skip most of the input.
fn generate(family: Family, calls: usize) -> String {
    let mut out = String::new();
    if family == Family::Mistral {
        for i in 0..calls {
            out.push_str(&format!("Step {i}: {PROSE}"));
        }
        out.push_str("[TOOL_CALLS] [");
    }
    for i in 0..calls {
        let city = format!("Paris \"{}\" \\ café", i % 97);
        let args = json!({"city": city, "days": i % 7, "metric": i % 2 == 0});
        if family != Family::Mistral {
            out.push_str(&format!("Step {i}: {PROSE}"));
        }
        match family {
            Family::Hermes => out.push_str(&format!(
                "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {args}}}\n</tool_call>\n"
            )),
            Family::Qwen3Coder => out.push_str(&format!(
                "<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n<parameter=days>\n{}\n</parameter>\n<parameter=metric>\n{}\n</parameter>\n</function>\n</tool_call>\n",
                i % 7,
                i % 2 == 0
            )),
            Family::DeepseekV3 => out.push_str(&format!(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{args}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n"
            )),
            Family::DeepseekV31 => out.push_str(&format!(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{args}<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n"
            )),
            Family::Mistral => {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&format!(
                    "{{\"name\": \"get_weather\", \"arguments\": {args}}}"
                ));
            }
        }
    }
    if family == Family::Mistral {
        out.push_str("]\n");
    }
    out.push_str("That is all.");
    out
}

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "metric": {"type": "boolean"}
    }})
}

fn smg_tools() -> Vec<Tool> {
    let tool =
        json!({"type": "function", "function": {"name": "get_weather", "parameters": schema()}});
    vec![serde_json::from_value(tool).expect("an OpenAI tool")]
}

/// Our options: the tool's schema, as smg gets it.
struct Ours {
    options: Options,
    qwen3_coder: field::qwen3_coder::Options,
    deepseek: field::deepseek::Options,
    mistral: field::mistral::Options,
}

fn our_options() -> Ours {
    let options = json!({"tools": [{"name": "get_weather", "parameters": schema()}]});
    Ours {
        options: serde_json::from_value(options.clone()).expect("options"),
        qwen3_coder: serde_json::from_value(options.clone()).expect("qwen3-coder options"),
        deepseek: serde_json::from_value(options.clone()).expect("deepseek options"),
        mistral: serde_json::from_value(options).expect("mistral options"),
    }
}

/// What a parser made of a turn: text, and calls as (name, arguments value).
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    text: String,
    calls: Vec<(String, Value)>,
    /// A streamed run stopped at its deadline: how many bytes it had been fed.
    stopped_at: Option<usize>,
}

/// Chunks of about `size` bytes, cut at character boundaries (smg takes `&str`).
fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// The whole-document parse, as a user calls it (`parse`, which feeds the text in
/// pieces of 64 KiB so that the events of one piece are folded before the next).
fn ours_whole(family: Family, ours: &Ours, text: &str) -> Outcome {
    let options = &ours.options;
    let doc = match family {
        Family::Hermes => field::hermes::parse(text, options),
        Family::Qwen3Coder => field::qwen3_coder::parse(text, &ours.qwen3_coder),
        Family::DeepseekV3 => {
            field::deepseek::parse(field::deepseek::Variant::V3, text, &ours.deepseek)
        }
        Family::DeepseekV31 => {
            field::deepseek::parse(field::deepseek::Variant::V31, text, &ours.deepseek)
        }
        Family::Mistral => field::mistral::parse(text, &ours.mistral),
    };
    outcome(doc)
}

fn outcome(doc: field::Document) -> Outcome {
    let mut outcome = Outcome::default();
    for item in doc.items {
        match item {
            Item::Text { text, .. } => outcome.text.push_str(&text),
            Item::ToolCall {
                name,
                input,
                complete: true,
                ..
            } => outcome.calls.push((name, input)),
            _ => {}
        }
    }
    outcome
}

/// What a server collects from chat-completion deltas: content, and per call its
/// name and argument fragments.
#[derive(Default)]
struct Collected {
    projection: DeltaProjection,
    deltas: Vec<field::Delta>,
    text: String,
    calls: Vec<(String, String)>,
}

impl Collected {
    /// Projects the events (taken by value, as a server takes them from the
    /// parser) and collects the deltas.
    fn take(&mut self, events: impl Iterator<Item = Event>) {
        for event in events {
            self.projection.push_owned(event, &mut self.deltas);
        }
        for delta in self.deltas.drain(..) {
            if let Some(content) = delta.content {
                self.text.push_str(&content);
            }
            for call in delta.tool_calls.into_iter().flatten() {
                if self.calls.len() <= call.index {
                    self.calls
                        .resize(call.index + 1, (String::new(), String::new()));
                }
                if let Some(name) = call.function.name {
                    self.calls[call.index].0 = name;
                }
                if let Some(fragment) = call.function.arguments {
                    self.calls[call.index].1.push_str(&fragment);
                }
            }
        }
    }

    fn outcome(self) -> Outcome {
        Outcome {
            text: self.text,
            calls: self
                .calls
                .into_iter()
                .map(|(n, a)| (n, arguments(&a)))
                .collect(),
            stopped_at: None,
        }
    }
}

fn stream<M: Machine<Event = Event>>(mut parser: Stream<M>, pieces: &[&str]) -> Outcome {
    let mut collected = Collected {
        projection: DeltaProjection::new(DeltaMode::Live),
        ..Collected::default()
    };
    for piece in pieces {
        collected.take(parser.feed(piece.as_bytes()));
    }
    collected.take(parser.finish());
    collected.outcome()
}

/// A streamed parse as a server consumes it: events projected to chat-completion
/// deltas (live), content and per call its name and argument fragments collected,
/// exactly what [`smg_streamed`] collects from smg's streaming results.
fn ours_streamed(family: Family, ours: &Ours, pieces: &[&str]) -> Outcome {
    let options = &ours.options;
    match family {
        Family::Hermes => stream(
            field::hermes::Parser::with_options(options).expect("options"),
            pieces,
        ),
        Family::Qwen3Coder => stream(
            field::qwen3_coder::Parser::with_options(&ours.qwen3_coder).expect("options"),
            pieces,
        ),
        Family::DeepseekV3 => stream(
            field::deepseek::Parser::with_options(field::deepseek::Variant::V3, &ours.deepseek),
            pieces,
        ),
        Family::DeepseekV31 => stream(
            field::deepseek::Parser::with_options(field::deepseek::Variant::V31, &ours.deepseek),
            pieces,
        ),
        Family::Mistral => stream(
            field::mistral::Parser::with_options(&ours.mistral).expect("options"),
            pieces,
        ),
    }
}

fn smg_parser(family: Family) -> Box<dyn ToolParser> {
    match family {
        Family::Hermes => Box::new(QwenParser::new()),
        Family::Qwen3Coder => Box::new(QwenXmlParser::new()),
        Family::DeepseekV3 => Box::new(DeepSeekParser::new()),
        Family::DeepseekV31 => Box::new(DeepSeek31Parser::new()),
        Family::Mistral => Box::new(MistralParser::new()),
    }
}

fn arguments(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

fn smg_whole(family: Family, tools: &[Tool], text: &str) -> Outcome {
    let parser = smg_parser(family);
    let (normal, calls) =
        block_on(parser.parse_complete_with_tools(text, tools)).expect("smg parses");
    Outcome {
        text: normal,
        calls: calls
            .into_iter()
            .map(|c| (c.function.name, arguments(&c.function.arguments)))
            .collect(),
        stopped_at: None,
    }
}

/// CPU time after which a streamed smg run stops (smg's deepseek parsers re-scan
/// their growing buffer on every chunk, so a run over 10,000 calls would take
/// hours): the throughput of the part it did is then reported, which favours smg
/// (its cost per byte only grows further on).
const SMG_DEADLINE: Duration = Duration::from_secs(20);

fn smg_streamed(family: Family, tools: &[Tool], pieces: &[&str]) -> Outcome {
    let start = cpu_time();
    let mut stopped_at = None;
    let mut fed = 0;
    let mut parser = smg_parser(family);
    let mut text = String::new();
    let mut calls: Vec<(String, String)> = Vec::new();
    let take = |items: Vec<tool_parser::types::ToolCallItem>, calls: &mut Vec<(String, String)>| {
        for item in items {
            while calls.len() <= item.tool_index {
                calls.push((String::new(), String::new()));
            }
            if let Some(name) = item.name {
                calls[item.tool_index].0 = name;
            }
            calls[item.tool_index].1.push_str(&item.parameters);
        }
    };
    for (i, piece) in pieces.iter().enumerate() {
        if i % 256 == 255 && cpu_time() - start > SMG_DEADLINE {
            stopped_at = Some(fed);
            break;
        }
        let result = block_on(parser.parse_incremental(piece, tools)).expect("smg streams");
        text.push_str(&result.normal_text);
        take(result.calls, &mut calls);
        fed += piece.len();
    }
    if let Some(rest) = parser.get_unstreamed_tool_args() {
        take(rest, &mut calls);
    }
    text.push_str(&parser.take_unstreamed_normal_text());
    Outcome {
        text,
        calls: calls.into_iter().map(|(n, a)| (n, arguments(&a))).collect(),
        stopped_at,
    }
}

/// The CPU time this thread has used.
fn cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The best CPU time of runs of `f` repeated over `budget` of CPU time (at least
/// one run), with what the best run returned.
fn best<T>(budget: Duration, mut f: impl FnMut() -> T) -> (Duration, T) {
    let start = cpu_time();
    let t = cpu_time();
    let mut out = f();
    let mut best = cpu_time() - t;
    while cpu_time() - start < budget {
        let t = cpu_time();
        let o = std::hint::black_box(f());
        let time = cpu_time() - t;
        if time < best {
            best = time;
            out = o;
        }
    }
    (best, out)
}

fn mbps(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

/// Where two outcomes first differ: in the calls (names and arguments as JSON
/// values), then in the text; one line each.
fn difference(a: &Outcome, b: &Outcome) -> (Option<String>, Option<String>) {
    let calls = if a.calls.len() != b.calls.len() {
        Some(format!("{} calls against {}", a.calls.len(), b.calls.len()))
    } else {
        (0..a.calls.len())
            .find(|&i| a.calls[i] != b.calls[i])
            .map(|i| format!("call {i}: {:?} against {:?}", a.calls[i], b.calls[i]))
    };
    let text = (a.text != b.text).then(|| {
        let at = a
            .text
            .bytes()
            .zip(b.text.bytes())
            .take_while(|(x, y)| x == y)
            .count();
        let show = |t: &str| {
            let mut end = (at + 30).min(t.len());
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.get(at..end).unwrap_or("").to_string()
        };
        format!(
            "text: {} bytes against {}, first difference at byte {at}: {:?} against {:?}",
            a.text.len(),
            b.text.len(),
            show(&a.text),
            show(&b.text)
        )
    });
    (calls, text)
}

/// `scaling`: idiolect alone at growing sizes (time must grow linearly).
fn scaling() {
    let ours = our_options();
    for family in FAMILIES {
        for calls in [1000, 4000, 16000] {
            let text = generate(family, calls);
            let pieces = chunks(&text, 4);
            let (whole, _) = best(Duration::from_millis(500), || {
                ours_whole(family, &ours, &text)
            });
            let (streamed, _) = best(Duration::from_millis(500), || {
                ours_streamed(family, &ours, &pieces)
            });
            println!(
                "{} {calls} calls ({:.1} MB): whole {:.0} MB/s, 4-byte chunks {:.0} MB/s",
                family.name(),
                text.len() as f64 / 1e6,
                mbps(text.len(), whole),
                mbps(text.len(), streamed)
            );
        }
    }
}

/// `profile FAMILY CALLS CHUNK RUNS`: idiolect alone, one family, one size and
/// chunking (0 = whole), run RUNS times, for a profiler.
fn profile(args: &[String]) {
    let family = args
        .first()
        .and_then(|a| Family::from_name(a))
        .unwrap_or(Family::Hermes);
    let calls = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let chunk: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0);
    let runs: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(10);
    let ours = our_options();
    let text = generate(family, calls);
    let pieces = chunks(&text, chunk.max(1));
    // One run first: the family's grammar compiles on first use.
    ours_streamed(family, &ours, &pieces[..pieces.len().min(100)]);
    let t = cpu_time();
    for _ in 0..runs {
        if chunk == 0 {
            std::hint::black_box(ours_whole(family, &ours, &text));
        } else {
            std::hint::black_box(ours_streamed(family, &ours, &pieces));
        }
    }
    println!(
        "{} {calls} calls, chunk {chunk}: {:.1} MB/s (CPU time)",
        family.name(),
        mbps(text.len() * runs, cpu_time() - t)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("scaling") => return scaling(),
        Some("profile") => return profile(&args[1..]),
        _ => {}
    }
    let calls: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let tools = smg_tools();
    let ours = our_options();
    let budget = Duration::from_millis(1000);
    println!("| family | input | mode | idiolect MB/s | smg MB/s | idiolect / smg |");
    println!("|---|---|---|---|---|---|");
    let mut notes = Vec::new();
    for family in FAMILIES {
        let text = generate(family, calls);
        let size = format!("{:.1} MB, {calls} calls", text.len() as f64 / 1e6);
        for (mode, size_bytes) in [
            ("whole", None),
            ("4-byte chunks", Some(4)),
            ("64-byte chunks", Some(64)),
        ] {
            let pieces = match size_bytes {
                None => vec![text.as_str()],
                Some(n) => chunks(&text, n),
            };
            let run_ours = || match size_bytes {
                None => ours_whole(family, &ours, &text),
                Some(_) => ours_streamed(family, &ours, &pieces),
            };
            let run_smg = || match size_bytes {
                None => smg_whole(family, &tools, &text),
                Some(_) => smg_streamed(family, &tools, &pieces),
            };
            let (ours_time, a) = best(budget, run_ours);
            let (smg_time, b) = best(budget, run_smg);
            let ours_speed = mbps(text.len(), ours_time);
            let (smg_speed, stopped) = match b.stopped_at {
                None => (mbps(text.len(), smg_time), String::new()),
                Some(fed) => (
                    mbps(fed, smg_time),
                    format!(
                        " (smg stopped after {} s at byte {fed} of {})",
                        SMG_DEADLINE.as_secs(),
                        text.len()
                    ),
                ),
            };
            // Enough decimals for smg's slowest runs to show.
            let prec = if smg_speed < 1.0 { 3 } else { 1 };
            println!(
                "| {} | {size} | {mode} | {ours_speed:.0} | {smg_speed:.prec$} | {:.1}x{stopped} |",
                family.name(),
                ours_speed / smg_speed,
            );
            if b.stopped_at.is_some() {
                notes.push(format!(
                    "{} {mode}: smg stopped at its deadline; no agreement check",
                    family.name()
                ));
                continue;
            }
            let (calls, text) = difference(&a, &b);
            notes.push(format!(
                "{} {mode}: calls {}; text {}",
                family.name(),
                calls.map_or(format!("agree ({} calls)", a.calls.len()), |d| format!(
                    "DISAGREE (idiolect against smg): {d}"
                )),
                text.map_or(format!("agrees ({} bytes)", a.text.len()), |d| format!(
                    "DISAGREES (idiolect against smg): {d}"
                )),
            ));
        }
    }
    println!();
    for note in notes {
        println!("- {note}");
    }
}

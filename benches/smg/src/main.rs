//! idiolect's field families side by side with smg's `tool-parser` crate: the same
//! generated inputs, whole and streamed at 4-byte (a token) and 64-byte chunks, both
//! in one run, with the ratio; and whether the two agree on those inputs (calls,
//! names, arguments as JSON values, text).
//!
//! `cd benches/smg && cargo run --release [-- CALLS]` (default 10,000 calls);
//! `cargo run --release -- scaling` times idiolect alone at 1,000, 4,000 and 16,000
//! calls.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use idiolect::field::{self, DeltaMode, DeltaProjection, Event, Item, Options};
use openai_protocol::common::Tool;
use serde_json::{json, Value};
use tool_parser::parsers::qwen_xml::QwenXmlParser;
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
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Hermes => "hermes",
            Family::Qwen3Coder => "qwen3-coder",
        }
    }
}

/// A turn of `calls` calls with prose around them, as the family writes it. The
/// prose has no markers; arguments hold a string with escapes, an integer and a
/// boolean.
fn generate(family: Family, calls: usize) -> String {
    let mut out = String::new();
    for i in 0..calls {
        out.push_str(&format!(
            "Step {i}: I will look up the forecast for the city, then compare it with yesterday's numbers.\n"
        ));
        let city = format!("Paris \"{}\" \\ café", i % 97);
        match family {
            Family::Hermes => {
                let args = json!({"city": city, "days": i % 7, "metric": i % 2 == 0});
                out.push_str(&format!(
                    "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {args}}}\n</tool_call>\n"
                ));
            }
            Family::Qwen3Coder => {
                out.push_str(&format!(
                    "<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n<parameter=days>\n{}\n</parameter>\n<parameter=metric>\n{}\n</parameter>\n</function>\n</tool_call>\n",
                    i % 7,
                    i % 2 == 0
                ));
            }
        }
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

fn our_options() -> Options {
    serde_json::from_value(json!({"tools": [{"name": "get_weather", "parameters": schema()}]}))
        .expect("options")
}

/// What a parser made of a turn: text, and calls as (name, arguments value).
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    text: String,
    calls: Vec<(String, Value)>,
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
fn ours_whole(family: Family, options: &Options, text: &str) -> Outcome {
    let doc = match family {
        Family::Hermes => field::hermes::parse(text, options),
        Family::Qwen3Coder => field::qwen3_coder::parse(text, options),
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

/// A streamed parse as a server consumes it: events projected to chat-completion
/// deltas (live), content and per call its name and argument fragments collected,
/// exactly what [`smg_streamed`] collects from smg's streaming results.
fn ours(family: Family, options: &Options, pieces: &[&str]) -> Outcome {
    let mut projection = DeltaProjection::new(DeltaMode::Live);
    let mut deltas = Vec::new();
    let mut text = String::new();
    let mut calls: Vec<(String, String)> = Vec::new();
    let mut take = |events: &mut dyn Iterator<Item = Event>| {
        for event in events {
            projection.push(&event, &mut deltas);
        }
        for delta in deltas.drain(..) {
            if let Some(content) = delta.content {
                text.push_str(&content);
            }
            for call in delta.tool_calls.into_iter().flatten() {
                if calls.len() <= call.index {
                    calls.resize(call.index + 1, (String::new(), String::new()));
                }
                if let Some(name) = call.function.name {
                    calls[call.index].0 = name;
                }
                if let Some(fragment) = call.function.arguments {
                    calls[call.index].1.push_str(&fragment);
                }
            }
        }
    };
    match family {
        Family::Hermes => {
            let mut p = field::hermes::Parser::with_options(options).expect("options");
            for piece in pieces {
                take(&mut p.feed(piece.as_bytes()));
            }
            take(&mut p.finish());
        }
        Family::Qwen3Coder => {
            let mut p = field::qwen3_coder::Parser::with_options(options).expect("options");
            for piece in pieces {
                take(&mut p.feed(piece.as_bytes()));
            }
            take(&mut p.finish());
        }
    }
    Outcome {
        text,
        calls: calls.into_iter().map(|(n, a)| (n, arguments(&a))).collect(),
    }
}

fn smg_parser(family: Family) -> Box<dyn ToolParser> {
    match family {
        Family::Hermes => Box::new(QwenParser::new()),
        Family::Qwen3Coder => Box::new(QwenXmlParser::new()),
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
    }
}

fn smg_streamed(family: Family, tools: &[Tool], pieces: &[&str]) -> Outcome {
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
    for piece in pieces {
        let result = block_on(parser.parse_incremental(piece, tools)).expect("smg streams");
        text.push_str(&result.normal_text);
        take(result.calls, &mut calls);
    }
    if let Some(rest) = parser.get_unstreamed_tool_args() {
        take(rest, &mut calls);
    }
    text.push_str(&parser.take_unstreamed_normal_text());
    Outcome {
        text,
        calls: calls.into_iter().map(|(n, a)| (n, arguments(&a))).collect(),
    }
}

/// The best time of repeated runs of `f` over at least `budget`.
fn best(budget: Duration, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut runs = 0;
    while runs < 3 || start.elapsed() < budget {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed());
        runs += 1;
    }
    best
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
        let show = |t: &str| t.get(at..(at + 30).min(t.len())).unwrap_or("").to_string();
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
    let options = our_options();
    for family in [Family::Hermes, Family::Qwen3Coder] {
        for calls in [1000, 4000, 16000] {
            let text = generate(family, calls);
            let pieces = chunks(&text, 4);
            let whole = best(Duration::from_millis(500), || {
                std::hint::black_box(ours_whole(family, &options, &text));
            });
            let streamed = best(Duration::from_millis(500), || {
                std::hint::black_box(ours(family, &options, &pieces));
            });
            println!(
                "{} {calls} calls: whole {:.0} MB/s, 4-byte chunks {:.0} MB/s",
                family.name(),
                mbps(text.len(), whole),
                mbps(text.len(), streamed)
            );
        }
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("scaling") {
        return scaling();
    }
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let tools = smg_tools();
    let options = our_options();
    let budget = Duration::from_millis(1500);
    println!("| family | input | mode | idiolect MB/s | smg MB/s | idiolect / smg |");
    println!("|---|---|---|---|---|---|");
    let mut notes = Vec::new();
    for family in [Family::Hermes, Family::Qwen3Coder] {
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
            let ours_time = best(budget, || match size_bytes {
                None => {
                    std::hint::black_box(ours_whole(family, &options, &text));
                }
                Some(_) => {
                    std::hint::black_box(ours(family, &options, &pieces));
                }
            });
            let smg_time = best(budget, || match size_bytes {
                None => {
                    std::hint::black_box(smg_whole(family, &tools, &text));
                }
                Some(_) => {
                    std::hint::black_box(smg_streamed(family, &tools, &pieces));
                }
            });
            println!(
                "| {} | {size} | {mode} | {:.0} | {:.1} | {:.1}x |",
                family.name(),
                mbps(text.len(), ours_time),
                mbps(text.len(), smg_time),
                smg_time.as_secs_f64() / ours_time.as_secs_f64()
            );
            let a = match size_bytes {
                None => ours_whole(family, &options, &text),
                Some(_) => ours(family, &options, &pieces),
            };
            let b = match size_bytes {
                None => smg_whole(family, &tools, &text),
                Some(_) => smg_streamed(family, &tools, &pieces),
            };
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

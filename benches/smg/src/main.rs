//! idiolect's field families side by side with smg's `tool-parser` crate: the same
//! generated inputs, whole and streamed at 4-byte (a token) and 64-byte chunks, and
//! as "4-byte tokens": 4-byte chunks in which each of the family's special tokens
//! comes whole, in a chunk of its own, as a server's detokenized stream delivers it
//! (`Family::special_tokens`); both parsers in one run, with the ratio; and whether the two agree on those inputs (calls,
//! names, arguments as JSON values, text).
//!
//! Every field family that calls tools: hermes (smg's `qwen`), qwen3-coder
//! (`qwen_xml`), deepseek-v3 (`deepseek`), deepseek-v3.1 (`deepseek31`), mistral
//! (`mistral`), llama3-json (`llama`), pythonic (`pythonic`), kimi-k2 (`kimik2`),
//! glm in its 4.5/4.6 form (`glm45_moe`) and its 4.7/5 form (`glm47_moe`), and
//! minimax-m2 (`minimax_m2`), deepseek-dsml (`deepseek_v4`, on V4's
//! `tool_calls` block), step3 (`step3`), hunyuan (`hy_v4`, on Hy4's suffixed
//! tokens), kimi-k3 (`kimi_k3`) and gemma4 (`gemma4`); tool-parser 1.10.0 has no parser for harmony
//! (gpt-oss), whose row has idiolect alone. Only the parse is timed: reading the
//! arguments as JSON values for the agreement check happens after.
//!
//! Times are the CPU time of the benchmark's thread (the best of repeated runs), so
//! that a run on a machine shared with other work measures the parsers, not the
//! scheduler; the wall time of a run that got preempted says nothing about either
//! parser.
//!
//! `cd benches/smg && cargo run --release [-- CALLS [FAMILY…]]` (default 10,000
//! calls, every family; FAMILY as `profile` names it, glm's forms `glm45`, `glm47`);
//! `cargo run --release -- scaling` times idiolect alone at 1,000, 4,000 and 16,000
//! calls; `cargo run --release -- profile FAMILY CALLS CHUNK RUNS` runs idiolect alone
//! on one input (CHUNK 0: whole), for a profiler.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use idiolect::field::{self, DeltaMode, DeltaProjection, DeltaRef, Event, Item};
use idiolect::{Machine, Stream};
use openai_protocol::common::Tool;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tool_parser::parsers::qwen_xml::QwenXmlParser;
use tool_parser::parsers::{
    DeepSeek31Parser, DeepSeekDsmlParser, DeepSeekParser, Gemma4Parser, Glm4MoeParser, HyV4Parser,
    KimiK2Parser, KimiK3Parser, LlamaParser, MinimaxM2Parser, MistralParser, PythonicParser,
    Step3Parser,
};
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

/// The inputs: one per field family that calls tools, two for glm (its 4.5/4.6
/// form with newlines and its 4.7/5 form without, which smg reads with two
/// parsers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Hermes,
    Qwen3Coder,
    DeepseekV3,
    DeepseekV31,
    Harmony,
    Mistral,
    Llama3Json,
    Pythonic,
    KimiK2,
    Glm45,
    Glm47,
    MinimaxM2,
    DeepseekDsml,
    Step3,
    Hunyuan,
    KimiK3,
    Gemma4,
}

const FAMILIES: [Family; 17] = [
    Family::Hermes,
    Family::Qwen3Coder,
    Family::DeepseekV3,
    Family::DeepseekV31,
    Family::Harmony,
    Family::Mistral,
    Family::Llama3Json,
    Family::Pythonic,
    Family::KimiK2,
    Family::Glm45,
    Family::Glm47,
    Family::MinimaxM2,
    Family::DeepseekDsml,
    Family::Step3,
    Family::Hunyuan,
    Family::KimiK3,
    Family::Gemma4,
];

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Hermes => "hermes",
            Family::Qwen3Coder => "qwen3-coder",
            Family::DeepseekV3 => "deepseek-v3",
            Family::DeepseekV31 => "deepseek-v3.1",
            Family::Harmony => "harmony",
            Family::Mistral => "mistral",
            Family::Llama3Json => "llama3-json",
            Family::Pythonic => "pythonic",
            Family::KimiK2 => "kimi-k2",
            Family::Glm45 => "glm (4.5 form)",
            Family::Glm47 => "glm (4.7 form)",
            Family::MinimaxM2 => "minimax-m2",
            Family::DeepseekDsml => "deepseek-dsml",
            Family::Step3 => "step3",
            Family::Hunyuan => "hunyuan",
            Family::KimiK3 => "kimi-k3",
            Family::Gemma4 => "gemma4",
        }
    }

    /// The field family's dialect name.
    fn dialect(self) -> &'static str {
        match self {
            Family::Glm45 | Family::Glm47 => "glm",
            other => other.name(),
        }
    }

    /// The name on the command line (`profile glm45 ...`).
    fn key(self) -> &'static str {
        match self {
            Family::Glm45 => "glm45",
            Family::Glm47 => "glm47",
            other => other.name(),
        }
    }

    /// The family's markers that its model's tokenizer holds as single special
    /// tokens, so a server's stream delivers each of them whole, in one chunk.
    /// Markers a tokenizer spells in several ordinary tokens (qwen3-coder's
    /// `<function=`, minimax-m2's `<invoke name=`, pythonic's brackets) are not
    /// listed: they are cut like prose.
    fn special_tokens(self) -> &'static [&'static str] {
        match self {
            Family::Hermes | Family::Qwen3Coder => {
                &["<tool_call>", "</tool_call>", "<think>", "</think>"]
            }
            Family::DeepseekV3 | Family::DeepseekV31 => &[
                "<｜tool▁calls▁begin｜>",
                "<｜tool▁calls▁end｜>",
                "<｜tool▁call▁begin｜>",
                "<｜tool▁call▁end｜>",
                "<｜tool▁sep｜>",
            ],
            Family::Harmony => &[
                "<|start|>",
                "<|channel|>",
                "<|message|>",
                "<|constrain|>",
                "<|end|>",
                "<|call|>",
                "<|return|>",
            ],
            Family::Mistral => &["[TOOL_CALLS]"],
            Family::Llama3Json => &["<|python_tag|>", "<|eom_id|>", "<|eot_id|>"],
            Family::Pythonic => &[],
            Family::KimiK2 => &[
                "<|tool_calls_section_begin|>",
                "<|tool_calls_section_end|>",
                "<|tool_call_begin|>",
                "<|tool_call_argument_begin|>",
                "<|tool_call_end|>",
            ],
            Family::Glm45 | Family::Glm47 => &[
                "<tool_call>",
                "</tool_call>",
                "<arg_key>",
                "</arg_key>",
                "<arg_value>",
                "</arg_value>",
            ],
            Family::MinimaxM2 => &["<minimax:tool_call>", "</minimax:tool_call>"],
            // The sentinel is one token of the V3.2/V4 vocabulary; the tag names
            // around it are text.
            Family::DeepseekDsml => &["｜DSML｜"],
            Family::Step3 => &[
                "<｜tool_calls_begin｜>",
                "<｜tool_calls_end｜>",
                "<｜tool_call_begin｜>",
                "<｜tool_call_end｜>",
                "<｜tool_sep｜>",
            ],
            Family::Hunyuan => &[
                "<tool_calls:opensource>",
                "</tool_calls:opensource>",
                "<tool_call:opensource>",
                "</tool_call:opensource>",
                "<arg_key:opensource>",
                "</arg_key:opensource>",
                "<arg_value:opensource>",
                "</arg_value:opensource>",
            ],
            // XTML's three control tokens; the channel words and attributes
            // between them are text.
            Family::KimiK3 => &["<|open|>", "<|close|>", "<|sep|>"],
            Family::Gemma4 => &["<|tool_call>", "<tool_call|>", "<|\"|>"],
        }
    }

    fn from_name(name: &str) -> Option<Family> {
        FAMILIES.into_iter().find(|f| f.key() == name)
    }

    /// smg's parser for the family (its registry name in the comment), or `None`.
    fn smg_parser(self) -> Option<Box<dyn ToolParser>> {
        Some(match self {
            Family::Hermes => Box::new(QwenParser::new()), // qwen
            Family::Qwen3Coder => Box::new(QwenXmlParser::new()), // qwen_xml
            Family::DeepseekV3 => Box::new(DeepSeekParser::new()), // deepseek
            Family::DeepseekV31 => Box::new(DeepSeek31Parser::new()), // deepseek31
            Family::Harmony => return None,
            Family::Mistral => Box::new(MistralParser::new()), // mistral
            Family::Llama3Json => Box::new(LlamaParser::new()), // llama
            Family::Pythonic => Box::new(PythonicParser::new()), // pythonic
            Family::KimiK2 => Box::new(KimiK2Parser::new()),   // kimik2
            Family::Glm45 => Box::new(Glm4MoeParser::glm45()), // glm45_moe
            Family::Glm47 => Box::new(Glm4MoeParser::glm47()), // glm47_moe
            Family::MinimaxM2 => Box::new(MinimaxM2Parser::new()), // minimax_m2
            Family::DeepseekDsml => Box::new(DeepSeekDsmlParser::v4()), // deepseek_v4
            Family::Step3 => Box::new(Step3Parser::new()),     // step3
            Family::Hunyuan => Box::new(HyV4Parser::new()),    // hy_v4
            Family::KimiK3 => Box::new(KimiK3Parser::new()),   // kimi_k3
            Family::Gemma4 => Box::new(Gemma4Parser::new()),   // gemma4
        })
    }
}

const PROSE: &str =
    "I will look up the forecast for the city, then compare it with yesterday's numbers.\n";

/// A turn of `calls` calls with prose, as the family writes it. The prose has no
/// markers; arguments hold a string with escapes, an integer and a boolean.
///
/// Where the family writes calls one at a time (hermes, qwen3-coder, deepseek,
/// harmony, kimi-k2, glm, minimax-m2, deepseek-dsml, hunyuan, gemma4) each call follows its own
/// line of prose (harmony: its own commentary message). Where the family writes all of a turn's
/// calls in one group (mistral's `[TOOL_CALLS]` array, llama3-json's
/// `<|python_tag|>` calls joined by `;`, pythonic's list; step3's block and
/// kimi-k3's tools channel, whose templates write a turn's calls in one) the prose comes first and the calls
/// follow in one group: smg's parsers for these read only the first group of a
/// turn, so a group per call would let them skip most of the input.
fn generate(family: Family, calls: usize) -> String {
    let grouped = matches!(
        family,
        Family::Mistral | Family::Llama3Json | Family::Pythonic | Family::Step3 | Family::KimiK3
    );
    let mut out = String::new();
    if grouped {
        for i in 0..calls {
            out.push_str(&format!("Step {i}: {PROSE}"));
        }
        out.push_str(match family {
            Family::Mistral => "[TOOL_CALLS] [",
            Family::Llama3Json => "<|python_tag|>",
            Family::Step3 => "<｜tool_calls_begin｜>\n",
            Family::KimiK3 => "<|open|>tools<|sep|>",
            _ => "[",
        });
    }
    for i in 0..calls {
        let city = format!("Paris \"{}\" \\ café", i % 97);
        let days = i % 7;
        let metric = i % 2 == 0;
        let args = json!({"city": city, "days": days, "metric": metric});
        if grouped && i > 0 {
            out.push_str(match family {
                Family::Llama3Json => "; ",
                Family::Step3 | Family::KimiK3 => "",
                _ => ", ",
            });
        }
        if !grouped && family != Family::Harmony {
            out.push_str(&format!("Step {i}: {PROSE}"));
        }
        match family {
            Family::Hermes => out.push_str(&format!(
                "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {args}}}\n</tool_call>\n"
            )),
            Family::Qwen3Coder => out.push_str(&format!(
                "<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n<parameter=days>\n{days}\n</parameter>\n<parameter=metric>\n{metric}\n</parameter>\n</function>\n</tool_call>\n"
            )),
            Family::DeepseekV3 => out.push_str(&format!(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{args}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n"
            )),
            Family::DeepseekV31 => out.push_str(&format!(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{args}<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n"
            )),
            Family::Harmony => {
                if i > 0 {
                    out.push_str("<|start|>assistant");
                }
                out.push_str(&format!(
                    "<|channel|>commentary<|message|>Step {i}: {PROSE}<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{args}<|call|>"
                ));
            }
            Family::Mistral => out.push_str(&format!(
                "{{\"name\": \"get_weather\", \"arguments\": {args}}}"
            )),
            Family::Llama3Json => out.push_str(&format!(
                "{{\"name\": \"get_weather\", \"parameters\": {args}}}"
            )),
            Family::Pythonic => {
                // Python literals: the string in double quotes with `"` and `\`
                // escaped, the boolean capitalised.
                let quoted = city.replace('\\', "\\\\").replace('"', "\\\"");
                let metric = if metric { "True" } else { "False" };
                out.push_str(&format!(
                    "get_weather(city=\"{quoted}\", days={days}, metric={metric})"
                ));
            }
            Family::KimiK2 => out.push_str(&format!(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:{i}<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>\n"
            )),
            Family::Glm45 => out.push_str(&format!(
                "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>{city}</arg_value>\n<arg_key>days</arg_key>\n<arg_value>{days}</arg_value>\n<arg_key>metric</arg_key>\n<arg_value>{metric}</arg_value>\n</tool_call>\n"
            )),
            Family::Glm47 => out.push_str(&format!(
                "<tool_call>get_weather<arg_key>city</arg_key><arg_value>{city}</arg_value><arg_key>days</arg_key><arg_value>{days}</arg_value><arg_key>metric</arg_key><arg_value>{metric}</arg_value></tool_call>\n"
            )),
            Family::MinimaxM2 => out.push_str(&format!(
                "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">{city}</parameter>\n<parameter name=\"days\">{days}</parameter>\n<parameter name=\"metric\">{metric}</parameter>\n</invoke>\n</minimax:tool_call>\n"
            )),
            Family::DeepseekDsml => out.push_str(&format!(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">{city}</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\">{days}</｜DSML｜parameter>\n<｜DSML｜parameter name=\"metric\" string=\"false\">{metric}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>\n"
            )),
            Family::Gemma4 => out.push_str(&format!(
                "<|tool_call>call:get_weather{{city:<|\"|>{city}<|\"|>,days:{days},metric:{metric}}}<tool_call|>\n"
            )),
            Family::Step3 => out.push_str(&format!(
                "<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\">\n<steptml:parameter name=\"city\">{city}</steptml:parameter>\n<steptml:parameter name=\"days\">{days}</steptml:parameter>\n<steptml:parameter name=\"metric\">{metric}</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n"
            )),
            // Hy4's form: every marker suffixed, no separator, no whitespace.
            Family::Hunyuan => out.push_str(&format!(
                "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>{city}</arg_value:opensource><arg_key:opensource>days</arg_key:opensource><arg_value:opensource>{days}</arg_value:opensource><arg_key:opensource>metric</arg_key:opensource><arg_value:opensource>{metric}</arg_value:opensource></tool_call:opensource></tool_calls:opensource>\n"
            )),
            Family::KimiK3 => out.push_str(&format!(
                "<|open|>call tool=\"get_weather\" index=\"{n}\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>{city}<|close|>argument<|sep|><|open|>argument key=\"days\" type=\"number\"<|sep|>{days}<|close|>argument<|sep|><|open|>argument key=\"metric\" type=\"boolean\"<|sep|>{metric}<|close|>argument<|sep|><|close|>call<|sep|>",
                n = i + 1
            )),
        }
    }
    match family {
        Family::Mistral | Family::Pythonic => out.push_str("]\n"),
        Family::Step3 => out.push_str("<｜tool_calls_end｜>\n"),
        Family::KimiK3 => out.push_str("<|close|>tools<|sep|>\n"),
        Family::Llama3Json => return out,
        Family::Harmony => {
            out.push_str("<|start|>assistant<|channel|>final<|message|>That is all.<|return|>");
            return out;
        }
        _ => {}
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

/// Our options as JSON: the tool's schema, as smg gets it (minimax-m2's and
/// step3's and kimi-k3's output starts outside reasoning here: smg's tool parser reads no
/// reasoning).
fn our_options(family: Family) -> Value {
    let mut options = json!({"tools": [{"name": "get_weather", "parameters": schema()}]});
    if matches!(family, Family::MinimaxM2 | Family::Step3 | Family::KimiK3) {
        options["start_in_reasoning"] = json!(false);
    }
    options
}

/// A family's typed options from their JSON.
fn typed<T: DeserializeOwned>(options: &Value) -> T {
    serde_json::from_value(options.clone()).expect("options")
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

/// Chunks as a server's token stream delivers them: every special token of
/// `markers` whole in a chunk of its own, everything else in chunks of about
/// `size` bytes (cut at character boundaries, and before the next marker).
fn tokens<'t>(text: &'t str, size: usize, markers: &[&str]) -> Vec<&'t str> {
    // Where each marker occurs, in order (markers do not overlap one another).
    let mut at_marker: Vec<(usize, usize)> = markers
        .iter()
        .flat_map(|m| text.match_indices(m).map(|(i, m)| (i, i + m.len())))
        .collect();
    at_marker.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0;
    for (start, end) in at_marker.into_iter().chain([(text.len(), text.len())]) {
        if start < at {
            continue;
        }
        out.extend(chunks(&text[at..start], size));
        if end > start {
            out.push(&text[start..end]);
        }
        at = end;
    }
    out
}

/// The whole-document parse, as a user calls it (`parse`, which feeds the text in
/// pieces of 64 KiB so that the events of one piece are folded before the next).
/// The document is returned as it is: reading it for the agreement check is not
/// timed.
fn ours_whole(family: Family, options: &Value, text: &str) -> field::Document {
    let engine = field::families::family(family.dialect()).expect("a family of the table");
    engine.parse(text, &typed(options)).expect("options")
}

/// Text and complete calls of a document, arguments read as JSON values.
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
            } => outcome.calls.push((name, input.value())),
            _ => {}
        }
    }
    outcome
}

/// What a server collects from a stream: content, and per call its name and
/// argument fragments (the same for both parsers).
#[derive(Debug, Default)]
struct Collected {
    text: String,
    calls: Vec<(String, String)>,
    /// A streamed run stopped at its deadline: how many bytes it had been fed.
    stopped_at: Option<usize>,
}

impl Collected {
    fn call(&mut self, index: usize) -> &mut (String, String) {
        if self.calls.len() <= index {
            self.calls.resize(index + 1, (String::new(), String::new()));
        }
        &mut self.calls[index]
    }

    /// Read after timing: arguments as JSON values.
    fn outcome(self) -> Outcome {
        Outcome {
            text: self.text,
            calls: self
                .calls
                .into_iter()
                .map(|(n, a)| (n, arguments(&a)))
                .collect(),
            stopped_at: self.stopped_at,
        }
    }
}

/// Our side of a streamed run: events projected to chat-completion deltas
/// (live), as a server projects them. The projection lends each delta
/// ([`field::DeltaRef`]) where the parser left the chunk's events, and the
/// collection copies its pieces, as the smg run copies smg's results.
struct Projected {
    projection: DeltaProjection,
    collected: Collected,
}

impl Projected {
    /// Projects a chunk's events (lent by the parser) and collects the deltas.
    #[inline]
    fn take(&mut self, events: &[Event]) {
        let collected = &mut self.collected;
        for event in events {
            self.projection.push_lent(event, |delta| match delta {
                DeltaRef::Content(text) => collected.text.push_str(text),
                DeltaRef::Reasoning(_) => {}
                DeltaRef::Call {
                    index,
                    name,
                    arguments,
                    ..
                } => {
                    let slot = collected.call(index);
                    slot.0 = name.into();
                    if let Some(arguments) = arguments {
                        slot.1.push_str(arguments);
                    }
                }
                DeltaRef::Arguments { index, text } => collected.call(index).1.push_str(text),
            });
        }
    }
}

fn stream<M: Machine<Event = Event>>(mut parser: Stream<M>, pieces: &[&str]) -> Collected {
    let mut projected = Projected {
        projection: DeltaProjection::new(DeltaMode::Live),
        collected: Collected::default(),
    };
    for piece in pieces {
        projected.take(parser.feed_lent(piece.as_bytes()));
    }
    projected.take(parser.finish_lent());
    projected.collected
}

/// A streamed parse as a server consumes it: events projected to chat-completion
/// deltas (live), content and per call its name and argument fragments collected,
/// exactly what [`smg_streamed`] collects from smg's streaming results.
fn ours_streamed(family: Family, options: &Value, pieces: &[&str]) -> Collected {
    let engine = field::families::family(family.dialect()).expect("a family of the table");
    stream(engine.parser(&typed(options)).expect("options"), pieces)
}

fn arguments(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// smg's whole-document parse, as it returns it (text, and calls with their
/// arguments as JSON text).
fn smg_whole(parser: &dyn ToolParser, tools: &[Tool], text: &str) -> Collected {
    let (normal, calls) =
        block_on(parser.parse_complete_with_tools(text, tools)).expect("smg parses");
    Collected {
        text: normal,
        calls: calls
            .into_iter()
            .map(|c| (c.function.name, c.function.arguments))
            .collect(),
        stopped_at: None,
    }
}

/// CPU time after which a streamed smg run stops (smg's deepseek parsers re-scan
/// their growing buffer on every chunk, so a run over 10,000 calls would take
/// hours): the throughput of the part it did is then reported, which favours smg
/// (its cost per byte only grows further on).
const SMG_DEADLINE: Duration = Duration::from_secs(20);

fn smg_streamed(family: Family, tools: &[Tool], pieces: &[&str]) -> Collected {
    let start = cpu_time();
    let mut fed = 0;
    let mut parser = family.smg_parser().expect("an smg parser");
    let mut collected = Collected::default();
    let take = |items: Vec<tool_parser::types::ToolCallItem>, collected: &mut Collected| {
        for item in items {
            let slot = collected.call(item.tool_index);
            if let Some(name) = item.name {
                slot.0 = name;
            }
            slot.1.push_str(&item.parameters);
        }
    };
    for (i, piece) in pieces.iter().enumerate() {
        if i % 256 == 255 && cpu_time() - start > SMG_DEADLINE {
            collected.stopped_at = Some(fed);
            break;
        }
        let result = block_on(parser.parse_incremental(piece, tools)).expect("smg streams");
        collected.text.push_str(&result.normal_text);
        take(result.calls, &mut collected);
        fed += piece.len();
    }
    if let Some(rest) = parser.get_unstreamed_tool_args() {
        take(rest, &mut collected);
    }
    collected
        .text
        .push_str(&parser.take_unstreamed_normal_text());
    collected
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
    for family in FAMILIES {
        let options = our_options(family);
        for calls in [1000, 4000, 16000] {
            let text = generate(family, calls);
            let pieces = chunks(&text, 4);
            let (whole, _) = best(Duration::from_millis(500), || {
                ours_whole(family, &options, &text)
            });
            let (streamed, _) = best(Duration::from_millis(500), || {
                ours_streamed(family, &options, &pieces)
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
/// chunking (0 = whole; `t4` = 4-byte tokens), run RUNS times, for a profiler.
fn profile(args: &[String]) {
    let family = args
        .first()
        .and_then(|a| Family::from_name(a))
        .unwrap_or(Family::Hermes);
    let calls = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    // `t4`: 4-byte tokens (special tokens whole), as the main run's mode.
    let tokenized = args.get(2).is_some_and(|a| a.starts_with('t'));
    let chunk: usize = args
        .get(2)
        .and_then(|a| a.trim_start_matches('t').parse().ok())
        .unwrap_or(0);
    let runs: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(10);
    let options = our_options(family);
    let text = generate(family, calls);
    let pieces = if tokenized {
        tokens(&text, chunk.max(1), family.special_tokens())
    } else {
        chunks(&text, chunk.max(1))
    };
    // One run first: the family's grammar compiles on first use.
    ours_streamed(family, &options, &pieces[..pieces.len().min(100)]);
    let t = cpu_time();
    for _ in 0..runs {
        if chunk == 0 {
            std::hint::black_box(ours_whole(family, &options, &text));
        } else {
            std::hint::black_box(ours_streamed(family, &options, &pieces));
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
    let calls: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    // Optionally only some families: `cargo run --release -- 10000 hermes glm45`.
    let only: Vec<Family> = args
        .iter()
        .skip(1)
        .filter_map(|a| Family::from_name(a))
        .collect();
    let tools = smg_tools();
    let budget = Duration::from_millis(1000);
    println!("| family | input | mode | idiolect MB/s | smg MB/s | idiolect / smg |");
    println!("|---|---|---|---|---|---|");
    let mut notes = Vec::new();
    for family in FAMILIES {
        if !only.is_empty() && !only.contains(&family) {
            continue;
        }
        let options = our_options(family);
        let text = generate(family, calls);
        let size = format!("{:.1} MB, {calls} calls", text.len() as f64 / 1e6);
        let smg = family.smg_parser();
        for (mode, size_bytes, whole_markers) in [
            ("whole", None, false),
            ("4-byte chunks", Some(4), false),
            ("4-byte tokens", Some(4), true),
            ("64-byte chunks", Some(64), false),
        ] {
            if whole_markers && family.special_tokens().is_empty() {
                continue;
            }
            let pieces = match size_bytes {
                None => vec![text.as_str()],
                Some(n) if whole_markers => tokens(&text, n, family.special_tokens()),
                Some(n) => chunks(&text, n),
            };
            let (ours_time, a) = match size_bytes {
                None => {
                    let (t, doc) = best(budget, || ours_whole(family, &options, &text));
                    (t, outcome(doc))
                }
                Some(_) => {
                    let (t, c) = best(budget, || ours_streamed(family, &options, &pieces));
                    (t, c.outcome())
                }
            };
            let ours_speed = mbps(text.len(), ours_time);
            let Some(smg) = smg.as_deref() else {
                println!(
                    "| {} | {size} | {mode} | {ours_speed:.0} | (no smg parser) | |",
                    family.name()
                );
                continue;
            };
            let (smg_time, b) = best(budget, || match size_bytes {
                None => smg_whole(smg, &tools, &text),
                Some(_) => smg_streamed(family, &tools, &pieces),
            });
            let b = b.outcome();
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

//! The server layer (spec/servers.md) on examples read by hand and on every case
//! of every field family's corpus, whole and streamed under the runner's schedule:
//! the concatenated deltas give the document read by the rules (SV-1, SV-2, SV-4),
//! no delta but the last holds two calls (SV-3), no delta has an empty key (SV-5),
//! and the one-shot message holds the document's complete calls, with the same
//! content and reasoning as the deltas (SV-9).

use idiolect::conformance::{self, Case};
use idiolect::field::server::{self, CallIds, ServerOptions, ServerProjection};
use idiolect::field::{self, Delta, Document, Item};
use idiolect::Fold;
use serde_json::{json, Value};

fn family_options(options: &Value) -> field::custom::Options {
    if options.is_null() {
        return field::custom::Options::default();
    }
    serde_json::from_value(options.clone()).expect("case options")
}

/// The deltas of `chunks` of family `dialect`: one per chunk (or none), and the
/// last one.
fn deltas(dialect: &str, options: &Value, chunks: &[&[u8]], rules: &ServerOptions) -> Vec<Delta> {
    let family = field::families::family(dialect).expect("a field family");
    let mut parser = family.parser(&family_options(options)).expect("options");
    let mut projection = ServerProjection::new(rules.clone());
    let mut out = Vec::new();
    for chunk in chunks {
        for event in parser.feed(chunk) {
            projection.push(&event);
        }
        out.extend(projection.delta());
    }
    for event in parser.finish() {
        projection.push(&event);
    }
    out.extend(projection.finish());
    out
}

fn document(dialect: &str, text: &str, options: &Value) -> Document {
    field::families::family(dialect)
        .expect("a field family")
        .parse(text, &family_options(options))
        .expect("options")
}

/// What deltas concatenate to: content, reasoning, and the calls in order.
#[derive(Debug, Default, PartialEq)]
struct Streamed {
    content: String,
    reasoning: String,
    /// (id, name, arguments) per call number.
    calls: Vec<(Option<String>, String, String)>,
}

/// Concatenates `deltas`, checking the shape rules on the way (SV-2, SV-3, SV-5).
fn concatenate(deltas: &[Delta]) -> Result<Streamed, String> {
    let mut got = Streamed::default();
    for (n, delta) in deltas.iter().enumerate() {
        if *delta == Delta::default() {
            return Err("an empty delta (SV-5)".into());
        }
        for text in [&delta.content, &delta.reasoning].into_iter().flatten() {
            if text.is_empty() {
                return Err(format!("an empty text in {delta:?} (SV-5)"));
            }
        }
        got.content.push_str(delta.content.as_deref().unwrap_or(""));
        got.reasoning
            .push_str(delta.reasoning.as_deref().unwrap_or(""));
        let entries = delta
            .tool_calls
            .clone()
            .map(|c| c.into_vec())
            .unwrap_or_default();
        if delta.tool_calls.is_some() && entries.is_empty() {
            return Err("an empty tool_calls (SV-5)".into());
        }
        let mut numbers: Vec<usize> = entries.iter().map(|e| e.index).collect();
        numbers.dedup();
        if numbers.len() > 1 && n + 1 < deltas.len() {
            return Err(format!(
                "two calls in delta {n} of {}: {delta:?}",
                deltas.len()
            ));
        }
        for entry in entries {
            if let Some(name) = entry.function.name {
                if entry.index != got.calls.len() {
                    return Err(format!(
                        "call {} announced as {} (SV-2)",
                        got.calls.len(),
                        entry.index
                    ));
                }
                let id = entry.id.ok_or("a first entry without id")?;
                got.calls
                    .push((id.map(String::from), name.into(), String::new()));
            } else if entry.id.is_some() || entry.index >= got.calls.len() {
                return Err(format!("a fragment of an unannounced call: {entry:?}"));
            }
            if let Some(arguments) = entry.function.arguments {
                got.calls[entry.index].2.push_str(&arguments);
            }
        }
    }
    Ok(got)
}

/// Whether item `at` of `items` is a call.
fn is_call(items: &[Item], at: Option<usize>) -> bool {
    at.and_then(|at| items.get(at))
        .is_some_and(|i| matches!(i, Item::ToolCall { .. }))
}

/// The document read by the rules, independently of the projection: reasoning;
/// text less whitespace-only text next to a call (SV-4); the calls whose arguments
/// begin with `{` or that ended complete with none (SV-1), to declared tools
/// (SV-7), numbered in order (SV-2), with sequence ids where asked.
fn expected(doc: &Document, rules: &ServerOptions, complete_only: bool) -> Streamed {
    let items = &doc.items;
    let mut want = Streamed::default();
    let mut number = 0;
    for (at, item) in items.iter().enumerate() {
        match item {
            Item::Reasoning { text, .. } => want.reasoning.push_str(text),
            Item::Text { text, .. } => {
                let near = is_call(items, at.checked_sub(1)) || is_call(items, Some(at + 1));
                if !(near && text.trim().is_empty()) {
                    want.content.push_str(text);
                }
            }
            Item::ToolCall {
                id,
                name,
                arguments,
                complete,
                ..
            } => {
                let declared = rules.names.as_ref().is_none_or(|n| n.contains(name));
                let start = arguments.trim_start();
                let sent = start.starts_with('{') || (*complete && start.is_empty());
                if !(declared && sent) {
                    continue;
                }
                let id = match (id, rules.ids) {
                    (Some(id), _) => Some(id.clone()),
                    (None, CallIds::Sequence) => Some(format!("call_{number}")),
                    (None, _) => None,
                };
                number += 1;
                if *complete || !complete_only {
                    want.calls.push((id, name.clone(), arguments.clone()));
                }
            }
            other => panic!("an item the rules do not read: {other:?}"),
        }
    }
    want
}

/// The library's document of a case's input bytes, fed whole.
fn folded(case: &Case) -> Document {
    let family = field::families::family(&case.dialect).expect("a field family");
    let mut parser = family
        .parser(&family_options(&case.options))
        .expect("options");
    let mut folder = field::DocumentFolder::new(false);
    let mut events: Vec<field::Event> = parser.feed(&case.input).collect();
    events.extend(parser.finish());
    events.iter().for_each(|e| folder.push(e));
    folder.into_document()
}

fn field_cases() -> Vec<Case> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    conformance::load(&root, None)
        .expect("the corpus loads")
        .into_iter()
        .map(|c| c.expect("every case loads"))
        .filter(|c| field::is_family(&c.dialect))
        .collect()
}

fn message_as_streamed(message: &server::Message) -> Streamed {
    Streamed {
        content: message.content.clone().unwrap_or_default(),
        reasoning: message.reasoning.clone().unwrap_or_default(),
        calls: message
            .tool_calls
            .iter()
            .map(|c| {
                (
                    c.id.clone(),
                    c.function.name.clone(),
                    c.function.arguments.clone(),
                )
            })
            .collect(),
    }
}

/// Every case of every field family, whole, at 1 byte a feed and under the
/// runner's schedule, with sequence ids: the deltas follow the rules, and the
/// message holds the complete calls with the deltas' content and reasoning.
#[test]
fn every_field_case_streams_and_reads_by_the_server_rules() {
    let rules = ServerOptions {
        ids: CallIds::Sequence,
        names: None,
    };
    let cases = field_cases();
    assert!(
        cases.len() > 1000,
        "the field corpus has {} cases",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        // The rules read on the corpus's document; the message made from the
        // library's parse of the input.
        let corpus: Document =
            serde_json::from_value(case.expected.clone()).expect("a field document");
        let want = expected(&corpus, &rules, false);
        let mut schedules = vec![
            ("whole".to_string(), vec![case.input.as_slice()]),
            (
                "1-byte chunks".to_string(),
                conformance::split_by_sizes(&case.input, std::iter::repeat(1)),
            ),
        ];
        schedules.extend(
            conformance::schedule(&case.input, &case.name)
                .into_iter()
                .filter(|(label, _)| !label.starts_with("split at")),
        );
        for (label, chunks) in &schedules {
            match concatenate(&deltas(&case.dialect, &case.options, chunks, &rules)) {
                Ok(got) if got == want => {}
                Ok(got) => failures.push(format!("{} ({label}): {got:?} != {want:?}", case.id())),
                Err(e) => failures.push(format!("{} ({label}): {e}", case.id())),
            }
        }
        let message = server::message(&folded(case), &rules);
        let whole = expected(&corpus, &rules, true);
        if message_as_streamed(&message) != whole {
            failures.push(format!("{} message: {message:?} != {whole:?}", case.id()));
        }
        if message.content.as_deref() == Some("") || message.reasoning.as_deref() == Some("") {
            failures.push(format!("{} message has an empty key (SV-5)", case.id()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const WEATHER: &str =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

fn call(body: &str) -> String {
    format!("<tool_call>\n{body}\n</tool_call>")
}

fn sequence() -> ServerOptions {
    ServerOptions {
        ids: CallIds::Sequence,
        names: None,
    }
}

fn json_of(deltas: &[Delta]) -> Vec<Value> {
    deltas
        .iter()
        .map(|d| serde_json::to_value(d).unwrap())
        .collect()
}

/// SV-3: one feed decides two calls; the first delta has the first, the end
/// releases the second.
#[test]
fn one_delta_carries_one_call() {
    let text = format!(
        "{WEATHER}\n{}",
        call("{\"name\": \"get_time\", \"arguments\": {}}")
    );
    let got = deltas("hermes", &Value::Null, &[text.as_bytes(), b""], &sequence());
    assert_eq!(
        json_of(&got),
        [
            json!({"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}),
            json!({"tool_calls": [{"index": 1, "id": "call_1", "type": "function",
                "function": {"name": "get_time", "arguments": "{}"}}]}),
        ]
    );
}

/// SV-1, SV-2: arguments that are a string with no object in it make no call, and
/// the next call is numbered 0.
#[test]
fn arguments_that_are_no_object_make_no_call() {
    let text = format!(
        "{}\n{WEATHER}",
        call("{\"name\": \"f\", \"arguments\": \"hello\"}")
    );
    for size in [1, 3, text.len()] {
        let chunks = conformance::split_by_sizes(text.as_bytes(), std::iter::repeat(size));
        let got = concatenate(&deltas("hermes", &Value::Null, &chunks, &sequence())).unwrap();
        assert_eq!(
            got.calls,
            [(
                Some("call_0".into()),
                "get_weather".into(),
                "{\"city\": \"Paris\"}".into()
            )],
            "{size}"
        );
        assert_eq!(got.content, "", "{size}");
    }
}

/// SV-4: whitespace around and between calls is formatting; whitespace alone,
/// and text next to a call, are kept verbatim.
#[test]
fn whitespace_next_to_calls_is_formatting() {
    let doc = |t: &str| document("hermes", t, &Value::Null);
    let rules = ServerOptions::default();
    let both = server::message(&doc(&format!("\n{WEATHER}\n\n{WEATHER}\n")), &rules);
    assert_eq!((both.content, both.tool_calls.len()), (None, 2));
    assert_eq!(
        server::message(&doc("  \n"), &rules).content.as_deref(),
        Some("  \n")
    );
    let around = server::message(&doc(&format!("Sure:\n{WEATHER}\nDone.\n")), &rules);
    assert_eq!(around.content.as_deref(), Some("Sure:\n\nDone.\n"));
}

/// SV-1, SV-9: a truncated call is no call in the message and leaks no markup;
/// the stream announced it before it was cut.
#[test]
fn a_truncated_call_is_left_out_of_the_message() {
    let text = format!(
        "Let me check.\n{WEATHER}\n<tool_call>\n{{\"name\": \"get_time\", \"arguments\": {{\"tz\": \"Eur"
    );
    let message = server::message(&document("hermes", &text, &Value::Null), &sequence());
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        json!({"content": "Let me check.\n", "reasoning": null, "tool_calls": [
            {"id": "call_0", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]})
    );
    let got = concatenate(&deltas(
        "hermes",
        &Value::Null,
        &[text.as_bytes()],
        &sequence(),
    ))
    .unwrap();
    assert_eq!(got.calls.len(), 2);
    assert_eq!(got.calls[1].2, "{\"tz\": \"Eur");
}

/// SV-6: the model's own id wins over every style.
#[test]
fn the_models_own_id_wins() {
    let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\
                <|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>\
                <|tool_calls_section_end|>";
    for ids in [
        CallIds::Model,
        CallIds::Random,
        CallIds::Vllm,
        CallIds::Sequence,
    ] {
        let rules = ServerOptions { ids, names: None };
        let message = server::message(&document("kimi-k2", text, &Value::Null), &rules);
        assert_eq!(
            message.tool_calls[0].id.as_deref(),
            Some("functions.get_weather:0")
        );
    }
}

/// SV-7: with declared names, a call to another tool is no call, in the message
/// and in the deltas, and takes no number.
#[test]
fn undeclared_tools_are_dropped_when_names_are_given() {
    let text = format!(
        "{}\n{WEATHER}",
        call("{\"name\": \"rm\", \"arguments\": {}}")
    );
    let rules = ServerOptions {
        ids: CallIds::Sequence,
        names: Some(vec!["get_weather".into()]),
    };
    let message = server::message(&document("hermes", &text, &Value::Null), &rules);
    let names: Vec<&str> = message
        .tool_calls
        .iter()
        .map(|c| c.function.name.as_str())
        .collect();
    assert_eq!(names, ["get_weather"]);
    assert_eq!(message.tool_calls[0].id.as_deref(), Some("call_0"));
    let chunks = conformance::split_by_sizes(text.as_bytes(), std::iter::repeat(2));
    let got = concatenate(&deltas("hermes", &Value::Null, &chunks, &rules)).unwrap();
    assert_eq!(got.calls.len(), 1);
    assert_eq!(got.calls[0].1, "get_weather");
}

/// SV-4 at one byte a feed: formatting between calls is never sent.
#[test]
fn formatting_is_never_sent_at_one_byte_a_feed() {
    let text = format!("\n{WEATHER}\n\n").repeat(2);
    let chunks = conformance::split_by_sizes(text.as_bytes(), std::iter::repeat(1));
    let got = deltas("hermes", &Value::Null, &chunks, &sequence());
    assert!(got.iter().all(|d| d.content.is_none()), "{got:?}");
    assert_eq!(concatenate(&got).unwrap().calls.len(), 2);
}

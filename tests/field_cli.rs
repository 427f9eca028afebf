//! The field families through the command line: the issue's check for `parse
//! hermes` and `stream hermes --deltas`, and the flags' errors.

mod support;

use serde_json::{json, Value};
use support::run;

const ISSUE_EXAMPLE: &[u8] = b"Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value per line"))
        .collect()
}

#[test]
fn parse_hermes_gives_a_text_item_and_a_complete_call() {
    let out = run(&["parse", "hermes", "--compact"], ISSUE_EXAMPLE);
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a document");
    assert_eq!(
        doc,
        json!({"items": [
            {"type": "text", "text": "Let me check.\n"},
            {"type": "tool_call", "index": 0, "id": null, "name": "get_weather",
             "arguments": "{\"city\": \"Paris\"}", "input": {"city": "Paris"}, "complete": true}
        ]})
    );
}

#[test]
fn stream_hermes_deltas_give_content_then_the_name_then_argument_fragments() {
    for chunk in ["1", "4", "4096"] {
        let out = run(
            &["stream", "hermes", "--deltas", "--chunk-size", chunk],
            ISSUE_EXAMPLE,
        );
        assert!(out.status.success());
        let deltas = lines(&out.stdout);
        let first_call = deltas
            .iter()
            .position(|d| d.get("tool_calls").is_some())
            .expect("a tool-call delta");
        let content: String = deltas[..first_call]
            .iter()
            .map(|d| d["content"].as_str().expect("content only before the call"))
            .collect();
        assert_eq!(content, "Let me check.\n");
        assert_eq!(
            deltas[first_call],
            json!({"tool_calls": [{"index": 0, "id": null, "type": "function",
                                   "function": {"name": "get_weather"}}]})
        );
        let arguments: String = deltas[first_call + 1..]
            .iter()
            .map(|d| {
                d["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .expect("argument fragments after the name")
            })
            .collect();
        assert_eq!(arguments, "{\"city\": \"Paris\"}", "chunk {chunk}");
    }
}

#[test]
fn whole_calls_release_the_call_in_one_delta() {
    let out = run(
        &[
            "stream",
            "hermes",
            "--deltas",
            "--whole-calls",
            "--chunk-size",
            "3",
        ],
        ISSUE_EXAMPLE,
    );
    let deltas = lines(&out.stdout);
    let calls: Vec<&Value> = deltas
        .iter()
        .filter(|d| d.get("tool_calls").is_some())
        .collect();
    assert_eq!(
        calls,
        [
            &json!({"tool_calls": [{"index": 0, "id": null, "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]})
        ]
    );
}

#[test]
fn deltas_are_refused_for_a_dialect_that_is_not_a_field_family() {
    let out = run(&["stream", "sections", "--deltas"], b"x");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--deltas needs a field family"));
}

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

/// `idiolect parse DIALECT --options FILE` with `options` written to FILE.
fn parse_with_options(dialect: &str, options: &Value, input: &[u8]) -> std::process::Output {
    // A file per call: the tests run at once.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "idiolect-field-cli-{}-{call}.json",
        std::process::id()
    ));
    std::fs::write(&path, options.to_string()).expect("write options");
    let out = run(
        &[
            "parse",
            dialect,
            "--options",
            path.to_str().expect("utf-8 path"),
        ],
        input,
    );
    let _ = std::fs::remove_file(&path);
    out
}

#[test]
fn a_tool_whose_ref_goes_round_a_cycle_is_an_options_error_naming_the_tool_and_the_pointer() {
    let options = json!({"tools": [{"name": "get_weather", "parameters": {
        "$defs": {"A": {"allOf": [{"$ref": "#/$defs/B"}]}, "B": {"anyOf": [{"$ref": "#/$defs/A"}]}},
        "properties": {"p": {"$ref": "#/$defs/A"}}}}]});
    // Every family reads `tools` alike, JSON families too (FD-3). The check meets
    // A first in `$defs`, where it is no reference's target, so the target it
    // reaches a second time is B.
    for dialect in ["qwen3-coder", "glm", "minimax-m2", "hermes"] {
        let out = parse_with_options(dialect, &options, b"");
        assert_eq!(out.status.code(), Some(2), "{dialect}");
        assert!(out.stdout.is_empty(), "{dialect}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "idiolect: invalid {dialect} options: tool \"get_weather\": $ref \"#/$defs/B\" \
                 refers back to itself through $ref, allOf, anyOf and oneOf alone\n"
            )
        );
    }
}

#[test]
fn a_tool_whose_ref_points_at_nothing_is_an_options_error() {
    let options = json!({"tools": [{"name": "f", "parameters": {
        "properties": {"n": {"$ref": "#/$defs/Missing"}}}}]});
    let out = parse_with_options("glm", &options, b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "idiolect: invalid glm options: tool \"f\": $ref \"#/$defs/Missing\" points at nothing\n"
    );
}

#[test]
fn a_tool_whose_schema_recurses_through_its_properties_types_its_values() {
    let options = json!({"tools": [{"name": "f", "parameters": {"type": "object",
        "$defs": {"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
        "properties": {"root": {"$ref": "#/$defs/Node"}, "n": {"$ref": "#/$defs/Count"}},
        "definitions": {}}}]});
    // `n`'s reference points at nothing: refused, though `root` is fine.
    let out = parse_with_options("glm", &options, b"");
    assert_eq!(out.status.code(), Some(2));
    let mut fine = options.clone();
    fine["tools"][0]["parameters"]["$defs"]["Count"] = json!({"type": "integer"});
    let input = b"<tool_call>f<arg_key>root</arg_key><arg_value>{\"children\": []}</arg_value><arg_key>n</arg_key><arg_value>3</arg_value></tool_call>";
    let out = parse_with_options("glm", &fine, input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a document");
    assert_eq!(
        doc["items"][0]["arguments"],
        json!("{\"root\":{\"children\":[]},\"n\":3}")
    );
}

#[test]
fn a_tool_choice_no_request_can_have_is_an_options_error() {
    for (choice, shown) in [
        (r#""sometimes""#, r#""sometimes""#),
        (
            r#"{"type": "function", "function": {}}"#,
            r#"{"type":"function","function":{}}"#,
        ),
        (
            r#"{"type": "tool", "name": "f"}"#,
            r#"{"type":"tool","name":"f"}"#,
        ),
        ("3", "3"),
    ] {
        let options: Value =
            serde_json::from_str(&format!(r#"{{"tool_choice": {choice}}}"#)).expect("JSON");
        let out = parse_with_options("qwen3-coder", &options, b"x");
        assert_eq!(out.status.code(), Some(2), "{choice}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = format!(
            "invalid qwen3-coder options: invalid value {shown} for `tool_choice`, expected \"auto\", \"none\", \"required\" or {{\"type\": \"function\", \"function\": {{\"name\": NAME}}}}"
        );
        assert!(stderr.contains(&expected), "{stderr}");
    }
}

#[test]
fn tool_choice_required_streams_the_payloads_calls_as_deltas() {
    let path =
        std::env::temp_dir().join(format!("idiolect-tool-choice-{}.json", std::process::id()));
    std::fs::write(&path, r#"{"tool_choice": "required"}"#).expect("write options");
    let out = run(
        &["stream", "hermes", "--deltas", "--chunk-size", "3", "--options", path.to_str().expect("utf-8")],
        b"<think>ok</think>[{\"name\": \"f\", \"parameters\": {\"a\": 1}}, {\"name\": \"g\", \"parameters\": {}}]",
    );
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success());
    let deltas = lines(&out.stdout);
    let reasoning: String = deltas
        .iter()
        .filter_map(|d| d["reasoning"].as_str())
        .collect();
    assert_eq!(reasoning, "ok");
    assert!(
        deltas.iter().all(|d| d.get("content").is_none()),
        "{deltas:?}"
    );
    let names: Vec<&str> = deltas
        .iter()
        .filter_map(|d| d["tool_calls"][0]["function"]["name"].as_str())
        .collect();
    assert_eq!(names, ["f", "g"]);
    let first: String = deltas
        .iter()
        .filter(|d| d["tool_calls"][0]["index"] == 0)
        .filter_map(|d| d["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(first, "{\"a\": 1}");
}

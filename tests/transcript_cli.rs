//! The transcript dialect through the `idiolect` command: `parse … --format`,
//! `render … --format` (JSON on stdin) and `stream … --stop` (the scanner).

use std::process::Output;

use serde_json::{json, Value};

mod support;

use support::run;

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn parse_with_format_reads_a_chatml_prompt() {
    let out = run(
        &["parse", "transcript", "--format", "chatml"],
        b"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    );
    assert_eq!(out.status.code(), Some(0));
    let doc = stdout_json(&out);
    assert_eq!(
        doc["messages"],
        json!([{"speaker": "user", "content": "Hi"}])
    );
    assert_eq!(doc["open"], json!({"speaker": "assistant", "content": ""}));
}

#[test]
fn parse_with_diagnostics_exits_1() {
    let out = run(&["parse", "transcript"], b"\n\nHuman: Hi");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout_json(&out)["diagnostics"][0]["code"], "human-last");
}

#[test]
fn render_with_format_prints_prompt_and_stop_sequences() {
    let input = json!({"messages": [{"speaker": "Alice", "content": "Hi"}], "assistant": "Claude"});
    let out = run(
        &["render", "transcript", "--format", "participants"],
        input.to_string().as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout_json(&out),
        json!({"prompt": "Alice: Hi\nClaude:", "stop_sequences": ["\nAlice:"]})
    );
}

#[test]
fn render_what_prompt_prints_the_prompt_text() {
    let input = json!({"messages": [{"speaker": "user", "content": "Hi"}]});
    let out = run(
        &[
            "render",
            "transcript",
            "--format",
            "chatml",
            "--what",
            "prompt",
        ],
        input.to_string().as_bytes(),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn render_refusal_is_an_error_naming_the_part() {
    let input = json!({"messages": [{"speaker": "Human", "content": "a\n\nHuman: b"}]});
    let out = run(&["render", "transcript"], input.to_string().as_bytes());
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("contains-header at messages[0].content"),
        "{stderr}"
    );
}

#[test]
fn stream_with_stops_cuts_at_the_earliest_one() {
    let out = run(
        &[
            "stream",
            "transcript",
            "--stop",
            "</function_calls>",
            "--stop",
            "\nUser:",
            "--chunk-size",
            "3",
        ],
        b"Done.\nUser: x</function_calls>",
    );
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect();
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text")
        .map(|e| e["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(text, "Done.");
    let stop = events
        .iter()
        .find(|e| e["type"] == "stop")
        .expect("a stop event");
    assert_eq!(
        (stop["index"].clone(), stop["offset"].clone()),
        (json!(1), json!(5))
    );
}

/// The request example of docs/transcript-requests.md: two participants, one tool call and its result,
/// and a cache marker (TR-97, TR-102).
fn request_input() -> Value {
    json!({
        "system": "You answer briefly.",
        "messages": [
            {"speaker": "Alice", "content": "Weather in Paris?", "cache_marker": true},
            {"speaker": "Claude", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}
            ]},
            {"speaker": "Alice", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "18 C, sunny"}
            ]}
        ],
        "options": {"assistant": "Claude", "prompt_caching": true}
    })
}

#[test]
fn render_what_request_in_tool_mode_xml_writes_the_exchange_into_the_prefill() {
    let out = run(
        &["render", "transcript", "--what", "request"],
        request_input().to_string().as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let request = stdout_json(&out);
    let prefill = "Alice: Weather in Paris?\nClaude: Checking.\n<function_calls>\n<invoke name=\"weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</function_calls>\nAlice: <function_results>\n<result tool_use_id=\"t1\">18 C, sunny</result>\n</function_results>\nClaude:";
    assert_eq!(request["assistant_prefill"], prefill);
    let last = &request["messages"][1];
    assert_eq!(last["role"], "assistant");
    assert_eq!(
        last["content"],
        json!([
            {"type": "text", "text": "Alice: Weather in Paris?", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": &prefill["Alice: Weather in Paris?".len()..]}
        ])
    );
    assert_eq!(request["stop_sequences"], json!(["\nAlice:"]));
}

#[test]
fn render_what_request_in_tool_mode_native_keeps_native_blocks() {
    let dir = std::env::temp_dir().join(format!("idiolect-request-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = dir.join("options.json");
    std::fs::write(&options, r#"{"request": {"tool_mode": "native"}}"#).unwrap();
    let out = run(
        &[
            "render",
            "transcript",
            "--what",
            "request",
            "--options",
            options.to_str().unwrap(),
        ],
        request_input().to_string().as_bytes(),
    );
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let request = stdout_json(&out);
    let messages = request["messages"].as_array().unwrap();
    assert_eq!(messages[1]["content"][2]["type"], "tool_use");
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(
        messages.last().unwrap()["content"],
        json!([{"type": "text", "text": "Claude:"}])
    );
    assert_eq!(request["assistant_prefill"], "Claude:");
}

#[test]
fn render_what_request_refusal_exits_2_with_the_code() {
    let input = json!({"messages": [{"speaker": "Alice", "content": [{"type": "image", "source": {}}]}],
                       "options": {"formatter": "completions"}});
    let out = run(
        &["render", "transcript", "--what", "request"],
        input.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unsupported-media at messages[0].content[0]"),
        "{stderr}"
    );
}

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

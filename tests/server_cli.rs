//! The server layer through the command line (spec/servers.md):
//! `parse --output=message`, `stream --deltas=server`, `--ids`, `--declared-tool`,
//! and the flags' errors.

mod support;

use serde_json::{json, Value};
use support::run;

const WEATHER: &str =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value per line"))
        .collect()
}

fn two_calls_and_a_cut_one() -> String {
    format!(
        "Let me check.\n{WEATHER}\n<tool_call>\n{{\"name\": \"rm\", \"arguments\": {{}}}}\n</tool_call>\n\
         <tool_call>\n{{\"name\": \"get_time\", \"arguments\": {{\"tz\": \"Eur"
    )
}

#[test]
fn parse_output_message_holds_the_complete_calls_with_ids() {
    let text = two_calls_and_a_cut_one();
    let out = run(
        &[
            "parse",
            "hermes",
            "--output=message",
            "--ids",
            "sequence",
            "--compact",
        ],
        text.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let message: Value = serde_json::from_slice(&out.stdout).expect("a message");
    assert_eq!(
        message,
        json!({"content": "Let me check.\n", "reasoning": null, "tool_calls": [
            {"id": "call_0", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "call_1", "type": "function", "function": {"name": "rm", "arguments": "{}"}}
        ]})
    );
    let declared = run(
        &[
            "parse",
            "hermes",
            "--output=message",
            "--declared-tool",
            "get_weather",
            "--compact",
        ],
        text.as_bytes(),
    );
    let message: Value = serde_json::from_slice(&declared.stdout).expect("a message");
    assert_eq!(message["tool_calls"].as_array().map(Vec::len), Some(1));
    assert_eq!(message["tool_calls"][0]["id"], Value::Null);
}

#[test]
fn stream_deltas_server_sends_one_call_a_delta() {
    let text = format!("{WEATHER}\n{WEATHER}");
    let out = run(
        &["stream", "hermes", "--deltas=server", "--ids=sequence"],
        text.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let call = |n: usize| {
        json!({"tool_calls": [{"index": n, "id": format!("call_{n}"), "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]})
    };
    assert_eq!(lines(&out.stdout), [call(0), call(1)]);
}

#[test]
fn stream_deltas_server_leaves_formatting_out_at_any_chunk_size() {
    let text = format!("\n{WEATHER}\n\nDone.");
    for chunk in ["1", "5", "4096"] {
        let out = run(
            &["stream", "hermes", "--deltas=server", "--chunk-size", chunk],
            text.as_bytes(),
        );
        let deltas = lines(&out.stdout);
        let content: String = deltas
            .iter()
            .filter_map(|d| d.get("content").and_then(Value::as_str))
            .collect();
        assert_eq!(content, "\n\nDone.", "chunk {chunk}");
        let ids: Vec<&Value> = deltas
            .iter()
            .filter_map(|d| d.get("tool_calls"))
            .filter_map(|c| c[0].get("id"))
            .collect();
        assert_eq!(ids, [&Value::Null], "chunk {chunk}");
    }
}

#[test]
fn random_and_vllm_ids_have_the_servers_forms() {
    for (style, prefix, length) in [("random", "call_", 24), ("vllm", "chatcmpl-tool-", 32)] {
        let out = run(
            &["parse", "hermes", "--output=message", "--ids", style],
            WEATHER.as_bytes(),
        );
        let message: Value = serde_json::from_slice(&out.stdout).expect("a message");
        let id = message["tool_calls"][0]["id"].as_str().expect("an id");
        let rest = id.strip_prefix(prefix).expect(prefix);
        assert_eq!(rest.len(), length, "{id}");
        assert!(rest.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");
    }
}

#[test]
fn the_bare_deltas_flag_is_still_live_and_a_file_after_it_is_the_input() {
    let dir = std::env::temp_dir().join(format!("idiolect-server-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("turn.txt");
    std::fs::write(&file, WEATHER).unwrap();
    let path = file.to_str().unwrap();
    let out = run(&["stream", "hermes", "--deltas", path], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deltas = lines(&out.stdout);
    assert_eq!(
        deltas[0],
        json!({"tool_calls": [{"index": 0, "id": null, "type": "function",
                               "function": {"name": "get_weather"}}]})
    );
    let whole = run(&["stream", "hermes", "--deltas=whole-calls", path], b"");
    assert_eq!(lines(&whole.stdout).len(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn server_flags_are_refused_where_they_mean_nothing() {
    let refused: &[(&[&str], &str)] = &[
        (
            &["parse", "hermes", "--ids", "random"],
            "need --output=message",
        ),
        (
            &["stream", "hermes", "--deltas", "--ids", "random"],
            "need --deltas=server",
        ),
        (
            &["stream", "hermes", "--declared-tool", "f"],
            "need --deltas=server",
        ),
        (
            &["stream", "hermes", "--deltas=server", "--whole-calls"],
            "--whole-calls is --deltas=whole-calls",
        ),
        (
            &["parse", "sections", "--output=message"],
            "--output=message needs a field family",
        ),
        (
            &["stream", "sections", "--deltas=server"],
            "--deltas needs a field family",
        ),
        (
            &["parse", "hermes", "--output=message", "--ids", "uuid"],
            "invalid value 'uuid'",
        ),
    ];
    for (args, message) in refused {
        let out = run(args, b"x");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

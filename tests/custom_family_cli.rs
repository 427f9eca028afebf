//! Field families defined at run time through the command line (spec/custom-family.md
//! CF-14): `parse` and `stream --deltas` with `--grammar` and `--family`, and the
//! one-line errors with exit code 2 for a malformed family file or grammar (CF-13).

mod support;

use std::path::PathBuf;

use serde_json::{json, Value};
use support::run;

const GRAMMAR: &str = "grammar/qwen3-coder.pest";
const FAMILY: &str = "grammar/qwen3-coder.family.json";
const CALL: &[u8] = b"Hi <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>";

/// A file under the target directory with `text` (unique per test).
fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("custom_family_cli");
    std::fs::create_dir_all(&dir).expect("the scratch folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("a scratch file");
    path
}

/// The example description with `edit` applied to its JSON.
fn edited_family(name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(FAMILY))
        .expect("the example family");
    let mut value: Value = serde_json::from_str(&text).expect("JSON");
    edit(&mut value);
    scratch(name, &value.to_string())
}

/// Runs `parse` with this grammar and family; asserts exit code 2 and a single line on
/// stderr, and returns it.
fn refused(grammar: &str, family: &str) -> String {
    let out = run(&["parse", "--grammar", grammar, "--family", family], CALL);
    assert_eq!(out.status.code(), Some(2), "exit code");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    stderr
}

#[test]
fn parse_with_a_grammar_and_a_family_gives_the_document() {
    let out = run(
        &[
            "parse",
            "--grammar",
            GRAMMAR,
            "--family",
            FAMILY,
            "--compact",
        ],
        CALL,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a document");
    assert_eq!(
        doc,
        json!({"items": [
            {"type": "text", "text": "Hi "},
            {"type": "tool_call", "index": 0, "id": null, "name": "get_weather",
             "arguments": "{\"city\":\"Paris\"}", "input": {"city": "Paris"}, "complete": true}
        ]})
    );
}

#[test]
fn parse_reads_the_input_file_given_after_the_family() {
    let input = scratch("call.txt", std::str::from_utf8(CALL).expect("UTF-8"));
    let input = input.to_string_lossy();
    let out = run(
        &[
            "parse",
            "--grammar",
            GRAMMAR,
            "--family",
            FAMILY,
            "--compact",
            &input,
        ],
        b"",
    );
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a document");
    assert_eq!(doc["items"][1]["name"], "get_weather");
}

#[test]
fn stream_deltas_give_content_then_the_name_then_argument_fragments() {
    for chunk in ["1", "4", "4096"] {
        let out = run(
            &[
                "stream",
                "--grammar",
                GRAMMAR,
                "--family",
                FAMILY,
                "--deltas",
                "--chunk-size",
                chunk,
            ],
            CALL,
        );
        assert!(out.status.success());
        let deltas: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON value per line"))
            .collect();
        let first_call = deltas
            .iter()
            .position(|d| d.get("tool_calls").is_some())
            .expect("a tool-call delta");
        let content: String = deltas[..first_call]
            .iter()
            .map(|d| d["content"].as_str().expect("content before the call"))
            .collect();
        assert_eq!(content, "Hi ");
        assert_eq!(
            deltas[first_call]["tool_calls"][0]["function"]["name"],
            "get_weather"
        );
        let arguments: String = deltas[first_call + 1..]
            .iter()
            .map(|d| {
                d["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .expect("argument fragments after the name")
            })
            .collect();
        assert_eq!(arguments, "{\"city\":\"Paris\"}", "chunk size {chunk}");
    }
}

#[test]
fn an_unknown_key_is_refused_naming_it() {
    let family = edited_family("unknown-key.json", |v| v["colour"] = json!("blue"));
    let stderr = refused(GRAMMAR, &family.to_string_lossy());
    assert!(stderr.contains("unknown field `colour`"), "{stderr}");
}

#[test]
fn an_unknown_nested_key_is_refused_naming_it() {
    let family = edited_family("unknown-nested-key.json", |v| {
        v["captures"]["nmae"] = json!("function_name")
    });
    let stderr = refused(GRAMMAR, &family.to_string_lossy());
    assert!(stderr.contains("unknown field `nmae`"), "{stderr}");
}

#[test]
fn a_missing_key_is_refused_naming_it() {
    let family = edited_family("missing-key.json", |v| {
        v.as_object_mut().expect("object").remove("entries");
    });
    let stderr = refused(GRAMMAR, &family.to_string_lossy());
    assert!(stderr.contains("missing field `entries`"), "{stderr}");
}

#[test]
fn a_key_the_encoding_needs_is_refused_when_missing() {
    let family = edited_family("missing-value-end.json", |v| {
        v["entries"]
            .as_object_mut()
            .expect("object")
            .remove("value_end");
    });
    let stderr = refused(GRAMMAR, &family.to_string_lossy());
    assert!(stderr.contains("`entries.value_end`"), "{stderr}");
}

#[test]
fn a_rule_the_grammar_lacks_is_refused_naming_key_and_rule() {
    let family = edited_family("unknown-rule.json", |v| {
        v["captures"]["parameter"] = json!("param_key")
    });
    let stderr = refused(GRAMMAR, &family.to_string_lossy());
    assert!(
        stderr.contains("key `captures.parameter` names rule `param_key`"),
        "{stderr}"
    );
}

#[test]
fn bad_json_is_refused_with_its_position() {
    let family = scratch("bad.json", "{\"name\": \"x\",\n");
    let stderr = refused(GRAMMAR, &family.to_string_lossy());
    assert!(
        stderr.contains("family description:") && stderr.contains("line 2"),
        "{stderr}"
    );
}

#[test]
fn an_unsupported_construct_is_refused_naming_the_rule() {
    let grammar = scratch(
        "stack.pest",
        "text_marker = _{ PUSH(\"<\") ~ POP }\nfunction_name = { \"x\" }\n",
    );
    let stderr = refused(&grammar.to_string_lossy(), FAMILY);
    assert!(
        stderr.contains("family grammar: rule `text_marker`") && stderr.contains("PUSH"),
        "{stderr}"
    );
}

#[test]
fn a_grammar_pest_refuses_is_reported_on_one_line() {
    let grammar = scratch("syntax.pest", "text_marker = { \"<\" \n");
    let stderr = refused(&grammar.to_string_lossy(), FAMILY);
    assert!(
        stderr.contains("family grammar: pest refused it: at "),
        "{stderr}"
    );
}

#[test]
fn a_dialect_and_a_family_together_are_refused() {
    let out = run(
        &[
            "parse",
            "--grammar",
            GRAMMAR,
            "--family",
            FAMILY,
            "hermes",
            "-",
        ],
        CALL,
    );
    assert_eq!(out.status.code(), Some(2));
}

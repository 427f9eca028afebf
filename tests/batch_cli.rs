//! `idiolect batch`: one output line per record, in input order, each with its
//! document or its own error; a bad record never stops the batch, and the exit
//! code says whether any record failed.

mod support;

use serde_json::{json, Value};

fn lines(stdout: &[u8]) -> Vec<Value> {
    stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("every output line is JSON"))
        .collect()
}

#[test]
fn malformed_records_get_their_own_error_lines_and_the_rest_are_parsed() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"id\":\"a\",\"text\":\"x <think>p</think>\"}\n");
    input.extend_from_slice(b"{\"text\": \"unterminated\n"); // invalid JSON
    input.extend_from_slice(b"{\"id\":3,\"body\":\"no text field\"}\n"); // missing field
    input.extend_from_slice(b"{\"id\":4,\"text\":42}\n"); // wrong type
    input.extend_from_slice(b"{\"text\":\"\xff\xfe\"}\n"); // invalid UTF-8
    input.extend_from_slice(b"\n"); // blank: skipped, but counted
    input.extend_from_slice(b"{\"text\":\"last\"}\n");
    let out = support::run(&["batch", "sections"], &input);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed record makes the exit code 1"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 6);
    assert_eq!(
        got[0],
        json!({"line": 1, "id": "a", "document": {"items": [
            {"type": "text", "text": "x "},
            {"type": "section", "name": "think", "tag": "think", "attrs": {},
             "content": "p", "closed": true}
        ]}})
    );
    assert_eq!(got[1]["line"], 2);
    assert!(got[1]["error"]
        .as_str()
        .unwrap()
        .starts_with("invalid JSON"));
    assert!(got[1].get("document").is_none());
    assert_eq!(
        got[2],
        json!({"line": 3, "id": 3, "error": "no field \"text\""})
    );
    assert_eq!(
        got[3],
        json!({"line": 4, "id": 4, "error": "field \"text\" is a number, not a string"})
    );
    assert_eq!(
        got[4],
        json!({"line": 5, "error": "invalid UTF-8 at byte 9"})
    );
    assert_eq!(
        got[5],
        json!({"line": 7, "document": {"items": [{"type": "text", "text": "last"}]}})
    );
}

#[test]
fn output_keeps_input_order_on_several_threads() {
    let mut input = String::new();
    for i in 0..5000 {
        // Uneven sizes, so workers finish out of order.
        let body = "y".repeat(i % 97 * 13);
        input.push_str(&format!(
            "{{\"id\":{i},\"text\":\"<think>{i}</think>{body}\"}}\n"
        ));
    }
    let out = support::run(&["batch", "sections", "--threads", "4"], input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 5000);
    for (i, line) in got.iter().enumerate() {
        assert_eq!(line["id"], i, "line {}", i + 1);
        assert_eq!(line["line"], i + 1);
        assert_eq!(line["document"]["items"][0]["content"], i.to_string());
    }
}

#[test]
fn the_field_option_names_the_text_field() {
    let out = support::run(
        &["batch", "plurnk", "--field", "reply"],
        b"{\"reply\":\"<<SEND[200]:ok:SEND\"}\n",
    );
    assert_eq!(out.status.code(), Some(0));
    let got = lines(&out.stdout);
    assert_eq!(got[0]["document"]["items"][0]["statement"]["signal"], 200);
}

#[test]
fn a_document_with_errors_makes_the_exit_code_1_but_is_printed() {
    let out = support::run(&["batch", "plurnk"], b"{\"text\":\"<<SEND[abc]:x:SEND\"}\n");
    assert_eq!(out.status.code(), Some(1));
    let got = lines(&out.stdout);
    assert_eq!(got[0]["document"]["items"][0]["kind"], "error");
}

#[test]
fn files_are_one_document_each_and_a_missing_file_is_its_own_error() {
    let out = support::run(
        &[
            "batch",
            "sections",
            "--files",
            "examples/agent-reply.txt",
            "no/such/file.txt",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["file"], "examples/agent-reply.txt");
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agent-reply.txt"),
    )
    .unwrap();
    let whole = idiolect::sections::parse(&text, &Default::default()).unwrap();
    assert_eq!(got[0]["document"], serde_json::to_value(&whole).unwrap());
    assert_eq!(got[1]["file"], "no/such/file.txt");
    assert!(got[1]["error"]
        .as_str()
        .unwrap()
        .starts_with("cannot read no/such/file.txt"));
}

#[test]
fn bad_options_stop_before_any_record_with_exit_2() {
    let out = support::run(
        &["batch", "sections", "--section", "bad name"],
        b"{\"text\":\"x\"}\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("idiolect: "), "{stderr}");
}

//! Properties of the anthropic-xml dialect: rendering round-trips through parsing,
//! and streaming in any chunking folds to the whole-input document.

use idiolect::anthropic_xml::{
    self, render_calls, render_results, Block, CallSpec, Document, DocumentFolder, Options,
    ResultSpec, PREFIX,
};
use idiolect::Fold;
use indexmap::IndexMap;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Pieces of text that stress the renderer: markup characters, entities, tags of the
/// dialect in both forms, multibyte characters.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{1,6}",
        Just("<".to_string()),
        Just(">".to_string()),
        Just("&".to_string()),
        Just("&amp;".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("\n".to_string()),
        Just("é✓".to_string()),
        Just("</parameter>".to_string()),
        Just(format!("</{PREFIX}parameter>")),
        Just("</invoke>".to_string()),
        Just("<parameter name=\"q\">".to_string()),
        Just("</function_calls>".to_string()),
        Just("</result>".to_string()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..8).prop_map(|p| p.concat())
}

fn params() -> impl Strategy<Value = IndexMap<String, String>> {
    prop::collection::vec(("[a-z_]{1,8}", text()), 0..4).prop_map(|kv| kv.into_iter().collect())
}

fn calls() -> impl Strategy<Value = Vec<CallSpec>> {
    prop::collection::vec(
        ("[A-Za-z_&<\"é]{0,10}", params()).prop_map(|(name, params)| CallSpec {
            name,
            params: Some(params),
            input: None,
            complete: None,
        }),
        0..4,
    )
}

fn parsed_calls(doc: &Document) -> Vec<(String, IndexMap<String, String>, bool)> {
    doc.calls()
        .map(|c| (c.name.clone(), c.params.clone(), c.complete))
        .collect()
}

fn has_closer(value: &str) -> bool {
    value.contains("</parameter") || value.contains(&format!("</{PREFIX}parameter"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn rendered_calls_parse_back_or_are_refused_only_for_values_with_a_closer(
        calls in calls(), prefix in any::<bool>()
    ) {
        let options = Options { render_prefix: prefix, ..Options::default() };
        match render_calls(&calls, &options) {
            Ok(text) => {
                let doc = anthropic_xml::parse(&text, &options).unwrap();
                let want: Vec<_> = calls
                    .iter()
                    .map(|c| (c.name.clone(), c.params.clone().unwrap_or_default(), true))
                    .collect();
                prop_assert_eq!(parsed_calls(&doc), want);
                prop_assert_eq!(doc.blocks.len(), 1);
            }
            Err(_) => {
                let any_closer = calls.iter().flat_map(|c| c.params.iter().flatten()).any(|(_, v)| has_closer(v));
                prop_assert!(any_closer, "refused calls without a parameter closer in a value");
            }
        }
    }

    #[test]
    fn rendered_typed_input_parses_back_to_the_same_input(
        entries in prop::collection::vec(("[a-z]{1,6}", prop_oneof![
            // 16 digits and more stay strings without a schema (AX-14).
            (-999_999_999_999_999i64..=999_999_999_999_999).prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            Just(Value::Null),
            prop::collection::vec(any::<i32>(), 0..4).prop_map(|v| json!(v)),
            "s[a-z <>&]{0,12}".prop_map(Value::from),
        ]), 0..5)
    ) {
        let input: Map<String, Value> = entries.into_iter().collect();
        let call = CallSpec { name: "tool".into(), params: None, input: Some(input.clone()), complete: None };
        let text = render_calls(std::slice::from_ref(&call), &Options::default()).unwrap();
        let doc = anthropic_xml::parse(&text, &Options::default()).unwrap();
        let got: Vec<_> = doc.calls().map(|c| c.input.clone()).collect();
        prop_assert_eq!(got, vec![input]);
    }

    #[test]
    fn rendered_results_parse_back_with_content_and_ids_intact(
        results in prop::collection::vec(
            (prop::option::of("[a-z0-9_&<\"']{0,8}"), any::<bool>(), text()), 0..4)
    ) {
        let specs: Vec<ResultSpec> = results
            .iter()
            .map(|(id, err, content)| ResultSpec {
                tool_use_id: id.clone(),
                is_error: *err,
                content: Value::String(content.clone()),
            })
            .collect();
        let text = render_results(&specs, &Options::default());
        let doc = anthropic_xml::parse(&text, &Options::default()).unwrap();
        let Some(Block::ToolResults { results: got, closed, .. }) = doc.blocks.first() else {
            return Err(TestCaseError::fail(format!("no result block in {text:?}")));
        };
        prop_assert!(*closed);
        let got: Vec<_> = got.iter().map(|r| (r.tool_use_id.clone(), r.is_error, r.content.clone())).collect();
        prop_assert_eq!(got, results);
    }
}

/// Tag soup: fragments of every structural tag in both forms, lookalikes, entities,
/// whitespace and prose, so that random inputs reach every mode.
fn soup_piece() -> impl Strategy<Value = String> {
    let names = [
        "thinking",
        "function_calls",
        "invoke",
        "parameter",
        "function_results",
        "result",
        "error",
    ];
    prop_oneof![
        (
            prop::sample::select(names.to_vec()),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(n, close, pre)| {
                format!(
                    "<{}{}{n}>",
                    if close { "/" } else { "" },
                    if pre { PREFIX } else { "" }
                )
            }),
        (
            prop::sample::select(vec!["invoke", "parameter", "result", "error"]),
            "[a-z]{0,3}"
        )
            .prop_map(|(n, v)| format!("<{n} name=\"{v}\" tool_use_id='{v}'>")),
        Just("<invoke name=\"x\"/>".to_string()),
        Just("<".to_string()),
        Just("&amp;".to_string()),
        Just("&#x4".to_string()),
        Just(" \n".to_string()),
        Just(PREFIX.to_string()),
        "[a-z<>/&;\" ]{1,5}",
        Just("✓".to_string()),
    ]
}

fn fold_chunked(input: &[u8], cuts: &[usize], options: &Options) -> Document {
    let mut parser = anthropic_xml::Parser::with_options(options).unwrap();
    let mut folder = DocumentFolder::new(false);
    let mut covered = 0;
    let mut at = 0;
    let check = |e: &anthropic_xml::Event, covered: &mut usize| {
        assert_eq!(e.span().start, *covered, "spans tile");
        *covered = e.span().end;
    };
    for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
        let cut = cut.clamp(at, input.len());
        for e in parser.feed(&input[at..cut]) {
            check(&e, &mut covered);
            folder.push(&e);
        }
        at = cut;
    }
    for e in parser.finish() {
        check(&e, &mut covered);
        folder.push(&e);
    }
    assert_eq!(
        covered,
        String::from_utf8_lossy(input).len(),
        "spans cover the input"
    );
    folder.into_document()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_of_tag_soup_folds_to_the_whole_input_document(
        pieces in prop::collection::vec(soup_piece(), 0..40),
        mut cuts in prop::collection::vec(0usize..400, 0..12),
    ) {
        let input = pieces.concat();
        let options = Options { max_tag_bytes: 64, ..Options::default() };
        let whole = anthropic_xml::parse(&input, &options).unwrap();
        cuts.sort_unstable();
        prop_assert_eq!(fold_chunked(input.as_bytes(), &cuts, &options), whole.clone());
        let bytes: Vec<usize> = (1..input.len()).collect();
        prop_assert_eq!(fold_chunked(input.as_bytes(), &bytes, &options), whole);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_keep_every_byte(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        mut cuts in prop::collection::vec(0usize..200, 0..8),
    ) {
        cuts.sort_unstable();
        let whole = fold_chunked(&bytes, &[], &Options::default());
        prop_assert_eq!(fold_chunked(&bytes, &cuts, &Options::default()), whole);
    }
}

/// The block type an event belongs to, by its own type.
fn block_type(event: &anthropic_xml::Event) -> &'static str {
    let value = serde_json::to_value(event).unwrap();
    match value["type"].as_str().unwrap_or("") {
        "text" => "text",
        t if t.starts_with("thinking") => "thinking",
        "tool_results_start" | "result_start" | "result_delta" | "result_end"
        | "tool_results_end" => "tool_results",
        "stray" => "block",
        _ => "tool_calls",
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_event_carries_the_index_of_its_block_in_the_document(
        pieces in prop::collection::vec(soup_piece(), 0..40),
    ) {
        let input = pieces.concat();
        let mut parser = anthropic_xml::Parser::with_options(&Options::default()).unwrap();
        let mut events: Vec<_> = parser.feed(input.as_bytes()).collect();
        events.extend(parser.finish());
        let doc = anthropic_xml::Document::fold(&events);
        let types: Vec<String> = doc
            .blocks
            .iter()
            .map(|b| serde_json::to_value(b).unwrap()["type"].as_str().unwrap().to_string())
            .collect();
        for event in &events {
            let at = types.get(event.index());
            prop_assert!(at.is_some(), "index {} past {} blocks", event.index(), types.len());
            let want = block_type(event);
            let at = at.unwrap().as_str();
            if want == "block" {
                prop_assert!(at == "tool_calls" || at == "tool_results", "stray in a {} block", at);
            } else {
                prop_assert_eq!(at, want);
            }
        }
    }
}

#[test]
fn blocks_carry_spans_from_opener_to_closer_when_asked() {
    let dialect = idiolect::dialect("anthropic-xml").unwrap();
    let open = |options: &Value, spans| dialect.open(options, spans);
    let mut session = open(&Value::Null, true).unwrap();
    let input = "hi <thinking>x</thinking><function_calls><invoke name=\"a\"/></function_calls>";
    let mut events = Vec::new();
    session.feed(input.as_bytes(), &mut events);
    session.finish(&mut events);
    let doc = session.document();
    let spans: Vec<Value> = doc["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["span"].clone())
        .collect();
    assert_eq!(
        spans,
        vec![json!([0, 3]), json!([3, 25]), json!([25, input.len()])]
    );
}

#[test]
fn invoke_end_carries_the_whole_call_as_soon_as_its_closer_arrives() {
    let mut parser = anthropic_xml::Parser::with_options(&Options::default()).unwrap();
    let head = "<function_calls>\n<invoke name=\"Read\">\n<parameter name=\"path\">/a</parameter>\n</invoke>";
    let events: Vec<_> = parser.feed(head.as_bytes()).collect();
    let last = serde_json::to_value(events.last().unwrap()).unwrap();
    assert_eq!(last["type"], "invoke_end");
    assert_eq!(last["input"], json!({"path": "/a"}));
    assert_eq!(last["closed"], true);
}

#[test]
fn prose_is_emitted_at_once_and_only_a_viable_tag_prefix_is_held() {
    let mut parser = anthropic_xml::Parser::with_options(&Options::default()).unwrap();
    let events: Vec<_> = parser.feed(b"Hello <func").collect();
    assert_eq!(
        serde_json::to_value(&events).unwrap(),
        json!([{"type": "text", "index": 0, "text": "Hello ", "span": [0, 6]}])
    );
    let events: Vec<_> = parser.feed(b"k").collect();
    assert_eq!(serde_json::to_value(&events).unwrap()[0]["text"], "<funck");
}

#[test]
fn a_tag_bound_below_the_minimum_is_an_options_error() {
    let dialect = idiolect::dialect("anthropic-xml").unwrap();
    let open = |options: &Value, spans| dialect.open(options, spans);
    let err = open(&json!({"max_tag_bytes": 10}), false).err().unwrap();
    assert!(err.to_string().contains("at least 64"), "{err}");
    assert!(
        open(&json!({"colour": "blue"}), false).is_err(),
        "unknown keys are refused"
    );
}

#[test]
fn render_refuses_an_unknown_rendering_and_malformed_input() {
    let dialect = idiolect::dialect("anthropic-xml").unwrap();
    let render = |what, input: &Value, options: &Value| dialect.render(what, input, options);
    assert!(render(Some("poems"), &json!([]), &Value::Null)
        .unwrap_err()
        .contains("unknown rendering"));
    assert!(render(Some("calls"), &json!({"name": "x"}), &Value::Null).is_err());
    let bare = render(
        None,
        &json!([{"name": "x", "input": {}}]),
        &json!({"render_prefix": false}),
    )
    .unwrap();
    assert_eq!(
        bare,
        "<function_calls>\n<invoke name=\"x\">\n</invoke>\n</function_calls>"
    );
}

#[test]
fn rendered_tools_list_every_definition_with_its_schema() {
    let dialect = idiolect::dialect("anthropic-xml").unwrap();
    let render = |what, input: &Value, options: &Value| dialect.render(what, input, options);
    let tools = json!([
        {"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}},
        {"name": "Now"}
    ]);
    let text = render(Some("tools"), &tools, &Value::Null).unwrap();
    assert!(text.contains(
        "<function>{\"description\":\"Read a file\",\"name\":\"Read\",\"parameters\":{\"type\":\"object\"}}</function>"
    ));
    assert!(text.contains("<function>{\"name\":\"Now\"}</function>"));
    assert!(text.contains(&format!("<{PREFIX}invoke name=\"$TOOL_NAME\">")));
}

fn idiolect(args: &[&str], stdin: &[u8]) -> (i32, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_idiolect"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn cli_parse_prints_text_one_complete_call_and_text() {
    let input = "I will read it.\n<function_calls>\n<invoke name=\"Read\">\n<parameter name=\"path\">/a.txt</parameter>\n</invoke>\n</function_calls>\nDone.";
    let (code, out) = idiolect(&["parse", "anthropic-xml"], input.as_bytes());
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        doc,
        json!({"blocks": [
            {"type": "text", "text": "I will read it.\n"},
            {"type": "tool_calls", "closed": true, "calls": [
                {"name": "Read", "params": {"path": "/a.txt"}, "input": {"path": "/a.txt"}, "complete": true}
            ]},
            {"type": "text", "text": "\nDone."}
        ]})
    );
}

#[test]
fn cli_render_calls_parses_back_through_the_cli() {
    let calls = br#"[{"name":"Edit","input":{"path":"a.rs","line":3,"code":"if a < b {\n}"}}]"#;
    let (code, xml) = idiolect(&["render", "anthropic-xml", "--what", "calls"], calls);
    assert_eq!(code, 0);
    let (code, out) = idiolect(&["parse", "anthropic-xml"], xml.trim_end().as_bytes());
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        doc["blocks"][0]["calls"][0]["input"],
        json!({"path": "a.rs", "line": 3, "code": "if a < b {\n}"})
    );
}

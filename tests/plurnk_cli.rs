//! `idiolect parse plurnk` as the published `plurnk` CLI's users rely on it: exit 0 on a
//! clean parse, 1 on any error item or unparsed tail, `unparsedTail` only when present.

mod support;

fn parse_plurnk(stdin: &[u8]) -> (Option<i32>, serde_json::Value) {
    let out = support::run(&["parse", "plurnk", "--compact"], stdin);
    let document = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    (out.status.code(), document)
}

#[test]
fn a_clean_parse_exits_0_without_an_unparsed_tail() {
    let (code, document) = parse_plurnk(b"Deliver the final answer <<SEND[200]:Paris:SEND");
    assert_eq!(code, Some(0));
    assert_eq!(document["items"][1]["statement"]["signal"], 200);
    assert!(document.get("unparsedTail").is_none());
}

#[test]
fn an_error_item_exits_1() {
    let (code, document) = parse_plurnk(b"<<SEND[abc]:msg:SEND");
    assert_eq!(code, Some(1));
    assert_eq!(document["items"][0]["kind"], "error");
    assert!(document.get("unparsedTail").is_none());
}

#[test]
fn an_unclosed_statement_exits_1_with_its_unparsed_tail() {
    let (code, document) = parse_plurnk(b"<<EDIT(p):body never closed");
    assert_eq!(code, Some(1));
    assert_eq!(
        document["unparsedTail"]["reason"],
        "body of `<<EDIT` is still open; add `:EDIT`"
    );
}

#[test]
fn an_opener_whose_close_tag_follows_a_stray_character_exits_1() {
    let (code, document) = parse_plurnk(b"<<EDIT outer(x):y:EDIT outer");
    assert_eq!(code, Some(1));
    assert_eq!(document["items"][0]["kind"], "error");
    assert_eq!(
        document["items"][0]["error"]["message"],
        "Plurnk lexer error at 1:7 — unrecognized character 'o' in slot region; \
         expected [signal], (path), <L> or :body: in any order"
    );
    assert_eq!(document["items"][1]["text"], " outer");
}

#[test]
fn a_mention_of_an_opener_in_prose_exits_0() {
    let (code, document) = parse_plurnk(b"Use <<EDIT to change a file.");
    assert_eq!(code, Some(0));
    assert_eq!(document["items"][0]["kind"], "text");
}

#[test]
fn error_texts_match_the_published_packages_pinned_wording() {
    for (input, wanted) in [
        (
            &b"<<EXEC[node,extra](./):cmd:EXEC"[..],
            "expected Runtime Tag for EXEC",
        ),
        (
            b"<<EDIT(<<broken):body:EDIT",
            "unrecognized character '<<' in path",
        ),
        (
            b"<<EDIT[<<broken](p):body:EDIT",
            "unrecognized character '<<' in tag signal",
        ),
        (
            b"<<EDIT(p)X:body:EDIT",
            "unrecognized character 'X' in slot region",
        ),
        (b"<<SEND[abc]:msg:SEND", "expected integer for SEND"),
        (
            b"<<EDIT(p):body without close",
            "expected close tag; got end of input",
        ),
    ] {
        let (code, document) = parse_plurnk(input);
        assert_eq!(code, Some(1));
        let items = document["items"].as_array().expect("items");
        let message = items
            .iter()
            .find_map(|item| item["error"]["message"].as_str())
            .unwrap_or_else(|| panic!("no error item for {input:?}: {document}"));
        assert!(message.contains(wanted), "{message:?} lacks {wanted:?}");
    }
}

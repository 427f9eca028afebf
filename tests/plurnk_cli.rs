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

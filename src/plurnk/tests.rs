//! Properties the conformance corpus cannot state case by case: the probe and the pest
//! header rule agree, arbitrary bytes never panic and stay lossless, 1-byte streaming of a
//! large statement stays linear, options are checked.

use pest::Parser as _;

use super::probe::{Place, ProbeVerdict, StatementProbe};
use super::*;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const PIECES: &[&str] = &[
    "<<", "<", "EDIT", "SEND", "FIND", "a", "_1", " ", "\n", "\r\n", "\t", "[", "]", "(", ")", ":",
    ":EDIT", ":SEND", "-", "5", "12", ">", "<3>", "<1-2>", "[x,y]", "(p)", "é", "😀", "x", ",",
    "<<EDIT", "<<READ(", "/", "$", "\0",
];

fn random_text(rng: &mut Rng, pieces: usize) -> String {
    let mut s = String::new();
    for _ in 0..pieces {
        s.push_str(rng.pick(PIECES));
    }
    s
}

#[test]
fn probe_reaches_the_body_exactly_when_pest_accepts_the_header() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut bodies = 0;
    for _ in 0..20_000 {
        let unit = format!(
            "<<{}{}",
            rng.pick(&["EDIT", "SEND", "HIDE"]),
            random_text(&mut rng, 6)
        );
        let mut probe = StatementProbe::new();
        let verdict = probe.resume(&unit, usize::MAX);
        let in_body = probe.place() == Place::Body || matches!(verdict, ProbeVerdict::Closed(_));
        if in_body {
            bodies += 1;
            let header = &unit[..probe.body_start()];
            assert!(
                PlurnkGrammar::parse(Rule::header, header).is_ok(),
                "probe reached the body of {unit:?} but pest refuses {header:?}"
            );
        } else if verdict != ProbeVerdict::NotStatement {
            // No prefix that ends with `:` may parse as a header either.
            for (i, _) in unit.match_indices(':') {
                assert!(
                    PlurnkGrammar::parse(Rule::header, &unit[..=i]).is_err(),
                    "pest accepts the header {:?} the probe did not reach ({verdict:?})",
                    &unit[..=i]
                );
            }
        }
    }
    assert!(
        bodies > 500,
        "the generator reached a body only {bodies} times"
    );
}

fn run(input: &[u8], chunk: usize, options: &Options) -> (Vec<Event>, Document) {
    let mut parser = Parser::with_options(options).expect("valid options");
    let mut events = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        events.extend(parser.feed(piece));
    }
    events.extend(parser.finish());
    let document = Document::fold(&events);
    (events, document)
}

#[test]
fn random_input_never_panics_tiles_its_spans_and_folds_alike_at_any_chunking() {
    let mut rng = Rng(42);
    let small = Options {
        max_statement_bytes: 48,
    };
    for round in 0..1500 {
        let pieces = 4 + rng.below(40);
        let mut input = random_text(&mut rng, pieces).into_bytes();
        if round % 5 == 0 {
            // Invalid UTF-8 and a cut multi-byte character.
            input.insert(rng.below(input.len() + 1), 0xFF);
            input.push(0xE2);
        }
        let options = if round % 3 == 0 {
            small.clone()
        } else {
            Options::default()
        };
        let (events, whole) = run(&input, input.len(), &options);
        let mut at = 0;
        for event in &events {
            assert_eq!(event.span().start, at, "spans must tile for {input:?}");
            at = event.span().end;
        }
        let decoded = String::from_utf8_lossy(&input).len();
        assert_eq!(
            at, decoded,
            "the last span must end at the input's end for {input:?}"
        );
        for chunk in [1, 2, 3, 7] {
            assert_eq!(
                run(&input, chunk, &options).1,
                whole,
                "chunks of {chunk} for {input:?}"
            );
        }
    }
}

#[test]
fn one_byte_chunks_of_a_large_statement_stay_linear_and_exact() {
    let body = "line of an edit body: with colons :EDI and <<READ inside\n".repeat(4096);
    let input = format!("before <<EDITbig(p):{body}:EDITbig after");
    let mut parser = Parser::with_options(&Options::default()).expect("valid options");
    let mut events = Vec::new();
    for byte in input.as_bytes().chunks(1) {
        events.extend(parser.feed(byte));
    }
    events.extend(parser.finish());
    let document = Document::fold(&events);
    assert_eq!(document.items.len(), 3);
    match &document.items[1] {
        Item::Statement { statement, .. } => {
            assert_eq!(statement.body, Some(Body::Raw(body.clone())));
            assert_eq!(statement.suffix, "big");
        }
        other => panic!("expected the statement, got {other:?}"),
    }
}

#[test]
fn options_reject_unknown_keys_and_a_too_small_bound() {
    let unknown = (DIALECT.open)(&serde_json::json!({"max_bytes": 10}), false);
    assert!(unknown.is_err());
    let small = (DIALECT.open)(&serde_json::json!({"max_statement_bytes": 31}), false);
    assert!(small.is_err());
    let ok = (DIALECT.open)(&serde_json::json!({"max_statement_bytes": 32}), false);
    assert_eq!(ok.map(|s| s.hold_back_bound()).ok(), Some(Some(32 + 7)));
}

fn session_clean(input: &str) -> bool {
    let mut session = (DIALECT.open)(&serde_json::Value::Null, false).expect("default options");
    let mut events = Vec::new();
    session.feed(input.as_bytes(), &mut events);
    session.finish(&mut events);
    session.is_clean()
}

#[test]
fn a_session_is_clean_only_without_errors_and_without_an_unparsed_tail() {
    assert!(session_clean("prose <<EDIT(p):x:EDIT more"));
    assert!(!session_clean("<<SEND[abc]:x:SEND"));
    assert!(!session_clean("<<EDIT(p):never closed"));
    assert!(!session_clean("<<EDIT(p)! skipped to the end"));
}

#[test]
fn spans_in_the_document_cover_a_broken_statement_and_what_was_skipped() {
    let mut session = (DIALECT.open)(&serde_json::Value::Null, true).expect("default options");
    let mut events = Vec::new();
    session.feed(b"<<EDIT(p)X:long skipped body:EDIT!", &mut events);
    session.finish(&mut events);
    let document = session.document();
    assert_eq!(document["items"][0]["span"], serde_json::json!([0, 33]));
    assert_eq!(document["items"][1]["span"], serde_json::json!([33, 34]));
}

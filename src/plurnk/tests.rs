//! Properties the conformance corpus cannot state case by case: the header the state
//! machine reads step by step is pest's `header` rule, the pieces typing reads are pest's,
//! arbitrary bytes never panic and stay lossless, 1-byte streaming of a large statement
//! stays linear, options are checked.

use pest::Parser as _;

use super::reading::header_of;
use super::typing::{Pieces, Slot};
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
    let unknown = dialect().open(&serde_json::json!({"max_bytes": 10}), false);
    assert!(unknown.is_err());
    let small = dialect().open(&serde_json::json!({"max_statement_bytes": 31}), false);
    assert!(small.is_err());
    let ok = dialect().open(&serde_json::json!({"max_statement_bytes": 32}), false);
    assert_eq!(ok.map(|s| s.hold_back_bound()).ok(), Some(Some(32 + 7)));
}

fn session_clean(input: &str) -> bool {
    let mut session = dialect()
        .open(&serde_json::Value::Null, false)
        .expect("default options");
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
    let mut session = dialect()
        .open(&serde_json::Value::Null, true)
        .expect("default options");
    let mut events = Vec::new();
    session.feed(b"<<EDIT(p)X:long skipped body:EDIT!", &mut events);
    session.finish(&mut events);
    let document = session.document();
    assert_eq!(document["items"][0]["span"], serde_json::json!([0, 33]));
    assert_eq!(document["items"][1]["span"], serde_json::json!([33, 34]));
}

#[test]
fn a_stray_opener_is_an_error_only_when_its_own_close_tag_comes_first() {
    assert!(!session_clean("<<EDIT outer(x):y:EDIT outer"));
    assert!(session_clean("Use <<EDIT to change a file."));
    assert!(session_clean("Use <<EDIT notes, then <<EDIT(p):x:EDIT"));
    assert!(session_clean("<<EDIT x:EDITED"));
}

/// Bytes fed but not yet covered by an event, after every 1-byte feed of `input`.
fn most_held(input: &[u8], options: &Options) -> usize {
    let mut parser = Parser::with_options(options).expect("valid options");
    let (mut covered, mut most) = (0, 0);
    for (i, byte) in input.chunks(1).enumerate() {
        for event in parser.feed(byte) {
            covered = event.span().end;
        }
        most = most.max(i + 1 - covered);
    }
    most
}

#[test]
fn a_stray_opener_is_held_at_most_max_statement_bytes_then_becomes_text() {
    let options = Options {
        max_statement_bytes: 64,
    };
    let prose = format!("<<EDIT then {}", "a long paragraph of prose ".repeat(20));
    let held = most_held(prose.as_bytes(), &options);
    assert!(
        held <= 64,
        "held {held} bytes of prose after a stray opener"
    );
    assert!(held >= 63, "the lookahead stopped early: {held}");
    let (_, document) = run(prose.as_bytes(), 1, &options);
    assert_eq!(document.items.len(), 1, "prose stays one text item");
    // A next opener decides at once: nothing before it is held any longer.
    let mention = "<<EDIT x <<EDIT(p):y:EDIT";
    let (events, _) = run(mention.as_bytes(), 1, &options);
    assert!(matches!(&events[0], Event::Text { text, .. } if text == "<<EDIT x "));
}

#[test]
fn one_byte_chunks_of_many_stray_openers_stay_exact() {
    // Each mention's lookahead ends at the next opener; the last one's at its close tag.
    let input = format!("{}<<EDIT y:EDIT", "see <<EDIT x and ".repeat(5000));
    let (events, document) = run(input.as_bytes(), 1, &Options::default());
    assert_eq!(
        Document::fold(&events),
        parse(&input, &Options::default()).unwrap()
    );
    assert_eq!(document.items.len(), 2);
    assert!(matches!(&document.items[1], Item::Error { .. }));
}

/// The `header` rule's pairs, read off as the state machine's slots.
fn pest_header(header: &str) -> Option<(Op, &str, Vec<Slot>)> {
    let pair = PlurnkGrammar::parse(Rule::header, header).ok()?.next()?;
    let (mut op, mut suffix, mut slots) = (None, "", Vec::new());
    fn inner(p: pest::iterators::Pair<'_, Rule>) -> std::ops::Range<usize> {
        let at = p.as_span().start() + 1;
        p.into_inner()
            .next()
            .map_or(at..at, |i| i.as_span().start()..i.as_span().end())
    }
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::op => op = Op::from_bytes(p.as_str().as_bytes()),
            Rule::suffix => suffix = p.as_str(),
            Rule::signal => slots.push(Slot::Signal(inner(p))),
            Rule::path => slots.push(Slot::Path(inner(p))),
            Rule::line_marker => {
                let mut ints = p
                    .into_inner()
                    .map(|i| i.as_span().start()..i.as_span().end());
                let first = ints.next()?;
                slots.push(Slot::Marker(first, ints.next()));
            }
            _ => {}
        }
    }
    Some((op?, suffix, slots))
}

fn pest_accepts(rule: Rule, text: &str) -> bool {
    PlurnkGrammar::parse(rule, text).is_ok()
}

const HEADER_PIECES: &[&str] = &[
    "<<", "<", "x", "_1", " ", "\n", "\r", "\t", "[", "]", "(", ")", "-", "5", "12", ">", "<3>",
    "<1-2>", "<-1--5>", "<1->", "<->", "[x,y]", "(p)", "é", "😀", ",", "://", "a", "<<READ", ":",
];

#[test]
fn headers_read_step_by_step_are_the_header_rule_of_pest() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut accepted = 0;
    for _ in 0..40_000 {
        let mut unit = format!("<<{}", rng.pick(&["EDIT", "SEND", "HIDE", "EDI", "READx"]));
        for _ in 0..rng.below(8) {
            unit.push_str(rng.pick(HEADER_PIECES));
        }
        unit.push(':');
        match header_of(&unit) {
            Some(header) => {
                accepted += 1;
                let text = &unit[..header.body_start];
                let read = (header.op, &unit[6..header.tag_end], header.slots);
                assert_eq!(Some(read), pest_header(text), "on {unit:?}");
            }
            None => {
                for (i, _) in unit.match_indices(':') {
                    assert!(
                        pest_header(&unit[..=i]).is_none(),
                        "pest accepts the header {:?} the state machine did not reach",
                        &unit[..=i]
                    );
                }
            }
        }
    }
    assert!(accepted > 2_000, "only {accepted} headers were accepted");
}

#[test]
fn signal_entries_and_url_prefixes_are_read_as_pest_reads_them() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut pieces = Pieces::new();
    let alphabet = &[
        ",", " ", "\t", "-", "1", "09", "a", "_", ".", "+", "é", "x-1", ":", "//", "://", "A9", "",
    ];
    for _ in 0..40_000 {
        let mut text = String::new();
        for _ in 0..rng.below(6) {
            text.push_str(rng.pick(alphabet));
        }
        let pest_tags: Vec<&str> = PlurnkGrammar::parse(Rule::tag_list, &text)
            .expect("every signal is a tag list")
            .flat_map(|p| p.into_inner())
            .filter(|p| p.as_rule() == Rule::tag)
            .map(|p| p.as_str())
            .collect();
        assert_eq!(pieces.tags(&text), pest_tags, "{text:?}");
        assert_eq!(
            pieces.is_int_entry(&text),
            pest_accepts(Rule::int_entry, &text),
            "{text:?}"
        );
        assert_eq!(
            pieces.is_runtime_entry(&text),
            pest_accepts(Rule::runtime_entry, &text),
            "{text:?}"
        );
        assert_eq!(
            pieces.has_url_prefix(&text),
            pest_accepts(Rule::url_prefix, &text),
            "{text:?}"
        );
    }
}

#[test]
fn regex_bodies_are_split_as_pest_splits_them() {
    let mut rng = Rng(0x51_7CC1_B727_220A);
    let mut pieces = Pieces::new();
    let alphabet = &[
        "/", "\\", "[", "]", "a", "g", "i", "\\/", "[/]", "é", "u", "v",
    ];
    for _ in 0..20_000 {
        let mut text = String::new();
        for _ in 0..rng.below(8) {
            text.push_str(rng.pick(alphabet));
        }
        let pest = PlurnkGrammar::parse(Rule::regex_literal, &text)
            .ok()
            .and_then(|mut pairs| pairs.next())
            .map(|literal| {
                let mut parts = literal.into_inner();
                let pattern = parts.next().map_or("", |p| p.as_str());
                let flags = parts.next().map_or("", |p| p.as_str());
                (pattern, flags)
            });
        assert_eq!(pieces.regex(&text), pest, "{text:?}");
    }
}

//! The session's JSON writers agree with its JSON values: for every corpus case, a
//! document written as it is folded (`feed_document`/`finish_document`, settled
//! items written early) has exactly the bytes of serializing the folded document
//! at once, compact and pretty, with and without spans, whatever the pieces; and
//! the event lines of `feed_json` are the events of `feed`.
#![cfg(feature = "conformance")]

use std::path::Path;

use idiolect::fold::Layout;
use idiolect::session::Session;
use serde_json::Value;

fn open(dialect: &str, options: &Value, spans: bool) -> Box<dyn Session> {
    let found = idiolect::dialect(dialect).expect("a registered dialect");
    found
        .open(options, spans)
        .expect("the case's options are valid")
}

fn cases() -> Vec<idiolect::conformance::Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    idiolect::conformance::load(&root, None)
        .expect("the corpus loads")
        .into_iter()
        .map(|c| c.expect("every case loads"))
        .collect()
}

#[test]
fn a_document_written_as_it_is_folded_has_the_bytes_of_the_whole_document() {
    for case in cases() {
        for spans in [false, true] {
            let mut reference = open(&case.dialect, &case.options, spans);
            let mut events = Vec::new();
            reference.feed(&case.input, &mut events);
            reference.finish(&mut events);
            let document = reference.document();
            for layout in [Layout::Compact, Layout::Pretty] {
                let expected = match layout {
                    Layout::Compact => serde_json::to_string(&document),
                    Layout::Pretty => serde_json::to_string_pretty(&document),
                }
                .unwrap();
                for piece in [1, 3, 64, usize::MAX] {
                    let mut session = open(&case.dialect, &case.options, spans);
                    let mut out = Vec::new();
                    for chunk in case.input.chunks(piece.min(case.input.len().max(1))) {
                        session.feed_document(chunk, layout, &mut out).unwrap();
                    }
                    session.finish_document(layout, &mut out).unwrap();
                    assert_eq!(
                        String::from_utf8(out).unwrap(),
                        expected,
                        "{} spans={spans} {layout:?} pieces of {piece}",
                        case.id()
                    );
                    assert_eq!(session.is_clean(), reference.is_clean(), "{}", case.id());
                }
            }
        }
    }
}

#[test]
fn event_lines_are_the_events() {
    for case in cases() {
        let mut values = open(&case.dialect, &case.options, false);
        let mut lines = open(&case.dialect, &case.options, false);
        let (mut expected, mut out) = (Vec::new(), Vec::new());
        for chunk in case.input.chunks(5) {
            values.feed(chunk, &mut expected);
            lines.feed_json(chunk, &mut out);
        }
        values.finish(&mut expected);
        lines.finish_json(&mut out);
        let got: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(got, expected, "{}", case.id());
        assert!(out.is_empty() || out.ends_with(b"\n"), "{}", case.id());
    }
}

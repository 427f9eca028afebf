//! Candidate tags on grammar/kindaxml.pest: which candidates complete, where, and
//! with which attributes; and that each is decided by the feed that delivers the
//! deciding byte (S4), fed whole or a byte at a time.

use serde_json::{json, Value};

use super::attrs::read_start;
use super::candidate::{Candidate, UnitKind};
use super::options::Config;
use super::{DuplicateAttrs, Options, UnknownMode};
use crate::reentry::Verdict;

fn config(options: Options) -> Config {
    Config::new(&options).expect("valid options")
}

/// Runs a candidate over `text` a byte at a time, then ends the input: the verdict
/// and how many bytes had arrived when it was given.
fn bytewise(text: &str, config: &Config) -> (Verdict, usize) {
    let mut candidate = Candidate::new();
    candidate.start(config);
    for end in 1..=text.len() {
        let verdict = candidate.resume(&text.as_bytes()[..end], config, false);
        if verdict != Verdict::NeedMore {
            return (verdict, end);
        }
    }
    (candidate.resume(text.as_bytes(), config, true), text.len())
}

/// Runs a candidate over the whole of `text` (`eof`: then the input ends); for a
/// complete start tag, also its attributes and whether it self-closes.
fn whole(text: &str, config: &Config, eof: bool) -> (Verdict, Option<(Value, bool)>) {
    let mut candidate = Candidate::new();
    candidate.start(config);
    let verdict = candidate.resume(text.as_bytes(), config, eof);
    let parts = match verdict {
        Verdict::Complete(len) if candidate.kind() == UnitKind::Start => {
            let (captures, from) = candidate.rest_captures();
            let parts = read_start(
                &text[from..len],
                captures,
                config.duplicates,
                &mut Vec::new(),
            );
            let attrs = serde_json::to_value(&parts.attrs).expect("attributes serialize");
            Some((attrs, parts.self_closing))
        }
        _ => None,
    };
    (verdict, parts)
}

#[test]
fn start_tags_complete_at_their_gt_with_their_attributes() {
    let c = config(Options {
        duplicate_attrs: DuplicateAttrs::KeepList,
        ..Options::default()
    });
    for (text, attrs, self_closing) in [
        ("<cite>", json!({}), false),
        ("<todo/>", json!({}), true),
        ("<todo / >", json!({}), true),
        ("<cite id=3>", json!({"id": "3"}), false),
        ("<cite id=3/>", json!({"id": "3"}), true),
        ("<cite id=3//>", json!({"id": "3/"}), true),
        ("<cite id=/>", json!({"id": ""}), true),
        (
            "<cite href=https://x.org/a/b>",
            json!({"href": "https://x.org/a/b"}),
            false,
        ),
        ("<cite a=\"1\"b='2'>", json!({"a": "1", "b": "2"}), false),
        ("<cite / id=1>", json!({"id": "1"}), false),
        ("<cite = id=1>", json!({"id": "1"}), false),
        ("<cite q=\"a>b\">", json!({"q": "a>b"}), false),
        ("<cite k = \t'v' é=ü>", json!({"k": "v", "é": "ü"}), false),
        (
            "<cite a b=1 a=2 a c= d=''>",
            json!({"a": [true, "2", true], "b": "1", "c": "d=''"}),
            false,
        ),
        ("<cite c= >", json!({"c": ""}), false),
        (
            "<cite id=1\n      page=4>",
            json!({"id": "1", "page": "4"}),
            false,
        ),
    ] {
        let (verdict, parts) = whole(&format!("{text}tail"), &c, false);
        assert_eq!(verdict, Verdict::Complete(text.len()), "{text}");
        assert_eq!(parts, Some((attrs, self_closing)), "{text}");
        assert_eq!(
            bytewise(text, &c),
            (Verdict::Complete(text.len()), text.len()),
            "{text}"
        );
    }
}

#[test]
fn broken_quotes_close_at_the_first_gt_or_at_the_line_end() {
    let c = config(Options::default());
    // No matching quote on the line: the first `>` ends the value and the tag, decided
    // when the newline shows there is no quote (KX-8).
    let text = "<cite id='1, 2>Evidence\n";
    assert_eq!(bytewise(text, &c), (Verdict::Complete(15), text.len()));
    let (_, parts) = whole(text, &c, false);
    assert_eq!(parts, Some((json!({"id": "1, 2"}), false)));
    let (verdict, parts) = whole(
        "<tag a=\"x y b=2>",
        &config(Options {
            recognized_tags: vec!["tag".into()],
            ..Options::default()
        }),
        true,
    );
    assert_eq!(verdict, Verdict::Complete(16));
    assert_eq!(parts, Some((json!({"a": "x y b=2"}), false)));
    // A `/` right before that `>` makes the tag self-closing.
    let (_, parts) = whole("<todo k='/>x", &c, true);
    assert_eq!(parts, Some((json!({"k": ""}), true)));
    // No `>` on the line either: the value closes at the end of the line.
    let (verdict, parts) = whole("<cite a=\"x\nb=2>", &c, false);
    assert_eq!(verdict, Verdict::Complete(15));
    assert_eq!(parts, Some((json!({"a": "x", "b": "2"}), false)));
    // The next `<` ends the region: a quote open there with a `>` before it closes at
    // that `>`; without one the `<` is text.
    assert_eq!(
        whole("<cite a=\"x>y<b>", &c, false).0,
        Verdict::Complete(11)
    );
    assert_eq!(bytewise("<cite a=\"xy<b>", &c), (Verdict::Rejected, 12));
}

#[test]
fn end_tags_of_recognized_names_are_tolerant_and_of_unknown_names_strict() {
    let c = config(Options::default());
    for (text, recognized) in [
        ("</cite>", true),
        ("</ cite >", true),
        ("</claim foo=bar>", true),
        ("</note/>", true),
        ("</\ncite\n>", true),
        ("</b>", false),
        ("</b \t>", false),
    ] {
        let mut candidate = Candidate::new();
        candidate.start(&c);
        let verdict = candidate.resume(format!("{text}x").as_bytes(), &c, false);
        assert_eq!(verdict, Verdict::Complete(text.len()), "{text}");
        assert_eq!(candidate.kind(), UnitKind::End, "{text}");
        assert_eq!(candidate.recognized().is_some(), recognized, "{text}");
    }
    // Strict for an unknown name: decided on the byte that rules the tag out.
    for (text, deciding) in [("</ b>", 5), ("</b x>", 5), ("</b\n>", 4), ("</1", 3)] {
        assert_eq!(bytewise(text, &c), (Verdict::Rejected, deciding), "{text}");
    }
}

#[test]
fn a_candidate_is_text_on_the_byte_that_rules_it_out() {
    let c = config(Options::default());
    for (text, deciding) in [
        ("< b", 2),
        ("<1", 2),
        ("<cite<", 6),
        ("<b x=1\n>", 7),
        ("<cite a<", 8),
        // A prefix of the literal block opener stays undecided until the input ends.
        ("<![CDATA", 8),
    ] {
        assert_eq!(bytewise(text, &c), (Verdict::Rejected, deciding), "{text}");
    }
    // A recognized name may span lines (KX-7); an unknown one may not.
    assert_eq!(bytewise("<cite\nid=1>", &c).0, Verdict::Complete(11));
    assert_eq!(bytewise("<b\nid=1>", &c), (Verdict::Rejected, 3));
}

#[test]
fn literal_block_openers_are_candidates_only_while_literal_blocks_are_on() {
    let on = config(Options::default());
    let mut candidate = Candidate::new();
    candidate.start(&on);
    assert_eq!(
        candidate.resume(b"<![CDATA[x", &on, false),
        Verdict::Complete(9)
    );
    assert_eq!(candidate.kind(), UnitKind::CdataOpen);
    assert_eq!(bytewise("<![CDX", &on), (Verdict::Rejected, 6));
    let off = config(Options {
        cdata: false,
        ..Options::default()
    });
    assert_eq!(bytewise("<![CDATA[", &off), (Verdict::Rejected, 2));
}

#[test]
fn under_treat_as_text_an_unknown_name_is_text_as_soon_as_it_cannot_be_recognized() {
    let c = config(Options {
        unknown_mode: UnknownMode::TreatAsText,
        ..Options::default()
    });
    assert_eq!(bytewise("<cix>", &c), (Verdict::Rejected, 4));
    assert_eq!(bytewise("<b>", &c), (Verdict::Rejected, 2));
    assert_eq!(bytewise("</ notes>", &c), (Verdict::Rejected, 8));
    assert_eq!(bytewise("<cite>", &c), (Verdict::Complete(6), 6));
}

#[test]
fn a_tag_must_end_within_max_tag_bytes() {
    let c = config(Options {
        max_tag_bytes: 10,
        ..Options::default()
    });
    assert_eq!(bytewise("<cite id=1>", &c), (Verdict::Rejected, 10));
    assert_eq!(bytewise("<cite id>", &c), (Verdict::Complete(9), 9));
    // A quote still open at the bound closes at the `>` before it.
    assert_eq!(
        bytewise("<cite a='>bcdef'>", &c),
        (Verdict::Complete(10), 10)
    );
}

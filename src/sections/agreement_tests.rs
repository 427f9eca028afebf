//! The entry rules of grammar/sections.pest on the parsing machine, with the registry
//! checked by the state machine, against pest's parser of the same grammar: the
//! machine completes exactly the candidates pest accepts as an `opener` or `closer`
//! of a registered name, reports what pest extracts from a complete opener, decides
//! the same fed whole or a character at a time, and rejects a candidate on the byte
//! that rules it out.

use compact_str::CompactString;
use indexmap::IndexMap;
use pest::Parser as _;
use proptest::prelude::*;

use super::attrs::Attrs;
use super::grammar::{Rule, SectionsGrammar};
use super::machine::{Event, SectionMachine, MAX_BRACE_DEPTH};
use super::options::{Options, Registry};
use crate::reentry::{Machine, TagScanner, Verdict};

const PIECES: &[&str] = &[
    "<",
    "think",
    "write-file",
    "Create-File",
    "th",
    " ",
    "\n",
    "=",
    "\"",
    "'",
    "{",
    "}",
    "`",
    "/",
    ">",
    "a",
    "B",
    "x",
    "é",
    "-",
    "</",
    "{{",
    "}}",
    "\\",
    "\\\"",
];

/// Free-form candidates: `<` and arbitrary pieces.
fn loose_unit() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..14)
        .prop_map(|parts| format!("<{}", parts.concat()))
}

/// Tag-shaped candidates: a name, attribute-like parts and an ending, each drawn
/// from near-misses as well as valid forms, so every state of the probe is reached.
fn shaped_unit() -> impl Strategy<Value = String> {
    let sel = |items: &'static [&'static str]| prop::sample::select(items);
    let name = sel(&[
        "think",
        "write-file",
        "Create-File",
        "thin",
        "div",
        "/think",
        " think",
        "dyad-write",
    ]);
    let attr = (
        sel(&[" ", "\n", "", "  ", "\t"]),
        sel(&["a", "B", "x-y", "é", "", ">", "\"", "data:x"]),
        sel(&["", "=", " = ", "=\n", "=="]),
        sel(&[
            "\"v\"",
            "'v'",
            "{a{b}}",
            "{\"}\"}",
            "{`}`}",
            "{'{'}",
            "x/y",
            "x<y",
            "",
            "/",
            "b//",
            "\"open",
            "{",
            " ",
            "`b`",
            "a=b",
            "b/",
            "{{{}}",
            "\"a>b\"",
            "{\"a\\\"}\"}",
            "{'\\''}",
            "{`\\``}",
            "{a\\}",
            "{\"\\\\\"}",
            "{\"\\\"}",
            "\"x\\\"",
        ]),
    )
        .prop_map(|(sep, key, eq, value)| format!("{sep}{key}{eq}{value}"));
    let tail = sel(&["/>", ">", " >", "/ >", "", " />", ">>", "\n>", "/"]);
    (name, prop::collection::vec(attr, 0..4), tail)
        .prop_map(|(name, attrs, tail)| format!("<{name}{}{tail}", attrs.concat()))
}

fn unit() -> impl Strategy<Value = String> {
    prop_oneof![loose_unit(), shaped_unit()]
}

fn registry() -> Registry {
    Registry::new(&Options::default()).expect("default registry")
}

/// A machine outside any section, or inside `write-file` when `inside`.
fn machine(inside: bool) -> SectionMachine {
    let mut m = SectionMachine::new(&Options::default()).expect("default options");
    if inside {
        let used = m.advance("<write-file>", 0, false, &mut Vec::new());
        assert_eq!(used, "<write-file>".len());
    }
    m
}

/// Probes the candidate `unit` fed whole, or a character at a time when `stepwise`;
/// the verdict and the bytes that were there when it was given.
fn probe(m: &mut SectionMachine, unit: &str, stepwise: bool) -> (Verdict, usize) {
    m.probe_start();
    if stepwise {
        let ends = unit.char_indices().map(|(i, c)| i + c.len_utf8());
        for end in ends {
            let verdict = m.probe_resume(&unit[..end], false).expect("probing");
            if verdict != Verdict::NeedMore {
                return (verdict, end);
            }
        }
    }
    let verdict = m.probe_resume(unit, false).expect("probing");
    (verdict, unit.len())
}

/// Probes `unit` both ways (they must agree) and, for a complete candidate, takes it:
/// the verdict and the events taking it emitted.
fn decide(inside: bool, unit: &str) -> (Verdict, Vec<Event>) {
    let mut whole = machine(inside);
    let mut stepwise = machine(inside);
    let (verdict, _) = probe(&mut whole, unit, false);
    let (step_verdict, _) = probe(&mut stepwise, unit, true);
    assert_eq!(
        verdict, step_verdict,
        "whole and stepwise differ on {unit:?}"
    );
    let mut events = Vec::new();
    if let Verdict::Complete(len) = verdict {
        assert!(whole.probe_take(&unit[..len], 0, &mut events), "{unit:?}");
        let mut step_events = Vec::new();
        assert!(stepwise.probe_take(&unit[..len], 0, &mut step_events));
        assert_eq!(
            events, step_events,
            "whole and stepwise report differently on {unit:?}"
        );
    }
    (verdict, events)
}

/// What the machine reported of a complete opener, in the shape of [`pest_opener`].
fn reported(events: &[Event]) -> Option<(CompactString, Attrs, bool)> {
    match events.first()? {
        Event::SectionStart {
            tag,
            attrs,
            self_closing,
            ..
        } => Some((tag.clone(), attrs.clone(), *self_closing)),
        _ => None,
    }
}

/// The length of the shortest prefix pest accepts under `accept`, if any.
fn pest_accepts(unit: &str, accept: impl Fn(&str) -> bool) -> Option<usize> {
    unit.char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .find(|&end| accept(&unit[..end]))
}

/// Parses a complete opener with pest: (spelling, attributes, self-closing), the
/// extraction SEC-4 and SEC-5 describe, read off the `opener` rule's pairs.
fn pest_opener(tag: &str) -> Option<(CompactString, Attrs, bool)> {
    let opener = SectionsGrammar::parse(Rule::opener, tag).ok()?.next()?;
    let mut spelling = CompactString::default();
    let mut attrs = IndexMap::new();
    let mut self_closing = false;
    for pair in opener.into_inner() {
        match pair.as_rule() {
            Rule::tag_name => spelling = pair.as_str().into(),
            Rule::self_close => self_closing = true,
            Rule::attribute => {
                let mut parts = pair.into_inner();
                let key = parts
                    .next()
                    .map(|k| k.as_str().to_ascii_lowercase())
                    .unwrap_or_default();
                let value = match parts.next() {
                    None => String::new(),
                    Some(v) => match v.as_rule() {
                        Rule::dq_value | Rule::sq_value => v
                            .into_inner()
                            .next()
                            .map(|i| i.as_str().to_string())
                            .unwrap_or_default(),
                        _ => v.as_str().to_string(),
                    },
                };
                attrs.insert(key, value);
            }
            _ => {}
        }
    }
    // Lowercased keys, the last of duplicates winning at the first's position.
    let attrs = Attrs::from_pairs(
        attrs
            .iter()
            .map(|(k, v): (&String, &String)| (k.as_str(), v.as_str())),
    );
    Some((spelling, attrs, self_closing))
}

#[test]
fn openers_report_what_pest_extracts_on_every_value_form() {
    for tag in [
        "<think>",
        "<think/>",
        "<Think \n>",
        "<write-file path=\"a b\" Force mode={{\"}\": '{'}} n=1>",
        "<write-file a=b/>",
        "<write-file a=b//>",
        "<write-file a=//>",
        "<write-file a=b/ >",
        "<write-file a = 'x\ny' a=\"last\" z>",
        "<write-file k/>",
        "<write-file k />",
        "<write-file é=ü>",
        "<write-file a={}>",
        "<write-file a=\"\" b=''/>",
        "<write-file a=\"1\"b='2'c={3}d>",
        "<write-file a={x}b=\"y\"/>",
        "<write-file a='1'B\n=2>",
        "<write-file a={\"a\\\"}\"}>",
        "<write-file a={'it\\'s {'} b={`\\``}>",
        "<write-file a={\"\\\\\"} c={a\\}>",
    ] {
        let (verdict, events) = decide(false, tag);
        assert_eq!(verdict, Verdict::Complete(tag.len()), "{tag}");
        assert_eq!(reported(&events), pest_opener(tag), "{tag}");
        assert!(pest_opener(tag).is_some(), "{tag}");
    }
}

#[test]
fn names_are_checked_against_the_registry_on_the_deciding_byte() {
    // (mode, candidate, bytes there when it is rejected)
    for (inside, unit, deciding) in [
        (false, "<thinking>", 7),
        (false, "<thx>", 4),
        (false, "<div>", 3), // `d` starts `dyad-write`
        (false, "<Write-filE2 a>", 12),
        (false, "< think>", 2),
        (true, "</think>", 3),
        (true, "</ \n dyad-writer>", 16),
        (true, "</write-file x>", 14),
    ] {
        let mut m = machine(inside);
        let (verdict, at) = probe(&mut m, unit, true);
        assert_eq!((verdict, at), (Verdict::Rejected, deciding), "{unit}");
    }
    // Any case and any spelling of the open section closes it (SEC-10).
    for closer in ["</CREATE-file>", "</ dyad-write\n>", "</write-file>"] {
        let (verdict, events) = decide(true, closer);
        assert_eq!(verdict, Verdict::Complete(closer.len()), "{closer}");
        assert!(matches!(
            events[..],
            [Event::SectionEnd { closed: true, .. }]
        ));
    }
}

#[test]
fn braces_nest_exactly_as_deep_as_the_bound() {
    let nested = |depth: usize| format!("<think a={}{}>", "{".repeat(depth), "}".repeat(depth));
    let deepest = nested(MAX_BRACE_DEPTH);
    assert_eq!(decide(false, &deepest).0, Verdict::Complete(deepest.len()));
    assert!(pest_opener(&deepest).is_some());
    let too_deep = nested(MAX_BRACE_DEPTH + 1);
    let (verdict, at) = probe(&mut machine(false), &too_deep, true);
    // Rejected on the brace that opens one level too many (SEC-6, SEC-16).
    assert_eq!((verdict, at), (Verdict::Rejected, 9 + MAX_BRACE_DEPTH + 1));
    // pest's parser of the same text has no nesting bound: the bound is the
    // machine's, given when the dialect compiles the grammar.
    assert!(pest_opener(&too_deep).is_some());
    // A deeper value inside a quoted string does not count (SEC-5a).
    let quoted = format!(
        "<think a={}\"{}\"{}>",
        "{".repeat(MAX_BRACE_DEPTH),
        "{".repeat(10),
        "}".repeat(MAX_BRACE_DEPTH)
    );
    assert_eq!(decide(false, &quoted).0, Verdict::Complete(quoted.len()));
}

#[test]
fn a_candidate_that_reaches_the_tag_bound_undecided_is_rejected() {
    let options = Options {
        max_tag_bytes: 12,
        ..Options::default()
    };
    for (unit, verdict) in [
        ("<think a=12>", Verdict::Complete(12)),
        ("<think a=123>", Verdict::Rejected),
        ("<thin", Verdict::NeedMore),
    ] {
        let mut m = SectionMachine::new(&options).expect("options");
        assert_eq!(probe(&mut m, unit, true).0, verdict, "{unit}");
        let mut m = SectionMachine::new(&options).expect("options");
        assert_eq!(probe(&mut m, unit, false).0, verdict, "{unit}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn openers_agree_with_pest(unit in unit()) {
        let reg = registry();
        let (verdict, events) = decide(false, &unit);
        let accept = |s: &str| {
            SectionsGrammar::parse(Rule::opener, s).is_ok()
                && reg.lookup(s[1..].split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).next().unwrap_or("").as_bytes()).is_some()
        };
        let expected = pest_accepts(&unit, accept);
        match verdict {
            Verdict::Complete(len) => {
                prop_assert_eq!(Some(len), expected, "completed {:?}", &unit[..len]);
                let tag = &unit[..len];
                prop_assert_eq!(reported(&events), pest_opener(tag), "extraction differs on {:?}", tag);
            }
            _ => prop_assert_eq!(expected, None, "said {:?} but pest accepts a prefix", verdict),
        }
    }

    #[test]
    fn closers_agree_with_pest(unit in prop_oneof![
        unit(),
        (prop::sample::select(&["</", "</ ", "</\n\t", "<", "< /"][..]),
         prop::sample::select(&["write-file", "CREATE-file", "dyad-writ", "think", "dyad-write-x", ""][..]),
         prop::sample::select(&[">", " >", "\n>", "", "/>", " x>"][..]))
            .prop_map(|(a, b, c)| format!("{a}{b}{c}")),
    ]) {
        let reg = registry();
        let section = reg.lookup(b"write-file").expect("registered");
        let (verdict, _) = decide(true, &unit);
        let accept = |s: &str| {
            SectionsGrammar::parse(Rule::closer, s).is_ok()
                && reg.lookup(s.trim_start_matches("</").trim_end_matches('>').trim().as_bytes()) == Some(section)
        };
        let expected = pest_accepts(&unit, accept);
        match verdict {
            Verdict::Complete(len) => prop_assert_eq!(Some(len), expected, "completed {:?}", &unit[..len]),
            _ => prop_assert_eq!(expected, None, "said {:?} but pest accepts a prefix", verdict),
        }
    }
}

//! The probes must be exact recognizers of the pest rules they stand in for: the
//! machine trusts a probe's `Complete` and `Rejected`, and what the opener probe
//! records of a complete tag must be exactly what pest extracts from it.

use compact_str::CompactString;
use indexmap::IndexMap;
use pest::Parser as _;
use proptest::prelude::*;

use super::attrs::Attrs;
use super::grammar::{Rule, SectionsGrammar};
use super::machine::attributes;
use super::options::{Options, Registry};
use super::probe::{CloserProbe, OpenerProbe};
use crate::reentry::Verdict;

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

/// Runs `resume` over `unit` one byte at a time (resuming each time), then at once;
/// both must agree.
fn verdict(unit: &str, mut resume: impl FnMut(&[u8], bool) -> Verdict) -> Verdict {
    let bytes = unit.as_bytes();
    let mut stepwise = Verdict::NeedMore;
    for end in 1..=bytes.len() {
        stepwise = resume(&bytes[..end], end == 1);
        if stepwise != Verdict::NeedMore {
            break;
        }
    }
    let whole = resume(bytes, true);
    assert_eq!(
        stepwise, whole,
        "stepwise and whole probing differ on {unit:?}"
    );
    whole
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

/// What the probe recorded of a complete opener, in the same shape.
fn probed_opener(tag: &str, probe: &OpenerProbe) -> (CompactString, Attrs, bool) {
    (
        CompactString::from(&tag[1..probe.name_end()]),
        attributes(&mut Vec::new(), tag, probe.attrs()),
        probe.self_closing(),
    )
}

#[test]
fn probe_extracts_what_pest_extracts_on_every_value_form() {
    let reg = registry();
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
        let mut probe = OpenerProbe::new();
        assert_eq!(
            probe.resume(tag.as_bytes(), &reg, 1 << 20),
            Verdict::Complete(tag.len()),
            "{tag}"
        );
        assert_eq!(Some(probed_opener(tag, &probe)), pest_opener(tag), "{tag}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn opener_probe_agrees_with_pest(unit in unit()) {
        let reg = registry();
        let mut probe = OpenerProbe::new();
        let got = verdict(&unit, |bytes, fresh| {
            if fresh { probe = OpenerProbe::new(); }
            probe.resume(bytes, &reg, 1 << 20)
        });
        let accept = |s: &str| {
            SectionsGrammar::parse(Rule::opener, s).is_ok()
                && reg.lookup(s[1..].split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).next().unwrap_or("").as_bytes()).is_some()
        };
        let expected = pest_accepts(&unit, accept);
        match got {
            Verdict::Complete(len) => {
                prop_assert_eq!(Some(len), expected, "probe completed {:?}", &unit[..len]);
                let tag = &unit[..len];
                prop_assert_eq!(Some(probed_opener(tag, &probe)), pest_opener(tag), "extraction differs on {:?}", tag);
                // Resumed one byte at a time, the probe records the same parts.
                let mut stepwise = OpenerProbe::new();
                for end in 1..=len {
                    stepwise.resume(&tag.as_bytes()[..end], &reg, 1 << 20);
                }
                prop_assert_eq!(probed_opener(tag, &stepwise), probed_opener(tag, &probe), "stepwise extraction differs on {:?}", tag);
            }
            _ => prop_assert_eq!(expected, None, "probe said {:?} but pest accepts a prefix", got),
        }
    }

    #[test]
    fn closer_probe_agrees_with_pest(unit in prop_oneof![
        unit(),
        (prop::sample::select(&["</", "</ ", "</\n\t", "<", "< /"][..]),
         prop::sample::select(&["write-file", "CREATE-file", "dyad-writ", "think", "dyad-write-x", ""][..]),
         prop::sample::select(&[">", " >", "\n>", "", "/>", " x>"][..]))
            .prop_map(|(a, b, c)| format!("{a}{b}{c}")),
    ]) {
        let reg = registry();
        let section = reg.lookup(b"write-file").expect("registered");
        let mut probe = CloserProbe::new();
        let got = verdict(&unit, |bytes, fresh| {
            if fresh { probe = CloserProbe::new(); }
            probe.resume(bytes, &reg, section, 1 << 20)
        });
        let accept = |s: &str| {
            SectionsGrammar::parse(Rule::closer, s).is_ok()
                && reg.lookup(s.trim_start_matches("</").trim_end_matches('>').trim().as_bytes()) == Some(section)
        };
        let expected = pest_accepts(&unit, accept);
        match got {
            Verdict::Complete(len) => prop_assert_eq!(Some(len), expected, "probe completed {:?}", &unit[..len]),
            _ => prop_assert_eq!(expected, None, "probe said {:?} but pest accepts a prefix", got),
        }
    }
}

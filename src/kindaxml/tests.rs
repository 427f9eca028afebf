//! Unit tests of the kindaxml dialect that the corpus cannot express: options
//! errors, probe/pest agreement, streaming under non-default options, big inputs.

use proptest::prelude::{
    any, prop, prop_assert, prop_assert_eq, prop_oneof, proptest, ProptestConfig,
};
use proptest::strategy::Strategy as _;
use proptest::test_runner::TestCaseError;
use serde_json::{json, Value};

use super::options::Config;
use super::probe::{TagProbe, UnitKind};
use super::*;
use crate::reentry::Verdict;

#[test]
fn bad_options_are_errors() {
    let bad_name = Options {
        recognized_tags: vec!["1x".into()],
        ..Options::default()
    };
    assert_eq!(
        Parser::with_options(&bad_name).err(),
        Some(OptionsProblem::BadName("1x".into()))
    );
    let twice = Options {
        recognized_tags: vec!["cite".into(), "CITE".into()],
        case_sensitive_tags: false,
        ..Options::default()
    };
    assert!(matches!(
        Parser::with_options(&twice),
        Err(OptionsProblem::Duplicate(_))
    ));
    let mut stray = Options::default();
    stray
        .per_tag_recovery_strategy
        .insert("nope".into(), Strategy::Noop);
    assert!(matches!(
        Parser::with_options(&stray),
        Err(OptionsProblem::StrategyForUnknownTag(_))
    ));
    let tiny = Options {
        max_tag_bytes: 2,
        ..Options::default()
    };
    assert!(matches!(
        Parser::with_options(&tiny),
        Err(OptionsProblem::TagBoundTooSmall(2))
    ));
    for overlap in [0, MAX_RETRO_OVERLAP_LIMIT + 1, usize::MAX] {
        let out_of_range = Options {
            max_retro_overlap: overlap,
            ..Options::default()
        };
        let problem = Parser::with_options(&out_of_range).err();
        assert_eq!(
            problem,
            Some(OptionsProblem::RetroOverlapOutOfRange(overlap))
        );
        assert!(problem
            .map(|p| p.to_string())
            .is_some_and(|m| m.contains("between 1 and 1024")));
    }
    for overlap in [1, MAX_RETRO_OVERLAP_LIMIT] {
        let edge = Options {
            max_retro_overlap: overlap,
            ..Options::default()
        };
        assert!(Parser::with_options(&edge).is_ok());
    }
}

#[test]
fn unknown_option_keys_are_rejected() {
    let err = (DIALECT.open)(&json!({"recognised_tags": []}), false).err();
    assert!(err.is_some());
}

#[test]
fn options_json_uses_the_spec_names() {
    let options: Options = serde_json::from_value(json!({
        "recognized_tags": ["cite"], "unknown_mode": "treat_as_text", "autoclose_on_any_tag": true,
        "per_tag_recovery_strategy": {"cite": "forward_next_token"}, "trim_punctuation": false,
        "case_sensitive_tags": false, "stray_end_tag_policy": "passthrough",
        "duplicate_attrs": "keep_list", "recovery_metadata": true, "self_closing_target": "until_newline",
        "max_tag_bytes": 99, "cdata": false, "cdata_unclosed": "to_line_end", "backslash_escapes": true,
        "retro_anchor": "previous_tag", "max_retro_overlap": 3
    }))
    .expect("every spec option name deserializes");
    assert_eq!(
        options.per_tag_recovery_strategy["cite"],
        Strategy::ForwardNextToken
    );
    assert_eq!(options.cdata_unclosed, CdataUnclosed::ToLineEnd);
    assert_eq!(options.retro_anchor, RetroAnchor::PreviousTag);
}

/// Runs the probe over `unit` (fed whole) as the machine would, ending the region
/// at the end of `unit` when `eof`.
fn probe(unit: &str, config: &Config, eof: bool) -> (Verdict, UnitKind) {
    let (v, p) = probe_state(unit, config, eof);
    (v, p.kind())
}

fn probe_state(unit: &str, config: &Config, eof: bool) -> (Verdict, TagProbe) {
    let mut p = TagProbe::new();
    let mut v = p.resume(unit.as_bytes(), config);
    if v == Verdict::NeedMore && eof {
        v = p.region_end();
    }
    (v, p)
}

fn default_config() -> Config {
    Config::new(&Options::default()).expect("defaults are valid")
}

fn tag_piece() -> impl proptest::strategy::Strategy<Value = String> {
    prop::sample::select(vec![
        "cite", "x", " ", "\t", "=", "\"", "'", "/", ">", "a", "é", "-", ":", "1", "<", "\n", "!",
        "\r", "cite ", "cite\n", "/cite",
    ])
    .prop_map(str::to_string)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever window the probe accepts as a tag, pest parses with the same rule
    /// (for an end tag, the rule for its name's kind), and the scanner takes it
    /// apart as pest does.
    #[test]
    fn probe_accepted_tags_parse_with_pest(body in prop::collection::vec(tag_piece(), 0..12)) {
        let config = default_config();
        let unit = format!("<{}", body.concat());
        let (verdict, p) = probe_state(&unit, &config, true);
        if let Verdict::Complete(len) = verdict {
            let window = &unit[..len];
            let probed_name = &window[p.name()];
            prop_assert_eq!(p.recognized(), config.lookup(probed_name.as_bytes()).is_some());
            if !p.recognized() {
                prop_assert!(!window.contains('\n'), "{:?} spans lines", window);
            }
            match p.kind() {
                UnitKind::Start => {
                    let Some(parsed) = super::tag::parse_start(window, DuplicateAttrs::KeepList) else {
                        return Err(TestCaseError::fail(format!("pest refuses {window:?}")));
                    };
                    prop_assert_eq!(parsed.name, probed_name);
                    let mut scratch = Vec::new();
                    let scanned = super::tag::scan_start(window, DuplicateAttrs::KeepList, &mut scratch);
                    prop_assert_eq!(scanned.as_ref(), Some(&parsed), "scan and pest differ on {:?}", window);
                    if !p.needs_scan() {
                        prop_assert!(parsed.attrs.is_empty(), "{:?} has attributes", window);
                        let before_gt = window[..len - 1].trim_end_matches([' ', '\t', '\r', '\n']);
                        prop_assert_eq!(parsed.self_closing, before_gt.ends_with('/'));
                    }
                }
                UnitKind::End => {
                    prop_assert_eq!(super::tag::parse_end(window, p.recognized()), Some(probed_name));
                }
                UnitKind::CdataOpen => prop_assert_eq!(window, "<![CDATA["),
            }
        }
    }

    /// Whatever `<`-free unit pest parses as a tag, the probe accepts whole, unless
    /// the name is unknown and the unit spans lines (KX-7).
    #[test]
    fn pest_tags_are_accepted_by_the_probe(body in prop::collection::vec(tag_piece(), 0..12)) {
        let config = default_config();
        let unit = format!("<{}", body.concat());
        if unit[1..].contains('<') {
            return Ok(());
        }
        let start = super::tag::parse_start(&unit, DuplicateAttrs::KeepList).map(|t| t.name);
        let recognized = |name: &str| config.lookup(name.as_bytes()).is_some();
        // An end tag is read with the rule for its name's kind.
        let end = super::tag::parse_end(&unit, true)
            .and_then(|name| super::tag::parse_end(&unit, recognized(name)));
        let accepted = match start.or(end) {
            Some(name) => recognized(name) || !unit.contains('\n'),
            None => false,
        };
        if accepted {
            let (verdict, _) = probe(&unit, &config, true);
            prop_assert_eq!(verdict, Verdict::Complete(unit.len()), "probe disagrees on {:?}", unit);
        }
    }
}

/// Picks from `good` three times in four, else from `bad`.
fn mostly(
    good: &'static [&'static str],
    bad: &'static [&'static str],
) -> impl proptest::strategy::Strategy<Value = &'static str> {
    prop_oneof![3 => prop::sample::select(good), 1 => prop::sample::select(bad)]
}

/// Tag-shaped windows: a name, attribute-like parts and an ending, mostly valid
/// forms with near-misses mixed in, so every branch of the scanner is reached and
/// many windows are whole tags.
fn shaped_window() -> impl proptest::strategy::Strategy<Value = String> {
    let name = mostly(&["cite", "x", "a-1", "note:b.c"], &["1x", "", " cite", "é"]);
    let attr = (
        mostly(
            &[" ", "  ", "\t", " \t", "\n", "\r\n", " / "],
            &["", "=", "\"", "/"],
        ),
        mostly(
            &["id", "k", "é", "data-x"],
            &["", ">", "\"", "'", "a=b", "x/y", "<", "\n", "/"],
        ),
        mostly(&["", "=", " = ", "= ", " =", "=\t"], &["==", "=="]),
        mostly(
            &[
                "\"v\"", "'v'", "\"\"", "''", "x/y", "", "a=b", "é", "\"a>b\"", "'\"'", "\"x/>y\"",
            ],
            &[
                "x>y", "/", "b//", "\"open", "'open", "b/", " ", "\"/", "'/", "\"'",
            ],
        ),
    )
        .prop_map(|(sep, key, eq, value)| format!("{sep}{key}{eq}{value}"));
    let tail = mostly(
        &["/>", ">", " >", " />", "/ >", " /\n>"],
        &["", ">>", "\n>", "/", "\"/>", "'>", "//>"],
    );
    (name, prop::collection::vec(attr, 0..5), tail)
        .prop_map(|(name, attrs, tail)| format!("<{name}{}{tail}", attrs.concat()))
}

const DUPLICATES: [DuplicateAttrs; 3] = [
    DuplicateAttrs::LastWins,
    DuplicateAttrs::FirstWins,
    DuplicateAttrs::KeepList,
];

#[test]
fn scanner_takes_tags_apart_as_pest_does() {
    for window in [
        "<cite>",
        "<cite/>",
        "<cite id=3>",
        "<cite id=3/>",
        "<cite id=3//>",
        "<cite id=/>",
        "<cite id= />",
        "<cite id=a/b>",
        "<todo owner='ann'/>",
        "<claim confidence=\"high\">",
        "<cite id=\"1>",
        "<cite id=\"1/>",
        "<cite id=\"x/>y\">",
        "<cite id=\"fo>o\" k>",
        "<cite a b=1 a=2 a c= d=''>",
        "<cite k = \t'v' é=ü>",
        "<cite k=\"\"/>",
        "<cite k='/>",
        "<cite id=1 id=2 k>",
    ] {
        for duplicates in DUPLICATES {
            let mut scratch = Vec::new();
            let scanned = super::tag::scan_start(window, duplicates, &mut scratch);
            assert!(scanned.is_some(), "{window}");
            assert_eq!(
                scanned,
                super::tag::parse_start(window, duplicates),
                "{window}"
            );
            assert!(scratch.is_empty());
        }
    }
    let mut scratch = Vec::new();
    let tag = super::tag::scan_start("<cite b=1 a b=2>", DuplicateAttrs::KeepList, &mut scratch)
        .expect("a tag");
    assert_eq!(
        serde_json::to_value(&tag.attrs).expect("attributes serialize"),
        json!({"b": ["1", "2"], "a": true})
    );
    assert_eq!(tag.attrs.get("a"), Some(&AttrValue::Flag(true)));
    assert_eq!(tag.attrs.len(), 2);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// The scanner refuses exactly the windows pest refuses, and takes the others
    /// apart into the same name, attributes and self-closing flag, under every
    /// `duplicate_attrs`.
    #[test]
    fn scanner_agrees_with_pest(
        window in prop_oneof![
            shaped_window(),
            prop::collection::vec(tag_piece(), 0..12).prop_map(|body| format!("<{}", body.concat())),
        ],
    ) {
        for duplicates in DUPLICATES {
            let mut scratch = Vec::new();
            let scanned = super::tag::scan_start(&window, duplicates, &mut scratch);
            prop_assert_eq!(&scanned, &super::tag::parse_start(&window, duplicates), "on {:?}", window);
            prop_assert!(scratch.is_empty());
        }
    }
}

/// Folds `input` fed in the given chunks through the dynamic layer; checks tiling.
fn stream_document(options: &Value, chunks: &[&[u8]]) -> Value {
    let mut session = (DIALECT.open)(options, false).expect("valid options");
    let mut events = Vec::new();
    for chunk in chunks {
        session.feed(chunk, &mut events);
    }
    session.finish(&mut events);
    let mut covered = 0;
    for event in &events {
        let span = &event["span"];
        assert_eq!(span[0].as_u64(), Some(covered), "spans tile: {event}");
        covered = span[1].as_u64().unwrap_or(0);
    }
    assert_eq!(
        covered as usize,
        String::from_utf8_lossy(&chunks.concat()).len()
    );
    session.document()
}

fn option_sets() -> Vec<Value> {
    vec![
        json!({"backslash_escapes": true, "cdata_unclosed": "to_line_end", "max_retro_overlap": 2}),
        json!({"per_tag_recovery_strategy": {"cite": "forward_until_tag", "note": "forward_until_newline",
               "label": "forward_next_token", "todo": "noop"}, "recovery_metadata": true,
               "autoclose_on_any_tag": false}),
        json!({"self_closing_target": "next_token", "unknown_mode": "passthrough", "autoclose_on_any_tag": true}),
        json!({"self_closing_target": "until_newline", "unknown_mode": "treat_as_text", "trim_punctuation": false,
               "case_sensitive_tags": false, "stray_end_tag_policy": "passthrough", "duplicate_attrs": "keep_list",
               "max_tag_bytes": 12, "retro_anchor": "previous_tag"}),
    ]
}

fn kx_piece() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "<cite id=1>", "</cite>", "<note>", "</note>", "<label>", "<todo/>", "<todo x='1/>", "<b>", "</b>",
            "<br/>", "<![CDATA[", "]]>", "]", "\\", "\\<", "<", ">", "\"", " ", "\n", ".", "é", "。", "<CITE>",
            "</Cite>", "<cite id=1 id=2 k>", "</ cite >", "</note/>", "<cite\nid=1>", "<cite / x>",
            "<cite a='1\n", "<b\n", "...", "(",
        ]).prop_map(|s| s.as_bytes().to_vec()),
        1 => "[a-z ]{0,5}".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..2),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// S2 under every option the default corpus run does not exercise.
    #[test]
    fn streaming_equals_whole_parse_under_options(
        parts in prop::collection::vec(kx_piece(), 0..20),
        size in 1usize..9,
    ) {
        let input = parts.concat();
        for options in option_sets() {
            let whole = stream_document(&options, &[&input]);
            let chunks: Vec<&[u8]> = input.chunks(size).collect();
            prop_assert_eq!(&stream_document(&options, &chunks), &whole, "options {}", options);
            let segments = whole["segments"].as_array().map(Vec::as_slice).unwrap_or_default();
            let joined: String = segments.iter().filter_map(|s| s["text"].as_str()).collect();
            prop_assert_eq!(Some(joined.as_str()), whole["text"].as_str());
            // KX-27: at most `max_retro_overlap` retro spans and one other cover a byte.
            let reach = match options["retro_anchor"].as_str() {
                Some("previous_tag") => 1,
                _ => options["max_retro_overlap"].as_u64().unwrap_or(16) as usize,
            };
            for segment in segments {
                let covering = segment["annotations"].as_array().map_or(0, Vec::len);
                prop_assert!(covering <= reach + 1, "{} covers {}", covering, segment);
            }
        }
    }
}

#[test]
fn many_unclosed_tags_on_one_line_stay_linear_in_output() {
    let input = "x <cite id=1>".repeat(100_000);
    let doc = parse(&input, &Options::default()).expect("defaults");
    // Each cite reaches back past at most 15 earlier cites (KX-18): no output byte
    // is covered by more than `max_retro_overlap` annotations (KX-27).
    assert_eq!(
        doc.segments.iter().map(|s| s.annotations.len()).max(),
        Some(DEFAULT_MAX_RETRO_OVERLAP)
    );
    let covered: usize = doc.segments.iter().map(|s| s.annotations.len()).sum();
    assert!(covered <= DEFAULT_MAX_RETRO_OVERLAP * doc.segments.len());
    let by_tag = Options {
        retro_anchor: RetroAnchor::PreviousTag,
        ..Options::default()
    };
    let doc = parse(&input, &by_tag).expect("valid options");
    // Each cite annotates only its own `x`: one annotation per segment.
    assert_eq!(
        doc.segments.iter().map(|s| s.annotations.len()).max(),
        Some(1)
    );
    assert_eq!(doc.segments.len(), 200_000);
}

#[test]
fn long_explicit_span_is_one_segment() {
    let input = format!("<claim>{}</claim>", "word ".repeat(200_000));
    let doc = parse(&input, &Options::default()).expect("defaults");
    assert_eq!(doc.segments.len(), 1);
    assert_eq!(doc.segments[0].annotations[0].tag, "claim");
}

#[test]
fn unmatched_quote_cannot_swallow_more_than_a_line() {
    let input = format!("<cite id=\"1>{}\nnext <note>", "a".repeat(10_000));
    let doc = parse(&input, &Options::default()).expect("defaults");
    assert!(doc.text.ends_with("\nnext "));
    assert_eq!(
        doc.markers.len(),
        1,
        "the cite sits at the start of its line"
    );
}

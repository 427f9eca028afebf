//! Unit tests of the kindaxml dialect that the corpus cannot express: options
//! errors, streaming under non-default options, big inputs.

use proptest::prelude::{
    any, prop, prop_assert, prop_assert_eq, prop_oneof, proptest, ProptestConfig,
};
use proptest::strategy::Strategy as _;
use serde_json::{json, Value};

use super::*;

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
    let err = dialect().open(&json!({"recognised_tags": []}), false).err();
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

/// Folds `input` fed in the given chunks through the dynamic layer; checks tiling.
fn stream_document(options: &Value, chunks: &[&[u8]]) -> Value {
    let mut session = dialect().open(options, false).expect("valid options");
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

/// How [`taken_document`] folds.
#[derive(Clone, Copy, Debug)]
struct Taking {
    /// [`Fold::release_settled`] before taking.
    release: bool,
    /// The folder made [`DocumentFolder::hollow`] after the first piece, with
    /// segments folded already (`parse` folds hollow from the start).
    hollow: bool,
    /// [`DocumentFolder::take_settled_texts`] instead of
    /// [`DocumentFolder::take_settled`].
    texts: bool,
}

/// The document of `input` fed in pieces of `size` bytes with
/// [`DocumentFolder::take_settled`] (or `take_settled_texts`) and
/// [`DocumentFolder::take_markers`] after each piece (see [`Taking`]): the
/// segments and markers taken, then the document left.
fn taken_document(options: &Options, input: &[u8], size: usize, how: Taking) -> Document {
    use crate::fold::Fold as _;
    let mut stream = crate::Stream::new(KindaxmlMachine::new(options).expect("valid options"));
    let mut folder = DocumentFolder::new();
    let mut taken = Vec::new();
    let mut markers = Vec::new();
    let mut take = |folder: &mut DocumentFolder| {
        if how.texts {
            folder.take_settled_texts(|text, annotations| {
                taken.push(Segment {
                    text: text.to_string(),
                    annotations,
                })
            });
        } else {
            folder.take_settled(|segment| taken.push(segment));
        }
    };
    for (n, piece) in input.chunks(size.max(1)).enumerate() {
        for event in stream.feed(piece) {
            folder.push(&event);
        }
        if how.hollow && n == 0 {
            folder = folder.hollow();
        }
        if how.release {
            folder.release_settled();
        }
        take(&mut folder);
        folder.take_markers(|marker| markers.push(marker));
    }
    for event in stream.finish() {
        folder.push(&event);
    }
    take(&mut folder);
    let mut document = folder.into_document();
    taken.append(&mut document.segments);
    document.segments = taken;
    markers.append(&mut document.markers);
    document.markers = markers;
    document
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Taking the settled segments and the markers while folding changes
    /// nothing: they, then the segments and markers left, are those of the plain
    /// fold, under every option set; with segments taken whole or as texts, from
    /// a hollow folder or not, released or not.
    #[test]
    fn taking_settled_segments_and_markers_keeps_the_document(
        parts in prop::collection::vec(kx_piece(), 0..24),
        size in 1usize..12,
        release in any::<bool>(),
        hollow in any::<bool>(),
        texts in any::<bool>(),
    ) {
        let input = parts.concat();
        let simple = Taking { release: false, hollow: false, texts: false };
        let how = Taking { release, hollow, texts };
        for options in option_sets() {
            let options: Options = serde_json::from_value(options).expect("valid options");
            let whole = taken_document(&options, &input, usize::MAX, simple);
            let mut plain = crate::Stream::new(KindaxmlMachine::new(&options).expect("valid options"));
            let mut events: Vec<Event> = plain.feed(&input).collect();
            events.extend(plain.finish());
            prop_assert_eq!(&whole, &Document::fold(&events));
            prop_assert_eq!(&taken_document(&options, &input, size, how), &whole);
            // The whole-document parse, whose fold is hollow, gives the same
            // (of inputs that are text: it takes a `str`).
            if let Ok(text) = std::str::from_utf8(&input) {
                prop_assert_eq!(&parse(text, &options).expect("valid options"), &whole);
            }
        }
    }
}

/// Segments are taken while the input goes on: a long document of many lines
/// keeps only its last few segments in the folder.
#[test]
fn settled_segments_are_taken_as_lines_end() {
    use crate::fold::Fold as _;
    let line = "see <cite id=1>this</cite> and <note>that\n";
    let input = line.repeat(200);
    let options = Options::default();
    let mut stream = crate::Stream::new(KindaxmlMachine::new(&options).expect("defaults"));
    let mut folder = DocumentFolder::new();
    let mut taken = 0;
    for piece in input.as_bytes().chunks(line.len()) {
        for event in stream.feed(piece) {
            folder.push(&event);
        }
        folder.take_settled(|_| taken += 1);
        assert!(
            folder.document().segments.len() <= 8,
            "{} left",
            folder.document().segments.len()
        );
    }
    assert!(taken >= 200 * 3, "{taken} taken");
}

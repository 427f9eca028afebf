//! Property tests for every dialect (DESIGN §3): random inputs built from each
//! dialect's own vocabulary, under random chunkings. For each input they check:
//! no panic; the folded stream equals the whole parse (S2); event spans tile the
//! input (S8); and what was emitted after a prefix never depends on how that prefix
//! was chunked, so nothing emitted is later contradicted (S3/S4).

use idiolect::conformance::{run_chunked, Run};
use proptest::prelude::*;
use serde_json::Value;

/// The markup fragments a dialect's input is built from, besides plain text.
fn vocabulary(dialect: &str) -> Option<&'static [&'static str]> {
    Some(match dialect {
        "sections" => &[
            "<think>",
            "</think>",
            "<write-file path=\"a.ts\">",
            "</create-file>",
            "</ dyad-write >",
            "<summary/>",
            "<",
            "</",
            ">",
            "/>",
            "\"",
            "'",
            "{",
            "}",
            "`",
            "=",
            " ",
            "\n",
            "\r\n",
            "<div>",
            "<!--",
            "-->",
            "a < b",
            "x<y",
            "é",
            "🦀",
            "\u{feff}",
            "<think a={b{c}} d='e' f>",
            "<THINK>",
            "</Think>",
            "<run-bash",
            "\0",
            "\\",
            "<think a=\"1\"b={\"\\\"}\"}c>",
            "<summary x='\\'y",
        ],
        // The prefixed form is assembled with concat!, never typed out (DESIGN §5).
        "anthropic-xml" => &[
            "<thinking>",
            "</thinking>",
            concat!("<", "ant", "ml:", "thinking>"),
            concat!("</", "ant", "ml:", "thinking>"),
            "<function_calls>",
            "</function_calls>",
            concat!("<", "ant", "ml:", "function_calls>"),
            concat!("</", "ant", "ml:", "invoke>"),
            "<invoke name=\"Read\">",
            "<invoke name='x'/>",
            concat!("<", "ant", "ml:", "invoke name=\"get_thinking_notes\">"),
            "</invoke>",
            "<parameter name=\"path\">",
            concat!("<", "ant", "ml:", "parameter name='n'>"),
            "</parameter>",
            concat!("</", "ant", "ml:", "parameter>"),
            "<function_results>",
            "</function_results>",
            "<result tool_use_id=\"t1\">",
            "</result>",
            "<error>",
            "</error>",
            "&amp;",
            "&lt",
            "&#x4",
            "<",
            "</",
            ">",
            "/>",
            "\"",
            " ",
            "\n",
            "<thinkingcap>",
            "<THINKING>",
            "42",
            "{\"a\": [1]}",
            "é",
            "\0",
        ],
        "kindaxml" => &[
            "<cite id=1>",
            "</cite>",
            "<note>",
            "</note>",
            "<todo/>",
            "<claim a='x>",
            "<label b=\"y",
            "<weird k=v>",
            "</weird>",
            "<br/>",
            "<![CDATA[",
            "]]>",
            "]",
            "\\<",
            "<",
            "</",
            ">",
            "/>",
            "\"",
            "'",
            "=",
            " ",
            "\n",
            "\r\n",
            ".",
            ",",
            "a < b",
            "x<y",
            "é",
            "🦀",
            "。",
            "…",
            "\0",
            "<CITE>",
            "</ cite>",
            "<cite href=http://x/y/>",
            "</claim x=1>",
            "</note/>",
            "<note\n",
            "<cite / id=2>",
            "<cite a=\"1\"b='2'>",
            "<label>... ",
        ],
        // Default options: human-assistant prompts.
        "transcript" => &[
            "\n\nHuman:",
            "\n\nAssistant:",
            "Human:",
            "Assistant:",
            "\n\nHum",
            "\n",
            "\n\n",
            ":",
            " ",
            "Human",
            "é",
            "🦀",
            "\0",
        ],
        "plurnk" => &[
            "<<EDIT",
            "<<EDITa",
            "<<SEND",
            "<<FIND",
            "<<HIDE",
            "<<",
            "<",
            ":EDIT",
            ":EDITa",
            ":SEND",
            ":FIND",
            ":",
            "[a,b]",
            "[200]",
            "[",
            "]",
            "(p)",
            "(https://u:p@h.example:8080/x?q=1&q=2#f)",
            "(",
            ")",
            "<1-2>",
            "<-1>",
            ">",
            "-",
            "/a|b/i",
            "//x[@y]",
            "$.a",
            "{\"a\":1}",
            " ",
            "\n",
            "\r\n",
            "é",
            "🦀",
            "\0",
            "x",
            "<<EDIT outer(x):y:EDIT outer",
        ],
        "hermes" => &[
            "<tool_call>",
            "</tool_call>",
            "<think>",
            "</think>",
            "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
            "{\"arguments\": {}, \"name\": \"g\"}",
            "{\"name\": \"h\", \"arguments\": \"{\\\"x\\\": 2}\"}",
            "{\"name\": ",
            "\"arguments\": {\"s\": \"",
            "\"parameters\": [",
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            ",",
            ":",
            "<",
            "9007199254740993",
            " ",
            "\n",
            "\r\n",
            "é",
            "🦀",
        ],
        "qwen3-coder" => &[
            "<tool_call>",
            "</tool_call>",
            "<think>",
            "</think>",
            "<function=f>",
            "<function=\"g\">",
            "<function=",
            "</function>",
            "<parameter=a>",
            "<parameter=b>",
            "<parameter=",
            "</parameter>",
            "True",
            "42",
            "{\"k\": [1]}",
            "<",
            ">",
            "\"",
            "\\",
            " ",
            "\n",
            "\r\n",
            "é",
            "🦀",
        ],
        "deepseek-v3" | "deepseek-v3.1" => &[
            "<think>",
            "</think>",
            "<｜tool▁calls▁begin｜>",
            "<｜tool_calls_begin｜>",
            "<｜tool▁calls｜>",
            "<｜tool▁calls▁end｜>",
            "<｜tool▁call▁begin｜>",
            "<｜tool▁sep｜>",
            "<｜tool▁call▁end｜>",
            "<｜end▁of▁sentence｜>",
            "function",
            "get_weather",
            "\n```json\n",
            "\n```",
            "```",
            "{\"a\": 1}",
            "{\"s\": \"",
            "{",
            "}",
            "\"",
            "\\",
            "tru",
            "<",
            "｜",
            " ",
            "\n",
            "é",
            "🦀",
        ],
        "harmony" => &[
            "<|start|>",
            "assistant",
            "<|channel|>",
            "analysis",
            "final",
            "commentary",
            " to=functions.f",
            " to=python",
            " json",
            "<|constrain|>",
            "<|message|>",
            "<|end|>",
            "<|call|>",
            "<|return|>",
            "{\"a\": 1}",
            "{\"s\": \"",
            "{",
            "}",
            "\"",
            "\\",
            "<",
            "|",
            " ",
            "\n",
            "é",
            "🦀",
        ],
        "mistral" => &[
            "[TOOL_CALLS]",
            "[ARGS]",
            "[CALL_ID]",
            "[THINK]",
            "[/THINK]",
            "get_weather",
            "a1b2c3d4e",
            "[{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"x\"}]",
            "{\"arguments\": {}, \"name\": \"g\"}",
            "{\"name\": ",
            "\"arguments\": ",
            "\"id\": \"z\"",
            "{\"s\": \"",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"",
            "\\",
            " ",
            "\n",
            "é",
            "🦀",
        ],
        "llama3-json" => &[
            "<|python_tag|>",
            "[THINK]",
            "◁/think▷",
            "<|eom_id|>",
            "<|eot_id|>",
            "<think>",
            "</think>",
            "{\"name\": \"f\", \"parameters\": {\"a\": 1}}",
            "{\"arguments\": {}, \"name\": \"g\"}",
            "{\"name\": ",
            "\"parameters\": ",
            "brave_search.call(query=\"x\")",
            "f.call(",
            "q='",
            "=",
            ";",
            "{",
            "}",
            "(",
            ")",
            "[",
            "]",
            ",",
            ":",
            "\"",
            "\\",
            " ",
            "\n",
            "18446744073709551616",
            "é",
            "🦀",
        ],
        "pythonic" => &[
            "<|python_start|>",
            "[THINK]",
            "[/THINK]",
            "<|python_end|>",
            "<think>",
            "</think>",
            "[f(a=1, b='x')]",
            "[g()]",
            "[h(",
            "k=",
            "True",
            "None",
            "-12",
            "1.5e3",
            "'",
            "\"",
            "\\",
            "{",
            "}",
            "(",
            ")",
            "[",
            "]",
            ",",
            ":",
            "=",
            " ",
            "\n",
            "é",
            "🦀",
        ],
        "reasoning" => &[
            "<think>",
            "</think>",
            "[THINK]",
            "[/THINK]",
            "◁think▷",
            "◁/think▷",
            "<",
            "[",
            "◁",
            "▷",
            "think",
            "/",
            "€",
            " ",
            "\n",
            "é",
            "🦀",
        ],
        "kimi-k2" => &[
            "<think>",
            "</think>",
            "<|im_end|>",
            "<|tool_calls_section_begin|>",
            "<|tool_call_section_begin|>",
            "<|tool_calls_section_end|>",
            "<|tool_call_section_end|>",
            "<|tool_call_begin|>",
            "<|tool_call_argument_begin|>",
            "<|tool_call_end|>",
            "functions.",
            "get_weather",
            "browser.search",
            ":0",
            ":12",
            "{\"a\": 1}",
            "{\"s\": \"",
            "{",
            "}",
            "\"",
            "\\",
            "tru",
            "<",
            "|",
            " ",
            "\n",
            "é",
            "🦀",
        ],
        "minimax-m2" => &[
            "<think>",
            "</think>",
            "<minimax:tool_call>",
            "</minimax:tool_call>",
            "<invoke name=\"f\">",
            "<invoke name=\"",
            "</invoke>",
            "<parameter name=\"a\">",
            "<parameter name=\"b\">",
            "<parameter",
            "</parameter>",
            "name",
            "=",
            "42",
            "{\"k\": [1]}",
            "<",
            ">",
            "\"",
            "\\",
            " ",
            "\n",
            "é",
            "🦀",
        ],
        "glm" => &[
            "<think>",
            "</think>",
            "<tool_call>",
            "</tool_call>",
            "<tool_call>f",
            "<arg_key>",
            "</arg_key>",
            "<arg_value>",
            "</arg_value>",
            "a",
            "get_weather",
            "42",
            "{\"k\": [1]}",
            "<",
            ">",
            "\"",
            "\\",
            " ",
            "\n",
            "é",
            "🦀",
        ],
        _ => return grammar_literals(dialect),
    })
}

fn run(dialect: &str, options: &Value, chunks: &[&[u8]]) -> Result<Run, String> {
    run_chunked(dialect, options, chunks, "property")
}

fn split<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    points.sort_unstable();
    points.dedup();
    let mut chunks = Vec::new();
    let mut at = 0;
    for p in points.into_iter().chain(std::iter::once(input.len())) {
        if p > at {
            chunks.push(&input[at..p]);
            at = p;
        }
    }
    chunks
}

fn check_dialect(dialect: &str, input: &[u8], cuts: &[usize]) -> Result<(), TestCaseError> {
    let options = Value::Null;
    let whole = run(dialect, &options, &[input]).map_err(TestCaseError::fail)?;
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    let by_byte = run(dialect, &options, &bytes).map_err(TestCaseError::fail)?;
    let chunked = run(dialect, &options, &split(input, cuts)).map_err(TestCaseError::fail)?;
    prop_assert_eq!(
        &by_byte.document,
        &whole.document,
        "1-byte chunks differ from the whole parse"
    );
    prop_assert_eq!(
        &chunked.document,
        &whole.document,
        "random chunks differ from the whole parse"
    );
    let mut reach_at = vec![0; input.len() + 1];
    for (d, c) in by_byte.reach {
        reach_at[d] = c;
    }
    for (d, c) in chunked.reach {
        prop_assert_eq!(
            c,
            reach_at[d],
            "after {} bytes emission depends on the chunking",
            d
        );
    }
    Ok(())
}

/// The string literals of an engine family's grammar (its `.pest` file, its
/// markers), the vocabulary of a family with none written here: a family added to
/// the table is tested with its own markers.
fn grammar_literals(name: &str) -> Option<&'static [&'static str]> {
    let entry = idiolect::field::families::TABLE
        .iter()
        .find(|e| e.name == name)?;
    let text = entry.grammar;
    let mut found = std::collections::BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c != '"' {
                continue;
            }
            let mut literal = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some('n') => literal.push('\n'),
                        Some('t') => literal.push('\t'),
                        Some('r') => literal.push('\r'),
                        Some(other) => literal.push(other),
                        None => {}
                    },
                    other => literal.push(other),
                }
            }
            if !literal.is_empty() {
                found.insert(literal);
            }
        }
    }
    let words: Vec<&'static str> = found
        .into_iter()
        .map(|w| &*Box::leak(w.into_boxed_str()))
        .collect();
    Some(Box::leak(words.into_boxed_slice()))
}

/// The engine families of the table that have no property test of their own below.
fn table_only_families() -> Vec<&'static str> {
    const OWN: [&str; 8] = [
        "hermes",
        "qwen3-coder",
        "deepseek-v3",
        "deepseek-v3.1",
        "kimi-k2",
        "minimax-m2",
        "glm",
        "reasoning",
    ];
    idiolect::field::families::names()
        .filter(|n| idiolect::field::families::family(n).is_some() && !OWN.contains(n))
        .collect()
}

fn input_for(vocab: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => prop::sample::select(vocab).prop_map(|s| s.as_bytes().to_vec()),
        1 => "[a-z \\n]{0,6}".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..3),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
}

#[test]
fn every_dialect_has_a_vocabulary() {
    for d in idiolect::dialects() {
        assert!(
            vocabulary(d.name).is_some(),
            "no property-test vocabulary for dialect {}",
            d.name
        );
    }
}

/// One property test per dialect, so failures shrink to a minimal input of that dialect.
macro_rules! dialect_properties {
    ($($test:ident => $dialect:literal),* $(,)?) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(768))]
            $(
                #[test]
                fn $test(
                    input in input_for(vocabulary($dialect).expect("vocabulary")),
                    cuts in prop::collection::vec(any::<usize>(), 0..12),
                ) {
                    check_dialect($dialect, &input, &cuts)?;
                }
            )*
        }
    };
}

dialect_properties! {
    sections_streams_like_the_whole_parse => "sections",
    anthropic_xml_streams_like_the_whole_parse => "anthropic-xml",
    kindaxml_streams_like_the_whole_parse => "kindaxml",
    transcript_streams_like_the_whole_parse => "transcript",
    plurnk_streams_like_the_whole_parse => "plurnk",
    hermes_streams_like_the_whole_parse => "hermes",
    qwen3_coder_streams_like_the_whole_parse => "qwen3-coder",
    deepseek_v3_streams_like_the_whole_parse => "deepseek-v3",
    deepseek_v31_streams_like_the_whole_parse => "deepseek-v3.1",
    harmony_streams_like_the_whole_parse => "harmony",
    mistral_streams_like_the_whole_parse => "mistral",
    llama3_json_streams_like_the_whole_parse => "llama3-json",
    pythonic_streams_like_the_whole_parse => "pythonic",
    reasoning_streams_like_the_whole_parse => "reasoning",
    kimi_k2_streams_like_the_whole_parse => "kimi-k2",
    minimax_m2_streams_like_the_whole_parse => "minimax-m2",
    glm_streams_like_the_whole_parse => "glm",
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    /// Every other engine family of the table (seed-oss, …), with its grammar's
    /// literals as the vocabulary.
    #[test]
    fn table_families_stream_like_the_whole_parse(
        (dialect, input) in prop::sample::select(table_only_families()).prop_flat_map(|d| {
            (Just(d), input_for(vocabulary(d).expect("vocabulary")))
        }),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        check_dialect(dialect, &input, &cuts)?;
    }
}

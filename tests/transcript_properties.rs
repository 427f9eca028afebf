//! Property tests of the transcript dialect: parse(render(x)) gives back the
//! conversation (TR-65), parsing the prefill prompt of a built request gives back
//! its messages for every prompt-based formatter (TR-105), and the stop scanner, over random texts and chunkings,
//! emits exactly the text before the earliest stop (TR-71, TR-73): never a byte of
//! the stop, never a lost byte before it, and never more held back than its bound.

use idiolect::anthropic_xml::{self, CallSpec, ResultSpec, ToolDefinition};
use idiolect::transcript::{
    self, Block, CacheControl, Content, Conversation, Document, Format, Formatter, Options,
    ParticipantMode, ProviderBlock, RequestInput, RequestMessage, RequestOptions, ScanEvent,
    ScanMachine, Scanner, SystemPrompt, Turn,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const SPEAKERS: [&str; 4] = ["Alice", "Bob", "Dr. Zoë", "Claude"];

/// Text pieces chosen to look like the headers and terminators of every format.
fn text() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a",
        " ",
        "\n",
        "\n\n",
        ":",
        "Human:",
        "Assistant",
        "Alice",
        "Bob:",
        "Claude",
        "<|eot|>",
        "<|eot",
        "<|im_end|>",
        "<|im_start|>",
        "<",
        "|",
        "é",
        "🦀",
        "<thinking>",
        "Note: ",
    ]);
    prop::collection::vec(piece, 0..8).prop_map(|parts| parts.concat())
}

fn conversation() -> impl Strategy<Value = Conversation> {
    let turn =
        (prop::sample::select(SPEAKERS.to_vec()), text()).prop_map(|(speaker, content)| Turn {
            speaker: speaker.to_string(),
            content,
        });
    (
        prop::option::of(text()),
        prop::collection::vec(turn, 0..6),
        text(),
    )
        .prop_map(|(system, messages, prefill)| Conversation {
            system,
            messages,
            assistant: Some("Claude".to_string()),
            prefill,
            options: None,
        })
}

fn format() -> impl Strategy<Value = Format> {
    prop::sample::select(vec![
        Format::HumanAssistant,
        Format::Participants,
        Format::Completions,
        Format::Chatml,
    ])
}

/// In human-assistant the speakers are mapped (TR-63): the assistant to `Assistant`.
fn expected_speaker(format: Format, speaker: &str) -> String {
    match (format, speaker) {
        (Format::HumanAssistant, "Claude") => "Assistant".to_string(),
        (Format::HumanAssistant, _) => "Human".to_string(),
        _ => speaker.to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn parse_of_render_gives_back_the_conversation(
        conversation in conversation(),
        format in format(),
        thinking in any::<bool>(),
        eot in prop::sample::select(vec!["<|eot|>", "</s>", "<e:>", "aa", "\n"]),
        max_name_bytes in prop::sample::select(vec![128usize, 6]),
        with_names in any::<bool>(),
    ) {
        // Participants prompts need the names to be parsed back (TR-30, TR-65).
        let participants: Vec<String> = if with_names || format == Format::Participants {
            SPEAKERS.iter().map(|s| s.to_string()).collect()
        } else {
            Vec::new()
        };
        let options = Options {
            format,
            participants,
            thinking,
            eot: eot.to_string(),
            max_name_bytes,
            ..Options::default()
        };
        let Ok(rendered) = transcript::render(&conversation, &options) else {
            // Refusals are checked by the corpus and by the next property.
            return Ok(());
        };
        let Document::Prompt(doc) = transcript::parse(&rendered.prompt, &options).unwrap() else {
            unreachable!("parse mode gives a prompt document");
        };
        let messages: Vec<(String, String)> =
            doc.messages.iter().map(|m| (m.speaker.clone(), m.content.clone())).collect();
        let expected: Vec<(String, String)> = conversation
            .messages
            .iter()
            .map(|m| (expected_speaker(format, &m.speaker), m.content.clone()))
            .collect();
        prop_assert_eq!(messages, expected, "prompt {:?}", rendered.prompt);
        let open = doc.open.expect("an open turn");
        let mut prefill = String::new();
        if thinking && format == Format::Participants {
            prefill.push_str("<thinking>");
        }
        prefill.push_str(&conversation.prefill);
        prop_assert_eq!(open.speaker, expected_speaker(format, "Claude"));
        prop_assert_eq!(open.content, prefill);
        let system = conversation.system.filter(|s| format == Format::Chatml || !s.is_empty());
        prop_assert_eq!(doc.system, system);
    }

    #[test]
    fn plain_conversations_always_render(
        messages in prop::collection::vec(
            (prop::sample::select(SPEAKERS.to_vec()), "[a-z .,!?é]{0,12}"), 0..6),
        format in format(),
    ) {
        let conversation = Conversation {
            messages: messages
                .into_iter()
                .map(|(s, c)| Turn { speaker: s.to_string(), content: c })
                .collect(),
            assistant: Some("Claude".to_string()),
            ..Conversation::default()
        };
        let options = Options { format, ..Options::default() };
        prop_assert!(transcript::render(&conversation, &options).is_ok());
    }
}

/// The earliest match by position, then shortest, then first listed (TR-71),
/// found the slow and obvious way.
fn oracle(text: &str, stops: &[String]) -> Option<(usize, usize)> {
    (0..=text.len())
        .filter(|&p| text.is_char_boundary(p))
        .find_map(|p| {
            stops
                .iter()
                .enumerate()
                .filter(|(_, s)| text[p..].starts_with(s.as_str()))
                .min_by_key(|(i, s)| (s.len(), *i))
                .map(|(i, _)| (p, i))
        })
}

fn stop() -> impl Strategy<Value = String> {
    "[ab\\nU:é]{1,4}"
}

fn cut(input: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    points.push(input.len());
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut at = 0;
    for p in points {
        chunks.push(input[at..p].to_vec());
        at = p;
    }
    chunks
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn scanner_emits_exactly_the_text_before_the_earliest_stop(
        text in "[ab\\nU:é x]{0,40}",
        stops in prop::collection::vec(stop(), 0..4),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        let expected = oracle(&text, &stops);
        let end = expected.map_or(text.len(), |(p, _)| p);
        let bound = stops.iter().map(String::len).max().unwrap_or(0);
        let mut scanner = Scanner::new(ScanMachine::new(stops.clone(), false));
        let (mut emitted, mut delivered) = (String::new(), 0);
        let mut found = None;
        let mut rest = String::new();
        let chunks = cut(text.as_bytes(), &cuts);
        for (i, chunk) in chunks.iter().enumerate() {
            delivered += chunk.len();
            let events: Vec<ScanEvent> = if i + 1 == chunks.len() {
                let mut e: Vec<ScanEvent> = scanner.feed(chunk).collect();
                e.extend(scanner.finish());
                e
            } else {
                scanner.feed(chunk).collect()
            };
            for event in events {
                match event {
                    ScanEvent::Text { text: t, .. } => emitted.push_str(&t),
                    ScanEvent::Stop { index, offset, .. } => found = Some((offset, index)),
                    ScanEvent::Rest { text: t, .. } => rest.push_str(&t),
                    _ => {}
                }
            }
            // Never a byte at or past the stop; never more held back than the bound.
            prop_assert!(text[..end].starts_with(&emitted), "emitted {:?} of {:?}", emitted, text);
            if found.is_none() && i + 1 < chunks.len() {
                prop_assert!(delivered - emitted.len() <= bound + 3, "held {} bytes", delivered - emitted.len());
            }
        }
        prop_assert_eq!(&emitted, &text[..end], "lost text before the stop");
        prop_assert_eq!(found, expected);
        if let Some((p, i)) = expected {
            prop_assert_eq!(rest.as_str(), &text[p + stops[i].len()..]);
        }
    }

    #[test]
    fn structure_aware_scan_never_stops_inside_an_open_block(
        before in "[a\\n]{0,6}",
        inside in "[a\\nU:]{0,12}",
        closed in any::<bool>(),
        after in "[a\\nU:]{0,12}",
        chunk in 1usize..8,
    ) {
        let closer = if closed { "</thinking>" } else { "" };
        let input = format!("{before}<thinking>{inside}{closer}{after}");
        let options = serde_json::json!({"mode": "scan", "stop": ["\nU:"], "structure_aware": true});
        let dialect = idiolect::dialect("transcript").unwrap();
        let mut session = dialect.open(&options, false).unwrap();
        let mut events = Vec::new();
        for piece in input.as_bytes().chunks(chunk) {
            session.feed(piece, &mut events);
        }
        session.finish(&mut events);
        let doc = session.document();
        let open_at = before.len();
        let close_end = open_at + "<thinking>".len() + inside.len() + closer.len();
        let plain = |s: &str| oracle(s, &["\nU:".to_string()]);
        let expected = match plain(&before) {
            Some((p, _)) => Some(p),
            None if closed => plain(&input[close_end..]).map(|(p, _)| close_end + p),
            None => None,
        };
        let offset = doc["stop"]["offset"].as_u64().map(|o| o as usize);
        prop_assert_eq!(offset, expected, "input {:?}", input);
    }
}

/// Markers of every format and of the structure-aware scanner, for random prompts.
const VOCABULARY: &[&str] = &[
    "\n\nHuman:",
    "\n\nAssistant:",
    "Human:",
    "\nAlice:",
    "Alice: ",
    "Bob:",
    "\nClaude:",
    "<|eot|>",
    "<|eo",
    "<|im_start|>",
    "<|im_end|>",
    "user\n",
    "assistant\n",
    "system\n",
    "<thinking>",
    "</thinking>",
    "<function_calls>",
    "</function_calls>",
    "\nUser:",
    "\n",
    "\n\n",
    ":",
    " ",
    "a",
    "é",
    "🦀",
    "\0",
    "<",
    "|",
];

fn options_under_test() -> Vec<serde_json::Value> {
    use serde_json::json;
    vec![
        json!({"format": "human-assistant"}),
        json!({"format": "participants", "participants": ["Alice", "Bob", "Claude"]}),
        json!({"format": "participants", "max_name_bytes": 6}),
        json!({"format": "completions"}),
        json!({"format": "completions", "participants": ["Alice"], "eot": "<|eot|>"}),
        json!({"format": "chatml", "max_name_bytes": 5}),
        json!({"mode": "scan", "stop": ["\nUser:", "</function_calls>", "\n\n"]}),
        json!({"mode": "scan", "stop": ["\nUser:"], "structure_aware": true}),
        json!({"mode": "scan", "format": "completions", "participants": ["Alice", "Claude"], "assistant": "Claude"}),
        json!({"mode": "render", "format": "participants"}),
        json!({"mode": "request", "request": {"formatter": "chatml"}}),
    ]
}

/// Runs one session over `chunks`; returns the document and the events' spans.
fn stream(
    options: &serde_json::Value,
    chunks: &[&[u8]],
) -> (serde_json::Value, Vec<(usize, usize)>) {
    let dialect = idiolect::dialect("transcript").expect("registered");
    let mut session = dialect.open(options, false).expect("valid options");
    let mut events = Vec::new();
    for chunk in chunks {
        session.feed(chunk, &mut events);
    }
    session.finish(&mut events);
    let spans = events
        .iter()
        .map(|e| {
            (
                e["span"][0].as_u64().unwrap() as usize,
                e["span"][1].as_u64().unwrap() as usize,
            )
        })
        .collect();
    (session.document(), spans)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_mode_streams_like_the_whole_input(
        parts in prop::collection::vec(
            prop_oneof![
                4 => prop::sample::select(VOCABULARY).prop_map(|s| s.as_bytes().to_vec()),
                1 => prop::collection::vec(any::<u8>(), 0..3),
            ],
            0..24,
        ),
        which in 0usize..11,
        chunk in 1usize..9,
    ) {
        let input = parts.concat();
        let options = &options_under_test()[which];
        let (whole, _) = stream(options, &[&input]);
        let chunks: Vec<&[u8]> = input.chunks(chunk).collect();
        let (chunked, spans) = stream(options, &chunks);
        prop_assert_eq!(&chunked, &whole, "options {}", options);
        let mut covered = 0;
        for (start, end) in spans {
            prop_assert_eq!(start, covered, "spans do not tile");
            covered = end;
        }
        prop_assert_eq!(covered, String::from_utf8_lossy(&input).len());
    }
}

/// A content block of a request message: text pieces that look like headers, and
/// thinking, tool calls and tool results.
fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        4 => text().prop_map(|text| Block::Text { text }),
        1 => text().prop_map(|thinking| Block::Thinking { thinking, signature: None }),
        1 => (prop::sample::select(vec!["f", "get_weather"]), text()).prop_map(|(name, value)| {
            let mut input = Map::new();
            input.insert("q".into(), Value::String(value));
            input.insert("n".into(), json!(2));
            Block::ToolUse { id: "t1".into(), name: name.into(), input }
        }),
        1 => (text(), any::<bool>()).prop_map(|(content, is_error)| Block::ToolResult {
            tool_use_id: "t1".into(),
            content: Value::String(content),
            is_error,
        }),
    ]
}

/// A block, one in eight with the caller's own cache mark (TR-107), which may cut
/// the prefill text but never changes it.
fn marked_block() -> impl Strategy<Value = ProviderBlock> {
    (block(), prop::bool::weighted(0.125)).prop_map(|(block, marked)| ProviderBlock {
        block,
        cache_control: marked.then(CacheControl::ephemeral),
    })
}

fn request_message() -> impl Strategy<Value = RequestMessage> {
    (
        prop::sample::select(SPEAKERS.to_vec()),
        prop::collection::vec(marked_block(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(speaker, blocks, cache_marker)| RequestMessage {
            speaker: speaker.to_string(),
            content: Content::Blocks(blocks),
            cache_marker,
        })
}

/// A message's blocks without their marks.
fn plain_blocks(m: &RequestMessage) -> Vec<Block> {
    m.content.blocks().into_iter().map(|b| b.block).collect()
}

fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "get_weather".into(),
        description: Some("Weather now".into()),
        input_schema: Some(json!({"type": "object", "properties": {"q": {"type": "string"}}})),
    }]
}

fn xml_options() -> anthropic_xml::Options {
    anthropic_xml::Options {
        render_prefix: false,
        ..anthropic_xml::Options::default()
    }
}

/// A message's text as TR-96 writes it, for anthropic-xml (`chatml_json` false,
/// `think` false) and chatml.
fn expected_text(blocks: &[Block], chatml_json: Option<bool>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut calls: Vec<CallSpec> = Vec::new();
    let mut results: Vec<ResultSpec> = Vec::new();
    let flush =
        |parts: &mut Vec<String>, calls: &mut Vec<CallSpec>, results: &mut Vec<ResultSpec>| {
            if !calls.is_empty() {
                parts.push(anthropic_xml::render_calls(calls, &xml_options()).unwrap());
                calls.clear();
            }
            if !results.is_empty() {
                parts.push(anthropic_xml::render_results(results, &xml_options()));
                results.clear();
            }
        };
    for block in blocks {
        if !matches!(block, Block::ToolUse { .. }) && !calls.is_empty()
            || !matches!(block, Block::ToolResult { .. }) && !results.is_empty()
        {
            flush(&mut parts, &mut calls, &mut results);
        }
        match block {
            Block::Text { text } => parts.push(text.clone()),
            Block::Thinking { thinking, .. } => parts.push(match chatml_json {
                Some(_) => format!("<think>{thinking}</think>"),
                None => format!("<thinking>{thinking}</thinking>"),
            }),
            Block::ToolUse { name, input, .. } if chatml_json == Some(true) => parts.push(format!(
                "<tool_call>\n{{\"name\":{},\"arguments\":{}}}\n</tool_call>",
                Value::String(name.clone()),
                Value::Object(input.clone())
            )),
            Block::ToolResult { content, .. } if chatml_json == Some(true) => parts.push(format!(
                "<tool_response>\n{}\n</tool_response>",
                content.as_str().unwrap()
            )),
            Block::ToolUse { name, input, .. } => calls.push(CallSpec {
                name: name.clone(),
                params: None,
                input: Some(input.clone()),
                complete: None,
            }),
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => results.push(ResultSpec {
                tool_use_id: Some(tool_use_id.clone()),
                is_error: *is_error,
                content: content.clone(),
            }),
            Block::Image { .. } => {}
        }
    }
    flush(&mut parts, &mut calls, &mut results);
    parts.join("\n")
}

fn parse_messages(doc: &transcript::PromptDocument) -> Vec<(String, String)> {
    doc.messages
        .iter()
        .map(|m| (m.speaker.clone(), m.content.clone()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// TR-105: the prefill prompt of anthropic-xml (tool mode xml), chatml and
    /// completions parses back to the conversation, with a final message of the
    /// assistant and the prefill as the open turn (TR-108); a refusal is one of the
    /// codes that protect exactly that.
    #[test]
    fn parse_of_prefill_gives_back_the_messages(
        messages in prop::collection::vec(request_message(), 0..6),
        formatter in prop::sample::select(vec![Formatter::AnthropicXml, Formatter::Chatml, Formatter::Completions]),
        simple in any::<bool>(),
        thinking in any::<bool>(),
        caching in any::<bool>(),
        with_tools in any::<bool>(),
        json_tools in any::<bool>(),
        system in prop::option::of(text()),
        prefix in prop::option::of(text()),
        eot in prop::sample::select(vec!["<|eot|>", "</s>", "aa"]),
        input_prefill in prop::option::of(text()),
    ) {
        let completions = formatter == Formatter::Completions;
        let mut messages = messages;
        if completions {
            // Completions refuses tools and thinking (TR-100): give it text only.
            for m in &mut messages {
                if let Content::Blocks(blocks) = &mut m.content {
                    blocks.retain(|b| matches!(b.block, Block::Text { .. }));
                }
            }
        }
        let tools = if with_tools && !completions { tools() } else { Vec::new() };
        let options = RequestOptions {
            formatter,
            participant_mode: if simple { ParticipantMode::Simple } else { ParticipantMode::Multiuser },
            assistant: "Claude".into(),
            thinking,
            prompt_caching: caching,
            context_prefix: prefix.clone(),
            tool_format: if json_tools { transcript::ToolFormat::Json } else { transcript::ToolFormat::Xml },
            eot: eot.to_string(),
            ..RequestOptions::default()
        };
        let input = RequestInput {
            system: system.clone().map(SystemPrompt::Text),
            messages: messages.clone(),
            tools: tools.clone(),
            prefill: input_prefill.clone().unwrap_or_default(),
            options: None,
        };
        let request = match transcript::build_request(&input, &options) {
            Ok(request) => request,
            Err(e) => {
                let code = serde_json::to_value(e.code).unwrap();
                let allowed = ["contains-header", "reads-as-header", "too-many-cache-marks"];
                prop_assert!(allowed.contains(&code.as_str().unwrap()), "refused with {}", e);
                return Ok(());
            }
        };
        let prefill = request.assistant_prefill.clone().expect("a prefill");
        let name = |speaker: &str| -> String {
            if simple && speaker != "Claude" { "Human".into() } else { speaker.into() }
        };
        // The labelled names of the conversation: its speakers and the assistant.
        let mut names: Vec<String> = messages.iter().map(|m| name(&m.speaker)).collect();
        names.push("Claude".into());
        names.sort();
        names.dedup();
        let prefix = prefix.filter(|p| !p.is_empty());
        let system = system.filter(|s| !s.is_empty());
        // A final message of the assistant is the open turn, continued by the
        // prefill (TR-108).
        let mut messages = messages;
        let open_turn = messages.last().filter(|m| m.speaker == "Claude").cloned();
        if open_turn.is_some() {
            messages.pop();
        }
        // `thinking` opens the open turn unless it begins with its own thinking
        // block, written with its own opener (TR-108).
        let own_thinking = open_turn.as_ref().is_some_and(|m| match &m.content {
            Content::Blocks(blocks) => blocks.first().is_some_and(|b| matches!(b.block, Block::Thinking { .. })),
            _ => false,
        });
        let opens_thinking = thinking && !own_thinking;
        let partial = |chatml_json: Option<bool>| -> String {
            let text = open_turn.as_ref().map(|m| expected_text(&plain_blocks(m), chatml_json));
            format!("{}{}", text.unwrap_or_default(), input_prefill.clone().unwrap_or_default())
        };
        let (parse_options, expected_system, mut expected, open) = match formatter {
            Formatter::AnthropicXml => {
                let tools_text = (!tools.is_empty()).then(|| anthropic_xml::render_tools(&tools, &xml_options()));
                let head: Vec<String> = tools_text.into_iter().chain(prefix.clone()).collect();
                let expected: Vec<(String, String)> = messages.iter().map(|m| {
                    (name(&m.speaker), expected_text(&plain_blocks(m), None))
                }).collect();
                let open = format!("{}{}", if opens_thinking { "<thinking>" } else { "" }, partial(None));
                (
                    Options { format: Format::Participants, participants: names.clone(), ..Options::default() },
                    (!head.is_empty()).then(|| head.join("\n")),
                    expected,
                    ("Claude".to_string(), open.trim_end().to_string()),
                )
            }
            Formatter::Chatml => {
                let tools_text = (!tools.is_empty()).then(|| if json_tools {
                    let line = json!({"name": "get_weather", "description": "Weather now", "parameters": tools[0].input_schema}).to_string();
                    format!("<tools>\n{line}\n</tools>")
                } else {
                    anthropic_xml::render_tools(&tools, &xml_options())
                });
                let sys = match (system.clone(), tools_text) {
                    (None, None) => None,
                    (Some(s), None) => Some(s),
                    (None, Some(t)) => Some(t),
                    (Some(s), Some(t)) => Some(format!("{s}\n\n{t}")),
                };
                let mut expected: Vec<(String, String)> = prefix.iter().map(|p| ("assistant".to_string(), p.clone())).collect();
                expected.extend(messages.iter().map(|m| {
                    let text = expected_text(&plain_blocks(m), Some(json_tools));
                    if m.speaker == "Claude" {
                        ("assistant".to_string(), text)
                    } else if simple {
                        ("user".to_string(), text)
                    } else {
                        ("user".to_string(), format!("{}: {text}", m.speaker))
                    }
                }));
                (
                    Options { format: Format::Chatml, ..Options::default() },
                    sys,
                    expected,
                    ("assistant".to_string(), format!("{}{}", if opens_thinking { "<think>" } else { "" }, partial(Some(json_tools)))),
                )
            }
            _ => {
                let mut expected: Vec<(String, String)> = prefix.iter().map(|p| ("Claude".to_string(), p.clone())).collect();
                expected.extend(messages.iter().map(|m| {
                    (name(&m.speaker), expected_text(&plain_blocks(m), None))
                }));
                (
                    Options { format: Format::Completions, participants: names.clone(), eot: eot.to_string(), ..Options::default() },
                    system,
                    expected,
                    ("Claude".to_string(), partial(None).trim_end().to_string()),
                )
            }
        };
        let Document::Prompt(doc) = transcript::parse(&prefill, &parse_options).unwrap() else {
            unreachable!("parse mode gives a prompt document");
        };
        prop_assert_eq!(parse_messages(&doc), std::mem::take(&mut expected), "prefill {:?}", prefill);
        let got_open = doc.open.map(|o| (o.speaker, o.content));
        prop_assert_eq!(got_open, Some(open), "prefill {:?}", prefill);
        prop_assert_eq!(doc.system, expected_system, "prefill {:?}", prefill);
        // The request's last message is the prefill (TR-97, TR-99, TR-100).
        let last = request.messages.last().expect("a message");
        let text: String = last.content.iter().map(|b| match &b.block {
            Block::Text { text } => text.as_str(),
            _ => "",
        }).collect();
        prop_assert_eq!(text, prefill);
    }

    /// Plain text conversations build under every formatter, and every cache mark
    /// sits on a block: one per marked message, whether the formatter's (TR-102),
    /// the caller's (TR-107) or both on one block, except that native sends
    /// nothing for an empty open turn (TR-108).
    #[test]
    fn plain_requests_always_build(
        messages in prop::collection::vec(
            (prop::sample::select(SPEAKERS.to_vec()), "[a-z .,!?é]{0,12}", any::<bool>(), any::<bool>()), 0..6),
        formatter in prop::sample::select(vec![
            Formatter::AnthropicXml, Formatter::Native, Formatter::Chatml, Formatter::Completions,
        ]),
        caching in any::<bool>(),
    ) {
        let marked_message = |m: &(&str, String, bool, bool)| (caching && m.2) || m.3;
        let mut marked = messages.iter().filter(|m| marked_message(m)).count();
        if let Some(last) = messages.last() {
            if formatter == Formatter::Native && last.0 == "Claude" && last.1.is_empty() && marked_message(last) {
                marked -= 1;
            }
        }
        let input = RequestInput {
            messages: messages
                .into_iter()
                .map(|(s, c, cache_marker, own)| RequestMessage {
                    speaker: s.to_string(),
                    content: Content::Blocks(vec![ProviderBlock {
                        block: Block::Text { text: c },
                        cache_control: own.then(CacheControl::ephemeral),
                    }]),
                    cache_marker,
                })
                .collect(),
            ..RequestInput::default()
        };
        let options = RequestOptions {
            formatter,
            assistant: "Claude".into(),
            prompt_caching: caching,
            ..RequestOptions::default()
        };
        let built = transcript::build_request(&input, &options);
        let carries = matches!(formatter, Formatter::AnthropicXml | Formatter::Native);
        if carries && marked > 4 {
            prop_assert!(built.is_err());
            return Ok(());
        }
        let request = built.unwrap();
        let marks = request
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter(|b| b.cache_control.is_some())
            .count();
        prop_assert_eq!(marks, if carries { marked } else { 0 });
    }
}

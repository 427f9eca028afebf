//! Request mode: a normalized conversation (content blocks, tools, cache markers)
//! to the request a provider is sent, by one of four formatters
//! (spec/transcript.md §10, TR-90 to TR-106).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::options::valid_name;
use super::render::{RenderCode, RenderError};
use crate::anthropic_xml::{self, CallSpec, ResultSpec, ToolDefinition};
use crate::reentry::Machine;
use crate::session::Fold;
use crate::span::Span;

/// The most cache marks a provider accepts in one request (TR-103).
pub const MAX_CACHE_MARKS: usize = 4;

/// A content block of a normalized message (TR-91); a provider message's blocks
/// are the same, see [`ProviderBlock`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Block {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image; its source is passed through.
    Image {
        /// The provider's image source (for example `{"type": "base64", ...}`).
        source: Value,
    },
    /// A tool call.
    ToolUse {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The call's input.
        input: Map<String, Value>,
    },
    /// The result of a tool call.
    ToolResult {
        /// The id of the call it answers.
        tool_use_id: String,
        /// The result: a string or any JSON.
        content: Value,
        /// Whether the call failed.
        #[serde(default, skip_serializing_if = "is_false")]
        is_error: bool,
    },
    /// Thinking.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The provider's signature, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
}

/// The JSON shape of a provider block: a [`Block`]'s keys and an optional
/// `cache_control` (for the document's JSON Schema).
#[derive(Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(dead_code)]
enum BlockShape {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// The cache mark.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// An image; its source is passed through.
    Image {
        /// The provider's image source.
        source: Value,
        /// The cache mark.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// A tool call.
    ToolUse {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The call's input.
        input: Map<String, Value>,
        /// The cache mark.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// The result of a tool call.
    ToolResult {
        /// The id of the call it answers.
        tool_use_id: String,
        /// The result: a string or any JSON.
        content: Value,
        /// Whether the call failed (only when true).
        #[serde(skip_serializing_if = "is_false")]
        is_error: bool,
        /// The cache mark.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// Thinking.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The provider's signature, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// The cache mark.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

fn is_false(b: &bool) -> bool {
    !b
}

/// A message's content: a string (one text block) or blocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// One text block.
    Text(String),
    /// Blocks, in order.
    Blocks(Vec<Block>),
}

impl Content {
    /// The content as blocks.
    pub fn blocks(&self) -> Vec<Block> {
        match self {
            Content::Text(text) => vec![Block::Text { text: text.clone() }],
            Content::Blocks(blocks) => blocks.clone(),
        }
    }
}

/// One message of a normalized conversation (TR-90).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestMessage {
    /// Who speaks.
    pub speaker: String,
    /// What they say.
    pub content: Content,
    /// Whether the provider should cache the request up to this message (TR-102).
    #[serde(default)]
    pub cache_marker: bool,
}

/// The system prompt: a string or text blocks (TR-95).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SystemPrompt {
    /// One text.
    Text(String),
    /// Text blocks.
    Blocks(Vec<Block>),
}

/// The input of request mode (TR-90).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestInput {
    /// The system prompt, if any.
    #[serde(default)]
    pub system: Option<SystemPrompt>,
    /// The messages, oldest first.
    #[serde(default)]
    pub messages: Vec<RequestMessage>,
    /// The tools the model may call.
    #[serde(default)]
    pub tools: Vec<ToolDefinition>,
    /// Request options, overridden key by key by the session's.
    #[serde(default)]
    pub options: Option<Map<String, Value>>,
}

/// Which formatter builds the request (TR-97 to TR-100).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Formatter {
    /// A prefill of `Name: text` lines, tools as anthropic-xml or native.
    #[default]
    AnthropicXml,
    /// The conversation as provider messages, no prefill.
    Native,
    /// One ChatML-style prompt with configurable tokens.
    Chatml,
    /// One base-model prompt of `Name: text<eot>` blocks.
    Completions,
}

/// How speakers are written (TR-93).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ParticipantMode {
    /// Every speaker but the assistant is written as the human.
    Simple,
    /// Every speaker under their own name.
    #[default]
    Multiuser,
}

/// Where anthropic-xml puts tools (TR-97).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolMode {
    /// Definitions, calls and results as anthropic-xml in the prompt.
    #[default]
    Xml,
    /// Definitions, calls and results as the provider's native blocks.
    Native,
}

/// How chatml writes tools (TR-96, TR-99).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolFormat {
    /// `<tool_call>` JSON, `<tool_response>`, `<tools>` JSON lines.
    #[default]
    Json,
    /// anthropic-xml blocks.
    Xml,
}

/// What happens to media a formatter cannot carry (TR-104).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MediaPolicy {
    /// Refuse the request.
    #[default]
    Error,
    /// Leave the media out.
    Strip,
}

/// Request options (TR-92). Every key is optional.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RequestOptions {
    /// The formatter.
    pub formatter: Formatter,
    /// Simple (human and assistant) or multiuser (every name).
    pub participant_mode: ParticipantMode,
    /// The assistant's name: the speaker of the open turn.
    pub assistant: String,
    /// The human's name in simple mode.
    pub human: String,
    /// Open the assistant's turn with thinking (anthropic-xml, chatml).
    pub thinking: bool,
    /// Put cache marks on the request (anthropic-xml, native).
    pub prompt_caching: bool,
    /// Text the assistant said before the conversation.
    pub context_prefix: Option<String>,
    /// Stop sequences added after the formatter's own.
    pub additional_stop_sequences: Vec<String>,
    /// How many participants get stop sequences.
    pub max_stop_participants: usize,
    /// The user message that opens a request whose first message is not a user's.
    pub start_message: String,
    /// Media the formatter cannot carry: refuse or leave out.
    pub unsupported_media: MediaPolicy,
    /// Warn about each stripped media block.
    pub warn_on_strip: bool,
    /// anthropic-xml: tools in the prompt (xml) or native.
    pub tool_mode: ToolMode,
    /// anthropic-xml: the speaker label, with `{name}`.
    pub participant_format: String,
    /// native, completions: the speaker label, with `{name}`.
    pub name_format: String,
    /// chatml: what opens a user message.
    pub user_token: String,
    /// chatml: what opens an assistant message.
    pub assistant_token: String,
    /// chatml: what opens the system message.
    pub system_token: String,
    /// chatml: what ends a message.
    pub end_token: String,
    /// chatml: tool calls and results as JSON or anthropic-xml.
    pub tool_format: ToolFormat,
    /// completions: the end-of-turn token (may be empty).
    pub eot: String,
    /// completions: what joins the blocks of the prompt.
    pub message_separator: String,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            formatter: Formatter::default(),
            participant_mode: ParticipantMode::default(),
            assistant: "Assistant".into(),
            human: "Human".into(),
            thinking: false,
            prompt_caching: false,
            context_prefix: None,
            additional_stop_sequences: Vec::new(),
            max_stop_participants: super::DEFAULT_MAX_STOP_PARTICIPANTS,
            start_message: "[Start]".into(),
            unsupported_media: MediaPolicy::default(),
            warn_on_strip: true,
            tool_mode: ToolMode::default(),
            participant_format: "{name}:".into(),
            name_format: "{name}: ".into(),
            user_token: "<|im_start|>user\n".into(),
            assistant_token: "<|im_start|>assistant\n".into(),
            system_token: "<|im_start|>system\n".into(),
            end_token: "<|im_end|>".into(),
            tool_format: ToolFormat::default(),
            eot: super::DEFAULT_EOT.into(),
            message_separator: "\n\n".into(),
        }
    }
}

fn name_template_ok(format: &str) -> bool {
    format.matches("{name}").count() == 1 && !format.contains('\n')
}

impl RequestOptions {
    /// Checks the options (TR-92).
    pub fn check(&self) -> bool {
        valid_name(&self.assistant)
            && valid_name(&self.human)
            && name_template_ok(&self.participant_format)
            && name_template_ok(&self.name_format)
            && [
                &self.start_message,
                &self.user_token,
                &self.assistant_token,
                &self.system_token,
                &self.end_token,
            ]
            .iter()
            .all(|s| !s.is_empty())
            && self.additional_stop_sequences.iter().all(|s| !s.is_empty())
    }

    /// The name a speaker is written under (TR-93).
    fn name_of<'a>(&'a self, speaker: &'a str) -> &'a str {
        match self.participant_mode {
            ParticipantMode::Simple if speaker != self.assistant => &self.human,
            _ => speaker,
        }
    }

    /// The label of a name (TR-93).
    fn label(&self, name: &str) -> String {
        let format = match self.formatter {
            Formatter::AnthropicXml => &self.participant_format,
            _ => &self.name_format,
        };
        format.replacen("{name}", name, 1)
    }

    fn is_assistant(&self, speaker: &str) -> bool {
        speaker == self.assistant
    }
}

/// The role of a provider message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user side.
    User,
    /// The assistant side.
    Assistant,
}

/// The provider's cache mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CacheControl {
    /// Always `ephemeral`.
    #[serde(rename = "type")]
    pub kind: CacheKind,
}

/// The kind of a cache mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    /// The provider's short-lived cache.
    Ephemeral,
}

const MARK: CacheControl = CacheControl {
    kind: CacheKind::Ephemeral,
};

/// A block of a provider message: a [`Block`], maybe with a cache mark.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProviderBlock {
    /// The block.
    #[serde(flatten)]
    pub block: Block,
    /// The cache mark, on the block that ends a cached prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl JsonSchema for ProviderBlock {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProviderBlock".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        BlockShape::json_schema(generator)
    }
}

impl ProviderBlock {
    fn text(text: impl Into<String>) -> Self {
        ProviderBlock {
            block: Block::Text { text: text.into() },
            cache_control: None,
        }
    }
    fn of(block: Block) -> Self {
        ProviderBlock {
            block,
            cache_control: None,
        }
    }
}

/// A message of the provider request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProviderMessage {
    /// `user` or `assistant`.
    pub role: Role,
    /// Its blocks.
    pub content: Vec<ProviderBlock>,
}

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum WarningCode {
    /// A media block was left out (TR-104).
    StrippedMedia,
}

/// Something left out of the request on purpose.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Warning {
    /// What.
    pub code: WarningCode,
    /// Where: `messages[i].content[j]`.
    #[serde(rename = "where")]
    pub location: String,
}

/// A provider request (TR-94).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Request {
    /// The provider's system field.
    pub system: Option<Vec<ProviderBlock>>,
    /// The messages.
    pub messages: Vec<ProviderMessage>,
    /// The text of the last (assistant) message, when the formatter prefills.
    pub assistant_prefill: Option<String>,
    /// The stop sequences.
    pub stop_sequences: Vec<String>,
    /// Tool definitions passed natively.
    pub tools: Option<Vec<ToolDefinition>>,
    /// What was left out on purpose.
    pub warnings: Vec<Warning>,
}

fn refuse(code: RenderCode, location: impl Into<String>) -> RenderError {
    RenderError::new(code, location)
}

/// Merges the input's options under the session's (TR-90).
fn merged_options(input: &RequestInput, session: &Value) -> Result<RequestOptions, RenderError> {
    let mut merged = input.options.clone().unwrap_or_default();
    if let Value::Object(overrides) = session {
        for (key, value) in overrides {
            merged.insert(key.clone(), value.clone());
        }
    }
    let options: RequestOptions = serde_json::from_value(Value::Object(merged))
        .map_err(|_| refuse(RenderCode::InvalidOptions, "options"))?;
    Ok(options)
}

/// Builds the request for the input given as JSON; `session` (a JSON object, or
/// null) overrides the input's own options key by key.
pub fn build_request_value(input: &Value, session: &Value) -> Result<Request, RenderError> {
    let parsed: RequestInput = serde_json::from_value(input.clone())
        .map_err(|_| refuse(RenderCode::InvalidInput, "input"))?;
    system_texts(&parsed.system)?;
    let options = merged_options(&parsed, session)?;
    build_request(&parsed, &options)
}

/// Builds the request for the input given as JSON text.
pub fn build_request_text(input: &str, session: &Value) -> Result<Request, RenderError> {
    let value: Value =
        serde_json::from_str(input).map_err(|_| refuse(RenderCode::InvalidInput, "input"))?;
    build_request_value(&value, session)
}

/// The system texts (TR-95); `Err` when an array holds a block that is not text.
fn system_texts(system: &Option<SystemPrompt>) -> Result<Vec<String>, RenderError> {
    Ok(match system {
        None => Vec::new(),
        Some(SystemPrompt::Text(text)) if text.is_empty() => Vec::new(),
        Some(SystemPrompt::Text(text)) => vec![text.clone()],
        Some(SystemPrompt::Blocks(blocks)) => blocks
            .iter()
            .map(|b| match b {
                Block::Text { text } => Ok(text.clone()),
                _ => Err(refuse(RenderCode::InvalidInput, "input")),
            })
            .collect::<Result<_, _>>()?,
    })
}

/// A message after the block checks: its blocks, without stripped media.
struct Prepared {
    speaker: String,
    blocks: Vec<Block>,
    cache_marker: bool,
}

fn xml_options() -> anthropic_xml::Options {
    anthropic_xml::Options {
        render_prefix: false,
        ..anthropic_xml::Options::default()
    }
}

/// The text of a tool-definitions block for the prompt (TR-97, TR-99).
fn tools_text(tools: &[ToolDefinition], json: bool) -> String {
    if !json {
        return anthropic_xml::render_tools(tools, &xml_options());
    }
    let mut lines = vec!["<tools>".to_string()];
    for tool in tools {
        let mut line = format!("{{\"name\":{}", json_string(&tool.name));
        if let Some(d) = &tool.description {
            line.push_str(&format!(",\"description\":{}", json_string(d)));
        }
        if let Some(p) = &tool.input_schema {
            line.push_str(&format!(",\"parameters\":{p}"));
        }
        line.push('}');
        lines.push(line);
    }
    lines.push("</tools>".to_string());
    lines.join("\n")
}

fn json_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// How a formatter writes blocks as text (TR-96).
#[derive(Clone, Copy, PartialEq, Eq)]
enum TextStyle {
    /// `<thinking>`, anthropic-xml tools; `native_tools`: leave tool blocks out.
    Anthropic { native_tools: bool },
    /// `<think>`, tools as JSON or anthropic-xml.
    Chatml { json: bool },
    /// Text only (the others are refused before).
    Completions,
}

/// The text of a message's blocks (TR-96); images are never text. `Err` when a
/// run of tool calls would not parse back as anthropic-xml.
fn message_text(blocks: &[Block], style: TextStyle) -> Result<String, ()> {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < blocks.len() {
        match &blocks[i] {
            Block::Text { text } => parts.push(text.clone()),
            Block::Thinking { thinking, .. } => parts.push(match style {
                TextStyle::Chatml { .. } => format!("<think>{thinking}</think>"),
                _ => format!("<thinking>{thinking}</thinking>"),
            }),
            Block::Image { .. } => {}
            Block::ToolUse { .. } | Block::ToolResult { .. } => {
                let xml = match style {
                    TextStyle::Anthropic { native_tools: true } | TextStyle::Completions => {
                        i += 1;
                        continue;
                    }
                    TextStyle::Anthropic {
                        native_tools: false,
                    }
                    | TextStyle::Chatml { json: false } => true,
                    TextStyle::Chatml { json: true } => false,
                };
                let is_call = matches!(blocks[i], Block::ToolUse { .. });
                let start = i;
                while i < blocks.len()
                    && match blocks[i] {
                        Block::ToolUse { .. } => is_call,
                        Block::ToolResult { .. } => !is_call,
                        _ => false,
                    }
                {
                    i += 1;
                }
                let run = &blocks[start..i];
                if xml {
                    parts.push(xml_run(run, is_call)?);
                } else {
                    parts.extend(run.iter().map(json_block));
                }
                continue;
            }
        }
        i += 1;
    }
    Ok(parts.join("\n"))
}

/// A run of tool calls or results as one anthropic-xml block.
fn xml_run(run: &[Block], calls: bool) -> Result<String, ()> {
    let options = xml_options();
    if calls {
        let specs: Vec<CallSpec> = run
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { name, input, .. } => Some(CallSpec {
                    name: name.clone(),
                    params: None,
                    input: Some(input.clone()),
                    complete: None,
                }),
                _ => None,
            })
            .collect();
        anthropic_xml::render_calls(&specs, &options).map_err(|_| ())
    } else {
        let specs: Vec<ResultSpec> = run
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => Some(ResultSpec {
                    tool_use_id: Some(tool_use_id.clone()),
                    is_error: *is_error,
                    content: content.clone(),
                }),
                _ => None,
            })
            .collect();
        Ok(anthropic_xml::render_results(&specs, &options))
    }
}

/// A tool call or result in chatml's JSON tool format (TR-96).
fn json_block(block: &Block) -> String {
    match block {
        Block::ToolUse { name, input, .. } => format!(
            "<tool_call>\n{{\"name\":{},\"arguments\":{}}}\n</tool_call>",
            json_string(name),
            Value::Object(input.clone())
        ),
        Block::ToolResult { content, .. } => {
            format!("<tool_response>\n{}\n</tool_response>", compact(content))
        }
        _ => String::new(),
    }
}

/// Whether parse, reading `text` followed by `next`, would find one of `headers`
/// starting inside `text`.
fn cuts(text: &str, next: &str, headers: &[String]) -> bool {
    let joined = format!("{text}{next}");
    headers
        .iter()
        .filter(|h| !h.is_empty())
        .any(|h| joined.find(h.as_str()).is_some_and(|at| at < text.len()))
}

/// A special token's stem: up to its first `|>`, else the token trimmed (TR-106).
fn stem(token: &str) -> String {
    match token.find("|>") {
        Some(at) => token[..at + 2].to_string(),
        None => token.trim().to_string(),
    }
}

/// Builds the request (TR-94 to TR-106).
///
/// ```
/// use idiolect::transcript::{build_request, RequestInput, RequestOptions};
/// let input: RequestInput = serde_json::from_str(
///     r#"{"messages": [{"speaker": "Alice", "content": "Hi", "cache_marker": true}]}"#,
/// ).unwrap();
/// let options = RequestOptions {
///     assistant: "Claude".into(),
///     prompt_caching: true,
///     ..RequestOptions::default()
/// };
/// let request = build_request(&input, &options).unwrap();
/// assert_eq!(request.assistant_prefill.as_deref(), Some("Alice: Hi\nClaude:"));
/// assert_eq!(request.stop_sequences, ["\nAlice:"]);
/// // The marked message ends the first text block, which carries the cache mark.
/// assert!(request.messages[1].content[0].cache_control.is_some());
/// ```
pub fn build_request(
    input: &RequestInput,
    options: &RequestOptions,
) -> Result<Request, RenderError> {
    let system = system_texts(&input.system)?;
    if !options.check() {
        return Err(refuse(RenderCode::InvalidOptions, "options"));
    }
    for (i, m) in input.messages.iter().enumerate() {
        if !valid_name(&m.speaker) {
            return Err(refuse(
                RenderCode::BadSpeaker,
                format!("messages[{i}].speaker"),
            ));
        }
    }
    let formatter = options.formatter;
    if formatter == Formatter::Completions && !input.tools.is_empty() {
        return Err(refuse(RenderCode::UnsupportedTools, "tools"));
    }
    let carries_media = matches!(formatter, Formatter::AnthropicXml | Formatter::Native);
    let native_tools =
        formatter == Formatter::AnthropicXml && options.tool_mode == ToolMode::Native;
    let mut warnings = Vec::new();
    let mut prepared = Vec::with_capacity(input.messages.len());
    for (i, m) in input.messages.iter().enumerate() {
        let mut blocks = Vec::new();
        for (j, block) in m.content.blocks().into_iter().enumerate() {
            let at = || format!("messages[{i}].content[{j}]");
            let tool_or_thinking = matches!(
                block,
                Block::ToolUse { .. } | Block::ToolResult { .. } | Block::Thinking { .. }
            );
            if formatter == Formatter::Completions && tool_or_thinking {
                return Err(refuse(RenderCode::UnsupportedBlock, at()));
            }
            if matches!(block, Block::Image { .. }) && !carries_media {
                match options.unsupported_media {
                    MediaPolicy::Error => return Err(refuse(RenderCode::UnsupportedMedia, at())),
                    MediaPolicy::Strip => {
                        if options.warn_on_strip {
                            warnings.push(Warning {
                                code: WarningCode::StrippedMedia,
                                location: at(),
                            });
                        }
                        continue;
                    }
                }
            }
            blocks.push(block);
        }
        if native_tools
            && blocks.iter().any(|b| matches!(b, Block::ToolUse { .. }))
            && blocks
                .iter()
                .any(|b| matches!(b, Block::Image { .. } | Block::ToolResult { .. }))
        {
            return Err(refuse(
                RenderCode::MixedBlocks,
                format!("messages[{i}].content"),
            ));
        }
        prepared.push(Prepared {
            speaker: m.speaker.clone(),
            blocks,
            cache_marker: m.cache_marker,
        });
    }

    let mut built = match formatter {
        Formatter::AnthropicXml => anthropic(input, options, &system, &prepared)?,
        Formatter::Native => native(input, options, &system, &prepared)?,
        Formatter::Chatml => chatml(input, options, &system, &prepared)?,
        Formatter::Completions => completions(options, &system, &prepared)?,
    };
    built.stop_sequences = stop_sequences(options, &prepared, !input.tools.is_empty());
    built.warnings = warnings;
    Ok(built)
}

/// The stop sequences (TR-101).
fn stop_sequences(options: &RequestOptions, messages: &[Prepared], has_tools: bool) -> Vec<String> {
    let mut others: Vec<&str> = Vec::new();
    for m in messages.iter().rev() {
        let name = options.name_of(&m.speaker);
        if !options.is_assistant(name) && !others.contains(&name) {
            others.push(name);
        }
    }
    others.truncate(options.max_stop_participants);
    let label = |name: &str| options.label(name).trim_end().to_string();
    let mut stops: Vec<String> = match options.formatter {
        Formatter::AnthropicXml => {
            let mut stops: Vec<String> = others.iter().map(|n| format!("\n{}", label(n))).collect();
            if options.tool_mode == ToolMode::Xml && has_tools {
                stops.push("</function_calls>".into());
            }
            stops
        }
        Formatter::Native => Vec::new(),
        Formatter::Chatml => vec![options.end_token.clone()],
        Formatter::Completions => {
            let mut stops: Vec<String> = others
                .iter()
                .flat_map(|n| [format!("\n\n{}", label(n)), format!("\n{}", label(n))])
                .collect();
            if !options.eot.is_empty() {
                stops.push(options.eot.clone());
            }
            stops
        }
    };
    for extra in &options.additional_stop_sequences {
        if !stops.contains(extra) {
            stops.push(extra.clone());
        }
    }
    stops
}

/// Counts cache marks in order and refuses the fifth (TR-103).
struct MarkBudget {
    used: usize,
}

impl MarkBudget {
    fn take(
        &mut self,
        location: impl FnOnce() -> String,
    ) -> Result<Option<CacheControl>, RenderError> {
        self.used += 1;
        if self.used > MAX_CACHE_MARKS {
            return Err(refuse(RenderCode::TooManyCacheMarks, location()));
        }
        Ok(Some(MARK))
    }
}

fn context_prefix(options: &RequestOptions) -> Option<&str> {
    options.context_prefix.as_deref().filter(|p| !p.is_empty())
}

/// The system field of anthropic-xml and native, with its mark (TR-95, TR-102).
fn system_field(
    system: &[String],
    options: &RequestOptions,
    budget: &mut MarkBudget,
) -> Result<Option<Vec<ProviderBlock>>, RenderError> {
    if system.is_empty() {
        return Ok(None);
    }
    let mut blocks: Vec<ProviderBlock> = system.iter().map(ProviderBlock::text).collect();
    if options.prompt_caching {
        if let Some(last) = blocks.last_mut() {
            last.cache_control = budget.take(|| "system".into())?;
        }
    }
    Ok(Some(blocks))
}

/// The assistant message anthropic-xml is writing (TR-97, TR-102).
#[derive(Default)]
struct Draft {
    blocks: Vec<ProviderBlock>,
    text: String,
    lines: usize,
}

impl Draft {
    fn line(&mut self, line: &str, mark: Option<CacheControl>) {
        if self.lines > 0 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.lines += 1;
        if mark.is_some() {
            self.cut(mark);
        }
    }

    fn cut(&mut self, mark: Option<CacheControl>) {
        if !self.text.is_empty() || mark.is_some() {
            let mut block = ProviderBlock::text(std::mem::take(&mut self.text));
            block.cache_control = mark;
            self.blocks.push(block);
        }
    }

    /// Ends the message; pushes it if it holds anything.
    fn end(&mut self, messages: &mut Vec<ProviderMessage>) {
        self.cut(None);
        let blocks = std::mem::take(&mut self.blocks);
        self.lines = 0;
        if !blocks.is_empty() {
            messages.push(ProviderMessage {
                role: Role::Assistant,
                content: blocks,
            });
        }
    }
}

fn with_start(messages: &mut Vec<ProviderMessage>, options: &RequestOptions) {
    if messages.first().is_none_or(|m| m.role != Role::User) {
        messages.insert(
            0,
            ProviderMessage {
                role: Role::User,
                content: vec![ProviderBlock::text(options.start_message.clone())],
            },
        );
    }
}

fn line_of(label: &str, text: &str) -> String {
    if text.is_empty() {
        label.to_string()
    } else {
        format!("{label} {text}")
    }
}

/// anthropic-xml (TR-97).
fn anthropic(
    input: &RequestInput,
    options: &RequestOptions,
    system: &[String],
    messages: &[Prepared],
) -> Result<Request, RenderError> {
    let native_tools = options.tool_mode == ToolMode::Native;
    let style = TextStyle::Anthropic { native_tools };
    let mut texts = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let text = message_text(&m.blocks, style)
            .map_err(|_| refuse(RenderCode::BadCall, format!("messages[{i}].content")))?;
        texts.push(text);
    }
    let tools = (!native_tools && !input.tools.is_empty()).then(|| tools_text(&input.tools, false));
    let prefix = context_prefix(options);

    // contains-header, then reads-as-header (TR-106).
    let mut headers: Vec<String> = messages
        .iter()
        .map(|m| options.name_of(&m.speaker))
        .chain([options.assistant.as_str()])
        .map(|n| options.label(n).trim_end().to_string())
        .collect();
    headers.sort();
    headers.dedup();
    let line_headers: Vec<String> = headers.iter().map(|h| format!("\n{h}")).collect();
    if tools
        .as_deref()
        .is_some_and(|t| cuts(t, "\n", &line_headers))
    {
        return Err(refuse(RenderCode::ContainsHeader, "tools"));
    }
    if prefix.is_some_and(|p| cuts(p, "\n", &line_headers)) {
        return Err(refuse(RenderCode::ContainsHeader, "context_prefix"));
    }
    for (i, text) in texts.iter().enumerate() {
        if cuts(text, "\n", &line_headers) {
            return Err(refuse(
                RenderCode::ContainsHeader,
                format!("messages[{i}].content"),
            ));
        }
    }
    // Both stand at the start of a line: the prompt's, or the one after the tools.
    let reads = |t: &str| {
        headers
            .iter()
            .any(|h| !h.is_empty() && t.starts_with(h.as_str()))
    };
    for (text, location) in [(tools.as_deref(), "tools"), (prefix, "context_prefix")] {
        if text.is_some_and(reads) {
            return Err(refuse(RenderCode::ReadsAsHeader, location));
        }
    }

    let mut budget = MarkBudget { used: 0 };
    let system = system_field(system, options, &mut budget)?;
    let mut out: Vec<ProviderMessage> = Vec::new();
    let mut draft = Draft::default();
    if let Some(tools) = &tools {
        draft.line(tools, None);
    }
    if let Some(prefix) = prefix {
        let mark = if options.prompt_caching {
            budget.take(|| "context_prefix".into())?
        } else {
            None
        };
        draft.line(prefix, mark);
    }
    for (i, (m, text)) in messages.iter().zip(&texts).enumerate() {
        let mut mark = || -> Result<Option<CacheControl>, RenderError> {
            if options.prompt_caching && m.cache_marker {
                budget.take(|| format!("messages[{i}].cache_marker"))
            } else {
                Ok(None)
            }
        };
        let label = options.label(options.name_of(&m.speaker));
        let label = label.trim_end();
        let line = line_of(label, text);
        let user_side: Vec<&Block> = m
            .blocks
            .iter()
            .filter(|b| {
                matches!(b, Block::Image { .. })
                    || (native_tools && matches!(b, Block::ToolResult { .. }))
            })
            .collect();
        if user_side.is_empty() {
            let calls: Vec<&Block> = m
                .blocks
                .iter()
                .filter(|b| native_tools && matches!(b, Block::ToolUse { .. }))
                .collect();
            if calls.is_empty() {
                draft.line(&line, mark()?);
            } else {
                draft.line(&line, None);
                draft.cut(None);
                draft
                    .blocks
                    .extend(calls.into_iter().map(|b| ProviderBlock::of(b.clone())));
                if let Some(last) = draft.blocks.last_mut() {
                    last.cache_control = mark()?;
                }
                draft.end(&mut out);
            }
        } else {
            draft.end(&mut out);
            let mut content: Vec<ProviderBlock> = user_side
                .iter()
                .filter(|b| matches!(b, Block::ToolResult { .. }))
                .map(|b| ProviderBlock::of((*b).clone()))
                .collect();
            let only_results = m
                .blocks
                .iter()
                .all(|b| matches!(b, Block::ToolResult { .. }));
            if !only_results {
                content.push(ProviderBlock::text(line));
            }
            content.extend(
                user_side
                    .iter()
                    .filter(|b| matches!(b, Block::Image { .. }))
                    .map(|b| ProviderBlock::of((*b).clone())),
            );
            if let Some(last) = content.last_mut() {
                last.cache_control = mark()?;
            }
            out.push(ProviderMessage {
                role: Role::User,
                content,
            });
        }
    }
    let mut open = options.label(&options.assistant).trim_end().to_string();
    if options.thinking {
        open.push_str(" <thinking>");
    }
    draft.line(&open, None);
    draft.end(&mut out);
    let prefill = out.last().map(|m| {
        m.content
            .iter()
            .map(|b| match &b.block {
                Block::Text { text } => text.as_str(),
                _ => "",
            })
            .collect::<String>()
    });
    with_start(&mut out, options);
    Ok(Request {
        system,
        messages: out,
        assistant_prefill: prefill,
        stop_sequences: Vec::new(),
        tools: (native_tools && !input.tools.is_empty()).then(|| input.tools.clone()),
        warnings: Vec::new(),
    })
}

/// native (TR-98).
fn native(
    input: &RequestInput,
    options: &RequestOptions,
    system: &[String],
    messages: &[Prepared],
) -> Result<Request, RenderError> {
    let mut budget = MarkBudget { used: 0 };
    let system = system_field(system, options, &mut budget)?;
    let mut out: Vec<ProviderMessage> = Vec::new();
    let mut push = |role: Role, content: Vec<ProviderBlock>| match out.last_mut() {
        Some(last) if last.role == role => last.content.extend(content),
        _ => out.push(ProviderMessage { role, content }),
    };
    if let Some(prefix) = context_prefix(options) {
        let mut block = ProviderBlock::text(prefix);
        if options.prompt_caching {
            block.cache_control = budget.take(|| "context_prefix".into())?;
        }
        push(Role::Assistant, vec![block]);
    }
    for (i, m) in messages.iter().enumerate() {
        let assistant = options.is_assistant(&m.speaker);
        let role = if assistant {
            Role::Assistant
        } else {
            Role::User
        };
        let mut named = assistant || options.participant_mode == ParticipantMode::Simple;
        let mut content: Vec<ProviderBlock> = Vec::with_capacity(m.blocks.len());
        for block in &m.blocks {
            let block = match block {
                Block::Text { text } if !named => {
                    named = true;
                    Block::Text {
                        text: format!("{}{text}", options.label(&m.speaker)),
                    }
                }
                other => other.clone(),
            };
            content.push(ProviderBlock::of(block));
        }
        if options.prompt_caching && m.cache_marker {
            if let Some(last) = content.last_mut() {
                last.cache_control = budget.take(|| format!("messages[{i}].cache_marker"))?;
            }
        }
        push(role, content);
    }
    with_start(&mut out, options);
    Ok(Request {
        system,
        messages: out,
        assistant_prefill: None,
        stop_sequences: Vec::new(),
        tools: (!input.tools.is_empty()).then(|| input.tools.clone()),
        warnings: Vec::new(),
    })
}

fn prompt_request(prompt: String) -> Request {
    Request {
        system: None,
        messages: vec![ProviderMessage {
            role: Role::Assistant,
            content: vec![ProviderBlock::text(prompt.clone())],
        }],
        assistant_prefill: Some(prompt),
        stop_sequences: Vec::new(),
        tools: None,
        warnings: Vec::new(),
    }
}

/// chatml (TR-99).
fn chatml(
    input: &RequestInput,
    options: &RequestOptions,
    system: &[String],
    messages: &[Prepared],
) -> Result<Request, RenderError> {
    let json = options.tool_format == ToolFormat::Json;
    let style = TextStyle::Chatml { json };
    let mut texts = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let text = message_text(&m.blocks, style)
            .map_err(|_| refuse(RenderCode::BadCall, format!("messages[{i}].content")))?;
        let prefixed = options.participant_mode == ParticipantMode::Multiuser
            && !options.is_assistant(&m.speaker);
        texts.push(if prefixed {
            format!("{}: {text}", m.speaker)
        } else {
            text
        });
    }
    let system = system.join("\n");
    let tools = (!input.tools.is_empty()).then(|| tools_text(&input.tools, json));
    let prefix = context_prefix(options);
    let end = &options.end_token;
    let stems: Vec<String> = [
        &options.user_token,
        &options.assistant_token,
        &options.system_token,
        end,
    ]
    .iter()
    .map(|t| stem(t))
    .collect();
    let system_next = if tools.is_some() {
        "\n\n"
    } else {
        end.as_str()
    };
    if !system.is_empty() && cuts(&system, system_next, &stems) {
        return Err(refuse(RenderCode::ContainsHeader, "system"));
    }
    if tools.as_deref().is_some_and(|t| cuts(t, end, &stems)) {
        return Err(refuse(RenderCode::ContainsHeader, "tools"));
    }
    if prefix.is_some_and(|p| cuts(p, end, &stems)) {
        return Err(refuse(RenderCode::ContainsHeader, "context_prefix"));
    }
    for (i, text) in texts.iter().enumerate() {
        if cuts(text, end, &stems) {
            return Err(refuse(
                RenderCode::ContainsHeader,
                format!("messages[{i}].content"),
            ));
        }
    }

    let mut prompt = String::new();
    let system_message = match (system.is_empty(), &tools) {
        (true, None) => None,
        (false, None) => Some(system),
        (true, Some(t)) => Some(t.clone()),
        (false, Some(t)) => Some(format!("{system}\n\n{t}")),
    };
    if let Some(text) = system_message {
        prompt.push_str(&format!("{}{text}{end}\n", options.system_token));
    }
    if let Some(prefix) = prefix {
        prompt.push_str(&format!("{}{prefix}{end}\n", options.assistant_token));
    }
    for (m, text) in messages.iter().zip(&texts) {
        let token = if options.is_assistant(&m.speaker) {
            &options.assistant_token
        } else {
            &options.user_token
        };
        prompt.push_str(&format!("{token}{text}{end}\n"));
    }
    prompt.push_str(&options.assistant_token);
    if options.thinking {
        prompt.push_str("<think>");
    }
    Ok(prompt_request(prompt))
}

/// completions (TR-100).
fn completions(
    options: &RequestOptions,
    system: &[String],
    messages: &[Prepared],
) -> Result<Request, RenderError> {
    let texts: Vec<String> = messages
        .iter()
        .map(|m| message_text(&m.blocks, TextStyle::Completions).unwrap_or_default())
        .collect();
    let system = system.join("\n");
    let prefix = context_prefix(options);
    let eot = &options.eot;
    let headers = vec![eot.clone()];
    if !system.is_empty() && cuts(&system, eot, &headers) {
        return Err(refuse(RenderCode::ContainsHeader, "system"));
    }
    if prefix.is_some_and(|p| cuts(p, eot, &headers)) {
        return Err(refuse(RenderCode::ContainsHeader, "context_prefix"));
    }
    for (i, text) in texts.iter().enumerate() {
        if cuts(text, eot, &headers) {
            return Err(refuse(
                RenderCode::ContainsHeader,
                format!("messages[{i}].content"),
            ));
        }
    }
    let label = |speaker: &str| options.label(options.name_of(speaker));
    if !system.is_empty() {
        let reads = messages
            .iter()
            .map(|m| label(&m.speaker))
            .chain([options.label(&options.assistant)])
            .any(|l| {
                let l = l.trim_end();
                !l.is_empty() && system.starts_with(l)
            });
        if reads {
            return Err(refuse(RenderCode::ReadsAsHeader, "system"));
        }
    }
    let mut blocks: Vec<String> = Vec::new();
    if !system.is_empty() {
        blocks.push(format!("{system}{eot}"));
    }
    let assistant = options.label(&options.assistant);
    if let Some(prefix) = prefix {
        blocks.push(format!("{assistant}{prefix}{eot}"));
    }
    for (m, text) in messages.iter().zip(&texts) {
        blocks.push(format!("{}{text}{eot}", label(&m.speaker)));
    }
    blocks.push(assistant.trim_end().to_string());
    Ok(prompt_request(blocks.join(&options.message_separator)))
}

/// The event of request mode: one, at end of input, spanning the whole input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RequestEvent {
    /// The request was built.
    Request {
        /// The request.
        #[serde(flatten)]
        request: Request,
        /// The whole input.
        span: Span,
    },
    /// The input could not be turned into a request.
    RequestError {
        /// What and where.
        error: RenderError,
        /// The whole input.
        span: Span,
    },
}

/// The document of request mode: the request, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestDocument {
    /// The request (TR-94).
    Built(Request),
    /// `{"error": {"code", "where"}}`.
    Refused {
        /// What and where.
        error: RenderError,
    },
    /// Before end of input: `{}`.
    Empty {},
}

/// Holds the whole input and builds the request at end of input.
#[derive(Clone, Debug)]
pub struct RequestMachine {
    options: Value,
}

impl RequestMachine {
    /// A machine whose session request options (a JSON object) override the input's.
    pub fn new(options: Value) -> Self {
        RequestMachine { options }
    }
}

impl Machine for RequestMachine {
    type Event = RequestEvent;

    fn advance(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<RequestEvent>,
    ) -> usize {
        if !eof {
            return 0;
        }
        let span = Span::new(base, base + pending.len());
        out.push(match build_request_text(pending, &self.options) {
            Ok(request) => RequestEvent::Request { request, span },
            Err(error) => RequestEvent::RequestError { error, span },
        });
        pending.len()
    }
}

/// Folds the [`RequestEvent`] into a [`RequestDocument`].
#[derive(Clone, Debug)]
pub struct RequestFolder {
    document: RequestDocument,
}

impl Default for RequestFolder {
    fn default() -> Self {
        RequestFolder {
            document: RequestDocument::Empty {},
        }
    }
}

impl Fold<RequestEvent> for RequestFolder {
    type Document = RequestDocument;

    fn push(&mut self, event: &RequestEvent) {
        self.document = match event {
            RequestEvent::Request { request, .. } => RequestDocument::Built(request.clone()),
            RequestEvent::RequestError { error, .. } => RequestDocument::Refused {
                error: error.clone(),
            },
        };
    }

    fn document(&self) -> &RequestDocument {
        &self.document
    }

    fn is_clean(&self) -> bool {
        !matches!(self.document, RequestDocument::Refused { .. })
    }

    fn marks_unclean(event: &RequestEvent) -> bool {
        matches!(event, RequestEvent::RequestError { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_cut_special_tokens_at_their_first_closer() {
        assert_eq!(stem("<|im_start|>user\n"), "<|im_start|>");
        assert_eq!(stem("<|end|>"), "<|end|>");
        assert_eq!(stem("</s>\n"), "</s>");
    }

    #[test]
    fn a_header_counts_only_when_it_starts_inside_the_text() {
        let headers = vec!["\nBob:".to_string()];
        assert!(!cuts("Hi", "\nBob:", &headers));
        assert!(cuts("Hi\nBob: x", "\n", &headers));
        // Text ending in a partial header, completed by what follows.
        let eot = vec!["<|eot|>".to_string()];
        assert!(cuts("x<|eo", "t|><|eot|>", &eot));
        assert!(!cuts("x<|eo", "<|eot|>", &eot));
    }

    #[test]
    fn string_content_is_one_text_block_and_unknown_block_keys_are_refused() {
        let m: RequestMessage =
            serde_json::from_str(r#"{"speaker": "A", "content": "x"}"#).unwrap();
        assert_eq!(m.content.blocks(), vec![Block::Text { text: "x".into() }]);
        let bad = serde_json::from_str::<RequestMessage>(
            r#"{"speaker": "A", "content": [{"type": "text", "text": "x", "extra": 1}]}"#,
        );
        assert!(bad.is_err());
    }

    #[test]
    fn marks_cut_the_assistant_text_without_losing_a_byte() {
        let mut draft = Draft::default();
        let mut out = Vec::new();
        draft.line("A: 1", Some(MARK));
        draft.line("B: 2", None);
        draft.line("C:", None);
        draft.end(&mut out);
        let texts: Vec<&str> = out[0]
            .content
            .iter()
            .map(|b| match &b.block {
                Block::Text { text } => text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(texts, ["A: 1", "\nB: 2\nC:"]);
        assert_eq!(out[0].content[0].cache_control, Some(MARK));
    }
}

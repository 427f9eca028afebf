//! Request mode: a normalized conversation (content blocks, tools, cache markers)
//! to the request a provider is sent, by one of four formatters
//! (spec/transcript.md §10, TR-90 to TR-106).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::options::valid_name;
use super::render::{RenderCode, RenderError};
use crate::anthropic_xml::{self, CallSpec, ResultSpec, ToolDefinition};
use crate::fold::Fold;
use crate::reentry::Machine;
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

/// A message's content: a string (one text block) or blocks, each maybe with the
/// caller's own cache mark (TR-107).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// One text block.
    Text(String),
    /// Blocks, in order.
    Blocks(Vec<ProviderBlock>),
}

impl Content {
    /// The content as blocks.
    pub fn blocks(&self) -> Vec<ProviderBlock> {
        match self {
            Content::Text(text) => vec![ProviderBlock::text(text.clone())],
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
    /// Text blocks, each maybe with the caller's own cache mark (TR-107).
    Blocks(Vec<ProviderBlock>),
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
    /// Text the assistant's answer starts with: the end of the partial answer
    /// (TR-108).
    #[serde(default)]
    pub prefill: String,
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

/// The provider's cache mark, a `cache_control` object: `{"type": "ephemeral"}`
/// where a formatter places it (TR-102), or a caller's own object, verbatim
/// (TR-107): cache control is provider-specific, so its keys are not ours to check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct CacheControl(pub Map<String, Value>);

impl CacheControl {
    /// `{"type": "ephemeral"}`, the mark a formatter places (TR-102).
    pub fn ephemeral() -> Self {
        let mut map = Map::new();
        map.insert("type".into(), Value::String("ephemeral".into()));
        CacheControl(map)
    }
}

/// A block with its cache mark, if any: a block of the input, where the mark is
/// the caller's own (TR-91, TR-107), or of a provider message (TR-94).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProviderBlock {
    /// The block.
    #[serde(flatten)]
    pub block: Block,
    /// The cache mark, on the block that ends a cached prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'de> Deserialize<'de> for ProviderBlock {
    /// `cache_control` is taken out before the rest is read as a [`Block`], so the
    /// block keeps refusing unknown keys (serde's `flatten` would not).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        let cache_control = match map.remove("cache_control") {
            None => None,
            Some(value) => Some(serde_json::from_value(value).map_err(D::Error::custom)?),
        };
        let block = serde_json::from_value(Value::Object(map)).map_err(D::Error::custom)?;
        Ok(ProviderBlock {
            block,
            cache_control,
        })
    }
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
    /// A text block without a mark.
    pub fn text(text: impl Into<String>) -> Self {
        ProviderBlock {
            block: Block::Text { text: text.into() },
            cache_control: None,
        }
    }
    fn text_of(&self) -> &str {
        match &self.block {
            Block::Text { text } => text,
            _ => "",
        }
    }
}

impl From<Block> for ProviderBlock {
    fn from(block: Block) -> Self {
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
    /// The text of the last (assistant) message, when the model continues it: always
    /// under anthropic-xml, chatml and completions; under native when it sends an
    /// open turn (TR-108).
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
    system_blocks(&parsed.system)?;
    let options = merged_options(&parsed, session)?;
    build_request(&parsed, &options)
}

/// Builds the request for the input given as JSON text.
pub fn build_request_text(input: &str, session: &Value) -> Result<Request, RenderError> {
    let value: Value =
        serde_json::from_str(input).map_err(|_| refuse(RenderCode::InvalidInput, "input"))?;
    build_request_value(&value, session)
}

/// The system blocks (TR-95), with the caller's marks (TR-107); `Err` when an
/// array holds a block that is not text.
fn system_blocks(system: &Option<SystemPrompt>) -> Result<Vec<ProviderBlock>, RenderError> {
    Ok(match system {
        None => Vec::new(),
        Some(SystemPrompt::Text(text)) if text.is_empty() => Vec::new(),
        Some(SystemPrompt::Text(text)) => vec![ProviderBlock::text(text.clone())],
        Some(SystemPrompt::Blocks(blocks)) => {
            if blocks
                .iter()
                .any(|b| !matches!(b.block, Block::Text { .. }))
            {
                return Err(refuse(RenderCode::InvalidInput, "input"));
            }
            blocks.clone()
        }
    })
}

/// A message after the block checks: its blocks (with the caller's marks),
/// without stripped media, and each block's index in the input's content.
struct Prepared {
    speaker: String,
    blocks: Vec<ProviderBlock>,
    indices: Vec<usize>,
    cache_marker: bool,
}

impl Prepared {
    /// Where the caller's mark of block `k` comes from (TR-103).
    fn mark_location(&self, message: usize, k: usize) -> String {
        format!("messages[{message}].content[{}]", self.indices[k])
    }
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

/// A message's text and where each of its blocks ends in it (TR-96, TR-107).
type MarkedText = (String, Vec<Option<usize>>);

/// A message's text (TR-96) and where each block's part of it ends (`None` for a
/// block with no part: an image, or a tool block a formatter leaves out of the
/// text), which is where a caller's mark on that block goes (TR-107). `Err` when
/// a run of tool calls would not parse back as anthropic-xml.
fn message_text(blocks: &[ProviderBlock], style: TextStyle) -> Result<MarkedText, ()> {
    let mut text = String::new();
    let mut ends = vec![None; blocks.len()];
    let mut parts = 0;
    let mut part = |text: &mut String, part: &str| {
        if parts > 0 {
            text.push('\n');
        }
        text.push_str(part);
        parts += 1;
        text.len()
    };
    let mut i = 0;
    while i < blocks.len() {
        match &blocks[i].block {
            Block::Text { text: t } => ends[i] = Some(part(&mut text, t)),
            Block::Thinking { thinking, .. } => {
                let t = match style {
                    TextStyle::Chatml { .. } => format!("<think>{thinking}</think>"),
                    _ => format!("<thinking>{thinking}</thinking>"),
                };
                ends[i] = Some(part(&mut text, &t));
            }
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
                let is_call = matches!(blocks[i].block, Block::ToolUse { .. });
                let start = i;
                while i < blocks.len()
                    && match blocks[i].block {
                        Block::ToolUse { .. } => is_call,
                        Block::ToolResult { .. } => !is_call,
                        _ => false,
                    }
                {
                    i += 1;
                }
                let run: Vec<Block> = blocks[start..i].iter().map(|b| b.block.clone()).collect();
                if xml {
                    // One anthropic-xml block: every block of the run ends at its end.
                    let end = part(&mut text, &xml_run(&run, is_call)?);
                    ends[start..i].fill(Some(end));
                } else {
                    for (k, block) in run.iter().enumerate() {
                        ends[start + k] = Some(part(&mut text, &json_block(block)));
                    }
                }
                continue;
            }
        }
        i += 1;
    }
    Ok((text, ends))
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
    let system = system_blocks(&input.system)?;
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
    let open_turn = open_turn(input, options);
    let mut warnings = Vec::new();
    let mut prepared = Vec::with_capacity(input.messages.len());
    for (i, m) in input.messages.iter().enumerate() {
        let mut blocks = Vec::new();
        let mut indices = Vec::new();
        let content = m.content.blocks();
        for (j, block) in content.iter().enumerate() {
            let at = || format!("messages[{i}].content[{j}]");
            let tool_or_thinking = matches!(
                block.block,
                Block::ToolUse { .. } | Block::ToolResult { .. } | Block::Thinking { .. }
            );
            if formatter == Formatter::Completions && tool_or_thinking {
                return Err(refuse(RenderCode::UnsupportedBlock, at()));
            }
            if matches!(block.block, Block::Image { .. }) && !carries_media {
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
            blocks.push(block.clone());
            indices.push(j);
        }
        let is = |b: &ProviderBlock, user_side: bool| match b.block {
            Block::Image { .. } => user_side,
            Block::ToolResult { .. } => user_side,
            Block::ToolUse { .. } => !user_side,
            _ => false,
        };
        if native_tools && blocks.iter().any(|b| is(b, false)) && blocks.iter().any(|b| is(b, true))
        {
            return Err(refuse(
                RenderCode::MixedBlocks,
                format!("messages[{i}].content"),
            ));
        }
        // The open line holds text only (TR-108): an image, or a native tool
        // block, has no place in a prefill.
        if formatter == Formatter::AnthropicXml && open_turn == Some(i) {
            let no_place = |b: &ProviderBlock| match b.block {
                Block::Image { .. } => true,
                Block::ToolUse { .. } | Block::ToolResult { .. } => native_tools,
                _ => false,
            };
            if let Some(k) = blocks.iter().position(no_place) {
                return Err(refuse(
                    RenderCode::UnsupportedBlock,
                    format!("messages[{i}].content[{}]", indices[k]),
                ));
            }
        }
        prepared.push(Prepared {
            speaker: m.speaker.clone(),
            blocks,
            indices,
            cache_marker: m.cache_marker,
        });
    }

    let (finished, open) = match open_turn {
        Some(i) => (&prepared[..i], Some(&prepared[i])),
        None => (&prepared[..], None),
    };
    let turn = Turn {
        finished,
        open,
        open_index: open_turn.unwrap_or(prepared.len()),
        prefill: &input.prefill,
    };
    let mut marks = Vec::new();
    let mut built = match formatter {
        Formatter::AnthropicXml => anthropic(input, options, &system, &turn, &mut marks)?,
        Formatter::Native => native(input, options, &system, &turn, &mut marks),
        Formatter::Chatml => chatml(input, options, &system, &turn)?,
        Formatter::Completions => completions(options, &system, &turn)?,
    };
    if let Some(fifth) = marks.get(MAX_CACHE_MARKS) {
        return Err(refuse(RenderCode::TooManyCacheMarks, fifth.clone()));
    }
    built.stop_sequences = stop_sequences(options, &prepared, !input.tools.is_empty());
    built.warnings = warnings;
    Ok(built)
}

/// The index of the open turn: the last message, when the assistant speaks it
/// (TR-108).
fn open_turn(input: &RequestInput, options: &RequestOptions) -> Option<usize> {
    let last = input.messages.len().checked_sub(1)?;
    options
        .is_assistant(&input.messages[last].speaker)
        .then_some(last)
}

/// The conversation split for the formatters: the finished messages, and the
/// open turn with the prefill that continues it (TR-108).
struct Turn<'a> {
    finished: &'a [Prepared],
    open: Option<&'a Prepared>,
    /// The open turn's index among the messages (their count without one).
    open_index: usize,
    prefill: &'a str,
}

impl Turn<'_> {
    /// Whether the thinking opener starts the open line: `thinking` is on and the
    /// open turn does not begin with a thinking block of its own, which is written
    /// with its own opener (TR-108).
    fn opens_thinking(&self, options: &RequestOptions) -> bool {
        let own = self
            .open
            .and_then(|m| m.blocks.first())
            .is_some_and(|b| matches!(b.block, Block::Thinking { .. }));
        options.thinking && !own
    }

    /// The open turn's text and where each of its blocks ends in it (TR-96).
    fn open_text(&self, style: TextStyle) -> Result<MarkedText, RenderError> {
        match self.open {
            Some(m) => message_text(&m.blocks, style).map_err(|_| {
                refuse(
                    RenderCode::BadCall,
                    format!("messages[{}].content", self.open_index),
                )
            }),
            None => Ok((String::new(), Vec::new())),
        }
    }

    /// Refuses a header inside the open turn's text (followed by the prefill)
    /// or inside the prefill (TR-106).
    fn check_headers(&self, open_text: &str, headers: &[String]) -> Result<(), RenderError> {
        if cuts(open_text, self.prefill, headers) {
            return Err(refuse(
                RenderCode::ContainsHeader,
                format!("messages[{}].content", self.open_index),
            ));
        }
        if cuts(self.prefill, "", headers) {
            return Err(refuse(RenderCode::ContainsHeader, "prefill"));
        }
        Ok(())
    }
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

/// A cache mark at a place in a line, and where it comes from (TR-103).
struct Placed {
    at: usize,
    mark: CacheControl,
    location: String,
}

/// Orders marks by place and keeps one per place: the last given, so a caller's
/// mark, given after the formatter's, wins (TR-107).
fn one_per_place(mut marks: Vec<Placed>) -> Vec<Placed> {
    marks.sort_by_key(|p| p.at);
    let mut out: Vec<Placed> = Vec::with_capacity(marks.len());
    for p in marks {
        match out.last_mut() {
            Some(last) if last.at == p.at => *last = p,
            _ => out.push(p),
        }
    }
    out
}

/// The caller's marks on the blocks of `m` that are written as text: each where
/// its block's text ends (`ends`, TR-96), moved by `base` (where the text starts in
/// its line) and capped at `cap` (the line's length), TR-107.
fn text_marks(
    m: &Prepared,
    index: usize,
    ends: &[Option<usize>],
    base: usize,
    cap: usize,
) -> Vec<Placed> {
    m.blocks
        .iter()
        .zip(ends)
        .enumerate()
        .filter_map(|(k, (b, end))| {
            Some(Placed {
                at: (base + (*end)?).min(cap),
                mark: b.cache_control.clone()?,
                location: m.mark_location(index, k),
            })
        })
        .collect()
}

/// A block that stays a block keeps the caller's mark, which counts (TR-107).
fn kept(
    block: &ProviderBlock,
    location: impl FnOnce() -> String,
    marks: &mut Vec<String>,
) -> ProviderBlock {
    if block.cache_control.is_some() {
        marks.push(location());
    }
    block.clone()
}

/// Puts the formatter's mark on the last block, unless the caller's is there
/// already (TR-102, TR-107).
fn mark_last(
    blocks: &mut [ProviderBlock],
    location: impl FnOnce() -> String,
    marks: &mut Vec<String>,
) {
    if let Some(last) = blocks.last_mut() {
        if last.cache_control.is_none() {
            last.cache_control = Some(CacheControl::ephemeral());
            marks.push(location());
        }
    }
}

fn context_prefix(options: &RequestOptions) -> Option<&str> {
    options.context_prefix.as_deref().filter(|p| !p.is_empty())
}

/// The system field of anthropic-xml and native, with its marks (TR-95, TR-102,
/// TR-107).
fn system_field(
    system: &[ProviderBlock],
    options: &RequestOptions,
    marks: &mut Vec<String>,
) -> Option<Vec<ProviderBlock>> {
    if system.is_empty() {
        return None;
    }
    let mut blocks: Vec<ProviderBlock> = system
        .iter()
        .enumerate()
        .map(|(j, b)| kept(b, || format!("system[{j}]"), marks))
        .collect();
    if options.prompt_caching {
        mark_last(&mut blocks, || "system".into(), marks);
    }
    Some(blocks)
}

/// The assistant message anthropic-xml is writing (TR-97, TR-102).
#[derive(Default)]
struct Draft {
    blocks: Vec<ProviderBlock>,
    text: String,
    lines: usize,
}

impl Draft {
    /// Writes a line, cut right after each of `marks` (in order, one per place,
    /// each within the line): the text block ending there carries the mark.
    fn line(&mut self, line: &str, marks: Vec<Placed>, log: &mut Vec<String>) {
        if self.lines > 0 {
            self.text.push('\n');
        }
        self.lines += 1;
        let mut from = 0;
        for p in marks {
            self.text.push_str(&line[from..p.at]);
            from = p.at;
            self.cut(Some(p.mark));
            log.push(p.location);
        }
        self.text.push_str(&line[from..]);
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

/// The texts of the system blocks, joined as chatml and completions write them
/// (TR-95).
fn system_text(system: &[ProviderBlock]) -> String {
    system
        .iter()
        .map(ProviderBlock::text_of)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The texts of the finished messages (TR-96), with where each block ends.
fn finished_texts(turn: &Turn, style: TextStyle) -> Result<Vec<MarkedText>, RenderError> {
    turn.finished
        .iter()
        .enumerate()
        .map(|(i, m)| {
            message_text(&m.blocks, style)
                .map_err(|_| refuse(RenderCode::BadCall, format!("messages[{i}].content")))
        })
        .collect()
}

/// anthropic-xml (TR-97, TR-107, TR-108).
fn anthropic(
    input: &RequestInput,
    options: &RequestOptions,
    system: &[ProviderBlock],
    turn: &Turn,
    marks: &mut Vec<String>,
) -> Result<Request, RenderError> {
    let native_tools = options.tool_mode == ToolMode::Native;
    let style = TextStyle::Anthropic { native_tools };
    let texts = finished_texts(turn, style)?;
    let (open_text, open_ends) = turn.open_text(style)?;
    let tools = (!native_tools && !input.tools.is_empty()).then(|| tools_text(&input.tools, false));
    let prefix = context_prefix(options);

    // contains-header, then reads-as-header (TR-106).
    let mut headers: Vec<String> = turn
        .finished
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
    for (i, (text, _)) in texts.iter().enumerate() {
        if cuts(text, "\n", &line_headers) {
            return Err(refuse(
                RenderCode::ContainsHeader,
                format!("messages[{i}].content"),
            ));
        }
    }
    turn.check_headers(&open_text, &line_headers)?;
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

    let system = system_field(system, options, marks);
    let mut out: Vec<ProviderMessage> = Vec::new();
    let mut draft = Draft::default();
    if let Some(tools) = &tools {
        draft.line(tools, Vec::new(), marks);
    }
    if let Some(prefix) = prefix {
        let mut placed = Vec::new();
        if options.prompt_caching {
            placed.push(Placed {
                at: prefix.len(),
                mark: CacheControl::ephemeral(),
                location: "context_prefix".into(),
            });
        }
        draft.line(prefix, placed, marks);
    }
    for (i, (m, (text, ends))) in turn.finished.iter().zip(&texts).enumerate() {
        let marked = options.prompt_caching && m.cache_marker;
        let cache_marker = || format!("messages[{i}].cache_marker");
        let label = options.label(options.name_of(&m.speaker));
        let label = label.trim_end();
        let line = line_of(label, text);
        let base = if text.is_empty() {
            label.len()
        } else {
            label.len() + 1
        };
        let caller = text_marks(m, i, ends, base, line.len());
        let user_side = |b: &ProviderBlock| {
            matches!(b.block, Block::Image { .. })
                || (native_tools && matches!(b.block, Block::ToolResult { .. }))
        };
        if !m.blocks.iter().any(user_side) {
            let calls: Vec<(usize, &ProviderBlock)> = m
                .blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| native_tools && matches!(b.block, Block::ToolUse { .. }))
                .collect();
            if calls.is_empty() {
                let mut placed = Vec::new();
                if marked {
                    placed.push(Placed {
                        at: line.len(),
                        mark: CacheControl::ephemeral(),
                        location: cache_marker(),
                    });
                }
                placed.extend(caller);
                draft.line(&line, one_per_place(placed), marks);
            } else {
                draft.line(&line, one_per_place(caller), marks);
                draft.cut(None);
                for (k, b) in calls {
                    let block = kept(b, || m.mark_location(i, k), marks);
                    draft.blocks.push(block);
                }
                if marked {
                    mark_last(&mut draft.blocks, cache_marker, marks);
                }
                draft.end(&mut out);
            }
        } else {
            draft.end(&mut out);
            let mut content: Vec<ProviderBlock> = Vec::new();
            for (k, b) in m.blocks.iter().enumerate() {
                if user_side(b) && matches!(b.block, Block::ToolResult { .. }) {
                    content.push(kept(b, || m.mark_location(i, k), marks));
                }
            }
            let only_results = m
                .blocks
                .iter()
                .all(|b| matches!(b.block, Block::ToolResult { .. }));
            if !only_results {
                let mut piece = Draft::default();
                piece.line(&line, one_per_place(caller), marks);
                piece.cut(None);
                content.extend(piece.blocks);
            }
            for (k, b) in m.blocks.iter().enumerate() {
                if matches!(b.block, Block::Image { .. }) {
                    content.push(kept(b, || m.mark_location(i, k), marks));
                }
            }
            if marked {
                mark_last(&mut content, cache_marker, marks);
            }
            out.push(ProviderMessage {
                role: Role::User,
                content,
            });
        }
    }
    // The open line: the assistant's label and the partial answer (TR-108).
    let mut open = options.label(&options.assistant).trim_end().to_string();
    let partial = format!("{open_text}{}", turn.prefill);
    let opens_thinking = turn.opens_thinking(options);
    if opens_thinking || !partial.is_empty() {
        open.push(' ');
        if opens_thinking {
            open.push_str("<thinking>");
        }
    }
    let base = open.len();
    open.push_str(&partial);
    // A provider refuses a prefill that ends in whitespace.
    open.truncate(open.trim_end().len());
    let mut placed = Vec::new();
    if let Some(m) = turn.open {
        if options.prompt_caching && m.cache_marker {
            placed.push(Placed {
                at: open.len(),
                mark: CacheControl::ephemeral(),
                location: format!("messages[{}].cache_marker", turn.open_index),
            });
        }
        placed.extend(text_marks(m, turn.open_index, &open_ends, base, open.len()));
    }
    draft.line(&open, one_per_place(placed), marks);
    draft.end(&mut out);
    let prefill = out.last().map(message_text_of);
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

/// A provider message's text: its text blocks concatenated.
fn message_text_of(message: &ProviderMessage) -> String {
    message.content.iter().map(ProviderBlock::text_of).collect()
}

/// Appends to the last message when it has the same role, as native merges
/// consecutive messages (TR-98).
fn push_merged(out: &mut Vec<ProviderMessage>, role: Role, content: Vec<ProviderBlock>) {
    match out.last_mut() {
        Some(last) if last.role == role => last.content.extend(content),
        _ => out.push(ProviderMessage { role, content }),
    }
}

/// native (TR-98, TR-107, TR-108).
fn native(
    input: &RequestInput,
    options: &RequestOptions,
    system: &[ProviderBlock],
    turn: &Turn,
    marks: &mut Vec<String>,
) -> Request {
    let system = system_field(system, options, marks);
    let mut out: Vec<ProviderMessage> = Vec::new();
    if let Some(prefix) = context_prefix(options) {
        let mut block = ProviderBlock::text(prefix);
        if options.prompt_caching {
            block.cache_control = Some(CacheControl::ephemeral());
            marks.push("context_prefix".into());
        }
        push_merged(&mut out, Role::Assistant, vec![block]);
    }
    for (i, m) in turn.finished.iter().enumerate() {
        let assistant = options.is_assistant(&m.speaker);
        let role = if assistant {
            Role::Assistant
        } else {
            Role::User
        };
        let mut named = assistant || options.participant_mode == ParticipantMode::Simple;
        let mut content: Vec<ProviderBlock> = Vec::with_capacity(m.blocks.len());
        for (k, b) in m.blocks.iter().enumerate() {
            let mut block = kept(b, || m.mark_location(i, k), marks);
            if let Block::Text { text } = &mut block.block {
                if !named {
                    named = true;
                    *text = format!("{}{text}", options.label(&m.speaker));
                }
            }
            content.push(block);
        }
        if options.prompt_caching && m.cache_marker {
            mark_last(
                &mut content,
                || format!("messages[{i}].cache_marker"),
                marks,
            );
        }
        push_merged(&mut out, role, content);
    }
    // The open turn, continued by the provider (TR-108).
    let mut open: Vec<ProviderBlock> = turn.open.map(|m| m.blocks.clone()).unwrap_or_default();
    if !turn.prefill.is_empty() {
        open.push(ProviderBlock::text(turn.prefill));
    }
    let sent = open
        .iter()
        .any(|b| !matches!(&b.block, Block::Text { text } if text.is_empty()));
    let mut prefill = None;
    if sent {
        let i = turn.open_index;
        let mut content: Vec<ProviderBlock> = Vec::with_capacity(open.len());
        for (k, b) in open.iter().enumerate() {
            // The prefill's block has no mark, so only the open turn's are looked up.
            let location = || turn.open.map(|m| m.mark_location(i, k)).unwrap_or_default();
            content.push(kept(b, location, marks));
        }
        if options.prompt_caching && turn.open.is_some_and(|m| m.cache_marker) {
            mark_last(
                &mut content,
                || format!("messages[{i}].cache_marker"),
                marks,
            );
        }
        push_merged(&mut out, Role::Assistant, content);
        prefill = out.last().map(message_text_of);
    }
    with_start(&mut out, options);
    Request {
        system,
        messages: out,
        assistant_prefill: prefill,
        stop_sequences: Vec::new(),
        tools: (!input.tools.is_empty()).then(|| input.tools.clone()),
        warnings: Vec::new(),
    }
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

/// chatml (TR-99, TR-108); the caller's marks are left out (TR-107).
fn chatml(
    input: &RequestInput,
    options: &RequestOptions,
    system: &[ProviderBlock],
    turn: &Turn,
) -> Result<Request, RenderError> {
    let json = options.tool_format == ToolFormat::Json;
    let style = TextStyle::Chatml { json };
    let mut texts = Vec::with_capacity(turn.finished.len());
    for (m, (text, _)) in turn.finished.iter().zip(finished_texts(turn, style)?) {
        let prefixed = options.participant_mode == ParticipantMode::Multiuser
            && !options.is_assistant(&m.speaker);
        texts.push(if prefixed {
            format!("{}: {text}", m.speaker)
        } else {
            text
        });
    }
    let (open_text, _) = turn.open_text(style)?;
    let system = system_text(system);
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
    turn.check_headers(&open_text, &stems)?;

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
    for (m, text) in turn.finished.iter().zip(&texts) {
        let token = if options.is_assistant(&m.speaker) {
            &options.assistant_token
        } else {
            &options.user_token
        };
        prompt.push_str(&format!("{token}{text}{end}\n"));
    }
    prompt.push_str(&options.assistant_token);
    if turn.opens_thinking(options) {
        prompt.push_str("<think>");
    }
    prompt.push_str(&open_text);
    prompt.push_str(turn.prefill);
    Ok(prompt_request(prompt))
}

/// completions (TR-100, TR-108); the caller's marks are left out (TR-107).
fn completions(
    options: &RequestOptions,
    system: &[ProviderBlock],
    turn: &Turn,
) -> Result<Request, RenderError> {
    let texts: Vec<String> = finished_texts(turn, TextStyle::Completions)?
        .into_iter()
        .map(|(text, _)| text)
        .collect();
    let (open_text, _) = turn.open_text(TextStyle::Completions)?;
    let system = system_text(system);
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
    turn.check_headers(&open_text, &headers)?;
    let label = |speaker: &str| options.label(options.name_of(speaker));
    if !system.is_empty() {
        let reads = turn
            .finished
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
    for (m, text) in turn.finished.iter().zip(&texts) {
        blocks.push(format!("{}{text}{eot}", label(&m.speaker)));
    }
    let open = format!("{assistant}{open_text}{}", turn.prefill);
    blocks.push(open.trim_end().to_string());
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

    fn into_document(self) -> RequestDocument {
        self.document
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
        assert_eq!(m.content.blocks(), vec![ProviderBlock::text("x")]);
        let bad = serde_json::from_str::<RequestMessage>(
            r#"{"speaker": "A", "content": [{"type": "text", "text": "x", "extra": 1}]}"#,
        );
        assert!(bad.is_err());
    }

    #[test]
    fn marks_cut_the_assistant_text_without_losing_a_byte() {
        let mut draft = Draft::default();
        let mut out = Vec::new();
        let mut log = Vec::new();
        let at = |at: usize, location: &str| Placed {
            at,
            mark: CacheControl::ephemeral(),
            location: location.into(),
        };
        draft.line("A: 1", vec![at(4, "a")], &mut log);
        // Two places inside one line: after "B: 2" and after "x".
        draft.line("B: 2\nx\ny", vec![at(4, "b"), at(6, "c")], &mut log);
        draft.line("C:", Vec::new(), &mut log);
        draft.end(&mut out);
        let texts: Vec<&str> = out[0].content.iter().map(ProviderBlock::text_of).collect();
        assert_eq!(texts, ["A: 1", "\nB: 2", "\nx", "\ny\nC:"]);
        assert_eq!(
            out[0].content[0].cache_control,
            Some(CacheControl::ephemeral())
        );
        assert_eq!(out[0].content[3].cache_control, None);
        assert_eq!(log, ["a", "b", "c"]);
    }

    #[test]
    fn one_mark_per_place_and_the_last_given_wins() {
        let mut own = Map::new();
        own.insert("type".into(), Value::String("ephemeral".into()));
        own.insert("ttl".into(), Value::String("1h".into()));
        let placed = one_per_place(vec![
            Placed {
                at: 5,
                mark: CacheControl::ephemeral(),
                location: "formatter".into(),
            },
            Placed {
                at: 2,
                mark: CacheControl::ephemeral(),
                location: "early".into(),
            },
            Placed {
                at: 5,
                mark: CacheControl(own.clone()),
                location: "caller".into(),
            },
        ]);
        let got: Vec<(usize, &str)> = placed.iter().map(|p| (p.at, p.location.as_str())).collect();
        assert_eq!(got, [(2, "early"), (5, "caller")]);
        assert_eq!(placed[1].mark, CacheControl(own));
    }

    #[test]
    fn block_ends_follow_the_joined_text() {
        let blocks: Vec<ProviderBlock> = serde_json::from_str(
            r#"[{"type": "text", "text": "ab"}, {"type": "image", "source": {}},
                {"type": "tool_use", "id": "1", "name": "f", "input": {}},
                {"type": "tool_use", "id": "2", "name": "g", "input": {}},
                {"type": "text", "text": ""}]"#,
        )
        .unwrap();
        let (text, ends) = message_text(
            &blocks,
            TextStyle::Anthropic {
                native_tools: false,
            },
        )
        .unwrap();
        let run_end = text.len() - 1;
        assert_eq!(
            ends,
            [
                Some(2),
                None,
                Some(run_end),
                Some(run_end),
                Some(text.len())
            ]
        );
        assert!(text.starts_with("ab\n<function_calls>") && text.ends_with("</function_calls>\n"));
    }

    #[test]
    fn the_caller_mark_must_be_an_object() {
        let bad = serde_json::from_str::<ProviderBlock>(
            r#"{"type": "text", "text": "x", "cache_control": "ephemeral"}"#,
        );
        assert!(bad.is_err());
        let good: ProviderBlock = serde_json::from_str(
            r#"{"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "5m"}}"#,
        )
        .unwrap();
        assert_eq!(good.cache_control.unwrap().0.len(), 2);
    }
}

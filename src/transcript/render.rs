//! Render mode: a conversation (JSON) to a prompt and its stop sequences
//! (spec/transcript.md §7), and the derivation of stop sequences (TR-61, TR-62).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::finder::{first_match, Patterns};
use super::options::{valid_name, Format, Options};
use crate::fold::Fold;
use crate::reentry::Machine;
use crate::span::Span;

/// One message of a conversation to render.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Who speaks.
    pub speaker: String,
    /// What they say.
    pub content: String,
}

/// The input of render mode (TR-60).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    /// The system prompt, if any.
    #[serde(default)]
    pub system: Option<String>,
    /// The messages, oldest first.
    #[serde(default)]
    pub messages: Vec<Turn>,
    /// The speaker of the open turn (overrides the `assistant` option).
    #[serde(default)]
    pub assistant: Option<String>,
    /// The start of the open turn's content.
    #[serde(default)]
    pub prefill: String,
    /// Options, overridden key by key by the session's own.
    #[serde(default)]
    pub options: Option<Map<String, Value>>,
}

/// A rendered prompt (TR-60).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Rendered {
    /// The prompt text.
    pub prompt: String,
    /// The stop sequences that end the model's turn.
    pub stop_sequences: Vec<String>,
}

/// Why a conversation cannot be rendered (TR-64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RenderCode {
    /// The input is not JSON of the expected shape.
    InvalidInput,
    /// The merged options are refused.
    InvalidOptions,
    /// A speaker (or the assistant) cannot be written in this format.
    BadSpeaker,
    /// A text contains a header of the format, so parse would cut it.
    ContainsHeader,
    /// The system text would itself read as a header.
    ReadsAsHeader,
    /// chatml: the first message's role is `system` but no system is given.
    ReadsAsSystem,
    /// Request mode: completions is given tools.
    UnsupportedTools,
    /// Request mode: a block the formatter cannot write.
    UnsupportedBlock,
    /// Request mode: media the formatter cannot carry, with the `error` policy.
    UnsupportedMedia,
    /// Request mode: a message holds tool calls and user-side blocks (native tool mode).
    MixedBlocks,
    /// Request mode: tool calls that would not parse back as anthropic-xml.
    BadCall,
    /// Request mode: more cache marks than a provider accepts.
    TooManyCacheMarks,
}

/// A refusal to render: what and where (TR-64).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RenderError {
    /// What is wrong.
    pub code: RenderCode,
    /// Which part: `input`, `options`, `system`, `system[j]`, `assistant`, `prefill`,
    /// `tools`, `context_prefix`, `messages[i].speaker`, `messages[i].content`,
    /// `messages[i].content[j]` or `messages[i].cache_marker`.
    #[serde(rename = "where")]
    pub location: String,
}

impl RenderError {
    pub(crate) fn new(code: RenderCode, location: impl Into<String>) -> Self {
        RenderError {
            code,
            location: location.into(),
        }
    }
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = serde_json::to_value(self.code).ok();
        let code = code.as_ref().and_then(Value::as_str).unwrap_or("error");
        write!(f, "cannot render: {code} at {}", self.location)
    }
}

impl std::error::Error for RenderError {}

/// The stop sequences for a conversation (TR-61): `speakers` are the speakers of
/// its messages, oldest first; `assistant` speaks next and gets no stop.
pub fn stop_sequences(options: &Options, speakers: &[&str], assistant: &str) -> Vec<String> {
    let mut others: Vec<&str> = Vec::new();
    let recent_first = speakers.iter().rev().copied();
    for name in recent_first.chain(options.participants.iter().map(String::as_str)) {
        if name != assistant && !others.contains(&name) {
            others.push(name);
        }
    }
    others.truncate(options.max_stop_participants);
    match options.format {
        Format::HumanAssistant => vec!["\n\nHuman:".to_string()],
        Format::Participants => {
            let mut stops: Vec<String> = others.iter().map(|n| format!("\n{n}:")).collect();
            if options.tools {
                stops.push("</function_calls>".to_string());
            }
            stops
        }
        Format::Completions => {
            let mut stops: Vec<String> = others
                .iter()
                .flat_map(|n| [format!("\n\n{n}:"), format!("\n{n}:")])
                .collect();
            stops.push(options.eot.clone());
            stops
        }
        Format::Chatml => vec!["<|im_end|>".to_string()],
    }
}

/// Merges the conversation's options under the session's (TR-60).
fn merged_options(conversation: &Conversation, session: &Value) -> Result<Options, RenderError> {
    let mut merged = conversation.options.clone().unwrap_or_default();
    if let Value::Object(overrides) = session {
        for (key, value) in overrides {
            merged.insert(key.clone(), value.clone());
        }
    }
    let options: Options = serde_json::from_value(Value::Object(merged))
        .map_err(|_| RenderError::new(RenderCode::InvalidOptions, "options"))?;
    options
        .check()
        .map_err(|_| RenderError::new(RenderCode::InvalidOptions, "options"))?;
    Ok(options)
}

/// Renders the conversation given as JSON `input`, with the session's `options`
/// (a JSON object; its keys override the input's own `options`).
pub(crate) fn render_value(input: &Value, options: &Value) -> Result<Rendered, RenderError> {
    let conversation: Conversation = serde_json::from_value(input.clone())
        .map_err(|_| RenderError::new(RenderCode::InvalidInput, "input"))?;
    let options = merged_options(&conversation, options)?;
    render(&conversation, &options)
}

/// Renders the conversation given as JSON text.
pub(crate) fn render_text(input: &str, options: &Value) -> Result<Rendered, RenderError> {
    let value: Value = serde_json::from_str(input)
        .map_err(|_| RenderError::new(RenderCode::InvalidInput, "input"))?;
    render_value(&value, options)
}

/// What parse could not give back, per format (TR-64).
struct Checker<'a> {
    options: &'a Options,
    /// Headers that must not occur inside a text.
    headers: Patterns,
    /// Names a participants or completions header may carry.
    known: Vec<String>,
}

impl Checker<'_> {
    fn speaker_ok(&self, speaker: &str) -> bool {
        let fits = !speaker.is_empty() && speaker.len() <= self.options.max_name_bytes;
        match self.options.format {
            Format::HumanAssistant => true,
            Format::Chatml => fits && !speaker.contains(['\n', '<']),
            Format::Participants => fits && valid_name(speaker),
            Format::Completions => {
                fits && valid_name(speaker)
                    && (self.options.participants.is_empty()
                        || self.options.participants.iter().any(|p| p == speaker))
            }
        }
    }

    /// Whether parse, reading `text` followed by `next`, would cut `text` short.
    fn cuts(&self, text: &str, next: &str) -> bool {
        let joined = format!("{text}{next}");
        first_match(&self.headers, &joined).is_some_and(|(start, _)| start < text.len())
    }

    /// Whether a system text at the start of the prompt would read as a header.
    fn reads_as_header(&self, system: &str) -> bool {
        match self.options.format {
            Format::HumanAssistant => {
                system.starts_with("Human:") || system.starts_with("Assistant:")
            }
            Format::Participants => self
                .known
                .iter()
                .any(|n| system.starts_with(&format!("{n}:"))),
            Format::Completions => {
                // The block is read with its end token, which might hold a colon.
                let block = format!("{system}{}", self.options.eot);
                let line = block.split('\n').next().unwrap_or("");
                match line.find(':') {
                    Some(colon) if colon > 0 && colon <= self.options.max_name_bytes => {
                        let name = &line[..colon];
                        self.options.participants.is_empty()
                            || self.options.participants.iter().any(|p| p == name)
                    }
                    _ => false,
                }
            }
            Format::Chatml => false,
        }
    }
}

/// Renders `conversation` with `options`. The open turn's speaker is the
/// conversation's `assistant`, else the option's.
pub fn render(conversation: &Conversation, options: &Options) -> Result<Rendered, RenderError> {
    let assistant = conversation
        .assistant
        .as_deref()
        .unwrap_or(options.assistant_name());
    let messages = &conversation.messages;
    let system = conversation.system.as_deref();
    let prefill = conversation.prefill.as_str();
    let mut known: Vec<String> = messages.iter().map(|m| m.speaker.clone()).collect();
    known.push(assistant.to_string());
    known.extend(options.participants.iter().cloned());
    let headers: Vec<String> = match options.format {
        Format::HumanAssistant => vec!["\n\nHuman:".into(), "\n\nAssistant:".into()],
        Format::Participants => known.iter().map(|n| format!("\n{n}:")).collect(),
        Format::Completions => vec![options.eot.clone()],
        Format::Chatml => vec!["<|im_start|>".into(), "<|im_end|>".into()],
    };
    let checker = Checker {
        options,
        headers: Patterns::new(&headers),
        known,
    };

    if !checker.speaker_ok(assistant) {
        return Err(RenderError::new(RenderCode::BadSpeaker, "assistant"));
    }
    for (i, m) in messages.iter().enumerate() {
        if !checker.speaker_ok(&m.speaker) {
            return Err(RenderError::new(
                RenderCode::BadSpeaker,
                format!("messages[{i}].speaker"),
            ));
        }
    }

    // Each text is checked followed by what the prompt puts after it.
    let header_of = |speaker: &str| -> String {
        match options.format {
            Format::HumanAssistant if speaker == assistant => "\n\nAssistant:".into(),
            Format::HumanAssistant => "\n\nHuman:".into(),
            Format::Participants => format!("\n{speaker}:"),
            Format::Completions => options.eot.clone(),
            Format::Chatml => "<|im_end|>".into(),
        }
    };
    let next_after = |i: usize| -> String {
        match messages.get(i) {
            Some(m) => header_of(&m.speaker),
            None => header_of(assistant),
        }
    };
    if let Some(system) = system.filter(|s| !s.is_empty() || options.format == Format::Chatml) {
        let next = match options.format {
            Format::Completions | Format::Chatml => header_of(""),
            _ => next_after(0),
        };
        if checker.cuts(system, &next) {
            return Err(RenderError::new(RenderCode::ContainsHeader, "system"));
        }
    }
    for (i, m) in messages.iter().enumerate() {
        let next = match options.format {
            Format::Completions | Format::Chatml => header_of(&m.speaker),
            _ => next_after(i + 1),
        };
        if checker.cuts(&m.content, &next) {
            return Err(RenderError::new(
                RenderCode::ContainsHeader,
                format!("messages[{i}].content"),
            ));
        }
    }
    if checker.cuts(prefill, "") {
        return Err(RenderError::new(RenderCode::ContainsHeader, "prefill"));
    }
    if system.is_some_and(|s| checker.reads_as_header(s)) {
        return Err(RenderError::new(RenderCode::ReadsAsHeader, "system"));
    }
    if options.format == Format::Chatml
        && system.is_none()
        && messages.first().is_some_and(|m| m.speaker == "system")
    {
        return Err(RenderError::new(
            RenderCode::ReadsAsSystem,
            "messages[0].speaker",
        ));
    }

    let prompt = write_prompt(conversation, options, assistant);
    let speakers: Vec<&str> = messages.iter().map(|m| m.speaker.as_str()).collect();
    Ok(Rendered {
        prompt,
        stop_sequences: stop_sequences(options, &speakers, assistant),
    })
}

/// Writes the prompt of a checked conversation (TR-63).
fn write_prompt(conversation: &Conversation, options: &Options, assistant: &str) -> String {
    let system = conversation.system.as_deref().unwrap_or("");
    let prefill = conversation.prefill.as_str();
    let messages = &conversation.messages;
    match options.format {
        Format::HumanAssistant => {
            let mut prompt = system.to_string();
            for m in messages {
                let role = if m.speaker == assistant {
                    "Assistant"
                } else {
                    "Human"
                };
                prompt.push_str(&format!("\n\n{role}: {}", m.content));
            }
            prompt.push_str("\n\nAssistant:");
            if !prefill.is_empty() {
                prompt.push_str(&format!(" {prefill}"));
            }
            prompt
        }
        Format::Participants => {
            let mut lines: Vec<String> = Vec::new();
            if !system.is_empty() {
                lines.push(system.to_string());
            }
            lines.extend(
                messages
                    .iter()
                    .map(|m| format!("{}: {}", m.speaker, m.content)),
            );
            let mut open = format!("{assistant}:");
            if options.thinking || !prefill.is_empty() {
                open.push(' ');
                if options.thinking {
                    open.push_str("<thinking>");
                }
                open.push_str(prefill);
            }
            lines.push(open);
            lines.join("\n")
        }
        Format::Completions => {
            let eot = &options.eot;
            let mut blocks: Vec<String> = Vec::new();
            if !system.is_empty() {
                blocks.push(format!("{system}{eot}"));
            }
            blocks.extend(
                messages
                    .iter()
                    .map(|m| format!("{}: {}{eot}", m.speaker, m.content)),
            );
            let mut open = format!("{assistant}:");
            if !prefill.is_empty() {
                open.push_str(&format!(" {prefill}"));
            }
            blocks.push(open);
            blocks.join("\n\n")
        }
        Format::Chatml => {
            let mut prompt = String::new();
            if let Some(system) = &conversation.system {
                prompt.push_str(&format!("<|im_start|>system\n{system}<|im_end|>\n"));
            }
            for m in messages {
                prompt.push_str(&format!(
                    "<|im_start|>{}\n{}<|im_end|>\n",
                    m.speaker, m.content
                ));
            }
            prompt.push_str(&format!("<|im_start|>{assistant}\n{prefill}"));
            prompt
        }
    }
}

/// The event of render mode: one, at end of input, spanning the whole input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RenderEvent {
    /// The input was rendered.
    Rendered {
        /// The prompt text.
        prompt: String,
        /// The stop sequences.
        stop_sequences: Vec<String>,
        /// The whole input.
        span: Span,
    },
    /// The input could not be rendered.
    RenderError {
        /// What and where.
        error: RenderError,
        /// The whole input.
        span: Span,
    },
}

/// The document of render mode: the rendering, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RenderDocument {
    /// `{"prompt", "stop_sequences"}`.
    Rendered(Rendered),
    /// `{"error": {"code", "where"}}`.
    Refused {
        /// What and where.
        error: RenderError,
    },
    /// Before end of input: `{}`.
    Empty {},
}

/// Holds the whole input and renders it at end of input.
#[derive(Clone, Debug)]
pub struct RenderMachine {
    options: Value,
}

impl RenderMachine {
    /// A machine whose session options (a JSON object) override the input's.
    pub fn new(options: Value) -> Self {
        RenderMachine { options }
    }
}

impl Machine for RenderMachine {
    type Event = RenderEvent;

    fn advance(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<RenderEvent>,
    ) -> usize {
        if !eof {
            return 0;
        }
        let span = Span::new(base, base + pending.len());
        out.push(match render_text(pending, &self.options) {
            Ok(Rendered {
                prompt,
                stop_sequences,
            }) => RenderEvent::Rendered {
                prompt,
                stop_sequences,
                span,
            },
            Err(error) => RenderEvent::RenderError { error, span },
        });
        pending.len()
    }
}

/// Folds the [`RenderEvent`] into a [`RenderDocument`].
#[derive(Clone, Debug)]
pub struct RenderFolder {
    document: RenderDocument,
}

impl Default for RenderFolder {
    fn default() -> Self {
        RenderFolder {
            document: RenderDocument::Empty {},
        }
    }
}

impl Fold<RenderEvent> for RenderFolder {
    type Document = RenderDocument;

    fn push(&mut self, event: &RenderEvent) {
        self.document = match event {
            RenderEvent::Rendered {
                prompt,
                stop_sequences,
                ..
            } => RenderDocument::Rendered(Rendered {
                prompt: prompt.clone(),
                stop_sequences: stop_sequences.clone(),
            }),
            RenderEvent::RenderError { error, .. } => RenderDocument::Refused {
                error: error.clone(),
            },
        };
    }

    fn document(&self) -> &RenderDocument {
        &self.document
    }

    fn into_document(self) -> RenderDocument {
        self.document
    }

    fn is_clean(&self) -> bool {
        !matches!(self.document, RenderDocument::Refused { .. })
    }

    fn marks_unclean(event: &RenderEvent) -> bool {
        matches!(event, RenderEvent::RenderError { .. })
    }
}

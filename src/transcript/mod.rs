//! The transcript dialect: conversations written as one prompt string, in four
//! formats (`human-assistant`, `participants`, `completions`, `chatml`), and the
//! stop scanner that cuts a model's continuation at the first stop sequence.
//! Rules: spec/transcript.md.
//!
//! One dialect, four modes (the `mode` option): `parse` a prompt into its
//! system prompt, messages and open turn; `render` a conversation into a prompt
//! and its stop sequences; `scan` a continuation for the earliest stop; `request`
//! a normalized conversation (content blocks, tools, cache markers) into a
//! provider request, by one of four formatters ([`build_request`]).
//!
//! ```
//! use idiolect::transcript::{self, Document, Format, Options};
//! let options = Options {
//!     format: Format::Participants,
//!     participants: vec!["Alice".into(), "Claude".into()],
//!     ..Options::default()
//! };
//! let Document::Prompt(doc) = transcript::parse("Alice: Hi\nNote: x\nClaude:", &options).unwrap()
//! else { unreachable!() };
//! assert_eq!(doc.messages[0].content, "Hi\nNote: x");
//! assert_eq!(doc.open.unwrap().speaker, "Claude");
//!
//! // The scanner stops at the earliest match by position, not by list order.
//! let mut scanner = transcript::Scanner::new(transcript::ScanMachine::new(
//!     vec!["</function_calls>".into(), "\nUser:".into()],
//!     false,
//! ));
//! let mut events = Vec::new();
//! for chunk in ["Done.\nUs", "er: next</function_calls>"] {
//!     events.extend(scanner.feed(chunk.as_bytes()));
//! }
//! events.extend(scanner.finish());
//! let doc = transcript::ScanDocument::fold(&events);
//! assert_eq!((doc.text.as_str(), doc.stop.unwrap().index), ("Done.", 1));
//! ```

mod blocks;
mod finder;
mod grammar;
mod machine;
mod options;
mod prompt;
mod render;
mod request;
mod scan;

pub use machine::PromptMachine;
pub use options::{
    Format, Mode, Options, OptionsProblem, DEFAULT_EOT, DEFAULT_MAX_NAME_BYTES,
    DEFAULT_MAX_STOP_PARTICIPANTS, MAX_NAME_BYTES_LIMIT,
};
pub use prompt::{Code, Diagnostic, Event, Message, PromptDocument, PromptFolder};
pub(crate) use render::render_value;
pub use render::{
    render, stop_sequences, Conversation, RenderCode, RenderDocument, RenderError, RenderEvent,
    RenderFolder, RenderMachine, Rendered, Turn,
};
pub use request::{
    build_request, build_request_text, build_request_value, Block, CacheControl, Content,
    Formatter, MediaPolicy, ParticipantMode, ProviderBlock, ProviderMessage, Request,
    RequestDocument, RequestEvent, RequestFolder, RequestInput, RequestMachine, RequestMessage,
    RequestOptions, Role, SystemPrompt, ToolFormat, ToolMode, Warning, WarningCode,
    MAX_CACHE_MARKS,
};
pub use scan::{ScanDocument, ScanEvent, ScanFolder, ScanMachine, StopMatch};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::fold::{self, DialectMachine, Fold, Spanned};
use crate::reentry::Stream;
use crate::span::Span;

/// The streaming prompt parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<PromptMachine>;
/// The streaming stop scanner: feed chunks, get [`ScanEvent`]s.
pub type Scanner = Stream<ScanMachine>;

/// A partial UTF-8 character the re-entry layer may carry besides held text.
const UTF8_CARRY: usize = 3;

/// The document of any mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Document {
    /// Parse mode.
    Prompt(PromptDocument),
    /// Scan mode.
    Scan(ScanDocument),
    /// Render mode.
    Render(RenderDocument),
    /// Request mode.
    Request(RequestDocument),
}

impl ScanDocument {
    /// Folds a whole event sequence.
    pub fn fold(events: &[ScanEvent]) -> ScanDocument {
        let mut folder = ScanFolder::default();
        events.iter().for_each(|e| folder.push(e));
        folder.into_document()
    }
}

impl PromptDocument {
    /// Folds a whole event sequence (without spans).
    pub fn fold(events: &[Event]) -> PromptDocument {
        let mut folder = PromptFolder::new(false);
        events.iter().for_each(|e| folder.push(e));
        folder.into_document()
    }
}

/// The stop sequences a scan uses: the `stop` option, or derived (TR-62).
pub fn scan_stops(options: &Options) -> Vec<String> {
    match &options.stop {
        Some(stops) => stops.clone(),
        None => stop_sequences(options, &[], options.assistant_name()),
    }
}

/// The options that differ from the defaults, as JSON: in render mode these
/// override the input's own options (TR-60).
fn explicit_options(options: &Options) -> Value {
    let (Ok(Value::Object(given)), Ok(Value::Object(default))) = (
        serde_json::to_value(options),
        serde_json::to_value(Options::default()),
    ) else {
        return Value::Null;
    };
    Value::Object(
        given
            .into_iter()
            .filter(|(k, v)| default.get(k) != Some(v))
            .collect(),
    )
}

/// Handles a whole input in the mode the options say (the streaming machinery,
/// fed once).
pub fn parse(input: &str, options: &Options) -> Result<Document, OptionsProblem> {
    Ok(match options.mode {
        Mode::Parse => Document::Prompt(fold::parse_whole::<PromptMachine>(input, options)?),
        Mode::Scan => Document::Scan(fold::parse_whole::<ScanMachine>(input, options)?),
        Mode::Render => Document::Render(fold::parse_whole::<RenderMachine>(input, options)?),
        Mode::Request => Document::Request(fold::parse_whole::<RequestMachine>(input, options)?),
    })
}

/// The session's request options (TR-90): they override the input's.
pub(crate) fn request_overrides(options: &Options) -> Value {
    options
        .request
        .clone()
        .map(Value::Object)
        .unwrap_or(Value::Null)
}

/// Request mode: the session's `request` option overrides the input's own options
/// key by key (TR-90).
impl DialectMachine for RequestMachine {
    const NAME: &'static str = "transcript";
    type Options = Options;
    type Problem = OptionsProblem;
    type Folder = RequestFolder;

    fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        options.check()?;
        Ok(RequestMachine::new(request_overrides(options)))
    }

    fn folder(_: &Options, _: bool, _: usize) -> RequestFolder {
        RequestFolder::default()
    }

    fn hold_back_bound(&self) -> Option<usize> {
        None
    }
}

impl DialectMachine for PromptMachine {
    const NAME: &'static str = "transcript";
    type Options = Options;
    type Problem = OptionsProblem;
    type Folder = PromptFolder;

    fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        PromptMachine::new(options)
    }

    fn folder(_: &Options, spans: bool, _: usize) -> PromptFolder {
        PromptFolder::new(spans)
    }

    fn hold_back_bound(&self) -> Option<usize> {
        Some(PromptMachine::hold_back_bound(self) + UTF8_CARRY)
    }
}

impl DialectMachine for ScanMachine {
    const NAME: &'static str = "transcript";
    type Options = Options;
    type Problem = OptionsProblem;
    type Folder = ScanFolder;

    fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        options.check()?;
        Ok(ScanMachine::new(
            scan_stops(options),
            options.structure_aware,
        ))
    }

    fn folder(_: &Options, _: bool, _: usize) -> ScanFolder {
        ScanFolder::default()
    }

    fn hold_back_bound(&self) -> Option<usize> {
        Some(ScanMachine::hold_back_bound(self) + UTF8_CARRY)
    }
}

/// Render mode through the typed API: the options that differ from the defaults
/// override the input's own (TR-60). The registry passes the options exactly as
/// given instead, so an option set to its default value still overrides.
impl DialectMachine for RenderMachine {
    const NAME: &'static str = "transcript";
    type Options = Options;
    type Problem = OptionsProblem;
    type Folder = RenderFolder;

    fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        Ok(RenderMachine::new(explicit_options(options)))
    }

    fn folder(_: &Options, _: bool, _: usize) -> RenderFolder {
        RenderFolder::default()
    }

    fn hold_back_bound(&self) -> Option<usize> {
        None
    }
}

impl Spanned for Event {
    fn span(&self) -> Span {
        match self {
            Event::TurnStart { span, .. }
            | Event::SystemStart { span }
            | Event::Content { span, .. }
            | Event::TurnEnd { span, .. }
            | Event::Separator { span, .. }
            | Event::Stray { span, .. }
            | Event::Diagnostic { span, .. } => *span,
        }
    }
}

impl Spanned for ScanEvent {
    fn span(&self) -> Span {
        match self {
            ScanEvent::Text { span, .. }
            | ScanEvent::Stop { span, .. }
            | ScanEvent::Rest { span, .. } => *span,
        }
    }
}

impl Spanned for RequestEvent {
    fn span(&self) -> Span {
        match self {
            RequestEvent::Request { span, .. } | RequestEvent::RequestError { span, .. } => *span,
        }
    }
}

impl Spanned for RenderEvent {
    fn span(&self) -> Span {
        match self {
            RenderEvent::Rendered { span, .. } | RenderEvent::RenderError { span, .. } => *span,
        }
    }
}

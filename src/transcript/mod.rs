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

pub use grammar::{Rule, TranscriptGrammar};
pub use machine::PromptMachine;
pub use options::{
    Format, Mode, Options, OptionsProblem, DEFAULT_EOT, DEFAULT_MAX_NAME_BYTES,
    DEFAULT_MAX_STOP_PARTICIPANTS, MAX_NAME_BYTES_LIMIT,
};
pub use prompt::{Code, Diagnostic, Event, Message, PromptDocument, PromptFolder};
pub use render::{
    render, render_text, render_value, stop_sequences, Conversation, RenderCode, RenderDocument,
    RenderError, RenderEvent, RenderFolder, RenderMachine, Rendered, Turn,
};
pub use request::{
    build_request, build_request_text, build_request_value, Block, CacheControl, CacheKind,
    Content, Formatter, MediaPolicy, ParticipantMode, ProviderBlock, ProviderMessage, Request,
    RequestDocument, RequestEvent, RequestFolder, RequestInput, RequestMachine, RequestMessage,
    RequestOptions, Role, SystemPrompt, ToolFormat, ToolMode, Warning, WarningCode,
    MAX_CACHE_MARKS,
};
pub use scan::{ScanDocument, ScanEvent, ScanFolder, ScanMachine, StopMatch};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::reentry::Stream;
use crate::session::{self, Fold, OptionsError, Session, TypedSession};

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

fn run<M: crate::Machine, F: Fold<M::Event>>(machine: M, mut folder: F, input: &str) -> F {
    session::fold_whole(Stream::new(machine), input.as_bytes(), &mut folder);
    folder
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
        Mode::Parse => {
            let folder = run(
                PromptMachine::new(options)?,
                PromptFolder::new(false),
                input,
            );
            Document::Prompt(folder.into_document())
        }
        Mode::Scan => {
            options.check()?;
            let machine = ScanMachine::new(scan_stops(options), options.structure_aware);
            Document::Scan(run(machine, ScanFolder::default(), input).into_document())
        }
        Mode::Render => {
            let folder = run(
                RenderMachine::new(explicit_options(options)),
                RenderFolder::default(),
                input,
            );
            Document::Render(folder.document().clone())
        }
        Mode::Request => {
            options.check()?;
            let folder = run(
                RequestMachine::new(request_overrides(options)),
                RequestFolder::default(),
                input,
            );
            Document::Request(folder.document().clone())
        }
    })
}

fn open(options: &Value, spans: bool) -> Result<Box<dyn Session>, OptionsError> {
    let parsed: Options = session::options_from_json("transcript", options)?;
    let problem = |e: OptionsProblem| OptionsError::new("transcript", e.to_string());
    Ok(match parsed.mode {
        Mode::Parse => {
            let machine = PromptMachine::new(&parsed).map_err(problem)?;
            let bound = machine.hold_back_bound() + UTF8_CARRY;
            Box::new(TypedSession::new(
                machine,
                PromptFolder::new(spans),
                Some(bound),
            ))
        }
        Mode::Scan => {
            parsed.check().map_err(problem)?;
            let machine = ScanMachine::new(scan_stops(&parsed), parsed.structure_aware);
            let bound = machine.hold_back_bound() + UTF8_CARRY;
            Box::new(TypedSession::new(
                machine,
                ScanFolder::default(),
                Some(bound),
            ))
        }
        Mode::Render => {
            parsed.check().map_err(problem)?;
            let given = if options.is_object() {
                options.clone()
            } else {
                Value::Null
            };
            Box::new(TypedSession::new(
                RenderMachine::new(given),
                RenderFolder::default(),
                None,
            ))
        }
        Mode::Request => {
            parsed.check().map_err(problem)?;
            Box::new(TypedSession::new(
                RequestMachine::new(request_overrides(&parsed)),
                RequestFolder::default(),
                None,
            ))
        }
    })
}

/// The session's request options (TR-90): they override the input's.
fn request_overrides(options: &Options) -> Value {
    options
        .request
        .clone()
        .map(Value::Object)
        .unwrap_or(Value::Null)
}

/// `idiolect render transcript`: `what` is `None` (the JSON document),
/// `prompt` (the prompt text), `stop_sequences` (a JSON array) or `request`
/// (the provider request of request mode, TR-90).
fn render_entry(what: Option<&str>, input: &Value, options: &Value) -> Result<String, String> {
    if what == Some("request") {
        let parsed: Options =
            session::options_from_json("transcript", options).map_err(|e| e.to_string())?;
        parsed
            .check()
            .map_err(|e| format!("invalid transcript options: {e}"))?;
        let request =
            build_request_value(input, &request_overrides(&parsed)).map_err(|e| e.to_string())?;
        return Ok(pretty(&request));
    }
    let rendered = render_value(input, options).map_err(|e| e.to_string())?;
    match what {
        None => Ok(pretty(&rendered)),
        Some("prompt") => Ok(rendered.prompt),
        Some("stop_sequences") => Ok(pretty(&rendered.stop_sequences)),
        Some(other) => Err(format!(
            "transcript renders the prompt, not {other:?} (try prompt, stop_sequences or request)"
        )),
    }
}

fn pretty<T: Serialize>(value: &T) -> String {
    // Plain data (strings and lists of strings) always serializes.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The transcript dialect for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "transcript",
    summary: "conversations as one prompt (four formats): parse, render, cut continuations at the first stop, build provider requests",
    open,
    render: Some(render_entry),
    schemas: session::schemas::<Options, Document>,
};

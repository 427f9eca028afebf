//! The dynamic layer: drive any dialect by name, with JSON options and JSON output.
//!
//! The CLI and the conformance runner use this; embedders who know their dialect
//! use the typed API of its module instead (`idiolect::sections::Parser`, ...).
//!
//! Every event a session emits is a JSON object with a `"type"` and a `"span"`
//! (`[start, end]` byte offsets). In emission order the spans tile the input:
//! each starts where the previous one ended (zero-width spans allowed), and the
//! last ends at the input's length after `finish` (contract S8).

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde_json::Value;

use crate::reentry::{Machine, Stream};

/// Options JSON that a dialect could not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OptionsError {
    /// The dialect the options were for.
    pub dialect: &'static str,
    /// What was wrong, in one line.
    pub message: String,
}

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid {} options: {}", self.dialect, self.message)
    }
}

impl std::error::Error for OptionsError {}

impl OptionsError {
    /// An error for `dialect` with `message`.
    pub fn new(dialect: &'static str, message: impl Into<String>) -> Self {
        OptionsError {
            dialect,
            message: message.into(),
        }
    }
}

/// Deserializes a dialect's options from JSON (`null` means all defaults).
pub fn options_from_json<T: serde::de::DeserializeOwned + Default>(
    dialect: &'static str,
    options: &Value,
) -> Result<T, OptionsError> {
    if options.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(options.clone()).map_err(|e| OptionsError::new(dialect, e.to_string()))
}

/// A running parse of one input, driven with bytes and producing JSON.
pub trait Session {
    /// Feeds a chunk; pushes the events it decided.
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<Value>);
    /// Ends the input; pushes the events end-of-input decides.
    fn finish(&mut self, events: &mut Vec<Value>);
    /// The document folded from every event so far (complete after `finish`).
    fn document(&self) -> Value;
    /// The most bytes the dialect may hold back undecided with these options, or
    /// `None` when a unit is held whole until it completes (documented per dialect).
    fn hold_back_bound(&self) -> Option<usize>;
    /// Whether the document is free of errors (the CLI exits 1 when it is not).
    fn is_clean(&self) -> bool {
        true
    }
    /// How many invalid UTF-8 sequences were replaced with U+FFFD so far.
    fn replaced_sequences(&self) -> usize {
        0
    }
    /// Stops folding events into the document: events are still emitted, but
    /// [`Session::document`] no longer grows, so memory stays flat however long the
    /// input (for consumers of the event stream, such as `idiolect stream`).
    /// [`Session::is_clean`] keeps working.
    fn stop_folding(&mut self) {}
    /// Feeds input and folds its events without returning them: a whole-document
    /// parse that never holds more than one piece's events at a time.
    fn feed_folding(&mut self, bytes: &[u8]) {
        let mut events = Vec::new();
        for piece in bytes.chunks(WHOLE_PARSE_PIECE) {
            self.feed(piece, &mut events);
            events.clear();
        }
    }
}

/// Piece size for whole-document parses: the input is fed in pieces this large so
/// that the events of one piece are folded (and freed) before the next is parsed.
/// Any split gives the same document (S2), so this changes nothing but memory.
pub const WHOLE_PARSE_PIECE: usize = 64 * 1024;

/// Parses a whole input with `stream`, folding every event into `fold`.
pub fn fold_whole<M: Machine, F: Fold<M::Event>>(
    mut stream: Stream<M>,
    input: &[u8],
    fold: &mut F,
) {
    for piece in input.chunks(WHOLE_PARSE_PIECE) {
        for event in stream.feed(piece) {
            fold.push(&event);
        }
    }
    for event in stream.finish() {
        fold.push(&event);
    }
}

/// Folds a dialect's events into its document, one event at a time.
pub trait Fold<E> {
    /// The folded document.
    type Document: Serialize;
    /// Folds one more event in.
    fn push(&mut self, event: &E);
    /// The document so far.
    fn document(&self) -> &Self::Document;
    /// Whether the document is free of errors.
    fn is_clean(&self) -> bool {
        true
    }
    /// Whether this event alone makes the document unclean (an error item, a
    /// diagnostic). Lets a session that does not fold still know
    /// [`Session::is_clean`]; it must agree with [`Fold::is_clean`].
    fn marks_unclean(_event: &E) -> bool
    where
        Self: Sized,
    {
        false
    }
}

/// A [`Session`] made of a typed [`Stream`] and a [`Fold`].
pub struct TypedSession<M: Machine, F> {
    stream: Stream<M>,
    fold: F,
    hold_back_bound: Option<usize>,
    /// End of the last span emitted, where a diagnostic event is placed.
    covered: usize,
    /// Replacements already reported by an `invalid_utf8` event.
    reported: usize,
    /// False once [`Session::stop_folding`] was called.
    folding: bool,
    /// Whether an event marked the document unclean (tracked even without folding).
    unclean: bool,
}

impl<M: Machine, F: Fold<M::Event>> TypedSession<M, F> {
    /// A session over `machine`, folding into `fold`.
    pub fn new(machine: M, fold: F, hold_back_bound: Option<usize>) -> Self {
        TypedSession {
            stream: Stream::new(machine),
            fold,
            hold_back_bound,
            covered: 0,
            reported: 0,
            folding: true,
            unclean: false,
        }
    }
}

fn push_json<E: Serialize>(event: &E, events: &mut Vec<Value>) {
    // Event types are plain data (strings, numbers, maps with string keys), so
    // serializing them cannot fail; an empty object would still keep the stream going.
    events.push(serde_json::to_value(event).unwrap_or(Value::Null));
}

impl<M: Machine, F> TypedSession<M, F> {
    /// Appends an `invalid_utf8` event when the last feed replaced invalid UTF-8:
    /// `{"type":"invalid_utf8","replaced":N,"span":[p,p]}`, zero-width at the end of
    /// what has been emitted, with N the number of sequences replaced since the last
    /// such event. It is a diagnostic only: it changes no document.
    fn report_replacements(&mut self, first: usize, events: &mut Vec<Value>) {
        if let Some(end) = events[first..]
            .iter()
            .rev()
            .find_map(|e| e["span"][1].as_u64())
        {
            self.covered = end as usize;
        }
        let replaced = self.stream.reentry().replaced();
        if replaced > self.reported {
            events.push(serde_json::json!({
                "type": "invalid_utf8",
                "replaced": replaced - self.reported,
                "span": [self.covered, self.covered],
            }));
            self.reported = replaced;
        }
    }
}

impl<M, F> Session for TypedSession<M, F>
where
    M: Machine,
    M::Event: Serialize,
    F: Fold<M::Event>,
{
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<Value>) {
        let first = events.len();
        for event in self.stream.feed(bytes) {
            self.unclean |= F::marks_unclean(&event);
            if self.folding {
                self.fold.push(&event);
            }
            push_json(&event, events);
        }
        self.report_replacements(first, events);
    }

    fn finish(&mut self, events: &mut Vec<Value>) {
        let first = events.len();
        for event in self.stream.finish() {
            self.unclean |= F::marks_unclean(&event);
            if self.folding {
                self.fold.push(&event);
            }
            push_json(&event, events);
        }
        self.report_replacements(first, events);
    }

    fn stop_folding(&mut self) {
        self.folding = false;
    }

    fn replaced_sequences(&self) -> usize {
        self.stream.reentry().replaced()
    }

    fn feed_folding(&mut self, bytes: &[u8]) {
        for piece in bytes.chunks(WHOLE_PARSE_PIECE) {
            for event in self.stream.feed(piece) {
                self.fold.push(&event);
            }
        }
    }

    fn document(&self) -> Value {
        serde_json::to_value(self.fold.document()).unwrap_or(Value::Null)
    }

    fn hold_back_bound(&self) -> Option<usize> {
        self.hold_back_bound
    }

    fn is_clean(&self) -> bool {
        !self.unclean && self.fold.is_clean()
    }
}

/// A dialect as the CLI and the conformance runner see it.
#[derive(Clone, Copy)]
pub struct Dialect {
    /// The name used on the command line and as the corpus folder.
    pub name: &'static str,
    /// One line saying what the dialect is.
    pub summary: &'static str,
    /// Starts a session with JSON options; `spans` asks the document to carry spans.
    pub open: OpenFn,
    /// Renders JSON into the dialect's text (`idiolect render`), if the dialect can:
    /// `what` selects among several renderings (for example `calls`), `input` is the
    /// JSON read from stdin. Returns the text to print, or a one-line error.
    pub render: Option<RenderFn>,
    /// The JSON Schemas of the dialect's options and document (see [`schemas`]).
    pub schemas: SchemasFn,
}

/// The signature of [`Dialect::open`].
pub type OpenFn = fn(options: &Value, spans: bool) -> Result<Box<dyn Session>, OptionsError>;

/// The signature of [`Dialect::render`].
pub type RenderFn =
    fn(what: Option<&str>, input: &Value, options: &Value) -> Result<String, String>;

/// The signature of [`Dialect::schemas`].
pub type SchemasFn = fn() -> Schemas;

/// The JSON Schemas (draft 2020-12) of a dialect's JSON, generated from its Rust types.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Schemas {
    /// What the options deserializer accepts: an object whose keys are all optional
    /// and whose unknown keys are refused. Checks made after deserializing (a name's
    /// spelling, a bound's minimum) are not part of it.
    pub options: Value,
    /// What the document serializes to, without spans or with them. Every object of
    /// the document has exactly the listed keys (`additionalProperties: false`),
    /// except free-form maps such as attributes and typed tool inputs.
    pub document: Value,
}

/// The schemas of a dialect whose options deserialize into `O` and whose document
/// serializes from `D`: the [`SchemasFn`] of the dialects in this crate.
pub fn schemas<O: JsonSchema, D: JsonSchema>() -> Schemas {
    Schemas {
        options: schema_for::<O>(SchemaSettings::draft2020_12().for_deserialize()),
        document: schema_for::<D>(
            SchemaSettings::draft2020_12()
                .for_serialize()
                .with_transform(RecursiveTransform(close_object)),
        ),
    }
}

fn schema_for<T: JsonSchema>(settings: SchemaSettings) -> Value {
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Refuses unknown keys in an object schema that says nothing about them: document
/// structs list every key they serialize, while maps state their values' schema.
fn close_object(schema: &mut Schema) {
    if let Some(object) = schema.as_object_mut() {
        if object.get("type") == Some(&Value::from("object"))
            && !object.contains_key("additionalProperties")
        {
            object.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
}

impl std::fmt::Debug for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dialect").field("name", &self.name).finish()
    }
}

/// Every dialect this build knows, in a stable order.
pub fn dialects() -> &'static [Dialect] {
    &[
        crate::sections::DIALECT,
        crate::anthropic_xml::DIALECT,
        crate::kindaxml::DIALECT,
        crate::transcript::DIALECT,
        crate::plurnk::DIALECT,
        crate::field::hermes::DIALECT,
        crate::field::qwen3_coder::DIALECT,
        crate::field::deepseek::DIALECT_V3,
        crate::field::deepseek::DIALECT_V31,
        crate::field::harmony::DIALECT,
        crate::field::mistral::DIALECT,
    ]
}

/// The dialect called `name`, if there is one.
pub fn dialect(name: &str) -> Option<&'static Dialect> {
    dialects().iter().find(|d| d.name == name)
}

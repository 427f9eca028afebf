//! The registry: every dialect by name, driven with JSON options, writing JSON.
//!
//! It sits above the dialects (which know nothing of it) and drives each through
//! the traits of [`crate::fold`]. The CLI is built on it; embedders who know their
//! dialect use the typed API of its module instead (`idiolect::sections::Parser`,
//! ...).
//!
//! Every event a session emits is a JSON object with a `"type"` and a `"span"`
//! (`[start, end]` byte offsets). In emission order the spans tile the input:
//! each starts where the previous one ended (zero-width spans allowed), and the
//! last ends at the input's length after `finish` (contract S8). Events and
//! documents are serialized from the dialect's typed values straight into the
//! output, never through a `serde_json::Value` on the writing paths.

use std::io;
use std::sync::OnceLock;

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::field::DeltaProjection;
use crate::fold::{DialectMachine, Fold, Layout, SettledArray, Spanned, WHOLE_PARSE_PIECE};
use crate::reentry::{Machine, Stream};
use crate::span::Span;
use crate::{anthropic_xml, field, kindaxml, plurnk, sections, transcript};

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
pub(crate) fn options_from_json<T: DeserializeOwned + Default>(
    dialect: &'static str,
    options: &Value,
) -> Result<T, OptionsError> {
    if options.is_null() {
        return Ok(T::default());
    }
    T::deserialize(options).map_err(|e| OptionsError::new(dialect, e.to_string()))
}

/// A running parse of one input, driven with bytes and producing JSON.
///
/// Three ways to consume it, all writing JSON straight from the dialect's typed
/// events and document:
/// - as a stream of events: [`Session::feed_json`] and [`Session::finish_json`]
///   (one line of JSON per event, what `idiolect stream` prints);
/// - as one document written while it is folded: [`Session::feed_document`] and
///   [`Session::finish_document`] (what `idiolect parse` and `idiolect batch` do;
///   settled items are written and dropped, so memory stays near the input size);
/// - as JSON values, for tests and tools that inspect events: [`Session::feed`],
///   [`Session::finish`], [`Session::document`] (not a fast path).
///
/// A session is `Send`: it may move to another thread between calls (a Python
/// `Parser` used from an executor's threads, a future held across an `.await`).
pub trait Session: Send {
    /// Feeds a chunk; pushes the events it decided, as JSON values.
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<Value>);
    /// Ends the input; pushes the events end-of-input decides, as JSON values.
    fn finish(&mut self, events: &mut Vec<Value>);
    /// The document folded from every event so far (complete after `finish`), as
    /// a JSON value.
    fn document(&self) -> Value;
    /// Feeds a chunk; appends each event it decided to `out` as one line of
    /// compact JSON (ending in `\n`).
    fn feed_json(&mut self, bytes: &[u8], out: &mut Vec<u8>);
    /// Ends the input; appends the events end-of-input decides as lines of JSON.
    fn finish_json(&mut self, out: &mut Vec<u8>);
    /// Feeds a piece of a whole parse: folds its events (emitting none) and writes
    /// to `out` the part of the document that no later input can change. Every
    /// call of one parse must use the same `layout`; end with
    /// [`Session::finish_document`]. Afterwards [`Session::document`] holds only
    /// what was not written yet.
    fn feed_document(
        &mut self,
        bytes: &[u8],
        layout: Layout,
        out: &mut dyn io::Write,
    ) -> io::Result<()>;
    /// Ends a parse begun with [`Session::feed_document`] (or with no input at
    /// all) and writes the rest of the document, in `layout`, without a final
    /// newline. The bytes written in all equal those of serializing the finished
    /// document at once.
    fn finish_document(&mut self, layout: Layout, out: &mut dyn io::Write) -> io::Result<()>;
    /// The most bytes the dialect may hold back undecided with these options, or
    /// `None` when a unit is held whole until it completes (documented per dialect).
    fn hold_back_bound(&self) -> Option<usize>;
    /// Whether the document is free of errors (the CLI exits 1 when it is not).
    fn is_clean(&self) -> bool;
    /// How many invalid UTF-8 sequences were replaced with U+FFFD so far.
    fn replaced_sequences(&self) -> usize;
    /// For a field family: feeds a chunk (`finish`: ends the input instead) and
    /// appends to `out`, one line of compact JSON each, the chat-completion
    /// deltas its events release through `projection` (events that carry no
    /// delta, such as `invalid_utf8` diagnostics, add nothing). Returns `false`,
    /// having fed nothing, for a dialect whose events are not a field family's,
    /// and by default (a session made elsewhere has no projection to offer).
    fn feed_deltas(
        &mut self,
        bytes: &[u8],
        finish: bool,
        projection: &mut DeltaProjection,
        out: &mut Vec<u8>,
    ) -> bool {
        let _ = (bytes, finish, projection, out);
        false
    }
    /// Stops folding events into the document: events are still emitted, but
    /// [`Session::document`] no longer grows, so memory stays flat however long the
    /// input (for consumers of the event stream, such as `idiolect stream`).
    /// [`Session::is_clean`] keeps working.
    fn stop_folding(&mut self);
}

/// A [`Session`] made of a typed [`Stream`] and a [`Fold`].
pub(crate) struct TypedSession<M: Machine, F> {
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
    /// The document's leading array while it is written as it settles.
    settled: Option<SettledArray>,
}

impl<M: Machine, F> TypedSession<M, F> {
    /// A session over `machine`, folding into `fold`.
    pub(crate) fn new(machine: M, fold: F, hold_back_bound: Option<usize>) -> Self {
        TypedSession {
            stream: Stream::new(machine),
            fold,
            hold_back_bound,
            covered: 0,
            reported: 0,
            folding: true,
            unclean: false,
            settled: None,
        }
    }

    /// The `invalid_utf8` diagnostic owed after a feed, if the feed replaced
    /// invalid UTF-8: `{"type":"invalid_utf8","replaced":N,"span":[p,p]}`,
    /// zero-width at the end of what has been emitted, with N the number of
    /// sequences replaced since the last such event. It changes no document.
    fn replacements(&mut self) -> Option<InvalidUtf8> {
        let replaced = self.stream.reentry().replaced();
        if replaced <= self.reported {
            return None;
        }
        let event = InvalidUtf8 {
            kind: "invalid_utf8",
            replaced: replaced - self.reported,
            span: Span::empty(self.covered),
        };
        self.reported = replaced;
        Some(event)
    }
}

/// A dialect's event as a field family's event, if it is one: what
/// [`Session::feed_deltas`] projects. Every event type says; only
/// [`field::Event`] is one.
pub(crate) trait AsFieldEvent {
    /// The event as a field family's, or `None`.
    fn as_field(&self) -> Option<&field::Event> {
        None
    }
    /// Whether the type is a field family's event.
    const IS_FIELD: bool = false;
}

impl AsFieldEvent for field::Event {
    fn as_field(&self) -> Option<&field::Event> {
        Some(self)
    }
    const IS_FIELD: bool = true;
}

impl AsFieldEvent for crate::sections::Event {}
impl AsFieldEvent for crate::anthropic_xml::Event {}
impl AsFieldEvent for crate::plurnk::Event {}
impl AsFieldEvent for crate::kindaxml::Event {}
impl AsFieldEvent for crate::transcript::Event {}
impl AsFieldEvent for crate::transcript::ScanEvent {}
impl AsFieldEvent for crate::transcript::RequestEvent {}
impl AsFieldEvent for crate::transcript::RenderEvent {}

/// The diagnostic event a session adds when invalid UTF-8 was replaced.
#[derive(Serialize)]
struct InvalidUtf8 {
    #[serde(rename = "type")]
    kind: &'static str,
    replaced: usize,
    span: Span,
}

/// Appends `value` to `out` as one line of compact JSON.
fn push_line<T: Serialize>(value: &T, out: &mut Vec<u8>) {
    // Events are plain data (strings, numbers, maps with string keys) written to
    // memory: serializing them cannot fail.
    if serde_json::to_writer(&mut *out, value).is_ok() {
        out.push(b'\n');
    }
}

fn push_value<T: Serialize>(value: &T, out: &mut Vec<Value>) {
    // As in `push_line`: plain data always converts.
    out.push(serde_json::to_value(value).unwrap_or(Value::Null));
}

impl<M, F> TypedSession<M, F>
where
    M: Machine,
    M::Event: Serialize + Spanned + AsFieldEvent,
    F: Fold<M::Event>,
{
    /// Runs `events` (what one feed or the finish decided) through the fold and
    /// hands each to `emit`.
    fn take(&mut self, finish: bool, bytes: &[u8], mut emit: impl FnMut(&M::Event)) {
        let events = if finish {
            self.stream.finish()
        } else {
            self.stream.feed(bytes)
        };
        for event in events {
            self.unclean |= F::marks_unclean(&event);
            if self.folding {
                self.fold.push(&event);
            }
            self.covered = event.span().end;
            emit(&event);
        }
    }

    fn values(&mut self, finish: bool, bytes: &[u8], out: &mut Vec<Value>) {
        self.take(finish, bytes, |e| push_value(e, out));
        if let Some(diagnostic) = self.replacements() {
            push_value(&diagnostic, out);
        }
    }

    fn lines(&mut self, finish: bool, bytes: &[u8], out: &mut Vec<u8>) {
        self.take(finish, bytes, |e| push_line(e, out));
        if let Some(diagnostic) = self.replacements() {
            push_line(&diagnostic, out);
        }
    }

    fn write_settled(&mut self, layout: Layout, out: &mut dyn io::Write) -> io::Result<()> {
        let Some(key) = F::SETTLED_KEY else {
            return Ok(());
        };
        let array = self.settled.get_or_insert_with(|| {
            if F::SETTLED_HELD {
                SettledArray::held(key, layout)
            } else {
                SettledArray::new(key, layout)
            }
        });
        self.fold.write_settled(array);
        array.drain_to(out)
    }
}

impl<M, F> Session for TypedSession<M, F>
where
    M: Machine + Send,
    M::Event: Serialize + Spanned + AsFieldEvent + Send,
    F: Fold<M::Event> + Send,
{
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<Value>) {
        self.values(false, bytes, events);
    }

    fn finish(&mut self, events: &mut Vec<Value>) {
        self.values(true, &[], events);
    }

    fn document(&self) -> Value {
        serde_json::to_value(self.fold.document()).unwrap_or(Value::Null)
    }

    fn feed_json(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        self.lines(false, bytes, out);
    }

    fn finish_json(&mut self, out: &mut Vec<u8>) {
        self.lines(true, &[], out);
    }

    fn feed_document(
        &mut self,
        bytes: &[u8],
        layout: Layout,
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        for piece in bytes.chunks(WHOLE_PARSE_PIECE) {
            self.take(false, piece, |_| {});
            self.fold.release_settled();
            self.write_settled(layout, out)?;
        }
        Ok(())
    }

    fn finish_document(&mut self, layout: Layout, out: &mut dyn io::Write) -> io::Result<()> {
        self.take(true, &[], |_| {});
        self.replacements();
        self.write_settled(layout, out)?;
        let array = self.settled.take();
        match array {
            Some(array) if array.started() => {
                let mut rest = Vec::new();
                self.fold.write_document(&mut rest, layout)?;
                array.finish(&rest, out)
            }
            // `write_document` buffers what it writes (`write_json_dyn`).
            _ => self.fold.write_document(out, layout),
        }
    }

    fn feed_deltas(
        &mut self,
        bytes: &[u8],
        finish: bool,
        projection: &mut DeltaProjection,
        out: &mut Vec<u8>,
    ) -> bool {
        if !M::Event::IS_FIELD {
            return false;
        }
        let mut deltas = Vec::new();
        self.take(finish, bytes, |event| {
            if let Some(event) = event.as_field() {
                projection.push(event, &mut deltas);
            }
        });
        // Counted as reported, as after any feed; a diagnostic carries no delta.
        self.replacements();
        for delta in &deltas {
            push_line(delta, out);
        }
        true
    }

    fn stop_folding(&mut self) {
        self.folding = false;
    }

    fn replaced_sequences(&self) -> usize {
        self.stream.reentry().replaced()
    }

    fn hold_back_bound(&self) -> Option<usize> {
        self.hold_back_bound
    }

    fn is_clean(&self) -> bool {
        !self.unclean && self.fold.is_clean()
    }
}

/// Opens a session of a dialect whose machine is `M`: the generic path of every
/// dialect's [`Dialect::open`].
pub(crate) fn open<M>(options: &Value, spans: bool) -> Result<Box<dyn Session>, OptionsError>
where
    M: DialectMachine + Send + 'static,
    M::Options: DeserializeOwned,
    M::Event: Serialize + Spanned + AsFieldEvent + Send,
    M::Folder: Send + 'static,
{
    let options: M::Options = options_from_json(M::NAME, options)?;
    let machine =
        M::with_options(&options).map_err(|e| OptionsError::new(M::NAME, e.to_string()))?;
    let bound = machine.hold_back_bound();
    let folder = M::folder(&options, spans, 0);
    Ok(Box::new(TypedSession::new(machine, folder, bound)))
}

/// A session over a machine built outside the registry (a field family defined at
/// run time, [`crate::field::custom::Family::open`]).
pub(crate) fn open_machine<M, F>(
    machine: M,
    fold: F,
    hold_back_bound: Option<usize>,
) -> Box<dyn Session>
where
    M: Machine + Send + 'static,
    M::Event: Serialize + Spanned + AsFieldEvent + Send,
    F: Fold<M::Event> + Send + 'static,
{
    Box::new(TypedSession::new(machine, fold, hold_back_bound))
}

/// Options a family refused, as the registry reports them.
fn refused(e: field::custom::FamilyError) -> OptionsError {
    match e {
        field::custom::FamilyError::Options(message) => OptionsError::new("custom", message),
        other => OptionsError::new("custom", other.to_string()),
    }
}

/// The registry's side of a field family defined at run time: JSON options and
/// sessions, as for the built-in dialects.
impl field::custom::Family {
    /// The family's options from JSON (`null`: all defaults): the field options of
    /// FD-3, and `reasoning_markers` where the family honours it (CF-4, CF-19).
    pub fn options(&self, options: &Value) -> Result<field::custom::Options, OptionsError> {
        let parsed: field::custom::Options = options_from_json("custom", options)?;
        self.machine(&parsed).map_err(refused)?;
        Ok(parsed)
    }

    /// A session of the registry's kind (JSON options in, JSON events and
    /// document out), as the CLI and the conformance runner drive a dialect.
    pub fn open(&self, options: &Value, spans: bool) -> Result<Box<dyn Session>, OptionsError> {
        let parsed: field::custom::Options = options_from_json("custom", options)?;
        let machine = self.machine(&parsed).map_err(refused)?;
        Ok(open_machine(
            machine,
            field::DocumentFolder::new(spans),
            None,
        ))
    }
}

/// The transcript dialect's sessions: one machine per mode.
fn open_transcript(options: &Value, spans: bool) -> Result<Box<dyn Session>, OptionsError> {
    use crate::transcript::{
        Mode, PromptMachine, RenderFolder, RenderMachine, RequestMachine, ScanMachine,
    };
    let parsed: transcript::Options = options_from_json("transcript", options)?;
    match parsed.mode {
        Mode::Parse => open::<PromptMachine>(options, spans),
        Mode::Scan => open::<ScanMachine>(options, spans),
        Mode::Request => open::<RequestMachine>(options, spans),
        Mode::Render => {
            parsed
                .check()
                .map_err(|e| OptionsError::new("transcript", e.to_string()))?;
            // The options as given (not as defaulted) override the input's own
            // options key by key (TR-60).
            let given = if options.is_object() {
                options.clone()
            } else {
                Value::Null
            };
            Ok(Box::new(TypedSession::new(
                RenderMachine::new(given),
                RenderFolder::default(),
                None,
            )))
        }
    }
}

/// `idiolect render transcript`: `what` is `None` (the JSON document),
/// `prompt` (the prompt text), `stop_sequences` (a JSON array) or `request`
/// (the provider request of request mode, TR-90).
fn render_transcript(what: Option<&str>, input: &Value, options: &Value) -> Result<String, String> {
    if what == Some("request") {
        let parsed: transcript::Options =
            options_from_json("transcript", options).map_err(|e| e.to_string())?;
        parsed
            .check()
            .map_err(|e| format!("invalid transcript options: {e}"))?;
        let request =
            transcript::build_request_value(input, &transcript::request_overrides(&parsed))
                .map_err(|e| e.to_string())?;
        return Ok(pretty(&request));
    }
    let rendered = transcript::render_value(input, options).map_err(|e| e.to_string())?;
    match what {
        None => Ok(pretty(&rendered)),
        Some("prompt") => Ok(rendered.prompt),
        Some("stop_sequences") => Ok(pretty(&rendered.stop_sequences)),
        Some(other) => Err(format!(
            "transcript renders the prompt, not {other:?} (try prompt, stop_sequences or request)"
        )),
    }
}

/// `idiolect render anthropic-xml`: `what` is `calls` (the default), `results` or
/// `tools`; `input` the JSON array to render.
fn render_anthropic_xml(
    what: Option<&str>,
    input: &Value,
    options: &Value,
) -> Result<String, String> {
    let options: anthropic_xml::Options =
        options_from_json("anthropic-xml", options).map_err(|e| e.to_string())?;
    anthropic_xml::render_json(what, input, &options)
}

/// Pretty JSON of plain data and a newline, for the renderers' JSON output.
fn pretty<T: Serialize>(value: &T) -> String {
    // Plain data (strings and lists of strings) always serializes.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// A dialect as the CLI and the conformance runner see it.
#[derive(Clone, Copy)]
pub struct Dialect {
    /// The name used on the command line and as the corpus folder.
    pub name: &'static str,
    /// One line saying what the dialect is.
    pub summary: &'static str,
    kind: Kind,
}

/// How a dialect is run.
#[derive(Clone, Copy)]
enum Kind {
    /// By functions of its own.
    Fixed {
        open: OpenFn,
        render: Option<RenderFn>,
        schemas: SchemasFn,
    },
    /// A field family run by the engine (its entry of `field::families::TABLE`).
    Engine {
        name: &'static str,
        /// Its Rust renderer, where its description has none (the table's entry).
        render: Option<RenderFn>,
    },
}

impl Dialect {
    /// A dialect run by functions of its own.
    const fn fixed(
        name: &'static str,
        summary: &'static str,
        open: OpenFn,
        render: Option<RenderFn>,
        schemas: SchemasFn,
    ) -> Dialect {
        Dialect {
            name,
            summary,
            kind: Kind::Fixed {
                open,
                render,
                schemas,
            },
        }
    }

    /// Starts a session with JSON options; `spans` asks the document to carry spans.
    pub fn open(&self, options: &Value, spans: bool) -> Result<Box<dyn Session>, OptionsError> {
        match self.kind {
            Kind::Fixed { open, .. } => open(options, spans),
            Kind::Engine { name, .. } => {
                let family = engine(name);
                let parsed: field::custom::Options = options_from_json(name, options)?;
                let machine = family.machine(&parsed).map_err(|e| match e {
                    field::custom::FamilyError::Options(message) => {
                        OptionsError::new(name, message)
                    }
                    other => OptionsError::new(name, other.to_string()),
                })?;
                Ok(open_machine(
                    machine,
                    field::DocumentFolder::new(spans),
                    None,
                ))
            }
        }
    }

    /// Whether the dialect renders (`idiolect render`).
    pub fn renders(&self) -> bool {
        match self.kind {
            Kind::Fixed { render, .. } => render.is_some(),
            Kind::Engine { name, render } => {
                render.is_some()
                    || field::families::description(name).is_some_and(|d| d.render.is_some())
            }
        }
    }

    /// Renders JSON into the dialect's text (`idiolect render`): `what` selects
    /// among several renderings (for example `calls`), `input` is the JSON read from
    /// stdin. Returns the text to print, or a one-line error (also when the dialect
    /// does not render, [`Dialect::renders`]).
    pub fn render(
        &self,
        what: Option<&str>,
        input: &Value,
        options: &Value,
    ) -> Result<String, String> {
        match self.kind {
            Kind::Fixed { render, .. } => match render {
                Some(render) => render(what, input, options),
                None => Err(format!("{} does not render", self.name)),
            },
            Kind::Engine {
                render: Some(render),
                ..
            } => render(what, input, options),
            Kind::Engine { name, .. } => engine(name).render(what, input, options),
        }
    }

    /// The JSON Schemas of the dialect's options and document (see [`Schemas`]).
    pub fn schemas(&self) -> Schemas {
        match self.kind {
            Kind::Fixed { schemas, .. } => schemas(),
            Kind::Engine { name, .. } => Schemas {
                options: engine(name).options_schema(),
                ..schemas::<field::custom::Options, field::Document>()
            },
        }
    }
}

/// The engine family of the table called `name`, built at its first use.
fn engine(name: &str) -> &'static field::custom::Family {
    field::families::family(name).expect("an engine family of the table")
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
pub(crate) fn schemas<O: JsonSchema, D: JsonSchema>() -> Schemas {
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

/// Every dialect this build knows, in a stable order: the dialects of their own,
/// then the field families in the order of their table (`field::families`).
pub fn dialects() -> &'static [Dialect] {
    static ALL: OnceLock<Vec<Dialect>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = DIALECTS.to_vec();
        for entry in field::families::TABLE {
            let description =
                field::families::description(entry.name).expect("a family of the table");
            all.push(Dialect {
                name: entry.name,
                summary: description.summary.as_deref().unwrap_or(""),
                kind: Kind::Engine {
                    name: entry.name,
                    render: entry.render,
                },
            });
        }
        all
    })
}

/// The dialect called `name`, if there is one.
pub fn dialect(name: &str) -> Option<&'static Dialect> {
    dialects().iter().find(|d| d.name == name)
}

/// The dialects of their own (not field families).
pub(crate) const DIALECTS: [Dialect; 5] = [
    Dialect::fixed(
        "sections",
        "registered <name attrs>…</name> sections with verbatim content (Promptweaver style)",
        open::<sections::SectionMachine>,
        None,
        schemas::<sections::Options, sections::Document>,
    ),
    Dialect::fixed(
        "anthropic-xml",
        "prose, thinking, tool calls and tool results in one stream (XML tool calling)",
        open::<anthropic_xml::AnthropicXmlMachine>,
        Some(render_anthropic_xml),
        schemas::<anthropic_xml::Options, anthropic_xml::Document>,
    ),
    Dialect::fixed(
        "kindaxml",
        "tolerant XML-ish annotations (<cite id=1>, <claim>…</claim>, <todo/>) with deterministic recovery",
        open::<kindaxml::KindaxmlMachine>,
        None,
        schemas::<kindaxml::Options, kindaxml::Document>,
    ),
    Dialect::fixed(
        "transcript",
        "conversations as one prompt (four formats): parse, render, cut continuations at the first stop, build provider requests",
        open_transcript,
        Some(render_transcript),
        schemas::<transcript::Options, transcript::Document>,
    ),
    Dialect::fixed(
        "plurnk",
        "HEREDOC agent statements <<OP[signal](path)<L>:body:OP between prose (plurnk protocol)",
        open::<plurnk::PlurnkMachine>,
        None,
        schemas::<plurnk::Options, plurnk::Document>,
    ),
];

//! The chat-turn model shared by every field family: the tool-call and reasoning
//! formats open-weight models write (hermes, qwen3-coder, deepseek, harmony,
//! mistral, …), one dialect per family, all folding into the same document.
//!
//! # Document
//!
//! `{"items": [...]}` with, in source order ([`Item`]):
//! - `{"type":"reasoning","text","closed"}`: reasoning; `closed` is false only
//!   when the input ended inside it (a call that breaks out of reasoning ends it
//!   closed, and reasoning after the call is a new item);
//! - `{"type":"text","text"}`: a maximal run of answer text, verbatim;
//! - `{"type":"tool_call","index","id","name","arguments","input","complete"}`:
//!   `index` counts the turn's calls from 0; `id` is the family's call id or
//!   `null`; `arguments` is the JSON text of the arguments (the model's own text in
//!   JSON families, compact JSON built from the typed parameters in XML families);
//!   `input` is `arguments` parsed, or `null` when it does not parse; `complete` is
//!   true when the call's markup and arguments are whole: only complete calls may
//!   be run.
//!
//! # Events
//!
//! [`Event`]: `reasoning_start`, `reasoning_delta`, `reasoning_end`, `text`,
//! `tool_call_start` (as soon as the name is complete), `arguments_delta` (whose
//! texts concatenate to the call's `arguments`: XML families stream a string
//! parameter as escaped JSON fragments as its bytes arrive and a typed parameter
//! when it closes), `tool_call_end` (complete or not, with the input), and
//! `markup` for bytes that carry no content. Every event has a `span`; in emission
//! order the spans tile the input (S8). Families emit through an [`Emitter`],
//! which keeps the spans tiling and the arguments collected.
//!
//! # Options
//!
//! [`Options`]: `start_in_reasoning` (the template ended the prompt inside
//! reasoning) and `tools` (name and JSON Schema of each tool, typing the raw values
//! of XML-parameter families, see [`typing`]). A family that needs more has its own
//! options type carrying these two keys unchanged.
//!
//! # Deltas
//!
//! [`DeltaProjection`] turns any family's events into OpenAI chat-completion
//! deltas, streaming argument fragments live or releasing each call whole.
//!
//! ```
//! use idiolect::field::{self, DeltaMode, DeltaProjection, Item};
//! let text = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \
//!             \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
//! let hermes = field::families::family("hermes").unwrap();
//! let (doc, events) = hermes.parse_events(text, &Default::default()).unwrap();
//! match &doc.items[1] {
//!     Item::ToolCall { name, input, complete, .. } => {
//!         assert!(*complete);
//!         assert_eq!(name, "get_weather");
//!         assert_eq!(input.value()["city"], "Paris");
//!         assert_eq!(input.as_json(), r#"{"city":"Paris"}"#);
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//! let deltas = DeltaProjection::project(DeltaMode::Live, &events);
//! assert_eq!(deltas[0].content.as_deref(), Some("Let me check.\n"));
//! ```

/// The glue every single-machine family shares: its `Parser`, its
/// [`DialectMachine`](crate::fold::DialectMachine) impl (a family never refuses options
/// that were read: an unknown key or a `$ref` that FD-6b refuses fails the reading;
/// and a family holds a call until its markup decides it, spec/field.md), `parse` and
/// `parse_events`. Written once here so that the families differ only in what differs.
macro_rules! family_glue {
    ($machine:ident, $name:literal) => {
        /// The streaming parser: feed chunks, get [`Event`]s.
        pub type Parser = $crate::reentry::Stream<$machine>;

        impl $crate::fold::DialectMachine for $machine {
            const NAME: &'static str = $name;
            type Options = Options;
            type Problem = std::convert::Infallible;
            type Folder = DocumentFolder;

            /// Every options value read is usable: what a field family refuses fails
            /// the reading (FD-3).
            fn with_options(options: &Options) -> Result<Self, std::convert::Infallible> {
                Ok($machine::new(options))
            }

            fn folder(_: &Options, spans: bool, _: usize) -> DocumentFolder {
                DocumentFolder::new(spans)
            }

            /// `None`: a call is held until its markup decides it (spec/field.md).
            fn hold_back_bound(&self) -> Option<usize> {
                None
            }
        }

        /// Parses a whole document (the streaming machinery, fed once).
        pub fn parse(input: &str, options: &Options) -> Document {
            $crate::field::parse_owned($crate::reentry::Stream::new($machine::new(options)), input)
        }

        /// Parses a whole document and also returns its events.
        pub fn parse_events(input: &str, options: &Options) -> (Document, Vec<Event>) {
            use $crate::fold::Fold;
            let mut parser = $crate::reentry::Stream::new($machine::new(options));
            let mut events: Vec<Event> = parser.feed(input.as_bytes()).collect();
            events.extend(parser.finish());
            let mut folder = DocumentFolder::new(false);
            events.iter().for_each(|e| folder.push(e));
            (folder.into_document(), events)
        }
    };
}

mod call_object;
mod parameter_values;

/// The options type of a family that reads the shared keys (FD-3) and the
/// `reasoning_markers` option (spec/reasoning.md RS-11), `$markers` its default
/// (the family's own spelling), and after them the family's own keys, each with
/// its doc, type and default (`/// doc` `name: Type = default`). Written once so
/// that the keys mean the same in every family.
macro_rules! family_options {
    ($family:literal, $markers:literal, $default:expr
        $(, $(#[$doc:meta])* $field:ident : $type:ty = $value:expr)* $(,)?) => {
        #[doc = concat!("The ", $family, " options, as given in JSON (FD-3; RS-11).")]
        #[derive(
            Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
        )]
        #[serde(deny_unknown_fields, default)]
        pub struct Options {
            /// Whether the output starts inside reasoning: the chat template ended the
            /// prompt with the reasoning opener.
            pub start_in_reasoning: bool,
            /// The tools of the request, with their JSON Schemas.
            pub tools: Vec<$crate::field::Tool>,
            $($(#[$doc])* pub $field: $type,)*
            #[doc = concat!(
                        "The accepted reasoning wrappers (RS-11): `think`, `bracket`, `triangle`; ",
                        "empty for none (default ", $markers, ")."
                    )]
            pub reasoning_markers: Vec<$crate::field::reasoning::Spelling>,
        }

        impl Default for Options {
            fn default() -> Self {
                Options {
                    start_in_reasoning: false,
                    tools: Vec::new(),
                    $($field: $value,)*
                    reasoning_markers: $default,
                }
            }
        }

        impl Options {
            /// The tool called `name`, if the options list it.
            pub fn tool(&self, name: &str) -> Option<&$crate::field::Tool> {
                self.tools.iter().find(|t| t.name == name)
            }
        }
    };
}

pub mod custom;
mod deltas;
mod document;
mod emitter;
mod event;
pub mod families;
pub mod grammars;
mod input;
pub mod json_arguments;
mod llama;
pub mod llama3_json;
mod options;
mod probe;
pub mod pythonic;
pub mod reasoning;
pub mod render_input;
pub mod typing;

/// The string type of event and delta texts, names and ids (short ones inline).
pub use compact_str::CompactString;
pub use deltas::{
    Delta, DeltaMode, DeltaProjection, DeltaRef, FunctionDelta, ToolCallDelta, ToolCalls,
    ToolCallsIter,
};
pub(crate) use document::parse_owned;
pub use document::{Document, DocumentFolder, Item};
pub use emitter::Emitter;
pub use event::Event;
pub use input::Input;
pub use options::{Options, Tool};
pub use probe::MarkerProbe;
pub use render_input::{CallSpec, ResultSpec};

pub use families::is_family;

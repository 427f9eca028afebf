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

mod call_object;
pub mod custom;
mod deltas;
mod document;
mod emitter;
mod event;
pub mod families;
pub mod grammars;
mod input;
pub mod json_arguments;
mod options;
mod parameter_values;
mod probe;
pub mod pythonic;
pub mod reasoning;
pub mod render_input;
pub mod server;
pub mod server_markers;
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
pub use options::{Options, Tool, ToolChoice};
pub use probe::MarkerProbe;
pub use render_input::{CallSpec, ResultSpec};

pub use families::is_family;

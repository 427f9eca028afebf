//! The hermes family (Hermes 2 Pro/3, Qwen2.5, QwQ, Qwen3 hybrid and 2507):
//! `<tool_call>` + `{"name": …, "arguments": {…}}` + `</tool_call>`, reasoning in
//! `<think>…</think>`. Rules: spec/hermes.md.
//!
//! ```
//! use idiolect::field::{hermes, Item, Options};
//! let text = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \
//!             \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
//! let doc = hermes::parse(text, &Options::default());
//! assert!(matches!(&doc.items[1], Item::ToolCall { arguments, .. } if arguments == "{\"city\": \"Paris\"}"));
//! ```

mod machine;
mod render;

pub use machine::HermesMachine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::{Document, DocumentFolder, Event, Options};
use crate::fold::{self, DialectMachine, Fold};
use crate::reentry::Stream;
use crate::session;

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<HermesMachine>;

impl DialectMachine for HermesMachine {
    const NAME: &'static str = "hermes";
    type Options = Options;
    type Problem = std::convert::Infallible;
    type Folder = DocumentFolder;

    /// Every options value is usable: a field family never refuses its options.
    fn with_options(options: &Options) -> Result<Self, std::convert::Infallible> {
        Ok(HermesMachine::new(options))
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
    match fold::parse_whole::<HermesMachine>(input, options) {
        Ok(document) => document,
        Err(never) => match never {},
    }
}

/// Parses a whole document and also returns its events.
pub fn parse_events(input: &str, options: &Options) -> (Document, Vec<Event>) {
    let mut parser = Stream::new(HermesMachine::new(options));
    let mut events: Vec<Event> = parser.feed(input.as_bytes()).collect();
    events.extend(parser.finish());
    let mut folder = DocumentFolder::new(false);
    events.iter().for_each(|e| folder.push(e));
    (folder.into_document(), events)
}

/// The hermes family for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "hermes",
    summary: "tool calls as <tool_call>{json}</tool_call>, reasoning in <think> (Hermes, Qwen2.5, QwQ, Qwen3)",
    open: session::open::<HermesMachine>,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

//! The harmony family (gpt-oss): messages `<|start|>ROLE<|channel|>CHANNEL<|message|>…`
//! ended by `<|end|>`, `<|call|>` or `<|return|>`; the analysis channel is reasoning,
//! a recipient (`to=functions.NAME`) makes the message a tool call whose content is
//! the JSON arguments. Rules: spec/harmony.md, spec/field-json-arguments.md.
//!
//! ```
//! use idiolect::field::{harmony, Item, Options};
//! let text = "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant\
//!             <|channel|>commentary to=functions.get_weather <|constrain|>json\
//!             <|message|>{\"city\":\"Paris\"}";
//! let doc = harmony::parse(text, &Options::default());
//! assert!(matches!(&doc.items[0], Item::Reasoning { closed: true, .. }));
//! assert!(matches!(&doc.items[1], Item::ToolCall { name, complete: true, .. } if name == "get_weather"));
//! ```

mod machine;
mod render;

pub use machine::HarmonyMachine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::{Document, DocumentFolder, Event, Options};
use crate::fold::{self, DialectMachine, Fold};
use crate::reentry::Stream;
use crate::session;

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<HarmonyMachine>;

impl DialectMachine for HarmonyMachine {
    const NAME: &'static str = "harmony";
    type Options = Options;
    type Problem = std::convert::Infallible;
    type Folder = DocumentFolder;

    /// Every options value is usable: a field family never refuses its options.
    fn with_options(options: &Options) -> Result<Self, std::convert::Infallible> {
        Ok(HarmonyMachine::new(options))
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
    match fold::parse_whole::<HarmonyMachine>(input, options) {
        Ok(document) => document,
        Err(never) => match never {},
    }
}

/// Parses a whole document and also returns its events.
pub fn parse_events(input: &str, options: &Options) -> (Document, Vec<Event>) {
    let mut parser = Stream::new(HarmonyMachine::new(options));
    let mut events: Vec<Event> = parser.feed(input.as_bytes()).collect();
    events.extend(parser.finish());
    let mut folder = DocumentFolder::new(false);
    events.iter().for_each(|e| folder.push(e));
    (folder.into_document(), events)
}

/// The harmony family for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "harmony",
    summary: "gpt-oss harmony messages: analysis channel as reasoning, to=functions.NAME messages as tool calls with JSON arguments",
    open: session::open::<HarmonyMachine>,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

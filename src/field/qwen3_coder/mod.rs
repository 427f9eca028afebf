//! The qwen3-coder family (Qwen3-Coder, Qwen3.5 and later, Nemotron-3):
//! `<tool_call>`, `<function=NAME>`, per argument `<parameter=KEY>` raw value
//! `</parameter>`, then `</function>`, `</tool_call>`; reasoning in `<think>`.
//! Values are typed by the request's tool schema (FD-6). Rules:
//! spec/qwen3-coder.md.
//!
//! ```
//! use idiolect::field::{qwen3_coder, Item, Options};
//! let text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n\
//!             </parameter>\n</function>\n</tool_call>";
//! let doc = qwen3_coder::parse(text, &Options::default());
//! assert!(matches!(&doc.items[0], Item::ToolCall { arguments, complete: true, .. }
//!     if arguments == "{\"city\":\"Paris\"}"));
//! ```

mod machine;
mod render;

pub use machine::Qwen3CoderMachine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::{Document, DocumentFolder, Event, Options};
use crate::fold::{self, DialectMachine, Fold};
use crate::reentry::Stream;
use crate::session;

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<Qwen3CoderMachine>;

impl DialectMachine for Qwen3CoderMachine {
    const NAME: &'static str = "qwen3-coder";
    type Options = Options;
    type Problem = std::convert::Infallible;
    type Folder = DocumentFolder;

    /// Every options value is usable: a field family never refuses its options.
    fn with_options(options: &Options) -> Result<Self, std::convert::Infallible> {
        Ok(Qwen3CoderMachine::new(options))
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
    match fold::parse_whole::<Qwen3CoderMachine>(input, options) {
        Ok(document) => document,
        Err(never) => match never {},
    }
}

/// Parses a whole document and also returns its events.
pub fn parse_events(input: &str, options: &Options) -> (Document, Vec<Event>) {
    let mut parser = Stream::new(Qwen3CoderMachine::new(options));
    let mut events: Vec<Event> = parser.feed(input.as_bytes()).collect();
    events.extend(parser.finish());
    let mut folder = DocumentFolder::new(false);
    events.iter().for_each(|e| folder.push(e));
    (folder.into_document(), events)
}

/// The qwen3-coder family for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "qwen3-coder",
    summary: "tool calls as <function=NAME><parameter=KEY>value</parameter>, typed by the tools' schemas (Qwen3-Coder, Qwen3.5, Nemotron-3)",
    open: session::open::<Qwen3CoderMachine>,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

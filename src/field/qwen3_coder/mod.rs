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
use crate::reentry::Stream;
use crate::session::{self, Fold, OptionsError, Session, TypedSession};

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<Qwen3CoderMachine>;

impl Stream<Qwen3CoderMachine> {
    /// A streaming qwen3-coder parser.
    pub fn with_options(options: &Options) -> Self {
        Stream::new(Qwen3CoderMachine::new(options))
    }
}

/// Parses a whole document (the streaming machinery, fed once).
pub fn parse(input: &str, options: &Options) -> Document {
    let mut folder = DocumentFolder::new(false);
    session::fold_whole(Parser::with_options(options), input.as_bytes(), &mut folder);
    folder.into_document()
}

/// Parses a whole document and also returns its events.
pub fn parse_events(input: &str, options: &Options) -> (Document, Vec<Event>) {
    let mut parser = Parser::with_options(options);
    let mut events: Vec<Event> = parser.feed(input.as_bytes()).collect();
    events.extend(parser.finish());
    let mut folder = DocumentFolder::new(false);
    events.iter().for_each(|e| folder.push(e));
    (folder.into_document(), events)
}

fn open(options: &serde_json::Value, spans: bool) -> Result<Box<dyn Session>, OptionsError> {
    let options: Options = session::options_from_json("qwen3-coder", options)?;
    Ok(Box::new(TypedSession::new(
        Qwen3CoderMachine::new(&options),
        DocumentFolder::new(spans),
        None,
    )))
}

/// The qwen3-coder family for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "qwen3-coder",
    summary: "tool calls as <function=NAME><parameter=KEY>value</parameter>, typed by the tools' schemas (Qwen3-Coder, Qwen3.5, Nemotron-3)",
    open,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

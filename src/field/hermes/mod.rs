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
use crate::reentry::Stream;
use crate::session::{self, Fold, OptionsError, Session, TypedSession};

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<HermesMachine>;

impl Stream<HermesMachine> {
    /// A streaming hermes parser.
    pub fn with_options(options: &Options) -> Self {
        Stream::new(HermesMachine::new(options))
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
    let options: Options = session::options_from_json("hermes", options)?;
    Ok(Box::new(TypedSession::new(
        HermesMachine::new(&options),
        DocumentFolder::new(spans),
        None,
    )))
}

/// The hermes family for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "hermes",
    summary: "tool calls as <tool_call>{json}</tool_call>, reasoning in <think> (Hermes, Qwen2.5, QwQ, Qwen3)",
    open,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

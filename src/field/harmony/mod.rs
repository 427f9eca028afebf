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
use crate::reentry::Stream;
use crate::session::{self, Fold, OptionsError, Session, TypedSession};

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<HarmonyMachine>;

impl Stream<HarmonyMachine> {
    /// A streaming harmony parser.
    pub fn with_options(options: &Options) -> Self {
        Stream::new(HarmonyMachine::new(options))
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
    let options: Options = session::options_from_json("harmony", options)?;
    Ok(Box::new(TypedSession::new(
        HarmonyMachine::new(&options),
        DocumentFolder::new(spans),
        None,
    )))
}

/// The harmony family for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "harmony",
    summary: "gpt-oss harmony messages: analysis channel as reasoning, to=functions.NAME messages as tool calls with JSON arguments",
    open,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

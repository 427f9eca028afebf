//! The mistral family: `[TOOL_CALLS]` followed, by tokenizer version, by a JSON array
//! of `{"name", "arguments", "id"?}` (v3, v7), `NAME[CALL_ID]ID[ARGS]{json}` (v11) or
//! `NAME[ARGS]{json}` (v13); reasoning in `[THINK]…[/THINK]` (Magistral). Rules:
//! spec/mistral.md, spec/field-json-arguments.md.
//!
//! ```
//! use idiolect::field::{mistral, Item};
//! let text = "[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Paris\"}";
//! let doc = mistral::parse(text, &mistral::Options::default());
//! assert!(matches!(&doc.items[0], Item::ToolCall { id: Some(id), .. } if id == "a1b2c3d4e"));
//! ```

mod machine;
mod options;
mod render;

pub use machine::MistralMachine;
pub use options::{Options, TokenizerVersion};
pub use render::{render_calls, render_results, render_turn};

use crate::field::{Document, DocumentFolder, Event};
use crate::reentry::Stream;
use crate::session::{self, Fold, OptionsError, Session, TypedSession};

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<MistralMachine>;

impl Stream<MistralMachine> {
    /// A streaming mistral parser.
    pub fn with_options(options: &Options) -> Self {
        Stream::new(MistralMachine::new(options))
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
    let options: Options = session::options_from_json("mistral", options)?;
    Ok(Box::new(TypedSession::new(
        MistralMachine::new(&options),
        DocumentFolder::new(spans),
        None,
    )))
}

/// The mistral family for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "mistral",
    summary: "Mistral tool calls after [TOOL_CALLS]: a JSON array (v3, v7) or NAME[CALL_ID]ID[ARGS]{json} (v11, v13); reasoning in [THINK]",
    open,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

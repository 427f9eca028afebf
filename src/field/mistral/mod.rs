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
use crate::fold::{self, DialectMachine, Fold};
use crate::reentry::Stream;
use crate::session;

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<MistralMachine>;

impl DialectMachine for MistralMachine {
    const NAME: &'static str = "mistral";
    type Options = Options;
    type Problem = std::convert::Infallible;
    type Folder = DocumentFolder;

    /// Every options value is usable: a field family never refuses its options.
    fn with_options(options: &Options) -> Result<Self, std::convert::Infallible> {
        Ok(MistralMachine::new(options))
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
    match fold::parse_whole::<MistralMachine>(input, options) {
        Ok(document) => document,
        Err(never) => match never {},
    }
}

/// Parses a whole document and also returns its events.
pub fn parse_events(input: &str, options: &Options) -> (Document, Vec<Event>) {
    let mut parser = Stream::new(MistralMachine::new(options));
    let mut events: Vec<Event> = parser.feed(input.as_bytes()).collect();
    events.extend(parser.finish());
    let mut folder = DocumentFolder::new(false);
    events.iter().for_each(|e| folder.push(e));
    (folder.into_document(), events)
}

/// The mistral family for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "mistral",
    summary: "Mistral tool calls after [TOOL_CALLS]: a JSON array (v3, v7) or NAME[CALL_ID]ID[ARGS]{json} (v11, v13); reasoning in [THINK]",
    open: session::open::<MistralMachine>,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

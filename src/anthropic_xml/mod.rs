//! The anthropic-xml dialect: prose, thinking, tool calls and tool results interleaved
//! in one text stream, tag names bare or in the prefixed form. Rules:
//! spec/anthropic-xml.md.
//!
//! ```
//! use idiolect::anthropic_xml::{self, Block};
//! let text = "I will read it.\n<function_calls>\n<invoke name=\"Read\">\n\
//!             <parameter name=\"path\">/a.txt</parameter>\n</invoke>\n</function_calls>\nDone.";
//! let doc = anthropic_xml::parse(text, &anthropic_xml::Options::default()).unwrap();
//! match &doc.blocks[1] {
//!     Block::ToolCalls { calls, closed, .. } => {
//!         assert!(*closed && calls[0].complete);
//!         assert_eq!(calls[0].name, "Read");
//!         assert_eq!(calls[0].input["path"], "/a.txt");
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//! ```

mod document;
mod entities;
mod event;
pub(crate) mod grammar;
mod machine;
mod options;
mod render;
#[cfg(test)]
mod tag_tests;
mod typing;

pub use document::{Block, Call, Document, DocumentFolder, ToolResult};
pub use event::Event;
pub use grammar::{AnthropicXmlGrammar, Rule};
pub use machine::AnthropicXmlMachine;
pub use options::{
    Options, OptionsProblem, ToolDefinition, DEFAULT_MAX_TAG_BYTES, MIN_MAX_TAG_BYTES,
};
pub use render::{
    escape_attribute, escape_content, render_calls, render_results, render_tools, CallSpec,
    RenderError, ResultSpec,
};
pub use typing::{heuristic, typed_input};

use crate::reentry::Stream;
use crate::session::{self, OptionsError, Session, TypedSession};

/// The optional tag prefix (AX-2), assembled from pieces so that the prefixed tags
/// never appear literally in the source.
pub const PREFIX: &str = concat!("ant", "ml:");

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<AnthropicXmlMachine>;

impl Stream<AnthropicXmlMachine> {
    /// A streaming anthropic-xml parser; fails on invalid options.
    pub fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        Ok(Stream::new(AnthropicXmlMachine::new(options)?))
    }
}

/// Parses a whole document (the streaming machinery, fed once).
pub fn parse(input: &str, options: &Options) -> Result<Document, OptionsProblem> {
    let mut folder = DocumentFolder::new(false);
    session::fold_whole(
        Parser::with_options(options)?,
        input.as_bytes(),
        &mut folder,
    );
    Ok(folder.into_document())
}

fn open(options: &serde_json::Value, spans: bool) -> Result<Box<dyn Session>, OptionsError> {
    let options: Options = session::options_from_json("anthropic-xml", options)?;
    let machine = AnthropicXmlMachine::new(&options)
        .map_err(|e| OptionsError::new("anthropic-xml", e.to_string()))?;
    let bound = machine.hold_back_bound();
    Ok(Box::new(TypedSession::new(
        machine,
        DocumentFolder::new(spans),
        Some(bound),
    )))
}

/// The anthropic-xml dialect for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "anthropic-xml",
    summary: "prose, thinking, tool calls and tool results in one stream (XML tool calling)",
    open,
    render: Some(render::render),
    schemas: session::schemas::<Options, Document>,
};

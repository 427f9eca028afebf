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
pub use machine::AnthropicXmlMachine;
pub use options::{
    Options, OptionsProblem, ToolDefinition, DEFAULT_MAX_TAG_BYTES, MIN_MAX_TAG_BYTES,
};
pub use render::{
    escape_attribute, escape_content, render_calls, render_results, render_tools, CallSpec,
    RenderError, ResultSpec,
};
pub use typing::{heuristic, typed_input};

pub(crate) use render::render_json;

use crate::fold::{self, DialectMachine, Spanned};
use crate::reentry::Stream;
use crate::span::Span;

/// The optional tag prefix (AX-2), assembled from pieces so that the prefixed tags
/// never appear literally in the source.
pub const PREFIX: &str = concat!("ant", "ml:");

/// The streaming parser: feed chunks, get [`Event`]s. Build it with
/// `Parser::with_options`, which fails on invalid options.
pub type Parser = Stream<AnthropicXmlMachine>;

/// Parses a whole document (the streaming machinery, fed once).
pub fn parse(input: &str, options: &Options) -> Result<Document, OptionsProblem> {
    fold::parse_whole::<AnthropicXmlMachine>(input, options)
}

impl DialectMachine for AnthropicXmlMachine {
    const NAME: &'static str = "anthropic-xml";
    type Options = Options;
    type Problem = OptionsProblem;
    type Folder = DocumentFolder;

    fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        AnthropicXmlMachine::new(options)
    }

    fn folder(_: &Options, spans: bool, _: usize) -> DocumentFolder {
        DocumentFolder::new(spans)
    }

    fn hold_back_bound(&self) -> Option<usize> {
        Some(AnthropicXmlMachine::hold_back_bound(self))
    }
}

impl Spanned for Event {
    fn span(&self) -> Span {
        Event::span(self)
    }
}

//! The sections dialect (Promptweaver style): registered `<name attrs>…</name>`
//! sections with verbatim content, and text between them. Rules: spec/sections.md.
//!
//! ```
//! use idiolect::sections::{self, Item};
//! let doc = sections::parse(
//!     "<think>plan</think><create-file path=\"a.ts\">x<y</dyad-write>",
//!     &sections::Options::default(),
//! ).unwrap();
//! match &doc.items[1] {
//!     Item::Section { name, tag, content, closed, .. } => {
//!         assert_eq!((name.as_str(), tag.as_str(), content.as_str(), *closed),
//!                    ("write-file", "create-file", "x<y", true));
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//! ```

mod attrs;
mod document;
mod grammar;
mod machine;
mod options;
mod probe;

pub use attrs::Attrs;
pub use document::{Document, DocumentFolder, Item};
pub use grammar::{Rule, SectionsGrammar};
pub use machine::{Event, SectionMachine};
pub use options::{Options, OptionsProblem, SectionSpec, DEFAULT_MAX_TAG_BYTES};
pub use probe::MAX_BRACE_DEPTH;

use crate::reentry::Stream;
use crate::session::{self, OptionsError, Session, TypedSession};

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<SectionMachine>;

impl Stream<SectionMachine> {
    /// A streaming sections parser. Invalid options (a malformed or duplicate name,
    /// a tag bound below 3) are an error, never silently replaced by defaults.
    pub fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        Ok(Stream::new(SectionMachine::new(options)?))
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
    let options: Options = session::options_from_json("sections", options)?;
    let machine =
        SectionMachine::new(&options).map_err(|e| OptionsError::new("sections", e.to_string()))?;
    let bound = machine.hold_back_bound();
    Ok(Box::new(TypedSession::new(
        machine,
        DocumentFolder::new(spans),
        Some(bound),
    )))
}

/// The sections dialect for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "sections",
    summary: "registered <name attrs>…</name> sections with verbatim content (Promptweaver style)",
    open,
    render: None,
    schemas: session::schemas::<Options, Document>,
};

#[cfg(test)]
mod agreement_tests;

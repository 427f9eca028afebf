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
// The grammar compiled for the parsing machine, and pest's parser of it (the oracle
// the machine is tested against).
pub(crate) mod grammar;
mod machine;
mod options;

pub use attrs::Attrs;
pub use document::{Document, DocumentFolder, Item};
pub use machine::{Event, SectionMachine, MAX_BRACE_DEPTH};
pub use options::{Options, OptionsProblem, SectionSpec, DEFAULT_MAX_TAG_BYTES};

use crate::fold::{self, DialectMachine, Spanned};
use crate::reentry::Stream;
use crate::span::Span;

/// The streaming parser: feed chunks, get [`Event`]s. Build it with
/// `Parser::with_options`; invalid options (a malformed or duplicate name, a tag
/// bound below 3) are an error, never silently replaced by defaults.
pub type Parser = Stream<SectionMachine>;

/// Parses a whole document (the streaming machinery, fed once).
pub fn parse(input: &str, options: &Options) -> Result<Document, OptionsProblem> {
    fold::parse_whole::<SectionMachine>(input, options)
}

impl DialectMachine for SectionMachine {
    const NAME: &'static str = "sections";
    type Options = Options;
    type Problem = OptionsProblem;
    type Folder = DocumentFolder;

    fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        SectionMachine::new(options)
    }

    fn folder(_: &Options, spans: bool, _: usize) -> DocumentFolder {
        DocumentFolder::new(spans)
    }

    fn hold_back_bound(&self) -> Option<usize> {
        Some(SectionMachine::hold_back_bound(self))
    }
}

impl Spanned for Event {
    fn span(&self) -> Span {
        Event::span(self)
    }
}

#[cfg(test)]
mod agreement_tests;

//! The kindaxml dialect: tolerant XML-ish annotations with deterministic recovery.
//! Rules: spec/kindaxml.md.
//!
//! Tags are removed from the text; each recognized tag annotates a span of what
//! remains, either between its start and end tags or, when the model forgot the end
//! tag, a span its recovery strategy chooses (by default the text before it on its
//! line, for postfix citations).
//!
//! ```
//! use idiolect::kindaxml;
//! let doc = kindaxml::parse(
//!     "Latency fell by half <cite id=3>.\nCosts rose <cite id=4>.",
//!     &kindaxml::Options::default(),
//! ).unwrap();
//! assert_eq!(doc.text, "Latency fell by half .\nCosts rose .");
//! assert_eq!(doc.segments[0].text, "Latency fell by half");
//! assert_eq!(doc.segments[0].annotations[0].tag, "cite");
//! assert_eq!(doc.segments[2].text, "Costs rose");
//! ```

mod attrs;
mod candidate;
mod document;
mod event;
pub(crate) mod grammar;
mod machine;
mod options;
mod reach;

pub use attrs::{AttrValue, Attrs};
pub use document::{Annotation, Document, DocumentFolder, Marker, Segment};
pub use event::{Event, MarkupKind, Recovery};
pub use machine::KindaxmlMachine;
pub use options::{
    CdataUnclosed, DuplicateAttrs, Options, OptionsProblem, RetroAnchor, SelfClosingTarget,
    Strategy, StrayEndTagPolicy, UnknownMode, DEFAULT_MAX_RETRO_OVERLAP, DEFAULT_MAX_TAG_BYTES,
    MAX_RETRO_OVERLAP_LIMIT,
};

use crate::fold::{self, DialectMachine, Spanned};
use crate::reentry::Stream;
use crate::span::Span;

/// The streaming parser: feed chunks, get [`Event`]s. Build it with
/// `Parser::with_options`, which says why options cannot be used.
pub type Parser = Stream<KindaxmlMachine>;

/// Parses a whole document: the streaming machinery, fed the whole input.
pub fn parse(input: &str, options: &Options) -> Result<Document, OptionsProblem> {
    fold::parse_whole::<KindaxmlMachine>(input, options)
}

impl DialectMachine for KindaxmlMachine {
    const NAME: &'static str = "kindaxml";
    type Options = Options;
    type Problem = OptionsProblem;
    type Folder = DocumentFolder;

    fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        KindaxmlMachine::new(options)
    }

    /// The document has no input spans (its positions are output offsets), so
    /// `spans` changes nothing; events always carry spans.
    fn folder(_: &Options, _spans: bool, input_len: usize) -> DocumentFolder {
        // The output text is the input without its markup: never longer.
        DocumentFolder::with_text_capacity(input_len)
    }

    /// Hollow ([`DocumentFolder::hollow`]): nothing reads the document before
    /// it is finished, so each segment's text is copied once, as it leaves.
    fn whole_folder(options: &Options, spans: bool, input_len: usize) -> DocumentFolder {
        Self::folder(options, spans, input_len).hollow()
    }

    fn hold_back_bound(&self) -> Option<usize> {
        Some(KindaxmlMachine::hold_back_bound(self))
    }
}

impl Spanned for Event {
    fn span(&self) -> Span {
        Event::span(self)
    }
}

/// The registry's entry, for the tests that drive sessions.
#[cfg(test)]
fn dialect() -> &'static crate::session::Dialect {
    crate::dialect("kindaxml").expect("registered")
}

#[cfg(test)]
mod tag_tests;
#[cfg(test)]
mod tests;

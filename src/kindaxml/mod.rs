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

mod document;
mod event;
mod grammar;
mod machine;
mod options;
mod probe;
mod reach;
mod tag;

pub use document::{Annotation, Document, DocumentFolder, Marker, Segment};
pub use event::{Event, MarkupKind, Recovery};
pub use grammar::{KindaxmlGrammar, Rule};
pub use machine::KindaxmlMachine;
pub use options::{
    CdataUnclosed, DuplicateAttrs, Options, OptionsProblem, RetroAnchor, SelfClosingTarget,
    Strategy, StrayEndTagPolicy, UnknownMode, DEFAULT_MAX_RETRO_OVERLAP, DEFAULT_MAX_TAG_BYTES,
    MAX_RETRO_OVERLAP_LIMIT,
};
pub use reach::is_trim_char;
pub use tag::{AttrValue, Attrs};

use crate::reentry::Stream;
use crate::session::{self, OptionsError, Session, TypedSession};

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<KindaxmlMachine>;

impl Stream<KindaxmlMachine> {
    /// A streaming kindaxml parser, or why the options cannot be used.
    pub fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        Ok(Stream::new(KindaxmlMachine::new(options)?))
    }
}

/// Parses a whole document: the streaming machinery, fed the whole input.
pub fn parse(input: &str, options: &Options) -> Result<Document, OptionsProblem> {
    // The output text is the input without its markup: never longer.
    let mut folder = DocumentFolder::with_text_capacity(input.len());
    session::fold_whole(
        Parser::with_options(options)?,
        input.as_bytes(),
        &mut folder,
    );
    Ok(folder.into_document())
}

/// Opens a session. The document has no input spans (its positions are output
/// offsets), so `spans` changes nothing; events always carry spans.
fn open(options: &serde_json::Value, _spans: bool) -> Result<Box<dyn Session>, OptionsError> {
    let options: Options = session::options_from_json("kindaxml", options)?;
    let machine =
        KindaxmlMachine::new(&options).map_err(|e| OptionsError::new("kindaxml", e.to_string()))?;
    let bound = machine.hold_back_bound();
    Ok(Box::new(TypedSession::new(
        machine,
        DocumentFolder::new(),
        Some(bound),
    )))
}

/// The kindaxml dialect for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "kindaxml",
    summary: "tolerant XML-ish annotations (<cite id=1>, <claim>…</claim>, <todo/>) with deterministic recovery",
    open,
    render: None,
    schemas: session::schemas::<Options, Document>,
};

#[cfg(test)]
mod tests;

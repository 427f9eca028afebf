//! The plurnk dialect: HEREDOC-style agent statements
//! `<<OPsuffix [signal] (path) <L> : body :OPsuffix` between prose, in the JSON shape of
//! the published `plurnk-grammar` package. Rules: spec/plurnk.md.
//!
//! ```
//! use idiolect::plurnk::{self, Item};
//! let doc = plurnk::parse(
//!     "Read it: <<READ(./README.md)<1-5>::READ",
//!     &plurnk::Options::default(),
//! ).unwrap();
//! match &doc.items[1] {
//!     Item::Statement { statement, .. } => {
//!         assert_eq!(statement.op.as_str(), "READ");
//!         assert_eq!(statement.line_marker.unwrap().last, Some(5));
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//! assert!(doc.is_clean());
//! ```

mod document;
mod grammar;
mod machine;
mod model;
mod options;
mod probe;
mod scan;
mod typing;

pub use document::{Document, DocumentFolder, Item};
pub use grammar::{PlurnkGrammar, Rule};
pub use machine::{Event, PlurnkMachine};
pub use model::{
    Body, LineMarker, Matcher, Op, ParamValue, ParseError, Path, Position, Signal, Source,
    Statement, UnparsedTail,
};
pub use options::{Options, OptionsProblem, DEFAULT_MAX_STATEMENT_BYTES, MIN_MAX_STATEMENT_BYTES};
pub use typing::{MAX_MATCHER_BYTES, MAX_MATCHER_NESTING, MAX_SAFE_INTEGER};

use crate::reentry::Stream;
use crate::session::{self, Fold, OptionsError, Session, TypedSession};

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<PlurnkMachine>;

impl Stream<PlurnkMachine> {
    /// A streaming plurnk parser, after checking the options.
    pub fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        options.check()?;
        Ok(Stream::new(PlurnkMachine::new(options)))
    }
}

/// Parses a whole document (the streaming machinery, fed once).
pub fn parse(input: &str, options: &Options) -> Result<Document, OptionsProblem> {
    let mut parser = Parser::with_options(options)?;
    let mut folder = DocumentFolder::new(false);
    for event in parser.feed(input.as_bytes()) {
        folder.push(&event);
    }
    for event in parser.finish() {
        folder.push(&event);
    }
    Ok(folder.into_document())
}

fn open(options: &serde_json::Value, spans: bool) -> Result<Box<dyn Session>, OptionsError> {
    let options: Options = session::options_from_json("plurnk", options)?;
    options
        .check()
        .map_err(|e| OptionsError::new("plurnk", e.to_string()))?;
    let machine = PlurnkMachine::new(&options);
    let bound = machine.hold_back_bound();
    Ok(Box::new(TypedSession::new(
        machine,
        DocumentFolder::new(spans),
        Some(bound),
    )))
}

/// The plurnk dialect for the dynamic layer.
pub const DIALECT: session::Dialect = session::Dialect {
    name: "plurnk",
    summary:
        "HEREDOC agent statements <<OP[signal](path)<L>:body:OP between prose (plurnk protocol)",
    open,
    render: None,
    schemas: session::schemas::<Options, Document>,
};

#[cfg(test)]
mod tests;

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
mod reading;
mod search;
mod typing;

pub use document::{Document, DocumentFolder, Item};
#[cfg(test)]
use grammar::{PlurnkGrammar, Rule};
pub use machine::{Event, PlurnkMachine};
pub use model::{
    Body, LineMarker, Matcher, Op, ParamValue, ParseError, Path, Position, Signal, Source,
    Statement, UnparsedTail,
};
pub use options::{Options, OptionsProblem, DEFAULT_MAX_STATEMENT_BYTES, MIN_MAX_STATEMENT_BYTES};
pub use typing::{MAX_MATCHER_BYTES, MAX_MATCHER_NESTING, MAX_SAFE_INTEGER};

use crate::fold::{self, DialectMachine, Spanned};
use crate::reentry::Stream;
use crate::span::Span;

/// The streaming parser: feed chunks, get [`Event`]s. Build it with
/// `Parser::with_options`, which checks the options.
pub type Parser = Stream<PlurnkMachine>;

/// Parses a whole document (the streaming machinery, fed once).
pub fn parse(input: &str, options: &Options) -> Result<Document, OptionsProblem> {
    fold::parse_whole::<PlurnkMachine>(input, options)
}

impl DialectMachine for PlurnkMachine {
    const NAME: &'static str = "plurnk";
    type Options = Options;
    type Problem = OptionsProblem;
    type Folder = DocumentFolder;

    fn with_options(options: &Options) -> Result<Self, OptionsProblem> {
        options.check()?;
        Ok(PlurnkMachine::new(options))
    }

    fn folder(_: &Options, spans: bool, _: usize) -> DocumentFolder {
        DocumentFolder::new(spans)
    }

    fn hold_back_bound(&self) -> Option<usize> {
        Some(PlurnkMachine::hold_back_bound(self))
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
    crate::dialect("plurnk").expect("registered")
}

#[cfg(test)]
mod tests;

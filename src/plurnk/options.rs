//! Options of the plurnk dialect (PL-20, PL-23).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default for [`Options::max_statement_bytes`]: 1 MiB.
pub const DEFAULT_MAX_STATEMENT_BYTES: usize = 1024 * 1024;

/// The smallest [`Options::max_statement_bytes`] accepted.
pub const MIN_MAX_STATEMENT_BYTES: usize = 32;

/// Options of the plurnk dialect, as given in JSON (`{"max_statement_bytes": N}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// The longest a statement may be, from its first `<` to the end of its close tag, in
    /// bytes. A statement is held whole until it closes; a longer one becomes an error and
    /// the rest of it is skipped up to its close tag (PL-20). It bounds what is held back.
    pub max_statement_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_statement_bytes: DEFAULT_MAX_STATEMENT_BYTES,
        }
    }
}

/// Why a set of options cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionsProblem {
    /// `max_statement_bytes` is below [`MIN_MAX_STATEMENT_BYTES`].
    StatementBoundTooSmall(usize),
}

impl std::fmt::Display for OptionsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionsProblem::StatementBoundTooSmall(n) => write!(
                f,
                "max_statement_bytes is {n}; it must be at least {MIN_MAX_STATEMENT_BYTES}"
            ),
        }
    }
}

impl std::error::Error for OptionsProblem {}

impl Options {
    /// Checks the options.
    pub fn check(&self) -> Result<(), OptionsProblem> {
        if self.max_statement_bytes < MIN_MAX_STATEMENT_BYTES {
            return Err(OptionsProblem::StatementBoundTooSmall(
                self.max_statement_bytes,
            ));
        }
        Ok(())
    }
}

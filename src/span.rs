//! Byte spans into the decoded input, shared by every dialect's events.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` into the input text.
///
/// Offsets count UTF-8 bytes of the decoded input. For valid UTF-8 input this is
/// exactly the input; an invalid sequence counts as the three bytes of the U+FFFD
/// that replaced it. Serialized as `[start, end]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(from = "[usize; 2]", into = "[usize; 2]")]
pub struct Span {
    /// First byte covered.
    pub start: usize,
    /// One past the last byte covered.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end`.
    pub fn new(start: usize, end: usize) -> Self {
        debug_assert!(start <= end, "span start {start} after end {end}");
        Span { start, end }
    }

    /// A zero-width span at `at`.
    pub fn empty(at: usize) -> Self {
        Span { start: at, end: at }
    }

    /// Number of bytes covered.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the span covers no byte.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

impl From<[usize; 2]> for Span {
    fn from([start, end]: [usize; 2]) -> Self {
        Span { start, end }
    }
}

impl From<Span> for [usize; 2] {
    fn from(span: Span) -> Self {
        [span.start, span.end]
    }
}

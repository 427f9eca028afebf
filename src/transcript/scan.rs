//! The stop scanner (spec/transcript.md §8): cuts a model's continuation at the
//! first stop sequence, by position, holding back only what could still be a stop.

use compact_str::CompactString;
use schemars::JsonSchema;
use serde::Serialize;

use super::blocks::Blocks;
use super::finder::{Finder, Found, Patterns};
use crate::fold::Fold;
use crate::reentry::Machine;
use crate::span::Span;

/// The stop that ended the text (TR-72).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StopMatch {
    /// The stop sequence that matched.
    pub sequence: String,
    /// Its position in the list of stop sequences.
    pub index: usize,
    /// Byte offset where it starts.
    pub offset: usize,
}

/// An event of the scanner. Serialized with a `"type"` in snake_case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScanEvent {
    /// Continuation text before the stop, emitted as soon as it cannot be part of one.
    Text {
        /// The text (stored inline when short: no allocation per small event).
        text: CompactString,
        /// Where it stands in the input.
        span: Span,
    },
    /// The stop sequence, spanning the match.
    Stop {
        /// The stop sequence that matched.
        sequence: String,
        /// Its position in the list of stop sequences.
        index: usize,
        /// Byte offset where it starts.
        offset: usize,
        /// The match.
        span: Span,
    },
    /// Input after the stop (TR-75).
    Rest {
        /// The text (stored inline when short).
        text: CompactString,
        /// Where it stands in the input.
        span: Span,
    },
}

/// The scanner's document: `{"text", "stop", "rest"}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ScanDocument {
    /// The input before the stop (all of it without a stop).
    pub text: String,
    /// The stop, if one matched.
    pub stop: Option<StopMatch>,
    /// The input after the stop.
    pub rest: String,
}

/// Folds [`ScanEvent`]s into a [`ScanDocument`].
#[derive(Clone, Debug, Default)]
pub struct ScanFolder {
    document: ScanDocument,
}

impl ScanFolder {
    /// The finished document.
    pub fn into_document(self) -> ScanDocument {
        self.document
    }
}

impl Fold<ScanEvent> for ScanFolder {
    type Document = ScanDocument;

    fn push(&mut self, event: &ScanEvent) {
        match event {
            ScanEvent::Text { text, .. } => self.document.text.push_str(text),
            ScanEvent::Stop {
                sequence,
                index,
                offset,
                ..
            } => {
                self.document.stop = Some(StopMatch {
                    sequence: sequence.clone(),
                    index: *index,
                    offset: *offset,
                })
            }
            ScanEvent::Rest { text, .. } => self.document.rest.push_str(text),
        }
    }

    fn document(&self) -> &ScanDocument {
        &self.document
    }

    fn into_document(self) -> ScanDocument {
        self.document
    }
}

/// The stop scanner's state machine (driven by [`crate::reentry::Stream`]).
#[derive(Debug)]
pub struct ScanMachine {
    stops: Vec<String>,
    finder: Finder,
    blocks: Option<Blocks>,
    stopped: bool,
}

impl ScanMachine {
    /// A scanner for `stops`; with `structure_aware`, stops inside thinking and
    /// function_calls blocks do not count (TR-74).
    pub fn new(stops: Vec<String>, structure_aware: bool) -> Self {
        let blocks = structure_aware.then(Blocks::new).flatten();
        let finder = Finder::new(Patterns::new(&stops), 0);
        ScanMachine {
            stops,
            finder,
            blocks,
            stopped: false,
        }
    }

    /// The stop sequences, in list order.
    pub fn stops(&self) -> &[String] {
        &self.stops
    }

    /// The most bytes held back (TR-80), without the partial UTF-8 character.
    pub fn hold_back_bound(&self) -> usize {
        self.finder.patterns().longest() + self.blocks.as_ref().map_or(0, Blocks::lag_bound)
    }
}

fn push_text(out: &mut Vec<ScanEvent>, text: &str, start: usize, rest: bool) {
    if text.is_empty() {
        return;
    }
    let span = Span::new(start, start + text.len());
    let text = CompactString::from(text);
    out.push(if rest {
        ScanEvent::Rest { text, span }
    } else {
        ScanEvent::Text { text, span }
    });
}

impl Machine for ScanMachine {
    type Event = ScanEvent;

    fn advance(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<ScanEvent>,
    ) -> usize {
        if self.stopped {
            push_text(out, pending, base, true);
            return pending.len();
        }
        // Stops are looked for only where the block state is known.
        let known = match &mut self.blocks {
            Some(blocks) => {
                blocks.feed(pending, base, eof);
                blocks.known_until().clamp(base, base + pending.len()) - base
            }
            None => pending.len(),
        };
        let all_known = known == pending.len();
        match self
            .finder
            .find(&pending[..known], base, eof && all_known, &mut self.blocks)
        {
            Found::Match {
                start,
                end,
                pattern,
            } => {
                push_text(out, &pending[..start - base], base, false);
                out.push(ScanEvent::Stop {
                    sequence: self.stops[pattern].clone(),
                    index: pattern,
                    offset: start,
                    span: Span::new(start, end),
                });
                self.stopped = true;
                push_text(out, &pending[end - base..], end, true);
                pending.len()
            }
            Found::Pending { safe } => {
                push_text(out, &pending[..safe - base], base, false);
                safe - base
            }
        }
    }
}

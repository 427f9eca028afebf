//! The plurnk state machine: text streams out as it is decided; a statement is held whole
//! and emitted as one event at its close tag; a broken statement becomes an error at once
//! and the rest of it is skipped as it arrives.
//!
//! The markup is recognized by grammar/plurnk.pest on the parsing machine, one entry
//! rule per mode (as lexer modes): `opener` at a `<` of text, `header_step` from the
//! opener and after each slot, `close_tag` at each `:` of the body, `lookahead` at each
//! `:` and `<` after a stray character (PL-5a) or while a broken statement is skipped.
//! The state machine keeps the semantics: commitment (PL-5), duplicate slots (PL-14,
//! PL-15), whether a close tag is the statement's own (PL-7), the statement bound
//! (PL-20), errors and recovery (PL-18, PL-19), typing.

use serde::Serialize;

use super::grammar;
use super::model::{ParseError, Position, Source, Statement};
use super::options::Options;
use super::reading::{Open, Place, Reading, Verdict};
use super::search::{Found, Search};
use super::typing::{self, Pieces};
use crate::machine::ParsingMachine;
use crate::reentry::Machine;
use crate::span::Span;

/// An event of the plurnk dialect. Serialized with a `"type"` in snake_case (PL-21).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Text outside statements, emitted as soon as it cannot start an opener.
    Text {
        /// The text.
        text: String,
        /// Where its first character stands.
        position: Position,
        /// Where it stands in the input.
        span: Span,
    },
    /// A valid statement, emitted at its close tag (or at end of input, PL-19).
    Statement {
        /// The typed statement.
        statement: Box<Statement>,
        /// Opener to close tag.
        span: Span,
    },
    /// A statement's one error, in its place (PL-16).
    Error {
        /// The error.
        error: ParseError,
        /// The statement, or the part of it decided so far.
        span: Span,
    },
    /// The rest of a broken statement (PL-18, PL-20); it folds into nothing.
    Skipped {
        /// The bytes skipped.
        span: Span,
    },
    /// End of input inside a statement (PL-19); zero-width.
    UnparsedTail {
        /// The statement's position.
        from: Position,
        /// The slot left open and how to close it.
        reason: String,
        /// Zero-width at the end of input.
        span: Span,
    },
}

impl Event {
    /// The input bytes this event covers.
    pub fn span(&self) -> Span {
        match self {
            Event::Text { span, .. }
            | Event::Statement { span, .. }
            | Event::Error { span, .. }
            | Event::Skipped { span }
            | Event::UnparsedTail { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug)]
enum Mode {
    Text,
    Statement(Reading),
    /// The rest of a broken statement, skipped up to its close tag (or, with
    /// `openers`, the next opener) by [`PlurnkMachine::search`].
    Skip {
        openers: bool,
        from: Position,
        open_tag: String,
    },
}

/// The plurnk state machine (driven by [`crate::reentry::Stream`]).
#[derive(Clone, Debug)]
pub struct PlurnkMachine {
    pub(super) max: usize,
    mode: Mode,
    /// Position of the first undecided byte.
    pos: Position,
    /// Runs `opener` and `header_step` on the statement at the start of the unit.
    pub(super) probe: ParsingMachine<'static>,
    /// Close tags and next openers in a body, a lookahead or a skipped statement.
    pub(super) search: Search,
    pieces: Pieces,
}

/// The largest char boundary of `s` at or before `i`.
fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl PlurnkMachine {
    /// A machine for these (already checked) options.
    pub fn new(options: &Options) -> Self {
        let program = grammar::program();
        PlurnkMachine {
            max: options
                .max_statement_bytes
                .min(crate::reentry::MAX_SIZE_OPTION),
            mode: Mode::Text,
            pos: Position::default(),
            probe: ParsingMachine::new(program),
            search: Search::new(ParsingMachine::new(program)),
            pieces: Pieces::new(),
        }
    }

    /// The most bytes held back undecided (PL-22): a whole statement, one character of
    /// lookahead after its close tag, and a carried partial UTF-8 character.
    pub fn hold_back_bound(&self) -> usize {
        self.max.saturating_add(4 + 3)
    }

    fn text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        let position = self.pos;
        self.pos = position.after(text);
        out.push(Event::Text {
            text: text.to_string(),
            position,
            span: Span::new(start, start + text.len()),
        });
    }

    fn error(&mut self, error: ParseError, covered: &str, start: usize, out: &mut Vec<Event>) {
        self.pos = self.pos.after(covered);
        out.push(Event::Error {
            error,
            span: Span::new(start, start + covered.len()),
        });
    }

    fn skipped(&mut self, covered: &str, start: usize, out: &mut Vec<Event>) {
        if covered.is_empty() {
            return;
        }
        self.pos = self.pos.after(covered);
        out.push(Event::Skipped {
            span: Span::new(start, start + covered.len()),
        });
    }
}

impl PlurnkMachine {
    // ---- acting on what was read -------------------------------------------------

    /// Emits a closed statement `unit[..end]` as a statement or its error.
    fn closed(&mut self, r: &Reading, unit: &str, end: usize, base: usize, out: &mut Vec<Event>) {
        let tag_len = r.header.tag_end - 2 + 1;
        let statement = &unit[..end];
        let span = Span::new(base, base + end);
        match typing::build(unit, &r.header, end - tag_len, self.pos, &mut self.pieces) {
            Ok(statement_item) => {
                out.push(Event::Statement {
                    statement: Box::new(statement_item),
                    span,
                });
                self.pos = self.pos.after(statement);
            }
            Err(error) => self.error(error, statement, base, out),
        }
    }

    /// Applies PL-19 to a statement still open at end of input.
    fn unclosed(&mut self, r: &Reading, open: Open, unit: &str, base: usize, out: &mut Vec<Event>) {
        let open_tag = &unit[2..r.header.tag_end];
        let from = self.pos;
        let end = from.after(unit);
        let (expected, reason) = match open {
            Open::Signal => (
                "']'".to_string(),
                format!("signal slot of `<<{open_tag}` is still open; add `]`"),
            ),
            Open::Path => (
                "')'".to_string(),
                format!("path slot of `<<{open_tag}` is still open; add `)`"),
            ),
            Open::Marker => (
                "'>'".to_string(),
                format!("line marker of `<<{open_tag}` is still open; add `>`"),
            ),
            Open::Body => (
                "close tag".to_string(),
                format!("body of `<<{open_tag}` is still open; add `:{open_tag}`"),
            ),
            Open::Header => (
                "':' to open the body".to_string(),
                format!(
                    "header of `<<{open_tag}` is still open; add `:` and the close tag `:{open_tag}`"
                ),
            ),
        };
        let error = ParseError::new(
            end,
            Source::Parser,
            &format!("expected {expected}; got end of input"),
        );
        let mut covered = unit;
        if open == Open::Body {
            if let Ok(statement) =
                typing::build(unit, &r.header, unit.len(), from, &mut self.pieces)
            {
                out.push(Event::Statement {
                    statement: Box::new(statement),
                    span: Span::new(base, base + unit.len()),
                });
                self.pos = end;
                covered = "";
            }
        }
        self.error(error, covered, base + unit.len() - covered.len(), out);
        out.push(Event::UnparsedTail {
            from,
            reason,
            span: Span::empty(base + unit.len()),
        });
    }

    /// Continues skipping `unit` (at absolute `base`); returns how many bytes it
    /// decided, and whether the broken statement ended (so text resumes).
    fn skip(&mut self, unit: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> (usize, bool) {
        let Mode::Skip {
            openers,
            from,
            ref open_tag,
        } = self.mode
        else {
            return (0, true);
        };
        let tag = open_tag.as_bytes();
        let bytes = unit.as_bytes();
        let end = loop {
            match self.search.step(bytes, base, eof) {
                Found::Match { start, end } => {
                    let candidate = self.search.candidate();
                    if candidate[0] == b'<' {
                        // The next opener: text mode reads it again (PL-18 (b)).
                        break Some(start);
                    }
                    if end - start == tag.len() + 1 && candidate.get(1..=tag.len()) == Some(tag) {
                        break Some(end);
                    }
                    self.search.skip_match(end);
                }
                Found::Pending => break None,
            }
        };
        match end {
            Some(end) => {
                let end = end - base;
                self.mode = Mode::Text;
                self.skipped(&unit[..end], base, out);
                (end, true)
            }
            None if eof => {
                let reason = format!(
                    "close tag `:{open_tag}` of the malformed statement `<<{open_tag}` never came"
                );
                self.mode = Mode::Text;
                self.skipped(unit, base, out);
                out.push(Event::UnparsedTail {
                    from,
                    reason,
                    span: Span::empty(base + unit.len()),
                });
                (unit.len(), true)
            }
            None => {
                // A partial close tag is skipped (the search keeps a copy of it); only
                // a partial opener must stay, because text mode reads it again if it
                // completes.
                let held = match self.search.active() {
                    Some(start) if openers && self.search.candidate()[0] == b'<' => start,
                    _ => base + unit.len(),
                };
                let decided = floor_boundary(unit, held - base);
                self.skipped(&unit[..decided], base, out);
                (decided, false)
            }
        }
    }
}

impl Machine for PlurnkMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        let bytes = pending.as_bytes();
        // `run` is where the current text run began; `at` the scan position.
        let mut run = 0;
        let mut at = 0;
        loop {
            match &mut self.mode {
                Mode::Text => match crate::reentry::find_byte(b'<', &bytes[at..]) {
                    None => {
                        self.text(&pending[run..], base + run, out);
                        return pending.len();
                    }
                    Some(k) => {
                        at += k;
                        self.probe.start(grammar::rules().opener);
                        self.mode = Mode::Statement(Reading::new());
                    }
                },
                Mode::Skip { .. } => {
                    let (used, ended) = self.skip(&pending[at..], base + at, eof, out);
                    at += used;
                    run = at;
                    if !ended {
                        return at;
                    }
                }
                Mode::Statement(_) => {
                    let Mode::Statement(mut r) = std::mem::replace(&mut self.mode, Mode::Text)
                    else {
                        return at;
                    };
                    let unit = &pending[at..];
                    let verdict = self.read(&mut r, unit, base + at, eof);
                    if verdict == Verdict::NotStatement {
                        at += 1;
                        continue;
                    }
                    self.text(&pending[run..at], base + run, out);
                    let open_tag = || unit[2..r.header.tag_end].to_string();
                    match verdict {
                        Verdict::NeedMore => {
                            self.mode = Mode::Statement(r);
                            return at;
                        }
                        Verdict::Unclosed(open) => {
                            self.unclosed(&r, open, unit, base + at, out);
                            return pending.len();
                        }
                        Verdict::Closed(end) => {
                            self.closed(&r, unit, end, base + at, out);
                            at += end;
                        }
                        Verdict::HeaderError {
                            at: offending,
                            report: (offset, source, text),
                        } => {
                            let error =
                                ParseError::new(self.pos.after(&unit[..offset]), source, &text);
                            let from = self.pos;
                            self.error(error, &unit[..offending], base + at, out);
                            let rule = grammar::rules().lookahead;
                            let tag = open_tag();
                            self.search
                                .reset(rule, true, tag.len(), base + at + offending);
                            self.mode = Mode::Skip {
                                openers: true,
                                from,
                                open_tag: tag,
                            };
                            at += offending;
                        }
                        Verdict::Overflow => {
                            let tag = open_tag();
                            let text = format!(
                                "statement longer than {} bytes before its close tag ':{tag}'",
                                self.max
                            );
                            let error = ParseError::new(self.pos, Source::Parser, &text);
                            let from = self.pos;
                            let split = floor_boundary(unit, self.max);
                            self.error(error, &unit[..split], base + at, out);
                            // In the body the search goes on (a close tag that began
                            // inside the limit counts); in the header, the skip
                            // searches from the limit as PL-18 does.
                            let in_body = r.place == Place::Body;
                            if !in_body {
                                let rule = grammar::rules().lookahead;
                                self.search.reset(rule, true, tag.len(), base + at + split);
                            }
                            self.mode = Mode::Skip {
                                openers: !in_body,
                                from,
                                open_tag: tag,
                            };
                            at += split;
                        }
                        Verdict::NotStatement => {}
                    }
                    run = at;
                }
            }
        }
    }
}

//! The plurnk state machine: text streams out as it is decided; a statement is held whole
//! and emitted as one event at its close tag; a broken statement becomes an error at once
//! and the rest of it is skipped as it arrives.

use serde::Serialize;

use super::model::{ParseError, Position, Source, Statement};
use super::options::Options;
use super::probe::{CloseMatcher, CloseStep, OpenerMatcher, Place, ProbeVerdict, StatementProbe};
use super::typing;
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

/// The rest of a broken statement, skipped up to its close tag or the next opener.
#[derive(Clone, Debug)]
struct Skip {
    close: CloseMatcher,
    /// Present when the next opener also ends the statement (PL-18 (b)).
    opener: Option<OpenerMatcher>,
    /// Bytes of the unit already fed to the matchers.
    scanned: usize,
    from: Position,
    open_tag: String,
}

#[derive(Clone, Debug)]
enum Mode {
    Text,
    Probe(StatementProbe),
    Skip(Skip),
}

/// The plurnk state machine (driven by [`crate::reentry::Stream`]).
#[derive(Clone, Debug)]
pub struct PlurnkMachine {
    max: usize,
    mode: Mode,
    /// Position of the first undecided byte.
    pos: Position,
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
        PlurnkMachine {
            max: options
                .max_statement_bytes
                .min(crate::reentry::MAX_SIZE_OPTION),
            mode: Mode::Text,
            pos: Position::default(),
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

    /// Emits a closed statement `unit[..end]` as a statement or its error.
    fn closed(
        &mut self,
        probe: &StatementProbe,
        unit: &str,
        end: usize,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        let tag_len = probe.open_tag(unit).len() + 1;
        let statement = &unit[..end];
        let span = Span::new(base, base + end);
        match typing::build(unit, probe, end - tag_len, self.pos) {
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
    fn unclosed(&mut self, probe: &StatementProbe, unit: &str, base: usize, out: &mut Vec<Event>) {
        let open_tag = probe.open_tag(unit).to_string();
        let from = self.pos;
        let end = from.after(unit);
        let (expected, reason) = match probe.place() {
            Place::Signal { .. } => ("`]`".to_string(), format!("signal slot of `<<{open_tag}` is still open; add `]`")),
            Place::Path { .. } => ("`)`".to_string(), format!("path slot of `<<{open_tag}` is still open; add `)`")),
            Place::Marker(_) | Place::Header { lt: true } => {
                ("`>`".to_string(), format!("line marker of `<<{open_tag}` is still open; add `>`"))
            }
            Place::Body => (
                format!("close tag `:{open_tag}`"),
                format!("body of `<<{open_tag}` is still open; add `:{open_tag}`"),
            ),
            _ => (
                "`:` to open the body".to_string(),
                format!("header of `<<{open_tag}` is still open; add `:` and the close tag `:{open_tag}`"),
            ),
        };
        let error = ParseError::new(
            end,
            Source::Parser,
            &format!("expected {expected}; got end of input"),
        );
        let mut covered = unit;
        if probe.place() == Place::Body {
            if let Ok(statement) = typing::build(unit, probe, unit.len(), from) {
                out.push(Event::Statement {
                    statement: Box::new(statement),
                    span: Span::new(base, base + unit.len()),
                });
                self.pos = end;
                covered = "";
            }
        }
        self.error(error, covered, base + unit.len() - covered.len(), out);
        let at = base + unit.len();
        out.push(Event::UnparsedTail {
            from,
            reason,
            span: Span::empty(at),
        });
    }

    /// Continues skipping `unit`; returns how many bytes it decided, and whether the
    /// broken statement ended (so text resumes).
    fn skip(&mut self, unit: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> (usize, bool) {
        let Mode::Skip(skip) = &mut self.mode else {
            return (0, true);
        };
        let bytes = unit.as_bytes();
        let mut end = None;
        while skip.scanned < bytes.len() {
            let idle = skip.close.idle() && skip.opener.as_ref().is_none_or(|o| o.idle());
            if idle {
                let rest = &bytes[skip.scanned..];
                let next = match skip.opener {
                    Some(_) => memchr::memchr2(b':', b'<', rest),
                    None => memchr::memchr(b':', rest),
                };
                match next {
                    Some(k) => skip.scanned += k,
                    None => {
                        skip.scanned = bytes.len();
                        break;
                    }
                }
            }
            let i = skip.scanned;
            skip.scanned += 1;
            if skip.close.step(bytes[i]) == CloseStep::Closed {
                end = Some(i);
                break;
            }
            if skip.opener.as_mut().is_some_and(|o| o.step(bytes[i])) {
                end = Some(i - 5);
                break;
            }
        }
        if end.is_none() && eof && skip.close.awaiting_follower() {
            end = Some(bytes.len());
        }
        match end {
            Some(end) => {
                self.mode = Mode::Text;
                self.skipped(&unit[..end], base, out);
                (end, true)
            }
            None if eof => {
                let reason = format!(
                    "close tag `:{0}` of the malformed statement `<<{0}` never came",
                    skip.open_tag
                );
                let from = skip.from;
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
                // A partial close tag is skipped either way; only a partial opener must
                // stay, because text mode reads it again if it completes.
                let held = skip.opener.as_ref().map_or(0, |o| o.partial());
                let decided = floor_boundary(unit, skip.scanned.saturating_sub(held));
                skip.scanned -= decided;
                self.skipped(&unit[..decided], base, out);
                (decided, false)
            }
        }
    }

    /// Starts skipping after a broken statement whose error covers `unit[..split]`.
    fn broken(
        &mut self,
        error: ParseError,
        unit: &str,
        split: usize,
        skip: Skip,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        self.error(error, &unit[..split], base, out);
        self.mode = Mode::Skip(skip);
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
                        self.mode = Mode::Probe(StatementProbe::new());
                    }
                },
                Mode::Skip(_) => {
                    let (used, ended) = self.skip(&pending[at..], base + at, eof, out);
                    at += used;
                    run = at;
                    if !ended {
                        return at;
                    }
                }
                Mode::Probe(probe) => {
                    let unit = &pending[at..];
                    let mut verdict = probe.resume(unit, self.max);
                    if verdict == ProbeVerdict::NeedMore && eof {
                        probe.end_suffix(unit.len());
                        verdict = match probe.place() {
                            Place::Lt | Place::Op | Place::Uncommitted { lt: true } => {
                                ProbeVerdict::NotStatement
                            }
                            Place::Body if probe.close_matcher(unit).awaiting_follower() => {
                                ProbeVerdict::Closed(unit.len())
                            }
                            _ => ProbeVerdict::NeedMore,
                        };
                    }
                    let Mode::Probe(probe) = std::mem::replace(&mut self.mode, Mode::Text) else {
                        return at;
                    };
                    if verdict == ProbeVerdict::NotStatement {
                        at += 1;
                        continue;
                    }
                    self.text(&pending[run..at], base + run, out);
                    match verdict {
                        ProbeVerdict::NeedMore if eof => {
                            self.unclosed(&probe, unit, base + at, out);
                            return pending.len();
                        }
                        ProbeVerdict::NeedMore => {
                            self.mode = Mode::Probe(probe);
                            return at;
                        }
                        ProbeVerdict::Closed(end) => {
                            self.closed(&probe, unit, end, base + at, out);
                            at += end;
                        }
                        ProbeVerdict::HeaderError {
                            at: offending,
                            report: (offset, source, text),
                        } => {
                            let error =
                                ParseError::new(self.pos.after(&unit[..offset]), source, &text);
                            let skip = Skip {
                                close: CloseMatcher::new(probe.open_tag(unit).as_bytes()),
                                opener: Some(OpenerMatcher::default()),
                                scanned: 0,
                                from: self.pos,
                                open_tag: probe.open_tag(unit).to_string(),
                            };
                            self.broken(error, unit, offending, skip, base + at, out);
                            at += offending;
                        }
                        ProbeVerdict::Overflow => {
                            let open_tag = probe.open_tag(unit).to_string();
                            let text = format!(
                                "statement longer than {} bytes before its close tag `:{open_tag}`",
                                self.max
                            );
                            let error = ParseError::new(self.pos, Source::Parser, &text);
                            let split = floor_boundary(unit, self.max);
                            let in_body = probe.place() == Place::Body;
                            let skip = Skip {
                                close: if in_body {
                                    probe.close_matcher(unit)
                                } else {
                                    CloseMatcher::new(open_tag.as_bytes())
                                },
                                opener: (!in_body).then(OpenerMatcher::default),
                                scanned: if in_body {
                                    probe.scanned().saturating_sub(split)
                                } else {
                                    0
                                },
                                from: self.pos,
                                open_tag,
                            };
                            self.broken(error, unit, split, skip, base + at, out);
                            at += split;
                        }
                        ProbeVerdict::NotStatement => {}
                    }
                    run = at;
                }
            }
        }
    }
}

//! Reading one statement candidate, held whole from its first `<`: the opener, the
//! header step by step, the lookahead after a stray character (PL-5a) and the body up
//! to its close tag, each by its entry rule of grammar/plurnk.pest; the semantics
//! (commitment, duplicate slots, the statement bound, which close tag is the own one)
//! are decided here.

use super::grammar::{self, Rules};
use super::machine::PlurnkMachine;
use super::model::{Op, Source};
#[cfg(test)]
use super::options::Options;
use super::search::Found;
use super::typing::{Header, Problem, Slot};
use crate::machine::{Capture, Outcome, RuleId};

/// Where a statement being read stands (offsets from its first `<`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// The opener is being read.
    Opener,
    /// A header step starts at this offset.
    Header(usize),
    /// After an uncommitted opener and a stray character at this offset: looking
    /// ahead for the opener's close tag or the next opener (PL-5a).
    Stray(usize),
    /// In the body, looking for the close tag.
    Body,
}

/// The slot left open at the end of input (PL-19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Open {
    Header,
    Signal,
    Path,
    Marker,
    Body,
}

/// A statement candidate from its first `<`, held whole.
#[derive(Clone, Debug)]
pub(super) struct Reading {
    pub(super) place: Place,
    /// Whether the opener committed to a statement (PL-5).
    committed: bool,
    /// Valid once the opener matched.
    pub(super) header: Header,
    seen: Seen,
}

impl Reading {
    /// A candidate at a `<`, before its opener is read.
    pub(super) fn new() -> Self {
        Reading {
            place: Place::Opener,
            committed: false,
            // The OP is set when the opener matches.
            header: Header {
                op: Op::EDIT,
                tag_end: 0,
                slots: Vec::new(),
                deferred: None,
                body_start: 0,
            },
            seen: Seen::default(),
        }
    }
}

/// Which slots the header has had so far.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Seen {
    signal: bool,
    path: bool,
    marker: bool,
}

/// What reading a statement decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Every byte so far fits; more input is needed.
    NeedMore,
    /// The bytes are not a statement: the first `<` is text.
    NotStatement,
    /// A malformed header (PL-18, PL-5a): `at` is the offending byte, `report` where
    /// and what.
    HeaderError { at: usize, report: Problem },
    /// The statement is longer than the limit (PL-20).
    Overflow,
    /// The statement closed; its close tag ends at this offset.
    Closed(usize),
    /// The input ended with this place open (PL-19).
    Unclosed(Open),
}

/// The first closed capture of `rule`.
fn capture(captures: &[Capture], rule: RuleId) -> Option<Capture> {
    captures
        .iter()
        .find(|c| c.rule == rule && c.is_closed())
        .copied()
}

/// The error for a character at byte `i` of `unit` that starts no slot (PL-18): the
/// published package's wording, with `<<` named as one character as it does.
fn stray_message(unit: &str, i: usize) -> String {
    let shown = if unit.as_bytes().get(i..i + 2) == Some(b"<<") {
        "<<".to_string()
    } else {
        unit.get(i..)
            .and_then(|s| s.chars().next())
            .unwrap_or(char::REPLACEMENT_CHARACTER)
            .to_string()
    };
    format!(
        "unrecognized character '{shown}' in slot region; \
         expected [signal], (path), <L> or :body: in any order"
    )
}

impl PlurnkMachine {
    /// Reads the statement `unit` (from its first `<`, at absolute `abs`) as far as
    /// its bytes go.
    pub(super) fn read(&mut self, r: &mut Reading, unit: &str, abs: usize, eof: bool) -> Verdict {
        let rules = grammar::rules();
        let bytes = unit.as_bytes();
        let max = self.max;
        // A statement must close within `max` bytes (PL-20), an uncommitted opener
        // decide within them (PL-5a): past them nothing is looked at, and there the
        // end of the input does not matter.
        let at_limit = bytes.len() >= max;
        let window = &bytes[..bytes.len().min(max)];
        let last = eof || at_limit;
        loop {
            match r.place {
                Place::Opener => {
                    let outcome = self.run(window, last);
                    match outcome {
                        Outcome::NeedMore => return Verdict::NeedMore,
                        Outcome::Matched { end } => {
                            let captures = self.probe.captures();
                            let op = capture(captures, rules.op)
                                .and_then(|c| Op::from_bytes(&bytes[c.start..c.end]));
                            let Some(op) = op else {
                                return Verdict::NotStatement;
                            };
                            r.header.op = op;
                            r.header.tag_end = end;
                            r.place = Place::Header(end);
                            self.probe.start(rules.header_step);
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            return Verdict::NotStatement
                        }
                    }
                }
                Place::Header(step) => {
                    let outcome = self.run(&window[step.min(window.len())..], last);
                    let end = match outcome {
                        Outcome::NeedMore => return Verdict::NeedMore,
                        Outcome::Matched { end } => step + end,
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            // `header_step` ends in `ANY` and `EOI` alternatives: it
                            // fails on no input.
                            return Verdict::NotStatement;
                        }
                    };
                    if let Some(verdict) =
                        self.header_step(r, unit, step, end, abs, at_limit, eof, rules)
                    {
                        return verdict;
                    }
                }
                Place::Stray(stray) => {
                    let found = self.search.step(window, abs, eof && bytes.len() <= max);
                    match found {
                        Found::Match { start, end } => {
                            if self.search.candidate()[0] == b'<' {
                                return Verdict::NotStatement;
                            }
                            if self.own_close(r, unit, start, end) {
                                return Verdict::HeaderError {
                                    at: stray,
                                    report: (stray, Source::Lexer, stray_message(unit, stray)),
                                };
                            }
                            self.search.skip_match(end);
                        }
                        Found::Pending => {
                            if !at_limit {
                                return if eof {
                                    Verdict::NotStatement
                                } else {
                                    Verdict::NeedMore
                                };
                            }
                            // At the limit only the opener's own close tag ending
                            // exactly there, decided by the end of input, counts.
                            let waiting = bytes.len() == max
                                && !eof
                                && self.search.match_at_end().is_some_and(|end| {
                                    let start = self.search.active().unwrap_or(end);
                                    self.own_close(r, unit, start, end)
                                });
                            return if waiting {
                                Verdict::NeedMore
                            } else {
                                Verdict::NotStatement
                            };
                        }
                    }
                }
                Place::Body => {
                    // The close tag must end within `max` bytes; the character after
                    // it (which decides that it ends there) may be the next one.
                    let limit = max.saturating_add(1);
                    let window = &bytes[..bytes.len().min(limit)];
                    let last = eof && bytes.len() <= limit;
                    match self.search.step(window, abs, last) {
                        Found::Match { start, end } => {
                            if self.own_close(r, unit, start, end) {
                                return if end - abs <= max {
                                    Verdict::Closed(end - abs)
                                } else {
                                    Verdict::Overflow
                                };
                            }
                            self.search.skip_match(end);
                        }
                        Found::Pending if bytes.len() < max => {
                            return if eof {
                                Verdict::Unclosed(Open::Body)
                            } else {
                                Verdict::NeedMore
                            };
                        }
                        Found::Pending => {
                            let waiting = bytes.len() == max
                                && !eof
                                && self.search.match_at_end().is_some_and(|end| {
                                    let start = self.search.active().unwrap_or(end);
                                    self.own_close(r, unit, start, end)
                                });
                            return if waiting {
                                Verdict::NeedMore
                            } else {
                                Verdict::Overflow
                            };
                        }
                    }
                }
            }
        }
    }

    /// Runs the probe over `input`, finished when `last`.
    fn run(&mut self, input: &[u8], last: bool) -> Outcome {
        if last {
            self.probe.finish(input)
        } else {
            self.probe.resume(input)
        }
    }

    /// Whether the candidate `start..end` (absolute) the search matched is the
    /// statement's own close tag: `:` and the opener's exact `OPsuffix` (the suffix
    /// rule is greedy, so the character after it cannot extend it).
    fn own_close(&self, r: &Reading, unit: &str, start: usize, end: usize) -> bool {
        let tag = &unit.as_bytes()[2..r.header.tag_end];
        let candidate = self.search.candidate();
        end - start == tag.len() + 1 && candidate.get(1..=tag.len()) == Some(tag)
    }

    /// Notes a slot opening at `at` (its bracket): a second one of its kind, or a line
    /// marker on SEND or EXEC, is the statement's error (PL-14, PL-15), reported when
    /// the statement ends.
    fn open_slot(r: &mut Reading, kind: u8, at: usize) {
        let problem = match kind {
            b'[' if r.seen.signal => Some("duplicate signal".to_string()),
            b'(' if r.seen.path => Some("duplicate path".to_string()),
            b'<' if r.seen.marker => Some("duplicate line marker".to_string()),
            b'<' if matches!(r.header.op, Op::SEND | Op::EXEC) => Some(format!(
                "line marker not allowed on {}",
                r.header.op.as_str()
            )),
            _ => None,
        };
        match kind {
            b'[' => r.seen.signal = true,
            b'(' => r.seen.path = true,
            _ => r.seen.marker = true,
        }
        r.committed = true;
        if let (Some(text), None) = (problem, &r.header.deferred) {
            r.header.deferred = Some((at, Source::Parser, text));
        }
    }

    /// A header error at the offending byte `at`, reported at `report_at` unless a
    /// structural error came first (PL-16).
    fn header_error(r: &Reading, at: usize, report_at: usize, text: String) -> Verdict {
        let report = match &r.header.deferred {
            Some(d) => d.clone(),
            None => (report_at, Source::Lexer, text),
        };
        Verdict::HeaderError { at, report }
    }

    /// Acts on the header step `unit[step..end]`; `None` to go on reading.
    #[allow(clippy::too_many_arguments)]
    fn header_step(
        &mut self,
        r: &mut Reading,
        unit: &str,
        step: usize,
        end: usize,
        abs: usize,
        at_limit: bool,
        eof: bool,
        rules: &Rules,
    ) -> Option<Verdict> {
        let captures = self.probe.captures();
        let find = |rule| capture(captures, rule).map(|c| (step + c.start)..(step + c.end));
        let slot_name = |r: &Reading, signal: bool| {
            if !signal {
                "path"
            } else if matches!(r.header.op, Op::SEND | Op::EXEC) {
                "signal"
            } else {
                // The published package's name for a signal of tags.
                "tag signal"
            }
        };
        // The input ended inside the header (only a finished run gets here).
        let unclosed = [
            (rules.unclosed_signal, Open::Signal),
            (rules.unclosed_path, Open::Path),
            (rules.unclosed_marker, Open::Marker),
            (rules.unclosed_header, Open::Header),
        ]
        .into_iter()
        .find(|(rule, _)| capture(captures, *rule).is_some());
        if let Some((_, open)) = unclosed {
            let commits = match open {
                Open::Signal | Open::Path => true,
                // `<` commits only with `-` or a digit after it (PL-5).
                Open::Marker => find(rules.marker_start).is_some_and(|m| !m.is_empty()),
                Open::Header | Open::Body => false,
            };
            let committed = r.committed || commits;
            if at_limit {
                return Some(if committed {
                    Verdict::Overflow
                } else {
                    Verdict::NotStatement
                });
            }
            debug_assert!(eof);
            if !committed && open == Open::Marker {
                return Some(Verdict::NotStatement);
            }
            return Some(Verdict::Unclosed(open));
        }
        if let Some(text) = find(rules.signal_text) {
            Self::open_slot(r, b'[', text.start - 1);
            if let Some(fault) = find(rules.slot_break) {
                return Some(Self::slot_fault(r, unit, fault, slot_name(r, true)));
            }
            r.header.slots.push(Slot::Signal(text));
        } else if let Some(text) = find(rules.path_text) {
            Self::open_slot(r, b'(', text.start - 1);
            if let Some(fault) = find(rules.slot_break) {
                return Some(Self::slot_fault(r, unit, fault, slot_name(r, false)));
            }
            r.header.slots.push(Slot::Path(text));
        } else if let Some(partial) = find(rules.marker_start) {
            // `marker_fault`: the character after the longest start is the fault.
            let lt = partial.start - 1;
            if !r.committed && partial.is_empty() {
                self.stray(r, lt, abs);
                return None;
            }
            Self::open_slot(r, b'<', lt);
            return Some(Self::header_error(
                r,
                partial.end,
                lt,
                "malformed line marker; expected <N> or <N-M>".into(),
            ));
        } else if let Some(first) = find(rules.int) {
            let ints: Vec<_> = captures
                .iter()
                .filter(|c| c.rule == rules.int)
                .map(|c| (step + c.start)..(step + c.end))
                .collect();
            Self::open_slot(r, b'<', first.start - 1);
            r.header
                .slots
                .push(Slot::Marker(ints[0].clone(), ints.get(1).cloned()));
        } else if find(rules.body_open).is_some() {
            r.committed = true;
            r.header.body_start = end;
            r.place = Place::Body;
            let tag_len = r.header.tag_end - 2;
            self.search
                .reset(rules.close_tag, false, tag_len, abs + end);
            return None;
        } else if let Some(stray) = find(rules.stray) {
            if !r.committed {
                self.stray(r, stray.start, abs);
                return None;
            }
            return Some(Self::header_error(
                r,
                stray.start,
                stray.start,
                stray_message(unit, stray.start),
            ));
        }
        r.place = Place::Header(end);
        self.probe.start(rules.header_step);
        None
    }

    /// The error of a signal or path that a line break or `<<` broke (PL-18).
    fn slot_fault(r: &Reading, unit: &str, fault: std::ops::Range<usize>, slot: &str) -> Verdict {
        let text = if unit.as_bytes()[fault.start] == b'<' {
            format!("unrecognized character '<<' in {slot}")
        } else {
            format!("line break in {slot}")
        };
        Self::header_error(r, fault.start, fault.start, text)
    }

    /// Starts looking ahead from the stray character at `at` (PL-5a).
    fn stray(&mut self, r: &mut Reading, at: usize, abs: usize) {
        r.place = Place::Stray(at);
        let tag_len = r.header.tag_end - 2;
        self.search
            .reset(grammar::rules().lookahead, true, tag_len, abs + at);
    }
}

/// Reads `unit` (a statement from its `<<`, all of it there but more allowed) and
/// returns its header when the reading reached the body.
#[cfg(test)]
pub(super) fn header_of(unit: &str) -> Option<Header> {
    let mut machine = PlurnkMachine::new(&Options::default());
    machine.probe.start(grammar::rules().opener);
    let mut reading = Reading::new();
    let verdict = machine.read(&mut reading, unit, 0, false);
    let in_body = reading.place == Place::Body || matches!(verdict, Verdict::Closed(_));
    in_body.then_some(reading.header)
}

//! The `reasoning` state machine (spec/reasoning.md): prose scanned for the
//! accepted spellings' markers, each candidate run on grammar/reasoning.pest.

use super::family::RepeatedOpener;
use super::spelling::{MarkerRules, Spelling, Wrappers};
use crate::field::grammars;
use crate::field::probe::MarkerProbe;
use crate::field::{Emitter, Event};
use crate::machine::Outcome;
use crate::reentry::Machine;

/// The `reasoning` state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct ReasoningMachine {
    emitter: Emitter,
    probe: MarkerProbe,
    rules: MarkerRules,
    wrappers: Wrappers,
    /// The bytes that may start an accepted marker (repeated to fill three).
    leads: [u8; 3],
    any: bool,
    probing: Option<Spelling>,
    pos: usize,
    reasoning: bool,
    /// The start of the output: the reasoning it may start in, and RS-6 (whether
    /// it begins with an accepted opener again).
    first: RepeatedOpener,
}

impl ReasoningMachine {
    /// A machine accepting `spellings`.
    pub fn with_spellings(start_in_reasoning: bool, spellings: &[Spelling]) -> Self {
        let program = grammars::reasoning();
        let rules = MarkerRules::of(program);
        let wrappers = Wrappers::new(spellings);
        let found: Vec<u8> = wrappers.lead_bytes().collect();
        let leads = match found.as_slice() {
            [] => [0; 3],
            [a] => [*a; 3],
            [a, b] => [*a, *b, *b],
            [a, b, c, ..] => [*a, *b, *c],
        };
        ReasoningMachine {
            emitter: Emitter::new(),
            probe: MarkerProbe::new(program, &rules.all()),
            rules,
            wrappers,
            leads,
            any: !found.is_empty(),
            probing: None,
            pos: 0,
            reasoning: false,
            first: RepeatedOpener::new(start_in_reasoning, spellings),
        }
    }

    /// Prose at absolute `start`.
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if self.reasoning {
            self.emitter.reasoning(text, start, out);
        } else {
            self.emitter.text(text, start, out);
        }
    }

    /// The character at `self.pos` is prose (a candidate that is no marker).
    fn prose_char(&mut self, pending: &str, base: usize, out: &mut Vec<Event>) {
        let at = self.pos - base;
        let len = pending[at..].chars().next().map_or(1, char::len_utf8);
        self.prose(&pending[at..at + len], self.pos, out);
        self.pos += len;
    }
}

impl Machine for ReasoningMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        let Some(decided) = self.first.read(
            pending.as_bytes(),
            base,
            eof,
            &mut self.emitter,
            |begun| {
                self.reasoning = true;
                self.wrappers.begun(begun);
            },
            out,
        ) else {
            return 0;
        };
        self.pos += decided;
        let bytes = pending.as_bytes();
        let end = base + bytes.len();
        while self.pos < end {
            let Some(spelling) = self.probing else {
                let at = self.pos - base;
                let [a, b, c] = self.leads;
                let found = if self.any {
                    crate::reentry::find_byte3(a, b, c, &bytes[at..])
                } else {
                    None
                };
                let Some(k) = found else {
                    self.prose(&pending[at..], self.pos, out);
                    self.pos = end;
                    break;
                };
                self.prose(&pending[at..at + k], self.pos, out);
                self.pos += k;
                let spelling = Spelling::of_lead_byte(bytes[at + k]);
                match spelling.filter(|s| self.wrappers.applies(*s, self.reasoning)) {
                    None => self.prose_char(pending, base, out),
                    Some(s) => {
                        // In answer text the closer is read too: a stray one is
                        // markup (RS-13).
                        let rule = if self.reasoning {
                            self.rules.close[s.index()]
                        } else {
                            self.rules.text[s.index()]
                        };
                        self.probe.start(rule, self.pos);
                        self.probing = Some(s);
                    }
                }
                continue;
            };
            match self.probe.run(&bytes[self.pos - base..], eof) {
                Outcome::NeedMore => break,
                Outcome::Matched { end: len } => {
                    self.probing = None;
                    let marker_end = self.pos + len;
                    let stray = self
                        .probe
                        .captures()
                        .iter()
                        .any(|c| c.rule == self.rules.close[spelling.index()] && c.is_closed());
                    if self.reasoning {
                        self.emitter.reasoning_end(true, marker_end, out);
                        self.reasoning = false;
                    } else if stray {
                        // A closer with no reasoning open: markup (RS-13).
                        self.emitter.markup(marker_end, out);
                    } else {
                        self.emitter.reasoning_start(marker_end, out);
                        self.reasoning = true;
                        self.wrappers.open(Some(spelling));
                    }
                    self.pos = marker_end;
                }
                Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                    self.probing = None;
                    self.prose_char(pending, base, out);
                }
            }
        }
        if eof {
            if self.probing.take().is_some() {
                // A marker cut by the end of input is prose (RS-8).
                let at = self.pos - base;
                self.prose(&pending[at..], self.pos, out);
                self.pos = end;
            }
            self.emitter.markup(end, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, end, out);
            }
            return pending.len();
        }
        self.pos.min(end) - base
    }
}

//! The hermes state machine: prose and reasoning scanned for markers with the
//! grammar's entry rules, the call object walked member by member with its rules
//! (src/field/call_object.rs; spec/hermes.md).

use std::sync::OnceLock;

use super::Options;
use crate::field::call_object::{CallObject, ObjectEnd};
use crate::field::grammars;
use crate::field::probe::{rule, MarkerProbe};
use crate::field::reasoning::family::RepeatedOpener;
use crate::field::reasoning::spelling::{MarkerRules, Spelling, Wrappers};
use crate::field::{Emitter, Event};
use crate::machine::{Outcome, RuleId};
use crate::reentry::{find_byte, Machine};

/// The entry and captured rules of grammar/hermes.pest (and of
/// grammar/reasoning.pest, appended to it).
struct Rules {
    text_marker: RuleId,
    reasoning_marker: RuleId,
    call_marker: RuleId,
    wrappers: MarkerRules,
    call_end: RuleId,
    skip_marker: RuleId,
    call_open: RuleId,
    think_open: RuleId,
    think_close: RuleId,
}

impl Rules {
    fn get() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| {
            let p = grammars::hermes();
            Rules {
                text_marker: rule(p, "text_marker"),
                reasoning_marker: rule(p, "reasoning_marker"),
                call_marker: rule(p, "call_marker"),
                wrappers: MarkerRules::of(p),
                call_end: rule(p, "call_end"),
                skip_marker: rule(p, "skip_marker"),
                call_open: rule(p, "call_open"),
                think_open: rule(p, "think_open"),
                think_close: rule(p, "think_close"),
            }
        })
    }
}

/// What a marker candidate is probed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probing {
    /// A marker in prose (answer text or reasoning).
    Prose,
    /// The closer after a call object (HE-7).
    CallEnd,
    /// The closer of a malformed call (HE-8).
    Skip,
}

#[derive(Clone, Debug)]
enum Mode {
    Prose,
    Probe(Probing),
    /// Inside the call object.
    Object,
    Skip,
}

/// The hermes state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct HermesMachine {
    emitter: Emitter,
    probe: MarkerProbe,
    object: CallObject,
    mode: Mode,
    /// Absolute scan position.
    pos: usize,
    /// Whether prose is reasoning (HE-9).
    reasoning: bool,
    /// The accepted reasoning spellings (HE-9, RS-11).
    wrappers: Wrappers,
    /// The bytes a marker can start with: `<` and the accepted spellings' first
    /// bytes (`<` again in the unused places).
    leads: [u8; 3],
    /// The start of the output: the reasoning it may start in, and RS-6 (whether
    /// it begins with an accepted opener again).
    first: RepeatedOpener,
}

impl HermesMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        let r = Rules::get();
        let mut captured = vec![r.call_open, r.think_open, r.think_close];
        captured.extend(r.wrappers.all());
        let wrappers = Wrappers::new(&options.reasoning_markers);
        let lead = |s: Spelling| {
            if wrappers.accepts(s) {
                s.lead_byte()
            } else {
                b'<'
            }
        };
        HermesMachine {
            emitter: Emitter::new(),
            probe: MarkerProbe::new(grammars::hermes(), &captured),
            object: CallObject::hermes(),
            mode: Mode::Prose,
            pos: 0,
            reasoning: false,
            wrappers,
            leads: [b'<', lead(Spelling::Bracket), lead(Spelling::Triangle)],
            first: RepeatedOpener::new(options.start_in_reasoning, &options.reasoning_markers),
        }
    }

    /// Prose at absolute `start`: answer text or reasoning (a reasoning item opens
    /// again after a call that broke out of one, HE-11).
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        self.emitter.prose(self.reasoning, text, start, out);
    }

    /// The entry rule for a candidate at `byte` in prose, or `None` when no marker
    /// can start there (a spelling that does not apply, HE-9).
    fn prose_entry(&self, byte: u8) -> Option<RuleId> {
        let r = Rules::get();
        if byte == b'<' {
            return Some(
                match (
                    self.wrappers.applies(Spelling::Think, self.reasoning),
                    self.reasoning,
                ) {
                    (false, _) => r.call_marker,
                    (true, true) => r.reasoning_marker,
                    (true, false) => r.text_marker,
                },
            );
        }
        let spelling =
            Spelling::of_lead_byte(byte).filter(|s| self.wrappers.applies(*s, self.reasoning))?;
        // In answer text the closer is read too: a stray one is markup (HE-15).
        let markers = if self.reasoning {
            &r.wrappers.close
        } else {
            &r.wrappers.text
        };
        Some(markers[spelling.index()])
    }

    fn start_probe(&mut self, probing: Probing, entry: RuleId, at: usize) {
        self.probe.start(entry, at);
        self.mode = Mode::Probe(probing);
    }

    /// A probe matched `start..end`.
    fn matched(&mut self, probing: Probing, start: usize, end: usize, out: &mut Vec<Event>) {
        let r = Rules::get();
        match probing {
            Probing::Prose => {
                let opened = if self.probe.capture(r.think_open).is_some() {
                    Some(Spelling::Think)
                } else {
                    [Spelling::Bracket, Spelling::Triangle]
                        .into_iter()
                        .find(|s| self.probe.capture(r.wrappers.open[s.index()]).is_some())
                };
                if self.probe.capture(r.call_open).is_some() {
                    self.object.begin(start, end);
                    self.mode = Mode::Object;
                } else if let Some(spelling) = opened {
                    self.emitter.reasoning_start(end, out);
                    self.reasoning = true;
                    self.wrappers.open(Some(spelling));
                    self.mode = Mode::Prose;
                } else if self.probe.capture(r.think_close).is_some()
                    || r.wrappers
                        .close
                        .iter()
                        .any(|c| self.probe.capture(*c).is_some())
                {
                    // The reasoning closer; after a call nothing is open (HE-11), and
                    // in answer text it is stray (HE-15).
                    if self.emitter.in_reasoning() {
                        self.emitter.reasoning_end(true, end, out);
                    } else {
                        self.emitter.markup(end, out);
                    }
                    self.reasoning = false;
                    self.mode = Mode::Prose;
                } else {
                    // A stray call closer: markup, the state unchanged (HE-15).
                    self.emitter.markup(end, out);
                    self.mode = Mode::Prose;
                }
            }
            Probing::CallEnd | Probing::Skip => {
                self.emitter.markup(end, out);
                self.mode = Mode::Prose;
            }
        }
        self.pos = end;
    }

    /// A probe was rejected at the candidate starting at `start`.
    fn rejected(
        &mut self,
        probing: Probing,
        start: usize,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        match probing {
            Probing::Prose => {
                // The candidate's character is prose.
                let rel = start - base;
                let len = pending[rel..].chars().next().map_or(1, char::len_utf8);
                self.prose(&pending[rel..rel + len], start, out);
                self.pos = start + len;
                self.mode = Mode::Prose;
            }
            Probing::CallEnd => {
                // No closer: what follows the object is prose again (HE-7).
                self.pos = start;
                self.mode = Mode::Prose;
            }
            Probing::Skip => {
                self.pos = start + 1;
                self.mode = Mode::Skip;
            }
        }
    }

    /// The call object ended as `end` says.
    fn object_end(&mut self, end: ObjectEnd, pending: &str, base: usize, out: &mut Vec<Event>) {
        match end {
            ObjectEnd::More => {}
            ObjectEnd::Prose(to) => {
                // Not a call: the unit is prose (HE-6).
                let from = self.object.unit_start();
                self.prose(&pending[from - base..to - base], from, out);
                self.pos = to;
                self.mode = Mode::Prose;
            }
            ObjectEnd::Called(at) => {
                self.pos = at;
                self.start_probe(Probing::CallEnd, Rules::get().call_end, at);
            }
            ObjectEnd::Malformed(at) => {
                self.pos = at;
                self.mode = Mode::Skip;
            }
        }
    }
}

impl HermesMachine {
    /// The chunk when it is prose from its first byte to its last, none of which
    /// can start a marker: what the loop of [`Self::advance_all`] decides for it
    /// (all of it, as prose), without the loop. `None` in any other case.
    #[inline(always)]
    fn prose_only(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> Option<usize> {
        if eof || !matches!(self.mode, Mode::Prose) || self.pos != base || !self.first.decided() {
            return None;
        }
        let bytes = pending.as_bytes();
        let found = match self.leads {
            [b'<', b'<', b'<'] => find_byte(b'<', bytes),
            [a, b, c] => crate::reentry::find_byte3(a, b, c, bytes),
        };
        if found.is_some() {
            return None;
        }
        self.emitter.prose(self.reasoning, pending, base, out);
        self.pos = base + bytes.len();
        Some(self.emitter.covered().max(base) - base)
    }

    /// [`Machine::advance`] in every case.
    #[inline(never)]
    fn advance_all(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> usize {
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
        loop {
            match std::mem::replace(&mut self.mode, Mode::Prose) {
                Mode::Prose => {
                    let rel = self.pos - base;
                    let found = match self.leads {
                        [b'<', b'<', b'<'] => find_byte(b'<', &bytes[rel..]),
                        [a, b, c] => crate::reentry::find_byte3(a, b, c, &bytes[rel..]),
                    };
                    let Some(k) = found else {
                        self.prose(&pending[rel..], self.pos, out);
                        self.pos = end;
                        break;
                    };
                    self.prose(&pending[rel..rel + k], self.pos, out);
                    self.pos += k;
                    match self.prose_entry(bytes[rel + k]) {
                        Some(entry) => self.start_probe(Probing::Prose, entry, self.pos),
                        None => self.rejected(Probing::Prose, self.pos, pending, base, out),
                    }
                }
                Mode::Probe(probing) => {
                    self.mode = Mode::Probe(probing);
                    let Some(start) = self.probe.active() else {
                        self.mode = Mode::Prose;
                        continue;
                    };
                    match self.probe.run(&bytes[start - base..], eof) {
                        Outcome::NeedMore => break,
                        Outcome::Matched { end: len } => {
                            self.matched(probing, start, start + len, out)
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            self.rejected(probing, start, pending, base, out)
                        }
                    }
                }
                Mode::Object => {
                    let read = self.object.read(pending, base, eof, &mut self.emitter, out);
                    if read == ObjectEnd::More {
                        if eof {
                            self.pos = end;
                        } else {
                            self.mode = Mode::Object;
                        }
                        break;
                    }
                    self.object_end(read, pending, base, out);
                }
                Mode::Skip => {
                    let rel = self.pos - base;
                    match find_byte(b'<', &bytes[rel..]) {
                        None => {
                            self.emitter.markup(end, out);
                            self.pos = end;
                            self.mode = Mode::Skip;
                            break;
                        }
                        Some(k) => {
                            self.pos += k;
                            self.emitter.markup(self.pos, out);
                            self.start_probe(Probing::Skip, Rules::get().skip_marker, self.pos);
                        }
                    }
                }
            }
        }
        if eof {
            self.emitter.markup(end, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, end, out);
            }
            return pending.len();
        }
        let keep = match self.mode {
            Mode::Object => self.emitter.covered().min(self.object.needed_from()),
            _ => self.emitter.covered(),
        };
        keep.max(base) - base
    }
}

impl Machine for HermesMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    /// A chunk of prose without a marker's first byte (most chunks of a streamed
    /// turn) is decided by `HermesMachine::prose_only`, inlined into the
    /// re-entry layer, a chunk inside the call object by the object's reader
    /// directly; every other by the loop.
    #[inline]
    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        if let Some(used) = self.prose_only(pending, base, eof, out) {
            return used;
        }
        if !eof && matches!(self.mode, Mode::Object) && self.first.decided() {
            // Inside the call object, the object's reader decides what it can; the
            // loop runs only when the object ends.
            let read = self.object.read(pending, base, eof, &mut self.emitter, out);
            if read == ObjectEnd::More {
                let keep = self.emitter.covered().min(self.object.needed_from());
                return keep.max(base) - base;
            }
            self.object_end(read, pending, base, out);
        }
        self.advance_all(pending, base, eof, out)
    }
}

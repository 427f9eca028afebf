//! The state machine the XML-parameter families share (qwen3-coder, glm,
//! minimax-m2): prose scanned for a call's start or a reasoning wrapper, then per
//! parameter a key and a raw value up to a closer that the grammar's lookahead
//! decides, each value streamed as an escaped JSON string or typed by the tool's
//! schema when it closes (FD-5, FD-6). The families differ only in data: their
//! grammar's entry and captured rules, what follows a call's inner closer, how
//! names are cleaned, and whether a value's template newlines are stripped.

use crate::field::parameter_values::{ParameterValues, Scan};
use crate::field::probe::MarkerProbe;
use crate::field::reasoning::family::{FamilyWrappers, ProseRules, RepeatedOpener, WrapperMarker};
use crate::field::reasoning::Spelling;
use crate::field::{Emitter, Event, Tool};
use crate::machine::{Capture, Outcome, Program, RuleId};
use crate::reentry::{find_byte, Machine};

/// What follows a call's inner closer (`</function>`, `</invoke>`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum AfterCall {
    /// The rule of the call's outer closer with the whitespace before it (qwen3-coder
    /// QC-9); anything else is prose again.
    Closer(RuleId),
    /// A block of calls (minimax-m2 MM-4): whitespace is markup, at a `<` the next
    /// call or the block's closer; anything else ends the block.
    Block {
        /// Whitespace in the block.
        space: RuleId,
        /// The next call or the block's closer.
        marker: RuleId,
    },
}

/// How a family reads markup quoted inside a value one level down (qwen3-coder
/// QC-19).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Nesting {
    /// Inside a value that quotes an open nested opener, at a `<`: a nested opener
    /// or closer.
    pub entry: RuleId,
    /// The captured nested opener (in `value_end` and `entry`).
    pub open: RuleId,
    /// The captured nested closer (in `entry`).
    pub close: RuleId,
}

/// One XML-parameter family as data: its grammar's rules and its spelling habits.
#[derive(Debug)]
pub(crate) struct ParameterFamily {
    /// The family's grammar, with grammar/reasoning.pest appended.
    pub program: &'static Program,
    /// At a `<` of prose: a call's start, with or without the `<think>` markers.
    pub prose: ProseRules,
    /// Inside a call between parameters: the next parameter or a closer.
    pub body: RuleId,
    /// Inside a value, at a `<`: the closer that ends it (looked ahead).
    pub value_end: RuleId,
    /// Nested markup quoted in a value, if the family reads it (QC-19).
    pub nesting: Option<Nesting>,
    /// In the rest of a malformed call: its closer.
    pub skip: RuleId,
    /// The captured call name.
    pub name: RuleId,
    /// The captured parameter key.
    pub key: RuleId,
    /// A call cut by the end of input before its start was decided (dropped).
    pub cut: RuleId,
    /// The captured inner closer and what follows it, if the family has one; its
    /// other closers end the call and return to prose.
    pub inner_close: Option<(RuleId, AfterCall)>,
    /// The call name as written to the tool's name.
    pub clean_name: fn(&str) -> &str,
    /// The parameter key as written to the key.
    pub clean_key: fn(&str) -> &str,
    /// Whether one newline after a parameter's opener and one before its closer are
    /// the template's (qwen3-coder QC-7).
    pub strip_newlines: bool,
}

impl ParameterFamily {
    fn captured(&self) -> Vec<RuleId> {
        let mut rules = vec![self.cut, self.name, self.key];
        rules.extend(self.inner_close.map(|(rule, _)| rule));
        if let Some(n) = self.nesting {
            rules.extend([n.open, n.close]);
        }
        rules
    }
}

/// What a marker candidate is probed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probing {
    /// A marker in prose (answer text or reasoning).
    Prose,
    /// Between parameters.
    Body,
    /// A closer inside a value.
    ValueEnd,
    /// The outer closer after the inner one (`AfterCall::Closer`).
    Closer,
    /// Whitespace in a block of calls.
    BlockSpace,
    /// A marker in a block of calls.
    BlockMarker,
    /// The closer of a malformed call.
    Skip,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Prose,
    Probe(Probing),
    Value,
    Block,
    Skip,
}

/// The state machine of an XML-parameter family, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub(crate) struct ParameterMachine {
    family: &'static ParameterFamily,
    /// The call's parameters, typed by the tools' schemas.
    values: ParameterValues,
    emitter: Emitter,
    probe: MarkerProbe,
    wrappers: FamilyWrappers,
    mode: Mode,
    pos: usize,
    reasoning: bool,
    /// The start of the output: the reasoning it may start in, and RS-6 (whether
    /// it begins with an accepted opener again).
    first: RepeatedOpener,
}

impl ParameterMachine {
    /// A machine for `family` with the request's `tools`, the starting state and
    /// the accepted reasoning wrappers.
    pub fn new(
        family: &'static ParameterFamily,
        tools: &[Tool],
        start_in_reasoning: bool,
        spellings: &[Spelling],
    ) -> Self {
        // Every XML-parameter family reads stray closers (QC-20, GL-17, MM-17).
        let wrappers = FamilyWrappers::new(family.program, spellings, b'<').with_stray_closers();
        let captured = [&family.captured()[..], &wrappers.captured()].concat();
        ParameterMachine {
            family,
            values: ParameterValues::new(tools, family.strip_newlines),
            emitter: Emitter::new(),
            probe: MarkerProbe::new(family.program, &captured),
            wrappers,
            mode: Mode::Prose,
            pos: 0,
            reasoning: false,
            first: RepeatedOpener::new(start_in_reasoning, spellings),
        }
    }

    /// Prose at absolute `start`: answer text or reasoning (a reasoning item opens
    /// again after a call that broke out of one, FD-2). Inlined into the prose
    /// step of [`Self::advance_first`] (measured: the call cost more).
    #[inline]
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        self.emitter.prose(self.reasoning, text, start, out);
    }

    /// The character at absolute `start` is prose (a candidate that is no marker).
    fn prose_char(&mut self, start: usize, pending: &str, base: usize, out: &mut Vec<Event>) {
        let at = start - base;
        let len = pending[at..].chars().next().map_or(1, char::len_utf8);
        self.prose(&pending[at..at + len], start, out);
        self.pos = start + len;
    }

    /// Starts a probe for `probing` at absolute `at` (prose candidates start where
    /// their byte picks the rule).
    fn start_probe(&mut self, probing: Probing, at: usize) {
        let f = self.family;
        let entry = match (probing, f.inner_close.map(|(_, after)| after)) {
            (Probing::Prose, _) => return,
            (Probing::Body, _) => f.body,
            (Probing::ValueEnd, _) => match f.nesting {
                Some(n) if self.values.nested() => n.entry,
                _ => f.value_end,
            },
            (Probing::Closer, Some(AfterCall::Closer(rule))) => rule,
            (Probing::BlockSpace, Some(AfterCall::Block { space, .. })) => space,
            (Probing::BlockMarker, Some(AfterCall::Block { marker, .. })) => marker,
            // The malformed call's closer (a family never probes for a state its
            // data does not have).
            _ => f.skip,
        };
        self.probe.start(entry, at);
        self.mode = Mode::Probe(probing);
    }

    /// Value text at `start` (FD-5, FD-6).
    fn value_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        self.values.text(text, start, &mut self.emitter, out);
    }

    /// The value ended at a closer that starts at `at`.
    fn value_close(&mut self, at: usize, out: &mut Vec<Event>) {
        self.values.close(at, &mut self.emitter, out);
    }

    /// The call ended (its closer reaches `end`).
    fn call_close(&mut self, complete: bool, end: usize, out: &mut Vec<Event>) {
        self.values
            .call_close(complete, end, &mut self.emitter, out);
    }

    /// A call starts; its header ends at `end`.
    fn call_open(&mut self, name: &str, end: usize, out: &mut Vec<Event>) {
        self.values.call_open(name);
        self.emitter.call_start(None, name, end, out);
        self.start_probe(Probing::Body, end);
    }

    /// A parameter opener with `key` over `start..end`: its value follows.
    fn parameter_open(&mut self, key: &str, start: usize, end: usize, out: &mut Vec<Event>) {
        self.values.open(key, start, end, &mut self.emitter, out);
        self.mode = Mode::Value;
    }

    fn capture(&self, rule: RuleId) -> Option<Capture> {
        self.probe.capture(rule)
    }

    fn matched(
        &mut self,
        probing: Probing,
        start: usize,
        end: usize,
        unit: &str,
        out: &mut Vec<Event>,
    ) {
        let f = self.family;
        let text = |c: Capture| &unit[c.start..c.end];
        self.pos = end;
        self.mode = Mode::Prose;
        match probing {
            Probing::Prose => {
                if self.capture(f.cut).is_some() {
                    // Dropped: the input ended before the call's start was decided
                    // (a cut call may capture its name too, so this is asked first).
                    self.emitter.markup(end, out);
                } else if let Some(c) = self.capture(f.name) {
                    let name = (f.clean_name)(text(c));
                    if self.emitter.in_reasoning() {
                        self.emitter.reasoning_end(true, start, out);
                    }
                    self.emitter.markup(start, out);
                    self.call_open(name, end, out);
                } else {
                    match self.wrappers.marker(self.probe.captures()) {
                        Some(WrapperMarker::Opened) => {
                            self.emitter.reasoning_start(end, out);
                            self.reasoning = true;
                        }
                        Some(WrapperMarker::Closed) => {
                            // After a call no reasoning item is open (FD-2); in
                            // answer text the closer is stray (RS-14): markup.
                            if self.emitter.in_reasoning() {
                                self.emitter.reasoning_end(true, end, out);
                            } else {
                                self.emitter.markup(end, out);
                            }
                            self.reasoning = false;
                        }
                        // A stray marker of the family's: markup, the state
                        // unchanged (QC-20, GL-17, MM-17).
                        None => self.emitter.markup(end, out),
                    }
                }
            }
            Probing::Body => {
                if let Some(c) = self.capture(f.key) {
                    let key = (f.clean_key)(text(c));
                    self.parameter_open(key, start, end, out);
                } else if let Some(after) = f
                    .inner_close
                    .and_then(|(rule, after)| self.capture(rule).map(|_| after))
                {
                    self.call_close(true, end, out);
                    match after {
                        AfterCall::Closer(_) => self.start_probe(Probing::Closer, end),
                        AfterCall::Block { .. } => self.mode = Mode::Block,
                    }
                } else {
                    // The outer closer, the inner one left out (or none there is).
                    self.call_close(true, end, out);
                }
            }
            Probing::ValueEnd => {
                let quoted = &unit[..end - start];
                match f.nesting {
                    Some(n) if self.capture(n.open).is_some() => {
                        self.values.nest_open(quoted, start, &mut self.emitter, out);
                        self.mode = Mode::Value;
                        return;
                    }
                    Some(n) if self.capture(n.close).is_some() => {
                        self.values
                            .nest_close(quoted, start, &mut self.emitter, out);
                        self.mode = Mode::Value;
                        return;
                    }
                    _ => {}
                }
                self.value_close(start, out);
                self.emitter.markup(end, out);
                self.start_probe(Probing::Body, end);
            }
            Probing::BlockSpace => {
                self.emitter.markup(end, out);
                self.mode = Mode::Block;
            }
            Probing::BlockMarker => {
                self.emitter.markup(start, out);
                match self.capture(f.name) {
                    Some(c) => {
                        let name = (f.clean_name)(text(c));
                        self.call_open(name, end, out);
                    }
                    None => self.emitter.markup(end, out),
                }
            }
            Probing::Closer | Probing::Skip => self.emitter.markup(end, out),
        }
    }

    fn rejected(
        &mut self,
        probing: Probing,
        start: usize,
        cut: bool,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        match probing {
            Probing::Prose => {
                self.prose_char(start, pending, base, out);
                self.mode = Mode::Prose;
            }
            Probing::Body => {
                // Not a parameter or a closer: the call is malformed.
                self.values.abandon();
                self.call_close(false, start, out);
                self.pos = start;
                self.mode = Mode::Skip;
            }
            Probing::ValueEnd => {
                // The `<` is value text.
                self.value_text("<", start, out);
                self.pos = start + 1;
                self.mode = Mode::Value;
            }
            Probing::BlockSpace | Probing::BlockMarker if cut => {
                // Undecided at the end of input inside a block: markup.
                self.pos = base + pending.len();
                self.emitter.markup(self.pos, out);
                self.mode = Mode::Block;
            }
            Probing::Closer | Probing::BlockSpace | Probing::BlockMarker => {
                // Anything else is prose again.
                self.pos = start;
                self.mode = Mode::Prose;
            }
            Probing::Skip => {
                self.pos = start + 1;
                self.mode = Mode::Skip;
            }
        }
    }

    /// Scans value text from `self.pos`; returns false when more input is needed.
    fn scan_value(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> bool {
        let find = |hay: &[u8]| find_byte(b'<', hay);
        let scan = self.values.scan(
            pending,
            base,
            &mut self.pos,
            eof,
            find,
            &mut self.emitter,
            out,
        );
        match scan {
            Scan::More => false,
            Scan::Again => true,
            Scan::Candidate => {
                self.start_probe(Probing::ValueEnd, self.pos);
                true
            }
            Scan::Cut => {
                self.call_close(false, self.pos, out);
                self.mode = Mode::Prose;
                false
            }
        }
    }
}

impl ParameterMachine {
    /// The first step of [`Self::advance_all`]'s loop in prose, taken without the
    /// loop: the text up to the first byte that may start a marker (the same
    /// `find` of the wrappers' lead bytes). `Some(used)` when that decided the
    /// whole chunk as the loop would; `None` when the loop goes on from where this
    /// left the machine (a candidate was found, or any other mode or case). (The
    /// same step for a chunk inside a value was measured and dropped: slower.)
    #[inline(always)]
    fn advance_first(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> Option<usize> {
        if eof || !self.first.decided() {
            return None;
        }
        match self.mode {
            Mode::Prose => {
                let rel = self.pos - base;
                let rest = &pending.as_bytes()[rel..];
                match self.wrappers.find(rest) {
                    None => {
                        self.prose(&pending[rel..], self.pos, out);
                        self.pos = base + pending.len();
                    }
                    Some(k) => {
                        // The prose before the candidate; the loop probes it.
                        self.prose(&pending[rel..rel + k], self.pos, out);
                        self.pos += k;
                        return None;
                    }
                }
            }
            _ => return None,
        }
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
            match self.mode {
                Mode::Prose => {
                    let rel = self.pos - base;
                    let Some(k) = self.wrappers.find(&bytes[rel..]) else {
                        self.prose(&pending[rel..], self.pos, out);
                        self.pos = end;
                        break;
                    };
                    self.prose(&pending[rel..rel + k], self.pos, out);
                    self.pos += k;
                    let prose = &self.family.prose;
                    match self.wrappers.entry(bytes[rel + k], self.reasoning, prose) {
                        Some(entry) => {
                            self.probe.start(entry, self.pos);
                            self.mode = Mode::Probe(Probing::Prose);
                        }
                        None => self.prose_char(self.pos, pending, base, out),
                    }
                }
                Mode::Block => match bytes.get(self.pos - base) {
                    None => break,
                    Some(b' ' | b'\t' | b'\n' | b'\r') => {
                        self.start_probe(Probing::BlockSpace, self.pos)
                    }
                    Some(b'<') => self.start_probe(Probing::BlockMarker, self.pos),
                    // Anything else ends the block.
                    Some(_) => self.mode = Mode::Prose,
                },
                Mode::Probe(probing) => {
                    let Some(start) = self.probe.active() else {
                        self.mode = Mode::Prose;
                        continue;
                    };
                    let unit = &pending[start - base..];
                    match self.probe.run_cut(unit, eof) {
                        (Outcome::NeedMore, _) => break,
                        (Outcome::Matched { end: len }, _) => {
                            self.matched(probing, start, start + len, unit, out)
                        }
                        (Outcome::Rejected { .. } | Outcome::TooDeep { .. }, cut) => {
                            self.rejected(probing, start, cut, pending, base, out)
                        }
                    }
                }
                Mode::Value => {
                    if !self.scan_value(pending, base, eof, out) {
                        break;
                    }
                }
                Mode::Skip => {
                    let rel = self.pos - base;
                    let Some(k) = find_byte(b'<', &bytes[rel..]) else {
                        self.emitter.markup(end, out);
                        self.pos = end;
                        break;
                    };
                    self.pos += k;
                    self.emitter.markup(self.pos, out);
                    self.start_probe(Probing::Skip, self.pos);
                }
            }
        }
        if eof {
            if self.emitter.in_call() {
                self.values.abandon();
                self.emitter.call_end(false, end, out);
            }
            self.emitter.markup(end, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, end, out);
            }
            return pending.len();
        }
        self.emitter.covered().max(base) - base
    }
}

impl Machine for ParameterMachine {
    type Event = Event;

    /// A chunk of prose without a marker's lead byte (most chunks of a streamed
    /// turn's prose) is decided by [`ParameterMachine::advance_first`], inlined
    /// into the family machine; every other goes on in the loop.
    #[inline(always)]
    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        if let Some(used) = self.advance_first(pending, base, eof, out) {
            return used;
        }
        self.advance_all(pending, base, eof, out)
    }
}

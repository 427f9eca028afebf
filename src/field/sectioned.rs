//! The machine of the sectioned JSON families, deepseek (v3 and v3.1) and kimi-k2:
//! prose scanned for markers; a calls section opened by a marker, holding call
//! headers separated by whitespace; after each header a JSON arguments object, then
//! the call's tail; malformed arguments read raw up to the tail. Every marker,
//! header and tail is recognised by an entry rule of the family's grammar on the
//! parsing machine; the families differ only in their rules and in the few choices
//! of [`Format`] (spec/deepseek-v3.md, spec/deepseek-v3.1.md, spec/kimi-k2.md).

use crate::field::call_arguments::{CallArguments, Step};
use crate::field::json_arguments::is_json_ws;
use crate::field::probe::MarkerProbe;
use crate::field::reasoning::family::{FamilyWrappers, ProseRules, RepeatedOpener, WrapperMarker};
use crate::field::reasoning::Spelling;
use crate::field::{Emitter, Event};
use crate::machine::{Capture, Outcome, Program, RuleId};

/// A sectioned family's grammar rules and choices.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Format {
    /// The grammar the rules belong to.
    pub(crate) program: &'static Program,
    /// The marker rules of prose: plain, in text, in reasoning.
    pub(crate) prose: ProseRules,
    /// Whitespace between the markers of a section.
    pub(crate) section_space: RuleId,
    /// A call header or the section's end, at a `<` inside a section.
    pub(crate) section_marker: RuleId,
    /// What ends a call after its arguments.
    pub(crate) call_tail: RuleId,
    /// What ends a call's arguments at a marker: its tail, or a special token not
    /// consumed (JA-12).
    pub(crate) arguments_stop: RuleId,
    /// Captured by the prose marker that opens a section.
    pub(crate) section_begin: RuleId,
    /// Captured by the section marker that closes the section.
    pub(crate) section_end: RuleId,
    /// Captured: the called function's name in a header.
    pub(crate) tool_name: RuleId,
    /// Captured: the call id written in a header, for families that write one.
    pub(crate) call_id: Option<RuleId>,
    /// Bytes besides JSON whitespace and `<` at which malformed arguments may end
    /// (deepseek-v3's closing fence begins with a backquote).
    pub(crate) raw_stop: Option<u8>,
}

/// Where the machine stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Text or reasoning.
    Prose,
    /// In a calls section.
    Section,
    /// In a call, after its header: its arguments and tail.
    Call,
}

/// What the active probe is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    Marker,
    SectionSpace,
    SectionMarker,
}

/// The state machine of a sectioned family; the re-entry layer drives it through
/// the family's machine type.
#[derive(Clone, Debug)]
pub(crate) struct SectionedMachine {
    format: Format,
    emitter: Emitter,
    /// The grammar's marker and header rules, one candidate at a time.
    probe: MarkerProbe,
    /// The accepted reasoning wrappers.
    wrappers: FamilyWrappers,
    /// The active probe; its candidate is the first pending byte.
    probing: Option<Probe>,
    arguments: CallArguments,
    /// Whether the last probe ran into the end of input still viable.
    cut: bool,
    mode: Mode,
    /// Whether prose is reasoning; also the mode a section returns to.
    reasoning: bool,
    /// The start of the output: the reasoning it may start in, and RS-6 (whether
    /// it begins with an accepted opener again).
    first: RepeatedOpener,
}

impl SectionedMachine {
    /// A machine for `format` with the family's reasoning options.
    pub(crate) fn new(
        format: Format,
        reasoning_markers: &[Spelling],
        start_in_reasoning: bool,
    ) -> Self {
        let wrappers = FamilyWrappers::new(format.program, reasoning_markers, b'<');
        let mut captured = vec![format.section_begin, format.section_end, format.tool_name];
        captured.extend(format.call_id);
        captured.extend(wrappers.captured());
        SectionedMachine {
            format,
            emitter: Emitter::new(),
            probe: MarkerProbe::new(format.program, &captured),
            wrappers,
            probing: None,
            arguments: CallArguments::new(
                format.program,
                format.call_tail,
                format.arguments_stop,
                format.raw_stop,
            ),
            cut: false,
            mode: Mode::Prose,
            reasoning: false,
            first: RepeatedOpener::new(start_in_reasoning, reasoning_markers),
        }
    }

    fn capture(&self, rule: RuleId) -> Option<Capture> {
        self.probe.capture(rule)
    }

    /// Prose at absolute `start`: text, or reasoning (a reasoning item opens again
    /// with the first byte of reasoning after a calls section, FD-2).
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        self.emitter.prose(self.reasoning, text, start, out);
    }

    /// The first character of `rest`, at absolute `start`, is prose; its length.
    fn prose_char(&mut self, rest: &str, start: usize, out: &mut Vec<Event>) -> usize {
        let len = rest.chars().next().map_or(1, char::len_utf8);
        self.prose(&rest[..len], start, out);
        len
    }

    /// Starts `probe` on the candidate at the first pending byte (a marker's
    /// entry rule is picked by its byte: [`Self::start_marker`]).
    fn start_probe(&mut self, probe: Probe) {
        let f = &self.format;
        let entry = match probe {
            Probe::Marker => f.prose.plain,
            Probe::SectionSpace => f.section_space,
            Probe::SectionMarker => f.section_marker,
        };
        self.probe.begin(entry);
        self.probing = Some(probe);
    }

    /// Starts a marker probe on the candidate `byte`, the first pending one; false
    /// when no marker can start there (RS-11).
    fn start_marker(&mut self, byte: u8) -> bool {
        match self
            .wrappers
            .entry(byte, self.reasoning, &self.format.prose)
        {
            Some(entry) => {
                self.probe.begin(entry);
                self.probing = Some(Probe::Marker);
                true
            }
            None => false,
        }
    }

    /// Runs the active probe over `unit`; a decided outcome ends it.
    fn run_probe(&mut self, unit: &str, eof: bool) -> Outcome {
        let (outcome, cut) = self.probe.run_cut(unit, eof);
        self.cut = cut;
        if outcome != Outcome::NeedMore {
            self.probing = None;
        }
        outcome
    }

    /// A marker matched in prose over `start..end` (absolute).
    fn take_marker(&mut self, start: usize, end: usize, out: &mut Vec<Event>) {
        let wrapper = self.wrappers.marker(self.probe.captures());
        if wrapper == Some(WrapperMarker::Opened) {
            self.emitter.markup(start, out);
            self.emitter.reasoning_start(end, out);
            self.reasoning = true;
        } else if wrapper == Some(WrapperMarker::Closed) {
            // Right after a calls section no reasoning item is open: the closer
            // closes none (FD-2).
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(true, end, out);
            } else {
                self.emitter.markup(end, out);
            }
            self.reasoning = false;
        } else if self.capture(self.format.section_begin).is_some() {
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(true, start, out);
            }
            self.emitter.markup(end, out);
            self.mode = Mode::Section;
        } else {
            // The end-of-turn token: dropped where it stands.
            self.emitter.markup(end, out);
        }
    }

    /// A call header matched in a section over `unit[..end]`, at absolute `base`:
    /// the call starts.
    fn take_header(&mut self, unit: &str, end: usize, base: usize, out: &mut Vec<Event>) {
        let text = |c: Option<Capture>| c.map(|c| unit[c.start..c.end].to_string());
        let name = text(self.capture(self.format.tool_name)).unwrap_or_default();
        let id = self
            .format
            .call_id
            .map(|rule| text(self.capture(rule)).unwrap_or_default());
        self.emitter.call_start(id, name, base + end, out);
        self.arguments.begin(&unit[end..]);
        self.mode = Mode::Call;
    }

    /// Ends the open call at absolute `end`; the section continues.
    fn end_call(&mut self, complete: bool, end: usize, out: &mut Vec<Event>) {
        self.emitter.call_end(complete, end, out);
        self.mode = Mode::Section;
    }

    /// End of input at absolute `end`, every byte decided.
    fn end_of_input(&mut self, end: usize, out: &mut Vec<Event>) {
        self.emitter.markup(end, out);
        if self.emitter.in_reasoning() {
            self.emitter.reasoning_end(false, end, out);
        }
    }

    /// The re-entry layer's step (`reentry::Machine::advance`).
    pub(crate) fn advance(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> usize {
        let Some(mut at) = self.first.read(
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
        let bytes = pending.as_bytes();
        let len = pending.len();
        loop {
            match self.mode {
                Mode::Prose => {
                    if self.probing.is_none() {
                        match self.wrappers.find(&bytes[at..]) {
                            None => {
                                self.prose(&pending[at..], base + at, out);
                                at = len;
                                break;
                            }
                            Some(k) => {
                                self.prose(&pending[at..at + k], base + at, out);
                                at += k;
                                if !self.start_marker(bytes[at]) {
                                    at += self.prose_char(&pending[at..], base + at, out);
                                    continue;
                                }
                            }
                        }
                    }
                    match self.run_probe(&pending[at..], eof) {
                        Outcome::NeedMore => return at,
                        Outcome::Matched { end } => {
                            self.take_marker(base + at, base + at + end, out);
                            at += end;
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            // Not a marker (also a cut one at end of input): its
                            // first character is prose.
                            at += self.prose_char(&pending[at..], base + at, out);
                        }
                    }
                }
                Mode::Section => {
                    if self.probing.is_none() {
                        let Some(&b) = bytes.get(at) else {
                            break;
                        };
                        if is_json_ws(b) {
                            self.start_probe(Probe::SectionSpace);
                        } else if b == b'<' {
                            self.start_probe(Probe::SectionMarker);
                        } else {
                            // Anything else closes the section.
                            self.mode = Mode::Prose;
                            continue;
                        }
                    }
                    let probe = self.probing;
                    match self.run_probe(&pending[at..], eof) {
                        Outcome::NeedMore => return at,
                        Outcome::Matched { end } if probe == Some(Probe::SectionSpace) => {
                            at += end;
                            self.emitter.markup(base + at, out);
                        }
                        Outcome::Matched { end } => {
                            if self.capture(self.format.section_end).is_some() {
                                at += end;
                                self.emitter.markup(base + at, out);
                                self.mode = Mode::Prose;
                                continue;
                            }
                            self.take_header(&pending[at..], end, base + at, out);
                            at += end;
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            if self.cut {
                                // A cut header or marker at end of input.
                                at = len;
                                self.emitter.markup(base + at, out);
                            } else {
                                // Not a header: the section closes, and the candidate is
                                // read again in the enclosing mode.
                                self.mode = Mode::Prose;
                            }
                        }
                    }
                }
                Mode::Call => {
                    let step = self.arguments.advance(
                        pending,
                        &mut at,
                        base,
                        eof,
                        &mut self.emitter,
                        &mut self.probe,
                        out,
                    );
                    match step {
                        Step::More => return at,
                        Step::Ended { complete } => self.end_call(complete, base + at, out),
                    }
                }
            }
        }
        if eof {
            self.end_of_input(base + len, out);
        }
        at
    }
}

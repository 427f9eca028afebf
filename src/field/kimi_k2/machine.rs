//! The kimi-k2 state machine (spec/kimi-k2.md): text and reasoning scanned for
//! markers, calls sections, call headers, JSON arguments and call tails, each
//! recognised by an entry rule of grammar/kimi-k2.pest on the parsing machine.

use std::sync::OnceLock;

use super::Options;
use crate::field::grammars;
use crate::field::json_arguments::{is_json_ws, run, ArgumentsReader, ObjectRead};
use crate::field::probe::rule;
use crate::field::reasoning::family::{FamilyWrappers, ProseRules, WrapperMarker};
use crate::field::{Emitter, Event};
use crate::machine::{Capture, Outcome, ParsingMachine, RuleId};
use crate::reentry::Machine;

/// The entry and captured rules of grammar/kimi-k2.pest.
struct Rules {
    prose: ProseRules,
    section_space: RuleId,
    section_marker: RuleId,
    call_tail: RuleId,
    section_begin: RuleId,
    section_end: RuleId,
    call_id: RuleId,
    tool_name: RuleId,
}

impl Rules {
    fn get() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| {
            let p = grammars::kimi_k2();
            Rules {
                prose: ProseRules {
                    plain: rule(p, "structure_marker"),
                    open: rule(p, "text_marker"),
                    close: rule(p, "reasoning_marker"),
                },
                section_space: rule(p, "section_space"),
                section_marker: rule(p, "section_marker"),
                call_tail: rule(p, "call_tail"),
                section_begin: rule(p, "section_begin"),
                section_end: rule(p, "section_end"),
                call_id: rule(p, "call_id"),
                tool_name: rule(p, "tool_name"),
            }
        })
    }
}

/// Where the machine stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Text mode (KK-4) or reasoning mode (KK-5).
    Prose,
    /// In a calls section (KK-6).
    Section,
    /// Reading a call's arguments object (JA-1).
    Arguments,
    /// After the object, or right after a header with empty arguments: the call
    /// tail (KK-8).
    Tail {
        /// The header was followed by the tail at once (JA-6).
        empty: bool,
    },
    /// Malformed arguments, read raw up to the call tail (KK-10).
    Raw,
}

/// What the active probe is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    Marker,
    SectionSpace,
    SectionMarker,
    Tail,
}

/// The kimi-k2 state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct KimiK2Machine {
    emitter: Emitter,
    /// The grammar's marker and header rules, one candidate at a time.
    probe: ParsingMachine<'static>,
    /// The accepted reasoning wrappers (KK-18).
    wrappers: FamilyWrappers,
    /// The active probe; its candidate is the first pending byte.
    probing: Option<Probe>,
    arguments: ArgumentsReader,
    /// Whether the last probe ran into the end of input still viable.
    cut: bool,
    mode: Mode,
    /// Whether prose is reasoning (KK-5).
    reasoning: bool,
    start_in_reasoning: bool,
    began: bool,
}

impl KimiK2Machine {
    /// A machine with these options.
    pub fn new(options: &Options) -> Self {
        let r = Rules::get();
        let program = grammars::kimi_k2();
        let wrappers = FamilyWrappers::new(program, &options.reasoning_markers, b'<');
        let mut probe = ParsingMachine::new(program);
        let captured = [r.section_begin, r.section_end, r.call_id, r.tool_name];
        probe.capture_only(&[&captured[..], &wrappers.captured()].concat());
        KimiK2Machine {
            emitter: Emitter::new(),
            probe,
            wrappers,
            probing: None,
            cut: false,
            arguments: ArgumentsReader::new(grammars::kimi_k2()),
            mode: Mode::Prose,
            reasoning: false,
            start_in_reasoning: options.start_in_reasoning,
            began: false,
        }
    }

    fn capture(&self, rule: RuleId) -> Option<Capture> {
        self.probe
            .captures()
            .iter()
            .find(|c| c.rule == rule && c.is_closed())
            .copied()
    }

    /// Prose at absolute `start`: text, or reasoning.
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if self.reasoning {
            self.emitter.reasoning(text, start, out);
        } else {
            self.emitter.text(text, start, out);
        }
    }

    /// The first character of `rest`, at absolute `start`, is prose; its length.
    fn prose_char(&mut self, rest: &str, start: usize, out: &mut Vec<Event>) -> usize {
        let len = rest.chars().next().map_or(1, char::len_utf8);
        self.prose(&rest[..len], start, out);
        len
    }

    /// Starts a marker probe on the candidate `byte`, the first pending one; false
    /// when no marker can start there (RS-11).
    fn start_marker(&mut self, byte: u8) -> bool {
        let r = Rules::get();
        match self.wrappers.entry(byte, self.reasoning, &r.prose) {
            Some(entry) => {
                self.probe.start(entry);
                self.probing = Some(Probe::Marker);
                true
            }
            None => false,
        }
    }

    /// Starts `probe` on the candidate at the first pending byte (a marker's
    /// entry rule is picked by its byte: [`Self::start_marker`]).
    fn start_probe(&mut self, probe: Probe) {
        let r = Rules::get();
        let entry = match probe {
            Probe::Marker => r.prose.plain,
            Probe::SectionSpace => r.section_space,
            Probe::SectionMarker => r.section_marker,
            Probe::Tail => r.call_tail,
        };
        self.probe.start(entry);
        self.probing = Some(probe);
    }

    /// Runs the active probe over `unit`; a decided outcome ends it.
    fn run_probe(&mut self, unit: &str, eof: bool) -> Outcome {
        let (outcome, cut) = run(&mut self.probe, unit, eof);
        self.cut = cut;
        if outcome != Outcome::NeedMore {
            self.probing = None;
        }
        outcome
    }

    /// A marker matched in prose over `start..end` (absolute).
    fn take_marker(&mut self, start: usize, end: usize, out: &mut Vec<Event>) {
        let r = Rules::get();
        let wrapper = self.wrappers.marker(self.probe.captures());
        if wrapper == Some(WrapperMarker::Opened) {
            self.emitter.markup(start, out);
            self.emitter.reasoning_start(end, out);
            self.reasoning = true;
        } else if wrapper == Some(WrapperMarker::Closed) {
            self.emitter.reasoning_end(true, end, out);
            self.reasoning = false;
        } else if self.capture(r.section_begin).is_some() {
            // The tool section ends unclosed reasoning; text mode follows it (KK-5).
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(true, start, out);
            }
            self.reasoning = false;
            self.emitter.markup(end, out);
            self.mode = Mode::Section;
        } else {
            // The end of message token: dropped where it stands.
            self.emitter.markup(end, out);
        }
    }

    /// Ends the open call at absolute `end`; the section continues.
    fn end_call(&mut self, complete: bool, end: usize, out: &mut Vec<Event>) {
        self.emitter.call_end(complete, end, out);
        self.mode = Mode::Section;
    }
}

impl Machine for KimiK2Machine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        if !self.began {
            self.began = true;
            if self.start_in_reasoning {
                self.emitter.reasoning_start(base, out);
                self.reasoning = true;
            }
        }
        let bytes = pending.as_bytes();
        let len = pending.len();
        let mut at = 0;
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
                            // Not a marker (KK-14 at end of input): its first
                            // character is prose.
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
                            // Anything else closes the section (KK-6, KK-12).
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
                            let r = Rules::get();
                            if self.capture(r.section_end).is_some() {
                                at += end;
                                self.emitter.markup(base + at, out);
                                self.mode = Mode::Prose;
                                continue;
                            }
                            let text = |rule| {
                                self.capture(rule)
                                    .map(|c| pending[at + c.start..at + c.end].to_string())
                                    .unwrap_or_default()
                            };
                            let id = text(r.call_id);
                            let name = text(r.tool_name);
                            at += end;
                            self.emitter.call_start(Some(id), name, base + at, out);
                            if bytes.get(at) == Some(&b'{') {
                                self.arguments.start();
                                self.mode = Mode::Arguments;
                            } else {
                                self.mode = Mode::Tail { empty: true };
                            }
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            if self.cut {
                                // A cut header or marker at end of input (KK-13, KK-14).
                                at = len;
                                self.emitter.markup(base + at, out);
                            } else {
                                // Not a header: the section closes, and the candidate is
                                // read again in text mode (KK-6, KK-7).
                                self.mode = Mode::Prose;
                            }
                        }
                    }
                }
                Mode::Arguments => {
                    let unit = &pending[at..];
                    let read =
                        self.arguments
                            .read_emitting(unit, base + at, eof, &mut self.emitter, out);
                    match read {
                        ObjectRead::More => return at,
                        ObjectRead::Complete(end) => {
                            at += end;
                            self.mode = Mode::Tail { empty: false };
                        }
                        ObjectRead::Stopped(stop) => {
                            at += stop;
                            if eof && at == len {
                                // Cut inside the object (JA-8).
                                self.end_call(false, base + at, out);
                            } else {
                                self.mode = Mode::Raw;
                            }
                        }
                    }
                }
                Mode::Tail { empty } => {
                    if self.probing.is_none() {
                        if at == len && !eof {
                            return at;
                        }
                        self.start_probe(Probe::Tail);
                    }
                    match self.run_probe(&pending[at..], eof) {
                        Outcome::NeedMore => return at,
                        Outcome::Matched { end } => {
                            if empty {
                                self.emitter.arguments_delta("{}", base + at, out);
                            }
                            at += end;
                            self.end_call(true, base + at, out);
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            if self.cut {
                                // The input ended after the object (JA-5).
                                at = len;
                                self.end_call(true, base + at, out);
                            } else {
                                // Something else follows the object (JA-7).
                                self.mode = Mode::Raw;
                            }
                        }
                    }
                }
                Mode::Raw => {
                    if self.probing.is_none() {
                        let candidate =
                            bytes[at..].iter().position(|&b| is_json_ws(b) || b == b'<');
                        match candidate {
                            None => {
                                self.emitter
                                    .arguments_delta(&pending[at..], base + len, out);
                                at = len;
                                if eof {
                                    self.end_call(false, base + at, out);
                                }
                                break;
                            }
                            Some(k) => {
                                self.emitter.arguments_delta(
                                    &pending[at..at + k],
                                    base + at + k,
                                    out,
                                );
                                at += k;
                                self.start_probe(Probe::Tail);
                            }
                        }
                    }
                    match self.run_probe(&pending[at..], eof) {
                        Outcome::NeedMore => return at,
                        Outcome::Matched { end } => {
                            at += end;
                            self.end_call(false, base + at, out);
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            // Not the tail: the candidate (a whitespace run, which no
                            // later start inside it can change) is raw arguments.
                            let run = if is_json_ws(bytes[at]) {
                                bytes[at..].iter().take_while(|&&b| is_json_ws(b)).count()
                            } else {
                                1
                            };
                            self.emitter.arguments_delta(
                                &pending[at..at + run],
                                base + at + run,
                                out,
                            );
                            at += run;
                        }
                    }
                }
            }
        }
        if eof {
            let end = base + len;
            self.emitter.markup(end, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, end, out);
            }
        }
        at
    }
}

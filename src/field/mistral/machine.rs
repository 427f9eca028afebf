//! The mistral state machine (spec/mistral.md): text and reasoning scanned for
//! markers, the name form's header and JSON object, and the array form walked unit
//! by unit (brackets, keys, values), each recognised by an entry rule of
//! grammar/mistral.pest on the parsing machine.

use std::sync::OnceLock;

use super::options::{Options, TokenizerVersion};
use crate::field::call_object::json_string;
use crate::field::grammars;
use crate::field::json_arguments::{ArgumentsReader, ObjectRead};
use crate::field::probe::{rule, MarkerProbe};
use crate::field::reasoning::family::{FamilyWrappers, ProseRules, RepeatedOpener, WrapperMarker};
use crate::field::CompactString;
use crate::field::{Emitter, Event};
use crate::machine::{Capture, Outcome, RuleId};
use crate::reentry::Machine;

/// The entry and captured rules of grammar/mistral.pest.
struct Rules {
    /// Per version (auto, array, v11, v13), the entry rules at a `[` of prose.
    prose: [ProseRules; 4],
    group_begun: RuleId,
    array_open: RuleId,
    element_open: RuleId,
    member_key: RuleId,
    member_next: RuleId,
    element_next: RuleId,
    json_value: RuleId,
    tool_name: RuleId,
    call_id: RuleId,
    array_start: RuleId,
    member_name: RuleId,
    element_close: RuleId,
    array_close: RuleId,
    stray_marker: RuleId,
    special_marker: RuleId,
}

impl Rules {
    fn get() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| {
            let p = grammars::mistral();
            let prose = ["auto", "array", "v11", "v13"].map(|v| ProseRules {
                plain: rule(p, &format!("plain_marker_{v}")),
                open: rule(p, &format!("text_marker_{v}")),
                close: rule(p, &format!("reasoning_marker_{v}")),
            });
            Rules {
                prose,
                group_begun: rule(p, "group_begun"),
                array_open: rule(p, "array_open"),
                element_open: rule(p, "element_open"),
                member_key: rule(p, "member_key"),
                member_next: rule(p, "member_next"),
                element_next: rule(p, "element_next"),
                json_value: rule(p, "json_value"),
                tool_name: rule(p, "tool_name"),
                call_id: rule(p, "call_id"),
                array_start: rule(p, "array_start"),
                member_name: rule(p, "member_name"),
                element_close: rule(p, "element_close"),
                array_close: rule(p, "array_close"),
                stray_marker: rule(p, "stray_marker"),
                special_marker: rule(p, "special_marker"),
            }
        })
    }
}

/// What a member of an array element holds (MI-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Member {
    Name,
    Id,
    Arguments,
    Other,
}

/// Where the walk of the array form stands (MI-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArrayStep {
    Open,
    ElementOpen,
    MemberKey,
    /// A member's value (the arguments when they are not an object).
    MemberValue(Member),
    /// Before the arguments value: its first byte says how it is read.
    ArgumentsValue,
    /// The arguments object, streamed once the call has started.
    ArgumentsObject,
    MemberNext,
    ElementNext,
}

/// The arguments of the current array element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arguments {
    NotSeen,
    /// Being read from this absolute offset.
    Reading(usize),
    /// Read over `start..end`; `object` when they are a JSON object.
    Done {
        start: usize,
        end: usize,
        object: bool,
    },
}

/// The array element being walked.
#[derive(Clone, Debug)]
struct Element {
    name: Option<CompactString>,
    id: Option<String>,
    arguments: Arguments,
    started: bool,
}

/// Where the machine stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Text mode (MI-5) or reasoning mode (MI-6).
    Prose,
    /// The name form's arguments object (MI-9).
    NameArguments,
    /// The array form (MI-8).
    Array(ArrayStep),
}

/// The mistral state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct MistralMachine {
    version: usize,
    emitter: Emitter,
    probe: MarkerProbe,
    /// The accepted reasoning wrappers (MI-18).
    wrappers: FamilyWrappers,
    probing: bool,
    arguments: ArgumentsReader,
    /// Whether the last probe ran into the end of input still viable.
    cut: bool,
    mode: Mode,
    element: Option<Element>,
    /// In a name-form call's object: the offset from its `{` of the `[` being
    /// probed, or from which the next one is searched (MI-20).
    candidate: usize,
    /// Absolute offset of the next byte to look at (a probe's candidate).
    pos: usize,
    /// Held bytes (an array element's arguments, read before its call started)
    /// start here: the re-entry layer must keep them.
    hold: Option<usize>,
    reasoning: bool,
    /// The start of the output: the reasoning it may start in, and RS-6 (whether
    /// it begins with an accepted opener again).
    first: RepeatedOpener,
}

impl MistralMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        let r = Rules::get();
        let program = grammars::mistral();
        let wrappers = FamilyWrappers::new(program, &options.reasoning_markers, b'[');
        let captured = [
            r.tool_name,
            r.call_id,
            r.array_start,
            r.member_name,
            r.element_close,
            r.array_close,
            r.stray_marker,
        ];
        let probe = MarkerProbe::new(program, &[&captured[..], &wrappers.captured()].concat());
        MistralMachine {
            version: match options.tokenizer_version {
                TokenizerVersion::Auto => 0,
                TokenizerVersion::V3 | TokenizerVersion::V7 => 1,
                TokenizerVersion::V11 => 2,
                TokenizerVersion::V13 => 3,
            },
            emitter: Emitter::new(),
            probe,
            wrappers,
            probing: false,
            cut: false,
            arguments: ArgumentsReader::new(grammars::mistral()),
            mode: Mode::Prose,
            element: None,
            candidate: 0,
            pos: 0,
            hold: None,
            reasoning: false,
            first: RepeatedOpener::new(options.start_in_reasoning, &options.reasoning_markers),
        }
    }

    fn capture(&self, rule: RuleId) -> Option<Capture> {
        self.probe.capture(rule)
    }

    fn start_probe(&mut self, entry: RuleId) {
        self.probe.begin(entry);
        self.probing = true;
    }

    fn run_probe(&mut self, unit: &str, eof: bool) -> Outcome {
        let (outcome, cut) = self.probe.run_cut(unit, eof);
        self.cut = cut;
        if outcome != Outcome::NeedMore {
            self.probing = false;
        }
        outcome
    }

    /// Prose at absolute `start` (a reasoning item opens again with the first byte
    /// of reasoning after a call group, FD-2).
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        self.emitter.prose(self.reasoning, text, start, out);
    }

    /// The character at `self.pos` is prose (a candidate that is no marker).
    fn prose_char(&mut self, pending: &str, base: usize, out: &mut Vec<Event>) {
        let at = self.pos - base;
        let len = pending[at..].chars().next().map_or(1, char::len_utf8);
        self.prose(&pending[at..at + len], self.pos, out);
        self.pos += len;
    }

    /// A marker matched in prose over `unit[..end]`, `unit` at absolute `start`.
    fn take_marker(&mut self, unit: &str, start: usize, end: usize, out: &mut Vec<Event>) {
        let r = Rules::get();
        let wrapper = self.wrappers.marker(self.probe.captures());
        if wrapper == Some(WrapperMarker::Opened) {
            self.emitter.markup(start, out);
            self.emitter.reasoning_start(start + end, out);
            self.reasoning = true;
            return;
        }
        if wrapper == Some(WrapperMarker::Closed) {
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(true, start + end, out);
            } else {
                self.emitter.markup(start + end, out);
            }
            self.reasoning = false;
            return;
        }
        if self.capture(r.stray_marker).is_some() {
            // A marker that opens nothing here (MI-19).
            self.emitter.markup(start + end, out);
            return;
        }
        // A call group (MI-7).
        if self.emitter.in_reasoning() {
            self.emitter.reasoning_end(true, start, out);
        }
        if self.capture(r.array_start).is_some() {
            self.emitter.markup(start + end, out);
            self.mode = Mode::Array(ArrayStep::Open);
            return;
        }
        let text = |c: Option<Capture>| c.map(|c| &unit[c.start..c.end]);
        let name = text(self.capture(r.tool_name)).unwrap_or_default();
        let id = text(self.capture(r.call_id)).map(String::from);
        self.emitter.call_start(id, name, start + end, out);
        self.arguments.start();
        self.candidate = 0;
        self.mode = Mode::NameArguments;
    }

    /// Starts the element's call if its name is known and its id decided (MI-8);
    /// `closing` says the element's object has ended. Held arguments are released.
    fn maybe_start(&mut self, closing: bool, pending: &str, base: usize, out: &mut Vec<Event>) {
        let Some(element) = self.element.as_mut() else {
            return;
        };
        if element.started || element.name.is_none() || (element.id.is_none() && !closing) {
            return;
        }
        element.started = true;
        // Taken: a started element's name and id are not read again.
        let name = element.name.take().unwrap_or_default();
        let id = element.id.take();
        let arguments = element.arguments;
        self.hold = None;
        match arguments {
            Arguments::NotSeen => {
                self.emitter.call_start(id, name, self.pos, out);
            }
            Arguments::Reading(start) => {
                self.emitter.call_start(id, name, start, out);
                let unit = &pending[start - base..];
                let read = unit.len().min(self.pos.saturating_sub(start));
                let text = self.arguments.take(unit, read);
                self.emitter.arguments_delta(text, start + read, out);
            }
            Arguments::Done { start, end, .. } => {
                self.emitter.call_start(id, name, start, out);
                self.emitter
                    .arguments_delta(&pending[start - base..end - base], end, out);
            }
        }
    }

    /// Ends the element (its object closed at `self.pos` when `closed`, or the walk
    /// stopped there): its call ends, or, without a name, it is dropped (MI-8).
    fn end_element(&mut self, closed: bool, pending: &str, base: usize, out: &mut Vec<Event>) {
        self.maybe_start(true, pending, base, out);
        let Some(element) = self.element.take() else {
            return;
        };
        self.hold = None;
        if !element.started {
            self.emitter.markup(self.pos, out);
            return;
        }
        let complete = match element.arguments {
            Arguments::NotSeen if closed => {
                self.emitter
                    .arguments_delta("{}", self.emitter.covered(), out);
                true
            }
            Arguments::Done { object, .. } => closed && object,
            _ => false,
        };
        self.emitter.call_end(complete, self.pos, out);
    }

    /// The array walk stopped at `self.pos` (a syntax error, or the end of input):
    /// the group ends there and prose resumes (MI-8).
    fn stop_array(&mut self, pending: &str, base: usize, out: &mut Vec<Event>) {
        self.end_element(false, pending, base, out);
        self.emitter.markup(self.pos, out);
        self.mode = Mode::Prose;
    }

    /// One step of the array walk; false when it needs more input.
    fn array_step(
        &mut self,
        step: ArrayStep,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> bool {
        let r = Rules::get();
        let at = self.pos - base;
        if step == ArrayStep::ArgumentsValue {
            match pending.as_bytes().get(at) {
                None if !eof => return false,
                None => self.stop_array(pending, base, out),
                Some(&b) => self.begin_arguments_value(b == b'{'),
            }
            return true;
        }
        if step == ArrayStep::ArgumentsObject {
            let unit = &pending[at..];
            let started = self.element.as_ref().is_some_and(|e| e.started);
            let read = self.arguments.read(unit, eof);
            let upto = match read {
                ObjectRead::More => unit.len(),
                ObjectRead::Complete(end) | ObjectRead::Stopped(end) => end,
            };
            if started {
                let text = self.arguments.take(unit, upto);
                self.emitter.arguments_delta(text, self.pos + upto, out);
            }
            match read {
                ObjectRead::More => return false,
                ObjectRead::Complete(end) => {
                    if let Some(e) = self.element.as_mut() {
                        e.arguments = Arguments::Done {
                            start: self.pos,
                            end: self.pos + end,
                            object: true,
                        };
                    }
                    self.pos += end;
                    if started {
                        self.emitter.markup(self.pos, out);
                    }
                    self.mode = Mode::Array(ArrayStep::MemberNext);
                }
                ObjectRead::Stopped(stop) => {
                    // Release what was read (MI-8: the arguments read so far).
                    let start = self.pos;
                    self.pos += stop;
                    if let Some(e) = self.element.as_mut() {
                        if !e.started {
                            e.arguments = Arguments::Reading(start);
                        }
                    }
                    self.stop_array(pending, base, out);
                }
            }
            return true;
        }
        if !self.probing {
            let entry = match step {
                ArrayStep::Open => r.array_open,
                ArrayStep::ElementOpen => r.element_open,
                ArrayStep::MemberKey => r.member_key,
                ArrayStep::MemberValue(_) => r.json_value,
                ArrayStep::MemberNext => r.member_next,
                ArrayStep::ElementNext | ArrayStep::ArgumentsValue | ArrayStep::ArgumentsObject => {
                    r.element_next
                }
            };
            self.start_probe(entry);
        }
        let unit = &pending[at..];
        let end = match self.run_probe(unit, eof) {
            Outcome::NeedMore => return false,
            Outcome::Matched { end } => end,
            Outcome::Rejected { furthest } | Outcome::TooDeep { at: furthest } => {
                let mut stop = if self.cut {
                    unit.len()
                } else {
                    furthest.min(unit.len())
                };
                while !unit.is_char_boundary(stop) {
                    stop += 1;
                }
                // A syntax error (or the cut) inside this unit: the unit's bytes
                // before it belong to the group; the rest is prose.
                self.pos += stop;
                self.stop_array(pending, base, out);
                return true;
            }
        };
        let holding = self.hold.is_some();
        self.pos += end;
        match step {
            ArrayStep::Open | ArrayStep::ElementNext => {
                self.emitter.markup(self.pos, out);
                self.mode = if self.capture(r.array_close).is_some() {
                    Mode::Prose
                } else {
                    Mode::Array(ArrayStep::ElementOpen)
                };
            }
            ArrayStep::ElementOpen => {
                self.emitter.markup(self.pos, out);
                self.element = Some(Element {
                    name: None,
                    id: None,
                    arguments: Arguments::NotSeen,
                    started: false,
                });
                if self.capture(r.element_close).is_some() {
                    self.end_element(true, pending, base, out);
                    self.mode = Mode::Array(ArrayStep::ElementNext);
                } else {
                    self.mode = Mode::Array(ArrayStep::MemberKey);
                }
            }
            ArrayStep::MemberKey => {
                if !holding {
                    self.emitter.markup(self.pos, out);
                }
                let key = self
                    .capture(r.member_name)
                    .and_then(|c| json_string(&unit[c.start..c.end]));
                let member = match key.as_deref() {
                    Some("name") => Member::Name,
                    Some("id") => Member::Id,
                    Some("arguments") => Member::Arguments,
                    _ => Member::Other,
                };
                self.mode = Mode::Array(if member == Member::Arguments {
                    ArrayStep::ArgumentsValue
                } else {
                    ArrayStep::MemberValue(member)
                });
            }
            ArrayStep::MemberValue(member) => {
                let raw = &unit[..end];
                let start = self.pos - end;
                let started = self.element.as_ref().is_some_and(|e| e.started);
                if let Some(e) = self.element.as_mut() {
                    match member {
                        Member::Name => {
                            e.name = json_string(raw)
                                .filter(|n| !n.is_empty())
                                .map(|n| CompactString::from(&*n));
                        }
                        Member::Id => e.id = json_string(raw).map(String::from),
                        Member::Arguments => {
                            e.arguments = Arguments::Done {
                                start,
                                end: self.pos,
                                object: false,
                            };
                        }
                        Member::Other => {}
                    }
                }
                if member == Member::Arguments && started {
                    self.emitter.arguments_delta(raw, self.pos, out);
                } else if !holding {
                    self.emitter.markup(self.pos, out);
                }
                self.mode = Mode::Array(ArrayStep::MemberNext);
                self.maybe_start(false, pending, base, out);
            }
            ArrayStep::MemberNext => {
                if self.capture(r.element_close).is_some() {
                    self.end_element(true, pending, base, out);
                    self.mode = Mode::Array(ArrayStep::ElementNext);
                } else {
                    if !holding {
                        self.emitter.markup(self.pos, out);
                    }
                    self.mode = Mode::Array(ArrayStep::MemberKey);
                }
            }
            ArrayStep::ArgumentsValue | ArrayStep::ArgumentsObject => {}
        }
        true
    }

    /// The arguments value begins at `self.pos` (MI-8): held until the call starts,
    /// streamed as the arguments object when it is one.
    fn begin_arguments_value(&mut self, object: bool) {
        let started = self.element.as_ref().is_some_and(|e| e.started);
        if !started && self.hold.is_none() {
            self.hold = Some(self.pos);
        }
        if let Some(e) = self.element.as_mut() {
            e.arguments = Arguments::Reading(self.pos);
        }
        if object {
            self.arguments.start();
            self.mode = Mode::Array(ArrayStep::ArgumentsObject);
        } else {
            self.mode = Mode::Array(ArrayStep::MemberValue(Member::Arguments));
        }
    }
}

impl Machine for MistralMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        let r = Rules::get();
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
        let len = pending.len();
        loop {
            let at = self.pos - base;
            match self.mode {
                Mode::Prose => {
                    if !self.probing {
                        match self.wrappers.find(&bytes[at..]) {
                            None => {
                                self.prose(&pending[at..], base + at, out);
                                self.pos = base + len;
                                break;
                            }
                            Some(k) => {
                                self.prose(&pending[at..at + k], base + at, out);
                                self.pos += k;
                                let prose = &r.prose[self.version];
                                match self.wrappers.entry(bytes[at + k], self.reasoning, prose) {
                                    Some(entry) => self.start_probe(entry),
                                    None => {
                                        self.prose_char(pending, base, out);
                                        continue;
                                    }
                                }
                            }
                        }
                    }
                    let at = self.pos - base;
                    let unit = &pending[at..];
                    match self.run_probe(unit, eof) {
                        Outcome::NeedMore => break,
                        Outcome::Matched { end } => {
                            self.take_marker(unit, self.pos, end, out);
                            self.pos += end;
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            let cut = self.cut;
                            if cut && self.probe.matches_at_end(r.group_begun, unit) {
                                // A group cut by the end of input: no call (MI-11).
                                self.pos = base + len;
                                self.emitter.markup(self.pos, out);
                            } else if let (false, Outcome::Matched { end }) =
                                (cut, self.probe.match_at(r.group_begun, unit))
                            {
                                // A group whose form fails: its marker is stray (MI-19).
                                self.pos += end;
                                self.emitter.markup(self.pos, out);
                            } else {
                                self.prose_char(pending, base, out);
                            }
                        }
                    }
                }
                Mode::NameArguments => {
                    let unit = &pending[at..];
                    if self.probing {
                        // A `[` inside the object: a special token ends the call
                        // there and is read in the enclosing mode (MI-20).
                        match self.run_probe(&unit[self.candidate..], eof) {
                            Outcome::NeedMore => break,
                            Outcome::Matched { .. } => {
                                self.pos += self.candidate;
                                self.emitter.call_end(false, self.pos, out);
                                self.mode = Mode::Prose;
                                continue;
                            }
                            // Not a special token (a cut one neither): the object's.
                            _ => self.candidate += 1,
                        }
                    }
                    // The reader runs up to the next `[`, the only byte that may
                    // begin a special token: one memchr per chunk.
                    let next = memchr::memchr(b'[', &unit.as_bytes()[self.candidate..])
                        .map(|k| self.candidate + k);
                    let upto = next.unwrap_or(unit.len());
                    match self.arguments.read(&unit[..upto], eof && next.is_none()) {
                        ObjectRead::More => {
                            let text = self.arguments.take(unit, upto);
                            self.emitter.arguments_delta(text, self.pos + upto, out);
                            match next {
                                Some(candidate) => {
                                    self.candidate = candidate;
                                    self.start_probe(r.special_marker);
                                }
                                None => {
                                    self.candidate = upto;
                                    break;
                                }
                            }
                        }
                        ObjectRead::Complete(end) => {
                            let text = self.arguments.take(unit, end);
                            self.emitter.arguments_delta(text, self.pos + end, out);
                            self.pos += end;
                            self.emitter.call_end(true, self.pos, out);
                            self.mode = Mode::Prose;
                        }
                        ObjectRead::Stopped(stop) => {
                            // The offending byte and the rest are prose (MI-9).
                            let text = self.arguments.take(unit, stop);
                            self.emitter.arguments_delta(text, self.pos + stop, out);
                            self.pos += stop;
                            self.emitter.call_end(false, self.pos, out);
                            self.mode = Mode::Prose;
                        }
                    }
                }
                Mode::Array(step) => {
                    if !self.array_step(step, pending, base, eof, out) {
                        break;
                    }
                }
            }
        }
        if eof {
            self.emitter.markup(base + len, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, base + len, out);
            }
            self.pos = base + len;
        }
        self.hold.unwrap_or(self.pos).min(self.pos) - base
    }
}

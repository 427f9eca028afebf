//! The state machine of llama3-json (spec/llama3-json.md): prose scanned for
//! markers, the call object walked member by member, and the built-in calls'
//! Python keyword arguments (spec/pythonic.md PY-6) argument by argument, each unit
//! recognised by an entry rule of the family's grammar on the parsing machine.

use std::sync::OnceLock;

use crate::field::call_object::json_string;
use crate::field::custom::literal;
use crate::field::grammars;
use crate::field::json_arguments::{run, ArgumentsReader, ObjectRead};
use crate::field::reasoning::family::RepeatedOpener;
use crate::field::reasoning::spelling::{MarkerRules, Spelling, Wrappers};
use crate::field::{CompactString, Emitter, Event};
use crate::machine::{Capture, Outcome, ParsingMachine, Program, RuleId};
use crate::reentry::Machine;

/// Nesting bound of the probe (pending calls and choices).
const DEPTH: usize = 1 << 12;

/// The entry and captured rules of the family's grammar.
struct Rules {
    lt_marker: RuleId,
    lt_marker_open: RuleId,
    lt_marker_close: RuleId,
    wrappers: MarkerRules,
    call_head: RuleId,
    py_arg_start: RuleId,
    py_value: RuleId,
    py_arg_next: RuleId,
    opener: RuleId,
    call_name: RuleId,
    py_key: RuleId,
    py_close: RuleId,
    object_first: RuleId,
    member_key: RuleId,
    member_next: RuleId,
    json_value: RuleId,
    call_next: RuleId,
    stray_marker: RuleId,
    object_open: RuleId,
    member_name: RuleId,
    object_close: RuleId,
    separator: RuleId,
}

fn rule(program: &Program, names: &[&str]) -> RuleId {
    names
        .iter()
        .find_map(|n| program.rule(n))
        .unwrap_or_else(|| panic!("rule {names:?} of a crate grammar (tested)"))
}

impl Rules {
    fn build(p: &Program) -> Rules {
        let lj = |name: &str| rule(p, &[name]);
        Rules {
            lt_marker: rule(p, &["lt_marker"]),
            lt_marker_open: rule(p, &["lt_marker_open"]),
            lt_marker_close: rule(p, &["lt_marker_close"]),
            wrappers: MarkerRules::of(p),
            call_head: rule(p, &["call_head"]),
            py_arg_start: rule(p, &["py_arg_start"]),
            py_value: rule(p, &["py_value"]),
            py_arg_next: rule(p, &["py_arg_next"]),
            opener: rule(p, &["python_tag"]),
            call_name: rule(p, &["call_name"]),
            py_key: rule(p, &["py_key"]),
            py_close: rule(p, &["py_close"]),
            object_first: lj("object_first"),
            member_key: lj("member_key"),
            member_next: lj("member_next"),
            json_value: lj("json_value"),
            call_next: lj("call_next"),
            stray_marker: lj("stray_marker"),
            object_open: lj("object_open"),
            member_name: lj("member_name"),
            object_close: lj("object_close"),
            separator: lj("separator"),
        }
    }

    fn get() -> &'static Rules {
        static LLAMA: OnceLock<Rules> = OnceLock::new();
        LLAMA.get_or_init(|| Rules::build(grammars::llama3_json()))
    }
}

/// What a member of a llama3-json call object holds (LJ-6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Member {
    Name,
    Arguments,
    Other,
}

/// The arguments of the call object.
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

/// The llama3-json call object being walked.
#[derive(Clone, Debug)]
struct Object {
    /// Where the unit (tag, whitespace, object) starts: held until the call starts.
    unit_start: usize,
    name: Option<CompactString>,
    arguments: Arguments,
    started: bool,
    /// A repeated `name` or arguments key (the first counts).
    seen_name: bool,
}

/// Where the walk of a llama3-json call object stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ObjectStep {
    First,
    Key,
    Value(Member),
    ArgumentsValue,
    ArgumentsObject,
    Next,
}

/// Where the walk of Python keyword arguments stands (PY-6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgStep {
    Start,
    Value,
    Next,
}

/// The Python arguments of the open call.
#[derive(Clone, Debug, Default)]
struct PyArgs {
    keys: Vec<String>,
    key: String,
    /// Where the current keyword starts (its bytes are held until its value closes).
    key_at: usize,
    repeated: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Prose,
    /// llama3-json: where a call may start (LJ-5).
    Head,
    Object(ObjectStep),
    Args(ArgStep),
    /// llama3-json: after a call (LJ-9).
    CallNext,
}

/// What one unit's probe said.
enum Unit {
    More,
    Matched(usize),
    /// A syntax error at this offset of the unit.
    Rejected(usize),
    /// The input ended inside the unit, every byte still viable.
    Cut,
}

/// The state machine of llama3-json, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct LlamaMachine {
    bare_calls: bool,
    wrappers: Wrappers,
    /// The bytes that may start a marker in prose (repeated to fill three).
    leads: [u8; 3],
    emitter: Emitter,
    probe: ParsingMachine<'static>,
    probing: bool,
    arguments: ArgumentsReader,
    mode: Mode,
    object: Option<Object>,
    args: PyArgs,
    /// Absolute offset of the next byte to look at.
    pos: usize,
    /// Held bytes start here: the re-entry layer must keep them.
    hold: Option<usize>,
    /// llama3-json: the held unit is a bare one at the start of the answer (cut
    /// short, it is text, LJ-11).
    bare_unit: bool,
    reasoning: bool,
    /// llama3-json: nothing but whitespace and reasoning has been answered, so a
    /// bare call may start here (LJ-5).
    answer_start: bool,
    /// Answer text or a call has been emitted.
    answered: bool,
    /// The start of the output: the reasoning it may start in, and RS-6 (whether
    /// it begins with an accepted opener again).
    first: RepeatedOpener,
}

impl LlamaMachine {
    /// A machine for these options: `bare_calls` is `bare_json_calls`,
    /// `spellings` the accepted reasoning wrappers (RS-11).
    pub fn new(start_in_reasoning: bool, bare_calls: bool, spellings: &[Spelling]) -> Self {
        let r = Rules::get();
        let mut probe = ParsingMachine::new(grammars::llama3_json());
        let mut captured = vec![
            r.opener,
            r.call_name,
            r.py_key,
            r.py_close,
            r.object_open,
            r.member_name,
            r.object_close,
            r.separator,
            r.stray_marker,
        ];
        captured.extend(r.wrappers.all());
        probe.capture_only(&captured);
        probe.set_depth_limit(DEPTH);
        let wrappers = Wrappers::new(spellings);
        let lead = |on: bool, byte: u8| if on { byte } else { b'<' };
        let leads = [
            b'<',
            lead(wrappers.accepts(Spelling::Bracket), b'['),
            lead(
                wrappers.accepts(Spelling::Triangle),
                Spelling::Triangle.lead_byte(),
            ),
        ];
        LlamaMachine {
            bare_calls,
            wrappers,
            leads,
            emitter: Emitter::new(),
            probe,
            probing: false,
            arguments: ArgumentsReader::new(grammars::llama3_json()),
            mode: Mode::Prose,
            object: None,
            args: PyArgs::default(),
            pos: 0,
            hold: None,
            bare_unit: false,
            reasoning: false,
            answer_start: !start_in_reasoning,
            answered: false,
            first: RepeatedOpener::new(start_in_reasoning, spellings),
        }
    }

    fn rules(&self) -> &'static Rules {
        Rules::get()
    }

    fn capture(&self, rule: RuleId) -> Option<Capture> {
        self.probe
            .captures()
            .iter()
            .find(|c| c.rule == rule && c.is_closed())
            .copied()
    }

    /// Runs `entry` over the unit at `self.pos` (started when no probe is active).
    fn unit(&mut self, entry: RuleId, pending: &str, base: usize, eof: bool) -> Unit {
        if !self.probing {
            self.probe.start(entry);
            self.probing = true;
        }
        let unit = &pending[self.pos - base..];
        let (outcome, cut) = run(&mut self.probe, unit, eof);
        if outcome != Outcome::NeedMore {
            self.probing = false;
        }
        if cut {
            return Unit::Cut;
        }
        match outcome {
            Outcome::NeedMore => Unit::More,
            Outcome::Matched { end } => Unit::Matched(end),
            Outcome::Rejected { furthest } | Outcome::TooDeep { at: furthest } => {
                let mut at = furthest.min(unit.len());
                while !unit.is_char_boundary(at) {
                    at += 1;
                }
                Unit::Rejected(at)
            }
        }
    }

    /// Prose at absolute `start` (a reasoning item opens again with the first byte
    /// of reasoning after a call, FD-2).
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if !self.reasoning && !text.is_empty() {
            self.answer_start = false;
            self.answered = true;
        }
        self.emitter.prose(self.reasoning, text, start, out);
    }

    /// A call group begins at `start`: open reasoning ends there (LJ-13).
    fn group_begins(&mut self, start: usize, out: &mut Vec<Event>) {
        if self.emitter.in_reasoning() {
            self.emitter.reasoning_end(true, start, out);
        }
        self.emitter.markup(start, out);
        self.answer_start = false;
        self.answered = true;
    }

    /// Back to prose at `at` (what follows is prose again).
    fn resume_prose(&mut self, at: usize) {
        self.pos = at;
        self.hold = None;
        self.mode = Mode::Prose;
    }

    /// One step in prose; false when more input is needed.
    fn prose_step(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> bool {
        let r = self.rules();
        let bytes = pending.as_bytes();
        if !self.probing {
            if self.answer_start && self.bare_calls && !self.reasoning {
                // LJ-5: a bare call at the start of the answer.
                self.answer_start = false;
                self.hold = Some(self.pos);
                self.bare_unit = true;
                self.object = None;
                self.mode = Mode::Head;
                return true;
            }
            let at = self.pos - base;
            let [a, b, c] = self.leads;
            let found = crate::reentry::find_byte3(a, b, c, &bytes[at..]);
            match found {
                None => {
                    self.prose(&pending[at..], self.pos, out);
                    self.pos = base + pending.len();
                    return false;
                }
                Some(k) => {
                    self.prose(&pending[at..at + k], self.pos, out);
                    self.pos += k;
                }
            }
        }
        let start = self.pos;
        let at = start - base;
        let Some(entry) = self.entry(bytes[at]) else {
            self.prose_char(pending, base, out);
            return true;
        };
        match self.unit(entry, pending, base, eof) {
            Unit::More => false,
            Unit::Rejected(_) | Unit::Cut => {
                self.prose_char(pending, base, out);
                true
            }
            Unit::Matched(end) => {
                let end = start + end;
                let opened = Spelling::ALL
                    .into_iter()
                    .find(|s| self.capture(r.wrappers.open[s.index()]).is_some());
                let closed = Spelling::ALL
                    .into_iter()
                    .any(|s| self.capture(r.wrappers.close[s.index()]).is_some());
                if let Some(spelling) = opened {
                    self.emitter.markup(start, out);
                    self.emitter.reasoning_start(end, out);
                    self.reasoning = true;
                    self.wrappers.open(Some(spelling));
                    self.pos = end;
                } else if closed {
                    if self.emitter.in_reasoning() {
                        self.emitter.reasoning_end(true, end, out);
                    } else {
                        self.emitter.markup(end, out);
                    }
                    self.reasoning = false;
                    self.answer_start = !self.answered;
                    self.pos = end;
                } else if self.capture(r.stray_marker).is_some() {
                    // A stop token outside a call group (LJ-16): markup, the state
                    // unchanged.
                    self.emitter.markup(end, out);
                    self.pos = end;
                } else {
                    // The tag: the unit is held until its call starts (LJ-6).
                    self.hold = Some(start);
                    self.bare_unit = false;
                    self.object = Some(Object {
                        unit_start: start,
                        name: None,
                        arguments: Arguments::NotSeen,
                        started: false,
                        seen_name: false,
                    });
                    self.pos = end;
                    self.mode = Mode::Head;
                }
                true
            }
        }
    }

    /// The entry rule for a candidate at `byte` in prose, or `None` when no marker
    /// can start there (a wrapper spelling that does not apply, RS-11).
    fn entry(&self, byte: u8) -> Option<RuleId> {
        let r = self.rules();
        let applies =
            Spelling::of_lead_byte(byte).filter(|s| self.wrappers.applies(*s, self.reasoning));
        let pick = |plain: RuleId, open: RuleId, close: RuleId| match applies {
            None => plain,
            Some(_) if self.reasoning => close,
            Some(_) => open,
        };
        match byte {
            b'<' => Some(pick(r.lt_marker, r.lt_marker_open, r.lt_marker_close)),
            _ => applies.map(|s| {
                if self.reasoning {
                    r.wrappers.close[s.index()]
                } else {
                    r.wrappers.open[s.index()]
                }
            }),
        }
    }

    /// The character at `self.pos` is prose (a candidate that is no marker).
    fn prose_char(&mut self, pending: &str, base: usize, out: &mut Vec<Event>) {
        let at = self.pos - base;
        let len = pending[at..].chars().next().map_or(1, char::len_utf8);
        self.prose(&pending[at..at + len], self.pos, out);
        self.pos += len;
    }

    /// llama3-json: where a call may start (LJ-5); false when more input is needed.
    fn head_step(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> bool {
        let r = self.rules();
        let start = self.pos;
        let unit_start = self.object.as_ref().map_or(start, |o| o.unit_start);
        match self.unit(r.call_head, pending, base, eof) {
            Unit::More => false,
            Unit::Rejected(_) => {
                // Not a call: the unit is prose (LJ-5).
                self.object = None;
                self.resume_prose(unit_start);
                self.answer_start = false;
                self.prose_from_hold(unit_start, start, pending, base, out);
                true
            }
            Unit::Cut => {
                let held = self.object.as_ref().map_or(start, |o| o.unit_start);
                self.drop_unit(held, base + pending.len(), pending, base, out);
                true
            }
            Unit::Matched(end) => {
                let end = start + end;
                if self.capture(r.object_open).is_some() {
                    self.hold = Some(unit_start);
                    self.object = Some(Object {
                        unit_start,
                        name: None,
                        arguments: Arguments::NotSeen,
                        started: false,
                        seen_name: false,
                    });
                    self.pos = end;
                    self.mode = Mode::Object(ObjectStep::First);
                } else {
                    // A built-in call (LJ-7).
                    let name = self
                        .capture(r.call_name)
                        .map(|c| &pending[start - base + c.start..start - base + c.end])
                        .unwrap_or_default();
                    self.object = None;
                    self.hold = None;
                    self.group_begins(unit_start, out);
                    self.emitter.call_start(None, name, end, out);
                    self.args = PyArgs::default();
                    self.pos = end;
                    self.mode = Mode::Args(ArgStep::Start);
                }
                true
            }
        }
    }

    /// Emits the held bytes `from..to` as prose (a unit that is no call).
    fn prose_from_hold(
        &mut self,
        from: usize,
        to: usize,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        let text = &pending[from - base..to - base];
        self.prose(text, from, out);
        self.pos = to;
    }

    /// The input ended inside the unit from `unit_start` whose call had not
    /// started: it is dropped (FD-7), or, a bare unit, it is text (LJ-11).
    fn drop_unit(
        &mut self,
        unit_start: usize,
        end: usize,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        self.object = None;
        self.hold = None;
        if self.bare_unit {
            self.bare_unit = false;
            self.resume_prose(unit_start);
            self.prose_from_hold(unit_start, end, pending, base, out);
            return;
        }
        self.emitter.markup(end, out);
        self.pos = end;
        self.mode = Mode::Prose;
    }

    /// Starts the object's call when its name is known and its arguments have
    /// begun (LJ-6).
    fn maybe_start(&mut self, pending: &str, base: usize, out: &mut Vec<Event>) {
        let Some(object) = self.object.as_mut() else {
            return;
        };
        if object.started || object.name.is_none() || object.arguments == Arguments::NotSeen {
            return;
        }
        object.started = true;
        // Taken: a started object's name is not read again.
        let name = object.name.take().unwrap_or_default();
        let unit_start = object.unit_start;
        let arguments = object.arguments;
        self.hold = None;
        self.group_begins(unit_start, out);
        match arguments {
            Arguments::NotSeen => {}
            Arguments::Reading(start) => {
                self.emitter.call_start(None, name, start, out);
            }
            Arguments::Done { start, end, .. } => {
                self.emitter.call_start(None, name, start, out);
                self.emitter
                    .arguments_delta(&pending[start - base..end - base], end, out);
            }
        }
    }

    /// The object ended (`closed`: at its `}`, which `self.pos` follows) or stopped
    /// at `self.pos` (a syntax error): its call ends, or, when it never started, the
    /// unit is prose (LJ-6, LJ-8).
    fn end_object(&mut self, closed: bool, pending: &str, base: usize, out: &mut Vec<Event>) {
        let Some(object) = self.object.take() else {
            self.resume_prose(self.pos);
            return;
        };
        let at = self.pos;
        if !object.started {
            self.resume_prose(object.unit_start);
            self.prose_from_hold(object.unit_start, at, pending, base, out);
            return;
        }
        let complete = closed && matches!(object.arguments, Arguments::Done { object: true, .. });
        self.emitter.call_end(complete, at, out);
        self.hold = None;
        self.pos = at;
        self.mode = if closed { Mode::CallNext } else { Mode::Prose };
    }

    /// One step of the call object's walk; false when more input is needed.
    fn object_step(
        &mut self,
        step: ObjectStep,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> bool {
        let r = self.rules();
        let started = self.object.as_ref().is_some_and(|o| o.started);
        let at = self.pos - base;
        match step {
            ObjectStep::ArgumentsValue => {
                match pending.as_bytes().get(at) {
                    None if !eof => return false,
                    None => {
                        self.object_cut(base + pending.len(), pending, base, out);
                        return true;
                    }
                    Some(&b) => {
                        if let Some(o) = self.object.as_mut() {
                            o.arguments = Arguments::Reading(self.pos);
                        }
                        if b == b'{' {
                            self.arguments.start();
                            self.mode = Mode::Object(ObjectStep::ArgumentsObject);
                        } else {
                            self.mode = Mode::Object(ObjectStep::Value(Member::Arguments));
                        }
                        if !started {
                            self.maybe_start(pending, base, out);
                        }
                    }
                }
                return true;
            }
            ObjectStep::ArgumentsObject => {
                return self.arguments_object(started, pending, base, eof, out);
            }
            _ => {}
        }
        let entry = match step {
            ObjectStep::First => r.object_first,
            ObjectStep::Key => r.member_key,
            ObjectStep::Value(_) => r.json_value,
            _ => r.member_next,
        };
        let start = self.pos;
        let end = match self.unit(entry, pending, base, eof) {
            Unit::More => return false,
            Unit::Cut => {
                self.object_cut(base + pending.len(), pending, base, out);
                return true;
            }
            Unit::Rejected(stop) => {
                self.pos = start + stop;
                self.end_object(false, pending, base, out);
                return true;
            }
            Unit::Matched(end) => end,
        };
        self.pos = start + end;
        match step {
            ObjectStep::First | ObjectStep::Next => {
                if self.capture(r.object_close).is_some() {
                    if started {
                        self.emitter.markup(self.pos, out);
                    }
                    self.end_object(true, pending, base, out);
                } else {
                    if started {
                        self.emitter.markup(self.pos, out);
                    }
                    if step == ObjectStep::Next {
                        self.mode = Mode::Object(ObjectStep::Key);
                    } else {
                        self.key_matched(start, pending, base, out);
                    }
                }
            }
            ObjectStep::Key => self.key_matched(start, pending, base, out),
            ObjectStep::Value(member) => {
                let raw = &pending[start - base..self.pos - base];
                if let Some(o) = self.object.as_mut() {
                    match member {
                        Member::Name => {
                            o.name = json_string(raw)
                                .filter(|n| !n.is_empty())
                                .map(|n| CompactString::from(&*n));
                        }
                        Member::Arguments => {
                            o.arguments = Arguments::Done {
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
                } else if started {
                    self.emitter.markup(self.pos, out);
                }
                self.mode = Mode::Object(ObjectStep::Next);
                self.maybe_start(pending, base, out);
            }
            ObjectStep::ArgumentsValue | ObjectStep::ArgumentsObject => {}
        }
        true
    }

    /// One step inside the arguments object: its reader continues over what is
    /// pending, the bytes it shows to be arguments are a delta once the call has
    /// started, and its end or stop moves the walk on; false when more input is
    /// needed.
    #[inline(always)]
    fn arguments_object(
        &mut self,
        started: bool,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> bool {
        let unit = &pending[self.pos - base..];
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
                let start = self.pos;
                self.pos += end;
                if let Some(o) = self.object.as_mut() {
                    o.arguments = Arguments::Done {
                        start,
                        end: self.pos,
                        object: true,
                    };
                }
                self.mode = Mode::Object(ObjectStep::Next);
            }
            ObjectRead::Stopped(stop) => {
                self.pos += stop;
                if eof && self.pos == base + pending.len() {
                    self.object_cut(self.pos, pending, base, out);
                } else {
                    self.end_object(false, pending, base, out);
                }
            }
        }
        true
    }

    /// A member key matched over `start..self.pos`.
    fn key_matched(&mut self, start: usize, pending: &str, base: usize, out: &mut Vec<Event>) {
        let r = self.rules();
        let started = self.object.as_ref().is_some_and(|o| o.started);
        if started {
            self.emitter.markup(self.pos, out);
        }
        let key = self
            .capture(r.member_name)
            .and_then(|c| json_string(&pending[start - base + c.start..start - base + c.end]));
        let Some(o) = self.object.as_mut() else {
            return;
        };
        let member = match key.as_deref() {
            Some("name") if !o.seen_name => {
                o.seen_name = true;
                Member::Name
            }
            Some("parameters" | "arguments") if o.arguments == Arguments::NotSeen => {
                Member::Arguments
            }
            _ => Member::Other,
        };
        self.mode = Mode::Object(if member == Member::Arguments {
            ObjectStep::ArgumentsValue
        } else {
            ObjectStep::Value(member)
        });
    }

    /// The input ended inside the call object (LJ-11).
    fn object_cut(&mut self, end: usize, pending: &str, base: usize, out: &mut Vec<Event>) {
        let started = self.object.as_ref().is_some_and(|o| o.started);
        if started {
            self.object = None;
            self.emitter.call_end(false, end, out);
            self.hold = None;
            self.emitter.markup(end, out);
            self.pos = end;
            self.mode = Mode::Prose;
        } else {
            let unit_start = self.object.as_ref().map_or(end, |o| o.unit_start);
            self.drop_unit(unit_start, end, pending, base, out);
        }
    }

    /// One step of the Python arguments' walk (PY-6, LJ-7); false when more input
    /// is needed.
    fn args_step(
        &mut self,
        step: ArgStep,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> bool {
        let r = self.rules();
        let entry = match step {
            ArgStep::Start => r.py_arg_start,
            ArgStep::Value => r.py_value,
            ArgStep::Next => r.py_arg_next,
        };
        let start = self.pos;
        let end = match self.unit(entry, pending, base, eof) {
            Unit::More => return false,
            Unit::Cut => {
                // Truncated (PY-11): the call ends incomplete, the rest is markup.
                let end = base + pending.len();
                self.emitter.call_end(false, end, out);
                self.hold = None;
                self.pos = end;
                self.mode = Mode::Prose;
                return true;
            }
            Unit::Rejected(stop) => {
                // The keyword and its value are prose again; a unit that is not
                // an argument is prose from its first byte.
                let _ = stop;
                let at = if step == ArgStep::Value {
                    self.args.key_at
                } else {
                    start
                };
                self.args_malformed(at, out);
                return true;
            }
            Unit::Matched(end) => start + end,
        };
        match step {
            ArgStep::Start | ArgStep::Next => {
                if self.capture(r.py_close).is_some() {
                    let text = if self.args.keys.is_empty() { "{}" } else { "}" };
                    self.emitter.arguments_delta(text, end, out);
                    let complete = !self.args.repeated;
                    self.emitter.call_end(complete, end, out);
                    self.pos = end;
                    self.mode = Mode::CallNext;
                } else if step == ArgStep::Next {
                    self.emitter.markup(end, out);
                    self.pos = end;
                    self.mode = Mode::Args(ArgStep::Start);
                } else {
                    let key = self
                        .capture(r.py_key)
                        .map(|c| pending[start - base + c.start..start - base + c.end].to_string())
                        .unwrap_or_default();
                    self.args.key = key;
                    self.args.key_at = start;
                    self.hold = Some(start);
                    self.pos = end;
                    self.mode = Mode::Args(ArgStep::Value);
                }
            }
            ArgStep::Value => {
                let raw = &pending[start - base..end - base];
                let Some(json) = literal::to_json(raw) else {
                    self.args_malformed(self.args.key_at, out);
                    return true;
                };
                let key = std::mem::take(&mut self.args.key);
                let mut text = String::from(if self.args.keys.is_empty() { "{" } else { "," });
                text.push_str(&serde_json::to_string(&key).unwrap_or_default());
                text.push(':');
                text.push_str(&json);
                if self.args.keys.contains(&key) {
                    self.args.repeated = true;
                }
                self.args.keys.push(key);
                self.emitter.arguments_delta(&text, end, out);
                self.hold = None;
                self.pos = end;
                self.mode = Mode::Args(ArgStep::Next);
            }
        }
        true
    }

    /// A byte the arguments cannot have: the call ends incomplete at `at`, and
    /// what follows is prose (PY-10).
    fn args_malformed(&mut self, at: usize, out: &mut Vec<Event>) {
        self.emitter.call_end(false, at, out);
        self.resume_prose(at);
    }

    /// After a call (LJ-9): `;` before the next, or a stop token; false when more
    /// input is needed.
    fn call_next_step(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> bool {
        let r = self.rules();
        let start = self.pos;
        match self.unit(r.call_next, pending, base, eof) {
            Unit::More => false,
            Unit::Cut | Unit::Rejected(_) => {
                // What follows is prose (LJ-9).
                self.resume_prose(start);
                true
            }
            Unit::Matched(end) => {
                let end = start + end;
                self.pos = end;
                self.emitter.markup(end, out);
                if self.capture(r.separator).is_some() {
                    self.object = None;
                    self.bare_unit = false;
                    self.mode = Mode::Head;
                } else {
                    self.mode = Mode::Prose;
                }
                true
            }
        }
    }
}

impl LlamaMachine {
    /// The chunk when it is prose from its first byte to its last, none of which
    /// can start a marker, and no call may start at its first byte: what the loop
    /// of [`Self::advance_all`] decides for it (all of it, as prose), without the
    /// loop. `None` in any other case.
    #[inline(always)]
    fn prose_only(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> Option<usize> {
        if eof
            || self.mode != Mode::Prose
            || self.probing
            || self.pos != base
            || self.hold.is_some()
            || (self.answer_start && self.bare_calls && !self.reasoning)
            || !self.first.decided()
        {
            return None;
        }
        let [a, b, c] = self.leads;
        if crate::reentry::find_byte3(a, b, c, pending.as_bytes()).is_some() {
            return None;
        }
        self.prose(pending, base, out);
        self.pos = base + pending.len();
        Some(pending.len())
    }

    /// [`Machine::advance`] for a chunk that is not all prose: inside the arguments
    /// object of a started call (most chunks of a call group) the object's reader
    /// decides what it can, and the loop of [`Self::advance_all`] runs only when the
    /// object ends; every other chunk goes to the loop.
    #[inline(never)]
    fn advance_arguments(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> usize {
        if !eof
            && self.mode == Mode::Object(ObjectStep::ArgumentsObject)
            && self.first.decided()
            && self.object.as_ref().is_some_and(|o| o.started)
            && !self.arguments_object(true, pending, base, false, out)
        {
            return self.used(base);
        }
        self.advance_all(pending, base, eof, out)
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
        let len = pending.len();
        loop {
            if self.pos >= base + len && !eof {
                break;
            }
            let more = match self.mode {
                Mode::Prose => {
                    if self.pos >= base + len {
                        break;
                    }
                    self.prose_step(pending, base, eof, out)
                }
                Mode::Head => self.head_step(pending, base, eof, out),
                Mode::Object(step) => self.object_step(step, pending, base, eof, out),
                Mode::Args(step) => self.args_step(step, pending, base, eof, out),
                Mode::CallNext => self.call_next_step(pending, base, eof, out),
            };
            if !more {
                break;
            }
        }
        if eof {
            self.emitter.markup(base + len, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, base + len, out);
            }
            self.pos = base + len;
            return len;
        }
        self.used(base)
    }

    /// How much of the chunk at `base` the re-entry layer may drop: everything
    /// before the held unit, or before the position when nothing is held.
    #[inline]
    fn used(&self, base: usize) -> usize {
        self.hold.unwrap_or(self.pos).min(self.pos).max(base) - base
    }
}

impl Machine for LlamaMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    /// A chunk of prose without a marker's first byte (most chunks of a streamed
    /// turn's text) is decided by `LlamaMachine::prose_only`, inlined into the
    /// re-entry layer; every other by the loop.
    #[inline]
    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        if let Some(used) = self.prose_only(pending, base, eof, out) {
            return used;
        }
        self.advance_arguments(pending, base, eof, out)
    }
}

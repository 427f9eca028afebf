//! The hermes state machine: prose and reasoning scanned for markers with the
//! grammar's entry rules, the call object scanned as JSON (spec/hermes.md).

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::field::grammars;
use crate::field::json_scan::{JsonScan, Scanned};
use crate::field::probe::{rule, MarkerProbe};
use crate::field::{Emitter, Event, Options};
use crate::machine::{Outcome, RuleId};
use crate::reentry::{find_byte, Machine};

/// The entry and captured rules of grammar/hermes.pest.
struct Rules {
    text_marker: RuleId,
    reasoning_marker: RuleId,
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

/// Where the call object's scan stands (HE-6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    BeforeBrace,
    BeforeKey,
    InKey { escape: bool },
    AfterKey,
    BeforeValue,
    InValue,
    AfterValue,
}

/// What the value being scanned is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    Name,
    /// The arguments, streamed as their bytes arrive (the call has started and the
    /// value is not a string).
    ArgumentsLive,
    /// The arguments, collected whole (a string holding JSON, or the name is not
    /// known yet).
    ArgumentsHeld,
    Other,
}

/// The call object being scanned.
#[derive(Clone, Debug)]
struct CallObject {
    /// The opener's `<`.
    unit_start: usize,
    phase: Phase,
    key: String,
    value: Value,
    value_start: usize,
    scan: JsonScan,
    /// Whether the start event was emitted.
    started: bool,
    /// Whether an arguments value was seen.
    arguments_seen: bool,
    /// Arguments collected before the name was known.
    held_arguments: Option<String>,
    /// The bytes of the current key or value that were covered by markup before
    /// it ended (after the call's start the markup is emitted as it is scanned,
    /// HE-12); `carried_to` is where they end.
    carry: String,
    carried_to: usize,
}

impl CallObject {
    /// The current key or value, `from..to` (absolute; `from` is its start).
    fn raw<'a>(&'a mut self, pending: &str, base: usize, to: usize) -> &'a str {
        self.carry
            .push_str(&pending[self.carried_to - base..to - base]);
        self.carried_to = to;
        &self.carry
    }

    /// A key or value starts at `at`.
    fn begin(&mut self, at: usize) {
        self.carry.clear();
        self.carried_to = at;
    }
}

/// What scanning the call object led to.
enum ObjectStep {
    /// Every byte so far is consumed; more are needed.
    NeedMore,
    /// The object ended at this absolute offset (one past its `}`).
    Complete(usize),
    /// The byte at this absolute offset cannot continue a call object.
    Invalid(usize),
}

#[derive(Clone, Debug)]
enum Mode {
    Prose,
    Probe(Probing),
    Object(Box<CallObject>),
    Skip,
}

/// The hermes state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct HermesMachine {
    emitter: Emitter,
    probe: MarkerProbe,
    mode: Mode,
    /// Absolute scan position.
    pos: usize,
    /// Whether prose is reasoning (HE-9).
    reasoning: bool,
    start_in_reasoning: bool,
    began: bool,
}

/// The string a complete JSON string token stands for, or `None` when it is not
/// one. A token without escapes (nearly every key and name) is its own content,
/// borrowed; one with escapes is decoded by serde_json.
fn json_string(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if inner.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl HermesMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        let r = Rules::get();
        HermesMachine {
            emitter: Emitter::new(),
            probe: MarkerProbe::new(
                grammars::hermes(),
                &[r.call_open, r.think_open, r.think_close],
            ),
            mode: Mode::Prose,
            pos: 0,
            reasoning: false,
            start_in_reasoning: options.start_in_reasoning,
            began: false,
        }
    }

    /// Prose at absolute `start`: answer text or reasoning (a reasoning item opens
    /// again after a call that broke out of one, HE-11).
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        if self.reasoning {
            if !self.emitter.in_reasoning() {
                self.emitter.markup(start, out);
                self.emitter.reasoning_start(start, out);
            }
            self.emitter.reasoning(text, start, out);
        } else {
            self.emitter.text(text, start, out);
        }
    }

    fn start_probe(&mut self, probing: Probing, at: usize) {
        let r = Rules::get();
        let entry = match probing {
            Probing::Prose if self.reasoning => r.reasoning_marker,
            Probing::Prose => r.text_marker,
            Probing::CallEnd => r.call_end,
            Probing::Skip => r.skip_marker,
        };
        self.probe.start(entry, at);
        self.mode = Mode::Probe(probing);
    }

    /// A probe matched `start..end`.
    fn matched(&mut self, probing: Probing, start: usize, end: usize, out: &mut Vec<Event>) {
        let r = Rules::get();
        match probing {
            Probing::Prose => {
                if self.probe.capture(r.call_open).is_some() {
                    self.mode = Mode::Object(Box::new(CallObject {
                        unit_start: start,
                        phase: Phase::BeforeBrace,
                        key: String::new(),
                        value: Value::Other,
                        value_start: 0,
                        scan: JsonScan::new(),
                        started: false,
                        arguments_seen: false,
                        held_arguments: None,
                        carry: String::new(),
                        carried_to: start,
                    }));
                } else if self.probe.capture(r.think_open).is_some() {
                    self.emitter.reasoning_start(end, out);
                    self.reasoning = true;
                    self.mode = Mode::Prose;
                } else {
                    // The reasoning closer; after a call nothing is open (HE-11).
                    if self.emitter.in_reasoning() {
                        self.emitter.reasoning_end(true, end, out);
                    } else {
                        self.emitter.markup(end, out);
                    }
                    self.reasoning = false;
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
                // The `<` is prose.
                self.prose(&pending[start - base..start - base + 1], start, out);
                self.pos = start + 1;
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

    /// Scans the call object from `self.pos` to the end of `pending`.
    fn scan_object(
        &mut self,
        obj: &mut CallObject,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) -> ObjectStep {
        let bytes = pending.as_bytes();
        let end = base + bytes.len();
        while self.pos < end {
            let at = self.pos;
            let b = bytes[at - base];
            match obj.phase {
                Phase::BeforeBrace => {
                    if b == b'{' {
                        obj.phase = Phase::BeforeKey;
                    } else if !is_ws(b) {
                        return ObjectStep::Invalid(at);
                    }
                }
                Phase::BeforeKey => {
                    if b == b'"' {
                        obj.begin(at);
                        obj.phase = Phase::InKey { escape: false };
                    } else if b == b'}' {
                        return ObjectStep::Complete(at + 1);
                    } else if !is_ws(b) {
                        return ObjectStep::Invalid(at);
                    }
                }
                Phase::InKey { escape } => {
                    if escape {
                        obj.phase = Phase::InKey { escape: false };
                    } else if b == b'\\' {
                        obj.phase = Phase::InKey { escape: true };
                    } else if b == b'"' {
                        obj.raw(pending, base, at + 1);
                        match json_string(&obj.carry) {
                            Some(key) => {
                                obj.key.clear();
                                obj.key.push_str(&key);
                            }
                            None => return ObjectStep::Invalid(at),
                        }
                        obj.phase = Phase::AfterKey;
                    }
                }
                Phase::AfterKey => {
                    if b == b':' {
                        obj.phase = Phase::BeforeValue;
                    } else if !is_ws(b) {
                        return ObjectStep::Invalid(at);
                    }
                }
                Phase::BeforeValue => {
                    if !is_ws(b) {
                        obj.value_start = at;
                        obj.begin(at);
                        obj.scan = JsonScan::new();
                        obj.value = match obj.key.as_str() {
                            "name" => Value::Name,
                            // HE-6: `parameters` is a known spelling of `arguments`.
                            "arguments" | "parameters" if obj.arguments_seen => Value::Other,
                            "arguments" | "parameters" if obj.started && b != b'"' => {
                                self.emitter.markup(at, out);
                                Value::ArgumentsLive
                            }
                            "arguments" | "parameters" => Value::ArgumentsHeld,
                            _ => Value::Other,
                        };
                        obj.phase = Phase::InValue;
                        continue;
                    }
                }
                Phase::InValue => {
                    let rel = at - base;
                    match obj.scan.scan(&bytes[rel..]) {
                        Scanned::NeedMore => {
                            if obj.value == Value::ArgumentsLive {
                                self.emitter.arguments_delta(&pending[rel..], end, out);
                            }
                            self.pos = end;
                            break;
                        }
                        Scanned::Invalid(k) => {
                            if obj.value == Value::ArgumentsLive {
                                // The bytes before the bad one are arguments (HE-8),
                                // whatever the chunking.
                                self.emitter
                                    .arguments_delta(&pending[rel..rel + k], at + k, out);
                            }
                            return ObjectStep::Invalid(at + k);
                        }
                        Scanned::Complete(k) => {
                            if obj.value == Value::ArgumentsLive {
                                self.emitter
                                    .arguments_delta(&pending[rel..rel + k], at + k, out);
                            }
                            self.pos = at + k;
                            if let Err(bad) = self.value_done(obj, pending, base, out) {
                                return ObjectStep::Invalid(bad);
                            }
                            obj.phase = Phase::AfterValue;
                            continue;
                        }
                    }
                }
                Phase::AfterValue => {
                    if b == b',' {
                        obj.phase = Phase::BeforeKey;
                    } else if b == b'}' {
                        return ObjectStep::Complete(at + 1);
                    } else if !is_ws(b) {
                        return ObjectStep::Invalid(at);
                    }
                }
            }
            self.pos += 1;
        }
        if obj.started {
            // Everything scanned is decided: cover it now, keeping the bytes of an
            // unfinished key or value that will still be read.
            let reading = matches!(obj.phase, Phase::InKey { .. })
                || (obj.phase == Phase::InValue && obj.value != Value::ArgumentsLive);
            if reading {
                obj.raw(pending, base, end);
            }
            self.emitter.markup(end, out);
        }
        ObjectStep::NeedMore
    }

    /// The value `obj.value_start..self.pos` is complete; `Err` with the offset to
    /// report when it makes the object no call.
    fn value_done(
        &mut self,
        obj: &mut CallObject,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) -> Result<(), usize> {
        let pos = self.pos;
        match obj.value {
            Value::Name => {
                if obj.started {
                    // A second name: the first one stands (HE-6).
                    return Ok(());
                }
                let name = json_string(obj.raw(pending, base, pos))
                    .ok_or(pos - 1)?
                    .into_owned();
                if self.reasoning && self.emitter.in_reasoning() {
                    self.emitter.reasoning_end(true, obj.unit_start, out);
                }
                self.emitter.markup(obj.unit_start, out);
                self.emitter.call_start(None, name, self.pos, out);
                obj.started = true;
                if let Some(arguments) = obj.held_arguments.take() {
                    self.emitter.arguments_delta(&arguments, self.pos, out);
                }
            }
            Value::ArgumentsLive => obj.arguments_seen = true,
            Value::ArgumentsHeld => {
                if obj.arguments_seen {
                    return Ok(());
                }
                obj.arguments_seen = true;
                // HE-6: a string holding JSON stands for that JSON.
                let raw = obj.raw(pending, base, pos);
                let text = if raw.starts_with('"') {
                    serde_json::from_str::<String>(raw).map_err(|_| pos - 1)?
                } else {
                    raw.to_string()
                };
                if obj.started {
                    self.emitter.markup(obj.value_start, out);
                    self.emitter.arguments_delta(&text, self.pos, out);
                } else {
                    obj.held_arguments = Some(text);
                }
            }
            Value::Other => {}
        }
        Ok(())
    }

    /// The call object ended at `end` (one past its `}`).
    fn object_complete(
        &mut self,
        obj: CallObject,
        end: usize,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        if !obj.started {
            // No name: not a call; the unit is prose (HE-6).
            self.prose(
                &pending[obj.unit_start - base..end - base],
                obj.unit_start,
                out,
            );
            self.pos = end;
            self.mode = Mode::Prose;
            return;
        }
        if !obj.arguments_seen {
            self.emitter
                .arguments_delta("{}", self.emitter.covered(), out);
        }
        self.emitter.call_end(true, end, out);
        self.pos = end;
        self.start_probe(Probing::CallEnd, end);
    }

    /// The byte at `bad` cannot continue the call object (HE-8).
    fn object_invalid(
        &mut self,
        obj: CallObject,
        bad: usize,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        if !obj.started {
            // Not a call: the unit up to and including the bad byte is prose.
            let rel = bad - base;
            let char_len = pending[rel..].chars().next().map_or(1, char::len_utf8);
            self.prose(
                &pending[obj.unit_start - base..rel + char_len],
                obj.unit_start,
                out,
            );
            self.pos = bad + char_len;
            self.mode = Mode::Prose;
            return;
        }
        self.emitter.call_end(false, bad, out);
        self.pos = bad;
        self.mode = Mode::Skip;
    }

    /// End of input in a call object (HE-10).
    fn object_at_end(&mut self, obj: CallObject, end: usize, out: &mut Vec<Event>) {
        if obj.started {
            self.emitter.call_end(false, end, out);
        } else {
            self.emitter.markup(end, out);
        }
        self.pos = end;
        self.mode = Mode::Prose;
    }
}

impl Machine for HermesMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        if !self.began {
            self.began = true;
            if self.start_in_reasoning {
                self.reasoning = true;
                self.emitter.reasoning_start(base, out);
            }
        }
        let bytes = pending.as_bytes();
        let end = base + bytes.len();
        loop {
            match std::mem::replace(&mut self.mode, Mode::Prose) {
                Mode::Prose => {
                    let rel = self.pos - base;
                    match find_byte(b'<', &bytes[rel..]) {
                        None => {
                            self.prose(&pending[rel..], self.pos, out);
                            self.pos = end;
                            break;
                        }
                        Some(k) => {
                            self.prose(&pending[rel..rel + k], self.pos, out);
                            self.pos += k;
                            self.start_probe(Probing::Prose, self.pos);
                        }
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
                Mode::Object(mut obj) => match self.scan_object(&mut obj, pending, base, out) {
                    ObjectStep::NeedMore => {
                        if eof {
                            self.object_at_end(*obj, end, out);
                        } else {
                            self.mode = Mode::Object(obj);
                        }
                        break;
                    }
                    ObjectStep::Complete(at) => self.object_complete(*obj, at, pending, base, out),
                    ObjectStep::Invalid(at) => self.object_invalid(*obj, at, pending, base, out),
                },
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
                            self.start_probe(Probing::Skip, self.pos);
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
        self.emitter.covered().max(base) - base
    }
}

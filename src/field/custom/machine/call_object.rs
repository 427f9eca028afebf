//! The `json_call_object` encoding (spec/custom-family.md CF-16): after the call's
//! opener, one JSON object holds the tool's name and the arguments under the keys
//! the description names, in any order (hermes' and llama3-json's
//! `{"name": ..., "arguments": {...}}`). The object is scanned structurally as it
//! arrives; the call starts when the name's closing quote arrives.

use crate::field::json_scan::{JsonScan, Scanned};
use crate::field::Event;

use super::{CustomMachine, Mode, Probing};

/// Where the call object's scan stands.
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
pub(super) struct CallObject {
    /// The opener's first byte.
    pub(super) unit_start: usize,
    phase: Phase,
    key: String,
    value: Value,
    value_start: usize,
    scan: JsonScan,
    started: bool,
    arguments_seen: bool,
    held_arguments: Option<String>,
    /// The bytes of the current key or value covered by markup before it ended,
    /// and where they end.
    carry: String,
    carried_to: usize,
}

/// What scanning the call object led to.
pub(super) enum ObjectStep {
    /// Every byte so far is consumed; more are needed.
    NeedMore,
    /// The object ended at this absolute offset (one past its `}`).
    Complete(usize),
    /// The byte at this absolute offset cannot continue a call object.
    Invalid(usize),
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl CallObject {
    /// A call object whose opener starts at `unit_start`.
    pub(super) fn new(unit_start: usize) -> CallObject {
        CallObject {
            unit_start,
            phase: Phase::BeforeBrace,
            key: String::new(),
            value: Value::Other,
            value_start: 0,
            scan: JsonScan::new(),
            started: false,
            arguments_seen: false,
            held_arguments: None,
            carry: String::new(),
            carried_to: unit_start,
        }
    }

    /// The current key or value, from its start to `to` (absolute).
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

impl CustomMachine {
    fn object_keys(&self, key: &str) -> (bool, bool) {
        let keys = self
            .family
            .call_object
            .as_ref()
            .expect("json_call_object encoding");
        (
            keys.name.iter().any(|k| k == key),
            keys.arguments.iter().any(|k| k == key),
        )
    }

    /// Scans the call object from `self.pos` to the end of `pending`.
    pub(super) fn scan_object(
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
                        let raw = obj.raw(pending, base, at + 1);
                        match serde_json::from_str::<String>(raw) {
                            Ok(key) => obj.key = key,
                            Err(_) => return ObjectStep::Invalid(at),
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
                        let (is_name, is_arguments) = self.object_keys(&obj.key);
                        obj.value = if is_name {
                            Value::Name
                        } else if is_arguments && obj.arguments_seen {
                            Value::Other
                        } else if is_arguments && obj.started && b != b'"' {
                            self.emitter.markup(at, out);
                            Value::ArgumentsLive
                        } else if is_arguments {
                            Value::ArgumentsHeld
                        } else {
                            Value::Other
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
            // Everything scanned is decided: cover it, keeping the bytes of an
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

    /// The value from `obj.value_start` to `self.pos` is complete; `Err` with the
    /// offset to report when it makes the object no call.
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
                    // A second name: the first one stands.
                    return Ok(());
                }
                let name = serde_json::from_str::<String>(obj.raw(pending, base, pos))
                    .map_err(|_| pos - 1)?;
                self.leave_reasoning(obj.unit_start, out);
                self.emitter.markup(obj.unit_start, out);
                self.emitter.call_start(None, name, pos, out);
                obj.started = true;
                if let Some(arguments) = obj.held_arguments.take() {
                    self.emitter.arguments_delta(&arguments, pos, out);
                }
            }
            Value::ArgumentsLive => obj.arguments_seen = true,
            Value::ArgumentsHeld => {
                if obj.arguments_seen {
                    return Ok(());
                }
                obj.arguments_seen = true;
                // A string holding JSON stands for that JSON.
                let raw = obj.raw(pending, base, pos);
                let text = if raw.starts_with('"') {
                    serde_json::from_str::<String>(raw).map_err(|_| pos - 1)?
                } else {
                    raw.to_string()
                };
                if obj.started {
                    self.emitter.markup(obj.value_start, out);
                    self.emitter.arguments_delta(&text, pos, out);
                } else {
                    obj.held_arguments = Some(text);
                }
            }
            Value::Other => {}
        }
        Ok(())
    }

    /// The call object ended at `end` (one past its `}`).
    pub(super) fn object_complete(
        &mut self,
        obj: CallObject,
        end: usize,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        if !obj.started {
            // No name: not a call; the unit is prose.
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
        self.start_probe(Probing::ObjectEnd, end);
    }

    /// The byte at `bad` cannot continue the call object.
    pub(super) fn object_invalid(
        &mut self,
        obj: CallObject,
        bad: usize,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        if !obj.started {
            // Not a call: the unit up to and including the bad character is prose.
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
        self.skip(bad);
    }
}

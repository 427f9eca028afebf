//! The call object of hermes (spec/hermes.md HE-6 to HE-8) and of the custom
//! families' `json_call_object` encoding (spec/custom-family.md CF-16, the same
//! rules for any keys): after the call's opener, one JSON object whose members name
//! the tool and hold its arguments, in any order.
//!
//! The object is walked member by member with the entry rules of
//! grammar/hermes.pest on the parsing machine: `object_open` up to the first key's
//! value, `member_value`, and `member_next` up to the next key's value or the `}`.
//! A key is checked as soon as its closing quote has arrived.
//! Each unit's bytes stay in the re-entry layer's buffer until the unit ends (the
//! machine re-reads them when it backtracks), while its events go out at once: after
//! the call has started every byte read is covered, and arguments written as JSON
//! stream as their bytes arrive.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::field::grammars;
use crate::field::input::Input;
use crate::field::probe::rule;
use crate::field::{Emitter, Event};
use crate::machine::{Outcome, ParsingMachine, RuleId};

/// Nesting bound of the machine (pending calls and choices, two per level of
/// brackets): input nested deeper than 32,768 levels is malformed where it reaches
/// the bound (HE-8).
const DEPTH: usize = 1 << 16;

/// The entry and captured rules of grammar/hermes.pest that read the object.
struct Rules {
    object_open: RuleId,
    key_alone: RuleId,
    member_value: RuleId,
    member_next: RuleId,
    member_name: RuleId,
    object_close: RuleId,
}

impl Rules {
    fn get() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| {
            let p = grammars::hermes();
            Rules {
                object_open: rule(p, "object_open"),
                key_alone: rule(p, "key_alone"),
                member_value: rule(p, "member_value"),
                member_next: rule(p, "member_next"),
                member_name: rule(p, "member_name"),
                object_close: rule(p, "object_close"),
            }
        })
    }
}

/// The keys that name the tool and hold the arguments (hermes: `name`;
/// `arguments` and `parameters`).
#[derive(Clone, Debug)]
pub struct ObjectKeys {
    /// Keys whose string value is the tool's name.
    pub name: Vec<String>,
    /// Keys whose value is the arguments.
    pub arguments: Vec<String>,
}

/// Which unit of the object is being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// `object_open`, or `member_next`: up to a key's value or the `}`.
    Key,
    /// `member_value`.
    Value,
}

/// What the value being read is.
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

/// What reading the object led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectEnd {
    /// Every byte so far is read and what it decided is emitted; more are needed
    /// (at the end of input the object was cut, and that is emitted too).
    More,
    /// No call: the bytes from the opener up to this absolute offset are prose, and
    /// scanning goes on from it.
    Prose(usize),
    /// The call ended complete at this absolute offset (one past the `}`); the
    /// family's after-call rule runs there.
    Called(usize),
    /// The call ended malformed at this absolute offset (`complete: false`); the
    /// family skips the rest of it from there.
    Malformed(usize),
}

/// The string a complete JSON string token stands for, or `None` when it is not
/// one. A token without escapes (nearly every key and name) is its own content,
/// borrowed; one with escapes is decoded by serde_json.
pub(crate) fn json_string(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if inner.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
}

/// Whether `content`, a stringified arguments value's decoded text, is one JSON
/// object (FD-9's parse, whitespace around it allowed): only an object is
/// unwrapped (FD-2, HE-6).
fn holds_object(content: &str) -> bool {
    content
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
        && Input::parse(content).is_some()
}

/// The reader of call objects, one at a time (see the module docs).
#[derive(Clone, Debug)]
pub struct CallObject {
    machine: ParsingMachine<'static>,
    keys: ObjectKeys,
    /// The opener's first byte (absolute).
    unit_start: usize,
    step: Step,
    /// Where the current unit starts (absolute).
    run_start: usize,
    /// What the last key names.
    key: Value,
    /// Whether the current unit's key was checked.
    key_checked: bool,
    value: Value,
    /// Arguments streamed up to here (absolute).
    emitted: usize,
    /// Whether the call has started.
    started: bool,
    /// Whether an arguments value was read.
    arguments_seen: bool,
    /// Whether the arguments are a JSON object as written or unwrapped (FD-2: a
    /// call whose arguments are another JSON value is not complete).
    arguments_object: bool,
    /// Arguments read before the name was.
    held_arguments: Option<String>,
}

impl CallObject {
    /// A reader for objects with these keys.
    pub fn new(keys: ObjectKeys) -> Self {
        let r = Rules::get();
        let mut machine = ParsingMachine::new(grammars::hermes());
        machine.capture_only(&[r.member_name, r.object_close]);
        machine.set_depth_limit(DEPTH);
        CallObject {
            machine,
            keys,
            unit_start: 0,
            step: Step::Key,
            run_start: 0,
            key: Value::Other,
            key_checked: false,
            value: Value::Other,
            emitted: 0,
            started: false,
            arguments_seen: false,
            arguments_object: false,
            held_arguments: None,
        }
    }

    /// Starts a call object whose opener spans `unit_start..at`.
    pub fn begin(&mut self, unit_start: usize, at: usize) {
        self.unit_start = unit_start;
        self.value = Value::Other;
        self.emitted = at;
        self.started = false;
        self.arguments_seen = false;
        self.arguments_object = false;
        self.held_arguments = None;
        self.run(Step::Key, Rules::get().object_open, at);
    }

    /// Where the opener of the current object starts.
    pub fn unit_start(&self) -> usize {
        self.unit_start
    }

    /// Whether the current object's call has started.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Where the bytes the reader still needs start: the re-entry layer keeps them.
    pub fn needed_from(&self) -> usize {
        self.run_start
    }

    fn run(&mut self, step: Step, entry: RuleId, at: usize) {
        self.step = step;
        self.key_checked = false;
        self.run_start = at;
        self.machine.start(entry);
    }

    /// Checks the key captured in `unit` (the current unit's bytes), once: `Err`
    /// with the offset of its closing quote (absolute) when it is no JSON string.
    fn check_key(&mut self, unit: &str) -> Result<(), usize> {
        if self.key_checked {
            return Ok(());
        }
        let Some((from, to)) = self.closed(Rules::get().member_name) else {
            return Ok(());
        };
        let bad = self.run_start + to - 1;
        let key = json_string(&unit[from..to]).ok_or(bad)?;
        let key = key.as_ref();
        self.key = if self.keys.name.iter().any(|k| k == key) {
            Value::Name
        } else if self.keys.arguments.iter().any(|k| k == key) {
            Value::ArgumentsHeld
        } else {
            Value::Other
        };
        self.key_checked = true;
        Ok(())
    }

    fn closed(&self, rule: RuleId) -> Option<(usize, usize)> {
        self.machine
            .captures()
            .iter()
            .find(|c| c.rule == rule && c.is_closed())
            .map(|c| (c.start, c.end))
    }

    /// Reads the object on from its current unit over `pending` (at absolute `base`);
    /// at `eof` the input ends there. The call's events go to `emitter`.
    pub fn read(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) -> ObjectEnd {
        let r = Rules::get();
        let end = base + pending.len();
        loop {
            let unit = &pending[self.run_start - base..];
            let len = match self.machine.resume(unit.as_bytes()) {
                Outcome::Matched { end } => end,
                Outcome::NeedMore => {
                    if self.step == Step::Key {
                        if let Err(bad) = self.check_key(unit) {
                            return self.invalid(bad, pending, base, emitter, out);
                        }
                    }
                    if self.value == Value::ArgumentsLive && self.step == Step::Value {
                        emitter.arguments_delta(&pending[self.emitted - base..], end, out);
                        self.emitted = end;
                    }
                    if eof && self.started {
                        // Cut inside the object (HE-10).
                        emitter.call_end(false, end, out);
                    } else if self.started || eof {
                        emitter.markup(end, out);
                    }
                    return ObjectEnd::More;
                }
                Outcome::Rejected { furthest: at } | Outcome::TooDeep { at } => {
                    let mut bad = (self.run_start + at).clamp(self.emitted, end);
                    while !pending.is_char_boundary(bad - base) {
                        bad += 1;
                    }
                    if self.step == Step::Key && !self.key_checked {
                        // A key that closed before the bad byte is checked first:
                        // a key that is no string is where the object stops.
                        self.machine.start(r.key_alone);
                        if let Outcome::Matched { .. } = self.machine.finish(unit.as_bytes()) {
                            if let Err(quote) = self.check_key(unit) {
                                bad = quote;
                            }
                        }
                    }
                    if self.value == Value::ArgumentsLive && self.step == Step::Value {
                        // The bytes before the bad one are arguments (HE-8).
                        emitter.arguments_delta(
                            &pending[self.emitted - base..bad - base],
                            bad,
                            out,
                        );
                    }
                    return self.invalid(bad, pending, base, emitter, out);
                }
            };
            let at = self.run_start + len;
            match self.step {
                Step::Key => {
                    if self.closed(r.object_close).is_some() {
                        return self.complete(at, emitter, out);
                    }
                    if let Err(bad) = self.check_key(unit) {
                        return self.invalid(bad, pending, base, emitter, out);
                    }
                    // `at` is the value's first byte (the key's unit ended there).
                    self.value = match self.key {
                        Value::ArgumentsHeld if self.arguments_seen => Value::Other,
                        Value::ArgumentsHeld
                            if self.started && pending.as_bytes()[at - base] != b'"' =>
                        {
                            emitter.markup(at, out);
                            self.emitted = at;
                            self.arguments_object = pending.as_bytes()[at - base] == b'{';
                            Value::ArgumentsLive
                        }
                        other => other,
                    };
                    self.run(Step::Value, r.member_value, at);
                }
                Step::Value => {
                    if self.value == Value::ArgumentsLive {
                        emitter.arguments_delta(&pending[self.emitted - base..at - base], at, out);
                        self.emitted = at;
                    }
                    let raw = &pending[self.run_start - base..at - base];
                    if let Err(bad) = self.value_done(raw, at, emitter, out) {
                        return self.invalid(bad, pending, base, emitter, out);
                    }
                    self.value = Value::Other;
                    self.run(Step::Key, r.member_next, at);
                }
            }
        }
    }

    /// The value `raw`, which ends at `at`, is complete; `Err` with the offset to
    /// report when it makes the object no call.
    fn value_done(
        &mut self,
        raw: &str,
        at: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) -> Result<(), usize> {
        match self.value {
            Value::Name => {
                if self.started {
                    // A second name: the first one stands (HE-6).
                    return Ok(());
                }
                let name = json_string(raw).ok_or(at - 1)?;
                // The call breaks out of open reasoning (HE-11, CF-11).
                if emitter.in_reasoning() {
                    emitter.reasoning_end(true, self.unit_start, out);
                }
                emitter.markup(self.unit_start, out);
                emitter.call_start(None, name, at, out);
                self.started = true;
                if let Some(arguments) = self.held_arguments.take() {
                    emitter.arguments_delta(&arguments, at, out);
                }
            }
            Value::ArgumentsLive => self.arguments_seen = true,
            Value::ArgumentsHeld => {
                self.arguments_seen = true;
                // A string holding a JSON object stands for that object; any other
                // string is its own JSON text, quotes and escapes as written (FD-2,
                // HE-6): a client parses `arguments` whatever the model wrote.
                let text = if raw.starts_with('"') {
                    let content = serde_json::from_str::<String>(raw).map_err(|_| at - 1)?;
                    if holds_object(&content) {
                        self.arguments_object = true;
                        content
                    } else {
                        raw.to_string()
                    }
                } else {
                    self.arguments_object = raw.starts_with('{');
                    raw.to_string()
                };
                if self.started {
                    emitter.markup(self.run_start, out);
                    emitter.arguments_delta(&text, at, out);
                } else {
                    self.held_arguments = Some(text);
                }
            }
            Value::Other => {}
        }
        Ok(())
    }

    /// The object ended at `end` (one past its `}`).
    fn complete(&mut self, end: usize, emitter: &mut Emitter, out: &mut Vec<Event>) -> ObjectEnd {
        if !self.started {
            // No name: not a call (HE-6).
            return ObjectEnd::Prose(end);
        }
        if !self.arguments_seen {
            emitter.arguments_delta("{}", emitter.covered(), out);
            self.arguments_object = true;
        }
        // Only an object is a tool's arguments (FD-2).
        emitter.call_end(self.arguments_object, end, out);
        ObjectEnd::Called(end)
    }

    /// The character at `bad` cannot continue the object (HE-8).
    fn invalid(
        &mut self,
        bad: usize,
        pending: &str,
        base: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) -> ObjectEnd {
        if !self.started {
            // Not a call: the unit up to and including that character is prose.
            let char_len = pending[bad - base..]
                .chars()
                .next()
                .map_or(0, char::len_utf8);
            return ObjectEnd::Prose(bad + char_len);
        }
        emitter.call_end(false, bad, out);
        ObjectEnd::Malformed(bad)
    }
}

#[cfg(test)]
mod tests {
    use crate::field::{families, Item};

    fn call(text: &str) -> (String, bool) {
        let hermes = families::family("hermes").expect("built in");
        let doc = hermes
            .parse(text, &Default::default())
            .expect("default options");
        match doc.items.first() {
            Some(Item::ToolCall {
                arguments,
                complete,
                ..
            }) => (arguments.clone(), *complete),
            other => panic!("not a call: {other:?}"),
        }
    }

    #[test]
    fn a_value_is_read_to_its_matching_bracket_whatever_its_strings_hold() {
        let text = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": [\"]}\", {\"b\": \"</tool_call>\"}]}}</tool_call>";
        assert_eq!(
            call(text),
            (
                "{\"a\": [\"]}\", {\"b\": \"</tool_call>\"}]}".to_string(),
                true
            )
        );
    }

    #[test]
    fn nesting_deeper_than_the_bound_is_malformed_where_it_reaches_it() {
        let depth = 100_000;
        let text = format!(
            "<tool_call>{{\"name\": \"f\", \"arguments\": {}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let (arguments, complete) = call(&text);
        assert!(!complete);
        // HE-8: the byte that reaches the bound, 32,768 levels in, is the bad one.
        assert_eq!(arguments.len(), 32_768);
    }
}

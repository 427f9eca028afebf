//! The call object of hermes (spec/hermes.md HE-6 to HE-8) and of the custom
//! families' `json_call_object` encoding (spec/custom-family.md CF-16, the same
//! rules for any keys; ids, blocks and JSON reading: CF-23, CF-24): after the
//! call's opener, one JSON object whose members name the tool, hold its arguments
//! and maybe its id, in any order.
//!
//! The object is walked member by member with the entry rules of
//! grammar/hermes.pest (values read for their extent) or, read as JSON, of
//! grammar/json-call-object.pest on the parsing machine: `object_open` up to the
//! first key's value, `member_value`, and `member_next` up to the next key's value
//! or the `}`.
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
use crate::machine::{Outcome, ParsingMachine, Program, RuleId};

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
    /// The rules of the loose walk (hermes' HE-7) or, with `json`, of the JSON one
    /// (CF-24).
    fn get(json: bool) -> &'static Rules {
        static LOOSE: OnceLock<Rules> = OnceLock::new();
        static JSON: OnceLock<Rules> = OnceLock::new();
        let (rules, program): (_, fn() -> &'static Program) = if json {
            (&JSON, grammars::json_call_object)
        } else {
            (&LOOSE, grammars::hermes)
        };
        rules.get_or_init(|| {
            let p = program();
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

/// The keys that name the tool, hold the arguments and the id (hermes: `name`;
/// `arguments` and `parameters`; no id), and how members are read.
#[derive(Clone, Debug)]
pub struct ObjectKeys {
    /// Keys whose string value is the tool's name.
    pub name: Vec<String>,
    /// Keys whose value is the arguments.
    pub arguments: Vec<String>,
    /// Keys whose string value is the call's id (CF-23): with any, the call starts
    /// once its id is decided.
    pub id: Vec<String>,
    /// Members read as JSON (CF-24) rather than for their extent.
    pub json: bool,
    /// The call starts only once both its name and its arguments member are known
    /// (CF-33): an object without arguments is no call.
    pub needs_arguments: bool,
    /// The character that stops an object without a call is scanned again rather
    /// than prose (CF-33).
    pub rescan: bool,
    /// The first member names the call: its key is the tool's name and its value
    /// the arguments (CF-39); the key lists are not consulted.
    pub name_is_key: bool,
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
    Id,
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
    /// In a block: an object without a name ended at this absolute offset (one
    /// past its `}`); its bytes are markup and the block goes on (CF-23).
    Skipped(usize),
    /// In a block: before a call started, the character at this absolute offset
    /// cannot continue the object; the bytes before it are markup, and it and what
    /// follows are prose (CF-23).
    Stopped(usize),
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
    /// Arguments read before the call started.
    held_arguments: Option<String>,
    /// Where arguments being read before the call started begin (absolute).
    held_from: Option<usize>,
    /// With id keys: the name, read before the call started.
    name: Option<String>,
    /// With id keys: the id, read before the call started.
    id: Option<String>,
    /// With `name_is_key` (CF-39): whether the first key was read, and the name it
    /// gives until the call starts at its value's first byte.
    first_key_read: bool,
    key_name: Option<String>,
    /// Whether the object is in a block (CF-23).
    block: bool,
    /// Whether markup opened the object: at the end of input, an object that
    /// started no call is then dropped; otherwise (a call at the start of the
    /// answer, CF-28) it is prose.
    marked: bool,
}

impl CallObject {
    /// A reader for objects with these keys.
    pub fn new(keys: ObjectKeys) -> Self {
        let r = Rules::get(keys.json);
        let program = if keys.json {
            grammars::json_call_object()
        } else {
            grammars::hermes()
        };
        let mut machine = ParsingMachine::new(program);
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
            held_from: None,
            name: None,
            id: None,
            first_key_read: false,
            key_name: None,
            block: false,
            marked: true,
        }
    }

    fn rules(&self) -> &'static Rules {
        Rules::get(self.keys.json)
    }

    /// Starts a call object whose opener spans `unit_start..at`; `block`: it is in
    /// a block of call objects (CF-23); `marked`: markup opened it (CF-28).
    pub fn begin(&mut self, unit_start: usize, at: usize, block: bool, marked: bool) {
        self.marked = marked;
        self.unit_start = unit_start;
        self.value = Value::Other;
        self.emitted = at;
        self.started = false;
        self.arguments_seen = false;
        self.arguments_object = false;
        self.held_arguments = None;
        self.held_from = None;
        self.name = None;
        self.id = None;
        self.first_key_read = false;
        self.key_name = None;
        self.block = block;
        self.run(Step::Key, self.rules().object_open, at);
    }

    /// Whether the current object is in a block of call objects (CF-23).
    pub fn in_block(&self) -> bool {
        self.block
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
        let Some((from, to)) = self.closed(self.rules().member_name) else {
            return Ok(());
        };
        let bad = self.run_start + to - 1;
        let key = json_string(&unit[from..to]).ok_or(bad)?;
        let key = key.as_ref();
        if self.keys.name_is_key {
            // CF-39: the first key, when not empty, names the call and its value
            // is the arguments; every other member is ignored.
            self.key = Value::Other;
            if !self.first_key_read {
                self.first_key_read = true;
                if !key.is_empty() {
                    self.key_name = Some(key.to_owned());
                    self.key = Value::ArgumentsHeld;
                }
            }
            self.key_checked = true;
            return Ok(());
        }
        self.key = if self.keys.name.iter().any(|k| k == key) {
            Value::Name
        } else if self.keys.id.iter().any(|k| k == key) {
            Value::Id
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
        let r = self.rules();
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
                    if eof && !self.started && self.name.is_some() {
                        // Cut with its name read: the call starts without id (CF-23).
                        self.start_pending(end, pending, base, emitter, out);
                    }
                    if eof && !self.started && !self.marked {
                        // Nothing marked it as a call: its bytes are prose (CF-28).
                        return ObjectEnd::Prose(end);
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
                    self.held_from = None;
                    if let Some(name) = self.key_name.take() {
                        // Named by its key: the call starts at its value (CF-39).
                        self.start(name, at, emitter, out);
                    }
                    if self.keys.needs_arguments
                        && self.key == Value::ArgumentsHeld
                        && !self.arguments_seen
                        && !self.started
                    {
                        if let Some(name) = self.name.take() {
                            // Name and arguments are known: the call starts at the
                            // arguments' first byte (CF-33).
                            self.start(name, at, emitter, out);
                        }
                    }
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
                        Value::ArgumentsHeld => {
                            self.held_from = Some(at);
                            Value::ArgumentsHeld
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
                    self.held_from = None;
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
                if self.started || self.name.is_some() {
                    // A second name: the first one stands (HE-6).
                    return Ok(());
                }
                let name = match json_string(raw) {
                    // Read as JSON, only a non-empty string names (CF-24).
                    Some(name) if self.keys.json && name.is_empty() => return Ok(()),
                    None if self.keys.json => return Ok(()),
                    name => name.ok_or(at - 1)?,
                };
                let waits = (!self.keys.id.is_empty() && self.id.is_none())
                    || (self.keys.needs_arguments && !self.arguments_seen);
                if !waits {
                    self.start(name.into_owned(), at, emitter, out);
                } else {
                    // The call starts once its id is decided (CF-23).
                    self.name = Some(name.into_owned());
                }
            }
            Value::Id => {
                if self.started || self.id.is_some() {
                    return Ok(());
                }
                if let Some(id) = json_string(raw) {
                    self.id = Some(id.into_owned());
                    if let Some(name) = self.name.take() {
                        self.start(name, at, emitter, out);
                    }
                }
            }
            Value::ArgumentsLive => self.arguments_seen = true,
            Value::ArgumentsHeld => {
                self.arguments_seen = true;
                // A string holding a JSON object stands for that object; any other
                // string is its own JSON text, quotes and escapes as written (FD-2,
                // HE-6): a client parses `arguments` whatever the model wrote.
                let text = if raw.starts_with('"') && !self.keys.json {
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

    /// The call starts at `at` (its name and id decided): open reasoning ends
    /// (HE-11, CF-11), the opener and the object so far are its start, and
    /// arguments read before it are one delta.
    fn start(&mut self, name: String, at: usize, emitter: &mut Emitter, out: &mut Vec<Event>) {
        if emitter.in_reasoning() {
            emitter.reasoning_end(true, self.unit_start, out);
        }
        emitter.markup(self.unit_start, out);
        emitter.call_start(self.id.take(), name, at, out);
        self.started = true;
        if let Some(arguments) = self.held_arguments.take() {
            emitter.arguments_delta(&arguments, at, out);
        }
    }

    /// The object stops at `at` (a character that cannot continue it, or the end
    /// of input) with its name read and its id not: the call starts there without
    /// id, with the arguments read so far (CF-23).
    fn start_pending(
        &mut self,
        at: usize,
        pending: &str,
        base: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) {
        if self.keys.needs_arguments {
            // Without its arguments, the object is no call (CF-33).
            return;
        }
        let Some(name) = self.name.take() else {
            return;
        };
        if let Some(from) = self.held_from.take() {
            self.arguments_seen = true;
            self.held_arguments = Some(pending[from - base..at - base].to_string());
        }
        self.start(name, at, emitter, out);
    }

    /// The object ended at `end` (one past its `}`).
    fn complete(&mut self, end: usize, emitter: &mut Emitter, out: &mut Vec<Event>) -> ObjectEnd {
        if let Some(name) = self.name.take() {
            if !self.keys.needs_arguments {
                // The object ended without an id (CF-23).
                self.start(name, end, emitter, out);
            }
        }
        if !self.started {
            if self.block {
                // No name, in a block: markup, and the block goes on (CF-23).
                emitter.markup(end, out);
                return ObjectEnd::Skipped(end);
            }
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
        if !self.started && self.name.is_some() {
            self.start_pending(bad, pending, base, emitter, out);
        }
        if !self.started && self.block {
            // In a block: the object's bytes before it are markup (CF-23).
            emitter.markup(bad, out);
            return ObjectEnd::Stopped(bad);
        }
        if !self.started && self.keys.rescan {
            // Not a call: the unit before that character is prose, and it is
            // scanned again (CF-33).
            return ObjectEnd::Prose(bad);
        }
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

//! A call's parameters as the XML-parameter families write them (qwen3-coder, glm,
//! minimax-m2, and run-time families with the parameters encoding): per parameter
//! a key, then a raw value that streams as an escaped JSON string, or is typed by
//! the tool's schema when it closes (FD-5, FD-6), the template's newlines around it
//! stripped where the family writes them (QC-6, CF-9). The machines decide where a
//! value starts and ends; this writes the arguments' JSON text for them.

use crate::field::input::MAX_KEYS_COMPARED;
use crate::field::typing::{
    needs_escape, push_escaped, push_json_string, push_json_typed, SchemaTypes,
};
use crate::field::{Emitter, Event, Tool};

/// How a value is read: as the tool's schema types it (FD-6), or as the markup
/// says beside its key (CF-20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueKind {
    /// Typed by the tool's schema: streamed as a string where the schema allows no
    /// literal reading, else typed at its close (FD-6).
    Schema,
    /// A raw string, whatever the schema says: streamed.
    Raw,
    /// JSON, typed by the schema where it says something of the type; collected and
    /// typed at its close.
    Json,
}

/// How a collected value is typed at its close.
#[derive(Clone, Copy, Debug)]
enum Typing {
    /// By its parameter's shape, at this place ([`SchemaTypes::shape`]), FD-6.
    Shape(usize),
    /// As JSON, by its parameter's shape where it has one (CF-20).
    Json(Option<usize>),
}

/// The parameter whose value is being read (its JSON text before a typed value
/// and the raw text of a typed value so far are [`ParameterValues`]' buffers).
#[derive(Clone, Copy, Debug)]
struct Param {
    /// How the value is typed at its close (FD-6, CF-20), when it is not
    /// streamed.
    typed: Option<Typing>,
    /// Whether the value's first byte (a newline to strip) is still to come.
    at_start: bool,
    /// A newline held back at the end of the value so far.
    held_newline: bool,
    /// Whether the value so far is empty or ends with a newline: a nested opener
    /// counts only here (QC-19).
    line_start: bool,
    /// How many nested openers quoted in the value are still open (QC-19).
    depth: u32,
}

/// What the first byte of a value is, where the family strips a newline there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leading {
    /// The byte has not arrived.
    Wait,
    /// A template newline: markup, consumed.
    Newline,
    /// Value text (or nothing to strip).
    Text,
}

/// What [`ParameterValues::scan`] came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// Every pending byte of the value is decided; the rest waits for more input.
    More,
    /// A template newline was markup: scan again.
    Again,
    /// A byte at which the value's closer may start: the caller probes it.
    Candidate,
    /// The input ended inside the value: the call ends incomplete there.
    Cut,
}

/// The parameters of the call being read, and the request's schema for typing them.
#[derive(Clone, Debug)]
pub(crate) struct ParameterValues {
    /// The shapes of the tools' parameters.
    schema: SchemaTypes,
    /// Whether one newline after a parameter's opener and one before its closer
    /// are the template's, not the value's.
    strip_newlines: bool,
    /// The escaped text of a value fragment being built.
    fragment: String,
    /// The called tool (its position in `schema`).
    tool: Option<usize>,
    /// The JSON text before the typed value being read: `{"key":` or `,"key":`
    /// (one buffer, reused parameter after parameter).
    prefix: String,
    /// The raw text of the typed value being read so far (reused likewise).
    raw: String,
    /// How many parameters the call has had.
    params: usize,
    param: Option<Param>,
    /// Whether the call's arguments so far are text the input check gives back
    /// unchanged ([`Input::built`](crate::field::Input)): distinct keys that need
    /// no escaping, values that are strings, `true`, `false`, `null` or plain
    /// integers of at most 18 characters.
    built: bool,
    /// How many bytes of arguments text the call has had from here (with `built`,
    /// whether it is all the emitter holds).
    written: usize,
    /// A bit per key of the call, picked by a hash of it: a key whose bit is set
    /// may have been written before.
    seen: u64,
}

impl ParameterValues {
    /// Parameters typed by `tools`' schemas; `strip_newlines` as the family writes.
    pub(crate) fn new(tools: &[Tool], strip_newlines: bool) -> Self {
        ParameterValues {
            schema: SchemaTypes::new(tools),
            strip_newlines,
            fragment: String::new(),
            tool: None,
            prefix: String::new(),
            raw: String::new(),
            params: 0,
            param: None,
            built: false,
            written: 0,
            seen: 0,
        }
    }

    /// A call of the tool `name` starts: no parameters yet.
    pub(crate) fn call_open(&mut self, name: &str) {
        self.tool = self.schema.tool(name);
        self.params = 0;
        self.built = true;
        self.written = 0;
        self.seen = 0;
    }

    /// Notes the call's next key, `key`, written as `json` (quoted and escaped):
    /// a key that may have been written before (its bit in `seen` is set), one
    /// that needs escaping or one too many leaves the call's arguments to the
    /// input check. A key that shares a bit with an earlier one is checked too,
    /// which costs only the check.
    fn note_key(&mut self, key: &str, json: usize) {
        let b = key.as_bytes();
        let h = (b.len() as u32)
            .wrapping_mul(0x9E37_79B1)
            .wrapping_add(u32::from(b.first().copied().unwrap_or(0)) << 8)
            .wrapping_add(u32::from(b.last().copied().unwrap_or(0)))
            .wrapping_mul(0x85EB_CA6B);
        let bit = 1u64 << (h >> 26);
        let fresh = self.seen & bit == 0 && self.params < MAX_KEYS_COMPARED && json == b.len() + 2;
        self.built &= fresh;
        self.seen |= bit;
    }

    /// A parameter opener with `key` over `start..end`: its value follows, read as
    /// `kind` says.
    pub(crate) fn open_as(
        &mut self,
        key: &str,
        kind: ValueKind,
        start: usize,
        end: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) {
        // A plain string streams (FD-5): no schema for it, or one that can allow no
        // literal reading (FD-6f); a raw one always, JSON never (CF-20).
        let typed = match kind {
            ValueKind::Schema => self.schema.typed_at(self.tool, key).map(Typing::Shape),
            ValueKind::Raw => None,
            ValueKind::Json => Some(Typing::Json(self.schema.param_at(self.tool, key))),
        };
        self.prefix.clear();
        self.prefix.push(if self.params == 0 { '{' } else { ',' });
        push_json_string(&mut self.prefix, key);
        self.note_key(key, self.prefix.len() - 1);
        self.prefix.push(':');
        self.params += 1;
        emitter.markup(start, out);
        if typed.is_some() {
            emitter.markup(end, out);
            self.raw.clear();
        } else {
            self.prefix.push('"');
            self.written += self.prefix.len();
            emitter.arguments_delta(&self.prefix, end, out);
        }
        self.param = Some(Param {
            typed,
            at_start: self.strip_newlines,
            held_newline: false,
            line_start: true,
            depth: 0,
        });
    }

    /// What `next`, the byte after what the value has had so far, is at the value's
    /// start; `eof`: the input ends before it.
    fn leading(&mut self, next: Option<u8>, eof: bool) -> Leading {
        let Some(param) = self.param.as_mut().filter(|p| p.at_start) else {
            return Leading::Text;
        };
        match next {
            None if !eof => Leading::Wait,
            Some(b'\n') => {
                param.at_start = false;
                Leading::Newline
            }
            _ => {
                param.at_start = false;
                Leading::Text
            }
        }
    }

    /// Value text at `start`: streamed as an escaped JSON fragment, or collected
    /// for typing at the close; a newline held before it goes first.
    pub(crate) fn text(
        &mut self,
        text: &str,
        start: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) {
        let Some(param) = self.param.as_mut() else {
            return;
        };
        let held = std::mem::take(&mut param.held_newline);
        if !held && text.is_empty() {
            return;
        }
        if let Some(last) = text.bytes().last() {
            param.line_start = last == b'\n';
        }
        if param.typed.is_some() {
            if held {
                self.raw.push('\n');
            }
            self.raw.push_str(text);
            emitter.markup(start + text.len(), out);
        } else if !held && !needs_escape(text) {
            // A piece that needs no escaping is its own fragment.
            self.written += text.len();
            emitter.arguments_delta(text, start + text.len(), out);
        } else {
            self.fragment.clear();
            if held {
                self.fragment.push_str("\\n");
            }
            push_escaped(&mut self.fragment, text);
            self.written += self.fragment.len();
            emitter.arguments_delta(&self.fragment, start + text.len(), out);
        }
    }

    /// A run of value text at `start` in which no closer can start: emitted, except
    /// (when the family strips newlines) a newline that ends it, which is held until
    /// what follows decides whether it is the one before the closer; its byte stays
    /// uncovered meanwhile.
    pub(crate) fn run(
        &mut self,
        run: &str,
        start: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) {
        match run.strip_suffix('\n').filter(|_| self.strip_newlines) {
            Some(text) => {
                self.text(text, start, emitter, out);
                if let Some(param) = self.param.as_mut() {
                    param.held_newline = true;
                    param.line_start = true;
                }
            }
            None => self.text(run, start, emitter, out),
        }
    }

    /// Whether the value quotes a nested opener that is still open (QC-19): then
    /// no closer ends it.
    pub(crate) fn nested(&self) -> bool {
        self.param.as_ref().is_some_and(|p| p.depth > 0)
    }

    /// A nested opener `text` at `start`, quoted in the value (QC-19): value text,
    /// and one level down when it begins a line of the value.
    pub(crate) fn nest_open(
        &mut self,
        text: &str,
        start: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) {
        let counts = self.param.as_ref().is_some_and(|p| p.line_start);
        self.text(text, start, emitter, out);
        if let Some(param) = self.param.as_mut().filter(|_| counts) {
            param.depth = param.depth.saturating_add(1);
        }
    }

    /// A nested closer `text` at `start` while the value is nested (QC-19): value
    /// text, and one level up.
    pub(crate) fn nest_close(
        &mut self,
        text: &str,
        start: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) {
        self.text(text, start, emitter, out);
        if let Some(param) = self.param.as_mut() {
            param.depth = param.depth.saturating_sub(1);
        }
    }

    /// The value ended at a closer that starts at `at` (a held newline is dropped).
    pub(crate) fn close(&mut self, at: usize, emitter: &mut Emitter, out: &mut Vec<Event>) {
        let Some(param) = self.param.take() else {
            return;
        };
        let text = &mut self.prefix;
        match param.typed {
            Some(typing) => {
                let from = text.len();
                match typing {
                    Typing::Shape(at) => match self.schema.shape(self.tool, at) {
                        Some(shape) => shape.push_typed(text, &self.raw),
                        None => push_json_string(text, &self.raw),
                    },
                    Typing::Json(at) => {
                        let shape = at.and_then(|at| self.schema.shape(self.tool, at));
                        push_json_typed(text, &self.raw, shape);
                    }
                }
                let value = &text.as_bytes()[from..];
                let plain = match value.first() {
                    Some(b'{' | b'[') => false,
                    Some(b'-' | b'0'..=b'9') => {
                        value.len() <= 18 && !value.iter().any(|b| matches!(b, b'.' | b'e' | b'E'))
                    }
                    _ => true,
                };
                self.built &= plain;
            }
            None => {
                text.clear();
                text.push('"');
            }
        }
        emitter.markup(at, out);
        self.written += text.len();
        emitter.arguments_delta(text, at, out);
    }

    /// Scans the value's text in `pending` (at absolute `base`) from `*pos`, which
    /// it moves past what it decides: a leading template newline, then the text up
    /// to the first byte at which `find` says a closer may start.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn scan(
        &mut self,
        pending: &str,
        base: usize,
        pos: &mut usize,
        eof: bool,
        find: impl Fn(&[u8]) -> Option<usize>,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) -> Scan {
        let bytes = pending.as_bytes();
        let rel = *pos - base;
        match self.leading(bytes.get(rel).copied(), eof) {
            Leading::Wait => return Scan::More,
            Leading::Newline => {
                *pos += 1;
                emitter.markup(*pos, out);
                return Scan::Again;
            }
            Leading::Text => {}
        }
        match find(&bytes[rel..]) {
            Some(k) => {
                // With nothing before the candidate, a held newline stays held.
                if k > 0 {
                    self.run(&pending[rel..rel + k], *pos, emitter, out);
                }
                *pos += k;
                Scan::Candidate
            }
            None => {
                let all = &pending[rel..];
                let at = *pos;
                *pos = base + bytes.len();
                if eof {
                    self.text(all, at, emitter, out);
                    self.param = None;
                    return Scan::Cut;
                }
                if !all.is_empty() {
                    self.run(all, at, emitter, out);
                }
                Scan::More
            }
        }
    }

    /// The value being read is dropped (the call is malformed or cut).
    pub(crate) fn abandon(&mut self) {
        self.param = None;
    }

    /// The call ended (its closer reaches `end`): a complete call's arguments close.
    pub(crate) fn call_close(
        &mut self,
        complete: bool,
        end: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) {
        let built = std::mem::take(&mut self.built);
        if complete {
            let close = if self.params == 0 { "{}" } else { "}" };
            self.written += close.len();
            emitter.arguments_delta(close, emitter.covered(), out);
            // The text is all this wrote (nothing else wrote to the call).
            if built && emitter.arguments().map(str::len) == Some(self.written) {
                emitter.call_end_built(end, out);
                return;
            }
        }
        emitter.call_end(complete, end, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::field::{custom, families, Event, Input};
    use serde_json::json;

    /// The input a call ends with is what the check makes of its arguments, for
    /// arguments handed over as built (strings, booleans, short integers) and for
    /// every case that leaves them to the check: a key written twice, a key that
    /// needs escaping, an integer of 19 digits or of 400, a fraction, an object.
    #[test]
    fn a_calls_input_is_what_the_check_makes_of_its_arguments() {
        let tool = json!({"name": "f", "parameters": {"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
            "o": {"type": "object"}, "s": {"type": "string"}
        }}});
        let glm = families::family("glm").expect("built in");
        let options = custom::Options {
            tools: vec![serde_json::from_value(tool).unwrap()],
            ..custom::Options::default()
        };
        let big = "9".repeat(400);
        let pair = |k: &str, v: &str| format!("<arg_key>{k}</arg_key><arg_value>{v}</arg_value>");
        let cases = [
            (
                pair("s", "a \"q\" \\ \n") + &pair("n", "-12") + &pair("b", "True"),
                true,
            ),
            (pair("n", "123456789012345678"), true),
            (String::new(), true),
            (pair("s", "a") + &pair("s", "b"), false),
            (pair("k\"ey", "1"), false),
            (pair("n", "1234567890123456789"), false),
            (pair("n", &big), false),
            (pair("x", "2.5e3"), false),
            (pair("o", "{'a': 1, 'a': 2}"), false),
        ];
        for (body, built) in cases {
            let text = format!("<tool_call>f{body}</tool_call>");
            let (_, events) = glm.parse_events(&text, &options).expect("valid options");
            let mut arguments = String::new();
            let mut input = None;
            for event in &events {
                match event {
                    Event::ArgumentsDelta { text, .. } => arguments.push_str(text),
                    Event::ToolCallEnd { input: i, .. } => input = Some(i.clone()),
                    _ => {}
                }
            }
            let input = input.expect("the call ends");
            let checked = Input::parse(&arguments).unwrap_or(Input::NULL);
            assert_eq!(input.as_json(), checked.as_json(), "{text}");
            // Built text is the arguments as written.
            if built {
                assert_eq!(input.as_json(), arguments, "{text}");
            }
        }
    }
}

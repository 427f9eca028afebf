//! A call's parameters as the XML-parameter families write them (qwen3-coder, glm,
//! minimax-m2, and run-time families with the parameters encoding): per parameter
//! a key, then a raw value that streams as an escaped JSON string, or is typed by
//! the tool's schema when it closes (FD-5, FD-6), the template's newlines around it
//! stripped where the family writes them (QC-6, CF-9). The machines decide where a
//! value starts and ends; this writes the arguments' JSON text for them.

use crate::field::typing::{
    needs_escape, push_escaped, push_json_string, push_typed_json, SchemaTypes,
};
use crate::field::{Emitter, Event, Tool};

/// The parameter whose value is being read (its JSON text before a typed value
/// and the raw text of a typed value so far are [`ParameterValues`]' buffers).
#[derive(Clone, Copy, Debug)]
struct Param {
    /// Where the value's declared types are ([`SchemaTypes::types`]) when it is
    /// typed at its close (FD-6) rather than streamed.
    typed: Option<usize>,
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
    /// The declared types of the tools' parameters.
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
        }
    }

    /// A call of the tool `name` starts: no parameters yet.
    pub(crate) fn call_open(&mut self, name: &str) {
        self.tool = self.schema.tool(name);
        self.params = 0;
    }

    /// A parameter opener with `key` over `start..end`: its value follows.
    pub(crate) fn open(
        &mut self,
        key: &str,
        start: usize,
        end: usize,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) {
        // A plain string streams (FD-5): no schema for it, or `string` its only type.
        let typed = self.schema.param_at(self.tool, key).filter(|&at| {
            self.schema
                .types(self.tool, at)
                .iter()
                .any(|t| t != "string")
        });
        let prefix = &mut self.prefix;
        prefix.clear();
        prefix.push(if self.params == 0 { '{' } else { ',' });
        push_json_string(prefix, key);
        prefix.push(':');
        self.params += 1;
        emitter.markup(start, out);
        if typed.is_some() {
            emitter.markup(end, out);
            self.raw.clear();
        } else {
            prefix.push('"');
            emitter.arguments_delta(prefix, end, out);
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
            emitter.arguments_delta(text, start + text.len(), out);
        } else {
            self.fragment.clear();
            if held {
                self.fragment.push_str("\\n");
            }
            push_escaped(&mut self.fragment, text);
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
            Some(types) => {
                let types = self.schema.types(self.tool, types);
                push_typed_json(text, &self.raw, types.iter().map(String::as_str));
            }
            None => {
                text.clear();
                text.push('"');
            }
        }
        emitter.markup(at, out);
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
        if complete {
            let close = if self.params == 0 { "{}" } else { "}" };
            emitter.arguments_delta(close, emitter.covered(), out);
        }
        emitter.call_end(complete, end, out);
    }
}

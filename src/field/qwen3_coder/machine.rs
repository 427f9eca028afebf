//! The qwen3-coder state machine: every marker is decided by the grammar's entry
//! rule for the mode (spec/qwen3-coder.md); values are raw text between them.

use std::sync::OnceLock;

use super::Options;
use crate::field::grammars;
use crate::field::probe::{rule, MarkerProbe};
use crate::field::reasoning::family::{FamilyWrappers, ProseRules, WrapperMarker};
use crate::field::typing::{declared_types, escape_fragment, streams_as_string, typed_json};
use crate::field::{Emitter, Event};
use crate::machine::{Capture, Outcome, RuleId};
use crate::reentry::{find_byte, Machine};

/// The entry and captured rules of grammar/qwen3-coder.pest.
struct Rules {
    prose: ProseRules,
    function_body: RuleId,
    value_end: RuleId,
    call_end: RuleId,
    skip_marker: RuleId,
    function_name: RuleId,
    parameter_name: RuleId,
    function_close: RuleId,
    cut_call: RuleId,
}

impl Rules {
    fn get() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| {
            let p = grammars::qwen3_coder();
            Rules {
                prose: ProseRules {
                    plain: rule(p, "call_start"),
                    open: rule(p, "text_marker"),
                    close: rule(p, "reasoning_marker"),
                },
                function_body: rule(p, "function_body"),
                value_end: rule(p, "value_end"),
                call_end: rule(p, "call_end"),
                skip_marker: rule(p, "skip_marker"),
                function_name: rule(p, "function_name"),
                parameter_name: rule(p, "parameter_name"),
                function_close: rule(p, "function_close"),
                cut_call: rule(p, "cut_call"),
            }
        })
    }

    fn captured(&self) -> [RuleId; 4] {
        [
            self.cut_call,
            self.function_name,
            self.parameter_name,
            self.function_close,
        ]
    }
}

/// What a marker candidate is probed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probing {
    /// A marker in prose (answer text or reasoning).
    Prose,
    /// Between parameters (QC-8).
    FunctionBody,
    /// A closer inside a value (QC-7).
    ValueEnd,
    /// The call's closer after the function (QC-9).
    CallEnd,
    /// The closer of a malformed call (QC-10).
    Skip,
}

/// The parameter whose value is being read.
#[derive(Clone, Debug)]
struct Param {
    /// The JSON text before the value: `{"key":` or `,"key":`.
    prefix: String,
    /// The declared types, when the value is typed at its close (QC-11).
    types: Option<Vec<String>>,
    /// The raw text of a typed value so far.
    raw: String,
    /// Whether the value's first byte (a newline to strip) is still to come.
    at_start: bool,
    /// A newline held back at the end of the value so far (QC-7).
    held_newline: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Prose,
    Probe(Probing),
    Value,
    Skip,
}

/// The qwen3-coder state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct Qwen3CoderMachine {
    options: Options,
    emitter: Emitter,
    probe: MarkerProbe,
    wrappers: FamilyWrappers,
    mode: Mode,
    pos: usize,
    reasoning: bool,
    began: bool,
    /// The called tool's name, and how many parameters it has had.
    function: String,
    params: usize,
    param: Option<Param>,
}

/// A name as written, without surrounding whitespace and quotes (QC-5).
fn clean_name(raw: &str) -> String {
    let name = raw.trim();
    for q in ['"', '\''] {
        if let Some(inner) = name.strip_prefix(q).and_then(|n| n.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    name.to_string()
}

impl Qwen3CoderMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        let program = grammars::qwen3_coder();
        let wrappers = FamilyWrappers::new(program, &options.reasoning_markers, b'<');
        let captured = [&Rules::get().captured()[..], &wrappers.captured()].concat();
        Qwen3CoderMachine {
            options: options.clone(),
            emitter: Emitter::new(),
            probe: MarkerProbe::new(program, &captured),
            wrappers,
            mode: Mode::Prose,
            pos: 0,
            reasoning: false,
            began: false,
            function: String::new(),
            params: 0,
            param: None,
        }
    }

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
            // Prose candidates start in `advance`, where the byte picks the rule.
            Probing::Prose => return,
            Probing::FunctionBody => r.function_body,
            Probing::ValueEnd => r.value_end,
            Probing::CallEnd => r.call_end,
            Probing::Skip => r.skip_marker,
        };
        self.probe.start(entry, at);
        self.mode = Mode::Probe(probing);
    }

    fn captured_text<'a>(&self, capture: Capture, unit: &'a str) -> &'a str {
        &unit[capture.start..capture.end]
    }

    /// The character at absolute `start` is prose (a candidate that is no marker).
    fn prose_char(&mut self, start: usize, pending: &str, base: usize, out: &mut Vec<Event>) {
        let at = start - base;
        let len = pending[at..].chars().next().map_or(1, char::len_utf8);
        self.prose(&pending[at..at + len], start, out);
        self.pos = start + len;
    }

    /// Value text at `start`: streamed as an escaped JSON fragment, or collected
    /// for typing at the close; a newline before it was held (QC-7).
    fn value_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        let Some(param) = self.param.as_mut() else {
            return;
        };
        let mut piece = String::new();
        if param.held_newline {
            param.held_newline = false;
            piece.push('\n');
        }
        piece.push_str(text);
        if piece.is_empty() {
            return;
        }
        match param.types {
            None => {
                let fragment = escape_fragment(&piece);
                self.emitter
                    .arguments_delta(&fragment, start + text.len(), out);
            }
            Some(_) => {
                param.raw.push_str(&piece);
                self.emitter.markup(start + text.len(), out);
            }
        }
    }

    /// The value ended at a closer that starts at `at` (its held newline is stripped).
    fn value_close(&mut self, at: usize, out: &mut Vec<Event>) {
        let Some(param) = self.param.take() else {
            return;
        };
        let text = match &param.types {
            None => "\"".to_string(),
            Some(types) => {
                let types: Vec<&str> = types.iter().map(String::as_str).collect();
                format!("{}{}", param.prefix, typed_json(&param.raw, Some(&types)))
            }
        };
        self.emitter.markup(at, out);
        self.emitter.arguments_delta(&text, at, out);
    }

    /// The function ended (its closer, or the call's, reaches `end`).
    fn function_close(&mut self, complete: bool, end: usize, out: &mut Vec<Event>) {
        let close = if self.params == 0 { "{}" } else { "}" };
        if complete {
            self.emitter
                .arguments_delta(close, self.emitter.covered(), out);
        }
        self.emitter.call_end(complete, end, out);
    }

    fn matched(
        &mut self,
        probing: Probing,
        start: usize,
        end: usize,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        let r = Rules::get();
        let unit = &pending[start - base..];
        self.pos = end;
        match probing {
            Probing::Prose => {
                if let Some(c) = self.probe.capture(r.function_name) {
                    let name = clean_name(self.captured_text(c, unit));
                    if self.emitter.in_reasoning() {
                        self.emitter.reasoning_end(true, start, out);
                    }
                    self.emitter.markup(start, out);
                    self.emitter.call_start(None, name.clone(), end, out);
                    self.function = name;
                    self.params = 0;
                    self.start_probe(Probing::FunctionBody, end);
                } else if self.probe.capture(r.cut_call).is_some() {
                    // Dropped: the input ended inside the call's opening (QC-14).
                    self.emitter.markup(end, out);
                    self.mode = Mode::Prose;
                } else if self.wrappers.marker(self.probe.captures()) == Some(WrapperMarker::Opened)
                {
                    self.emitter.reasoning_start(end, out);
                    self.reasoning = true;
                    self.mode = Mode::Prose;
                } else {
                    if self.emitter.in_reasoning() {
                        self.emitter.reasoning_end(true, end, out);
                    } else {
                        self.emitter.markup(end, out);
                    }
                    self.reasoning = false;
                    self.mode = Mode::Prose;
                }
            }
            Probing::FunctionBody => {
                if let Some(c) = self.probe.capture(r.parameter_name) {
                    let key = clean_name(self.captured_text(c, unit));
                    let tool = self.options.tool(&self.function);
                    let types = declared_types(tool, &key);
                    let streams = streams_as_string(types.as_deref());
                    let prefix = format!(
                        "{}{}:",
                        if self.params == 0 { "{" } else { "," },
                        serde_json::Value::String(key)
                    );
                    self.params += 1;
                    self.emitter.markup(start, out);
                    if streams {
                        self.emitter
                            .arguments_delta(&format!("{prefix}\""), end, out);
                    } else {
                        self.emitter.markup(end, out);
                    }
                    self.param = Some(Param {
                        prefix,
                        types: (!streams).then(|| {
                            types
                                .unwrap_or_default()
                                .iter()
                                .map(|t| t.to_string())
                                .collect()
                        }),
                        raw: String::new(),
                        at_start: true,
                        held_newline: false,
                    });
                    self.mode = Mode::Value;
                } else if self.probe.capture(r.function_close).is_some() {
                    self.function_close(true, end, out);
                    self.start_probe(Probing::CallEnd, end);
                } else {
                    // `</tool_call>` with `</function>` left out (QC-8).
                    self.function_close(true, end, out);
                    self.mode = Mode::Prose;
                }
            }
            Probing::ValueEnd => {
                self.value_close(start, out);
                self.emitter.markup(end, out);
                self.start_probe(Probing::FunctionBody, end);
            }
            Probing::CallEnd | Probing::Skip => {
                self.emitter.markup(end, out);
                self.mode = Mode::Prose;
            }
        }
    }

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
                self.prose_char(start, pending, base, out);
                self.mode = Mode::Prose;
            }
            Probing::FunctionBody => {
                // Not a parameter or a closer: the call is malformed (QC-10).
                self.param = None;
                self.function_close(false, start, out);
                self.pos = start;
                self.mode = Mode::Skip;
            }
            Probing::ValueEnd => {
                // The `<` is value text.
                self.value_text("<", start, out);
                self.pos = start + 1;
                self.mode = Mode::Value;
            }
            Probing::CallEnd => {
                self.pos = start;
                self.mode = Mode::Prose;
            }
            Probing::Skip => {
                self.pos = start + 1;
                self.mode = Mode::Skip;
            }
        }
    }

    /// Scans value text from `self.pos`; returns false when more input is needed.
    fn scan_value(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> bool {
        let bytes = pending.as_bytes();
        let end = base + bytes.len();
        let rel = self.pos - base;
        if let Some(param) = self.param.as_mut() {
            if param.at_start {
                match bytes.get(rel) {
                    None if !eof => return false,
                    Some(b'\n') => {
                        param.at_start = false;
                        self.pos += 1;
                        self.emitter.markup(self.pos, out);
                        return true;
                    }
                    _ => param.at_start = false,
                }
            }
        }
        let rel = self.pos - base;
        match find_byte(b'<', &bytes[rel..]) {
            Some(k) => {
                // With nothing before the `<`, a held newline stays held.
                if k > 0 {
                    self.value_run(&pending[rel..rel + k], out);
                }
                self.pos += k;
                self.start_probe(Probing::ValueEnd, self.pos);
                true
            }
            None => {
                let all = &pending[rel..];
                if eof {
                    self.value_text(all, self.pos, out);
                    self.pos = end;
                    self.param = None;
                    self.function_close(false, end, out);
                    self.mode = Mode::Prose;
                    return false;
                }
                if !all.is_empty() {
                    self.value_run(all, out);
                }
                self.pos = end;
                false
            }
        }
    }

    /// A run of value text at `self.pos` with no `<` in it: emitted, except a
    /// newline that ends it, which is held until what follows decides whether it
    /// is the one before the closer (QC-7); its byte stays uncovered meanwhile.
    fn value_run(&mut self, run: &str, out: &mut Vec<Event>) {
        match run.strip_suffix('\n') {
            Some(text) => {
                self.value_text(text, self.pos, out);
                if let Some(param) = self.param.as_mut() {
                    param.held_newline = true;
                }
            }
            None => self.value_text(run, self.pos, out),
        }
    }
}

impl Machine for Qwen3CoderMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        if !self.began {
            self.began = true;
            if self.options.start_in_reasoning {
                self.reasoning = true;
                self.emitter.reasoning_start(base, out);
            }
        }
        let bytes = pending.as_bytes();
        let end = base + bytes.len();
        loop {
            match self.mode {
                Mode::Prose => {
                    let rel = self.pos - base;
                    match self.wrappers.find(&bytes[rel..]) {
                        None => {
                            self.prose(&pending[rel..], self.pos, out);
                            self.pos = end;
                            break;
                        }
                        Some(k) => {
                            self.prose(&pending[rel..rel + k], self.pos, out);
                            self.pos += k;
                            let r = Rules::get();
                            match self
                                .wrappers
                                .entry(bytes[rel + k], self.reasoning, &r.prose)
                            {
                                Some(entry) => {
                                    self.probe.start(entry, self.pos);
                                    self.mode = Mode::Probe(Probing::Prose);
                                }
                                None => self.prose_char(self.pos, pending, base, out),
                            }
                        }
                    }
                }
                Mode::Probe(probing) => {
                    let Some(start) = self.probe.active() else {
                        self.mode = Mode::Prose;
                        continue;
                    };
                    match self.probe.run(&bytes[start - base..], eof) {
                        Outcome::NeedMore => break,
                        Outcome::Matched { end: len } => {
                            self.matched(probing, start, start + len, pending, base, out)
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            self.rejected(probing, start, pending, base, out)
                        }
                    }
                }
                Mode::Value => {
                    if !self.scan_value(pending, base, eof, out) {
                        break;
                    }
                }
                Mode::Skip => {
                    let rel = self.pos - base;
                    match find_byte(b'<', &bytes[rel..]) {
                        None => {
                            self.emitter.markup(end, out);
                            self.pos = end;
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
            if self.mode == Mode::Value || self.emitter.in_call() {
                self.param = None;
                self.emitter.call_end(false, end, out);
            }
            self.emitter.markup(end, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, end, out);
            }
            return pending.len();
        }
        self.emitter.covered().max(base) - base
    }
}

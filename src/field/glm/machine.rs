//! The glm state machine: every marker is decided by the grammar's entry rule for
//! the mode (spec/glm.md); values are raw text between them.

use std::sync::OnceLock;

use super::Options;
use crate::field::grammars;
use crate::field::json_arguments::run;
use crate::field::probe::rule;
use crate::field::reasoning::family::{FamilyWrappers, ProseRules, WrapperMarker};
use crate::field::typing::{declared_types, escape_fragment, streams_as_string, typed_json};
use crate::field::{Emitter, Event, Tool};
use crate::machine::{Capture, Outcome, ParsingMachine, RuleId};
use crate::reentry::{find_byte, Machine};

/// The entry and captured rules of grammar/glm.pest.
struct Rules {
    prose: ProseRules,
    call_body: RuleId,
    value_end: RuleId,
    skip_marker: RuleId,
    tool_name: RuleId,
    arg_key: RuleId,
    call_close: RuleId,
    cut_call: RuleId,
}

impl Rules {
    fn get() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| {
            let p = grammars::glm();
            Rules {
                prose: ProseRules {
                    plain: rule(p, "call_start"),
                    open: rule(p, "text_marker"),
                    close: rule(p, "reasoning_marker"),
                },
                call_body: rule(p, "call_body"),
                value_end: rule(p, "value_end"),
                skip_marker: rule(p, "skip_marker"),
                tool_name: rule(p, "tool_name"),
                arg_key: rule(p, "arg_key"),
                call_close: rule(p, "call_close"),
                cut_call: rule(p, "cut_call"),
            }
        })
    }

    fn captured(&self) -> [RuleId; 4] {
        [self.cut_call, self.tool_name, self.arg_key, self.call_close]
    }
}

/// What a marker candidate is probed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probing {
    /// A marker in prose (answer text or reasoning).
    Prose,
    /// Between pairs (GL-5, GL-7).
    Body,
    /// A closer inside a value (GL-6).
    ValueEnd,
    /// The closer of a malformed call (GL-8).
    Skip,
}

/// The pair whose value is being read.
#[derive(Clone, Debug)]
struct Param {
    /// The JSON text before the value: `{"key":` or `,"key":`.
    prefix: String,
    /// The declared types, when the value is typed at its close (GL-9).
    types: Option<Vec<String>>,
    /// The raw text of a typed value so far.
    raw: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Prose,
    Probe(Probing),
    Value,
    Skip,
}

/// The glm state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct GlmMachine {
    tools: Vec<Tool>,
    start_in_reasoning: bool,
    emitter: Emitter,
    probe: ParsingMachine<'static>,
    wrappers: FamilyWrappers,
    /// Where the active candidate starts (absolute).
    candidate: usize,
    mode: Mode,
    pos: usize,
    reasoning: bool,
    began: bool,
    /// The called tool's name, and how many pairs it has had.
    function: String,
    params: usize,
    param: Option<Param>,
}

impl GlmMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        let program = grammars::glm();
        let wrappers = FamilyWrappers::new(program, &options.reasoning_markers, b'<');
        let mut probe = ParsingMachine::new(program);
        probe.capture_only(&[&Rules::get().captured()[..], &wrappers.captured()].concat());
        GlmMachine {
            tools: options.tools.clone(),
            start_in_reasoning: options.start_in_reasoning,
            emitter: Emitter::new(),
            probe,
            wrappers,
            candidate: 0,
            mode: Mode::Prose,
            pos: 0,
            reasoning: false,
            began: false,
            function: String::new(),
            params: 0,
            param: None,
        }
    }

    fn capture(&self, rule: RuleId) -> Option<Capture> {
        self.probe
            .captures()
            .iter()
            .find(|c| c.rule == rule && c.is_closed())
            .copied()
    }

    /// Prose at absolute `start`: answer text or reasoning (a reasoning item opens
    /// again after a call that broke out of one, GL-12).
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

    /// The character at absolute `start` is prose (a candidate that is no marker).
    fn prose_char(&mut self, start: usize, pending: &str, base: usize, out: &mut Vec<Event>) {
        let at = start - base;
        let len = pending[at..].chars().next().map_or(1, char::len_utf8);
        self.prose(&pending[at..at + len], start, out);
        self.pos = start + len;
    }

    fn start_probe(&mut self, probing: Probing, at: usize) {
        let r = Rules::get();
        let entry = match probing {
            // Prose candidates start in `advance`, where the byte picks the rule.
            Probing::Prose => return,
            Probing::Body => r.call_body,
            Probing::ValueEnd => r.value_end,
            Probing::Skip => r.skip_marker,
        };
        self.probe.start(entry);
        self.candidate = at;
        self.mode = Mode::Probe(probing);
    }

    /// Value text at `start`: streamed as an escaped JSON fragment, or collected for
    /// typing at the close (GL-6).
    fn value_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        let Some(param) = self.param.as_mut() else {
            return;
        };
        if text.is_empty() {
            return;
        }
        match param.types {
            None => {
                let fragment = escape_fragment(text);
                self.emitter
                    .arguments_delta(&fragment, start + text.len(), out);
            }
            Some(_) => {
                param.raw.push_str(text);
                self.emitter.markup(start + text.len(), out);
            }
        }
    }

    /// The value ended at a closer that starts at `at`.
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

    /// The call ended (its closer reaches `end`).
    fn call_close(&mut self, complete: bool, end: usize, out: &mut Vec<Event>) {
        let close = if self.params == 0 { "{}" } else { "}" };
        if complete {
            self.emitter
                .arguments_delta(close, self.emitter.covered(), out);
        }
        self.emitter.call_end(complete, end, out);
    }

    /// A call starts; its header ends at `end` (GL-3).
    fn call_open(&mut self, name: String, end: usize, out: &mut Vec<Event>) {
        self.emitter.call_start(None, name.clone(), end, out);
        self.function = name;
        self.params = 0;
        self.start_probe(Probing::Body, end);
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
        let text = |c: Capture| unit[c.start..c.end].to_string();
        self.pos = end;
        self.mode = Mode::Prose;
        match probing {
            Probing::Prose => {
                if self.capture(r.cut_call).is_some() {
                    // Dropped: the input ended before the call's start (GL-10); a
                    // cut call captures its name too, so this is asked first.
                    self.emitter.markup(end, out);
                } else if let Some(c) = self.capture(r.tool_name) {
                    if self.emitter.in_reasoning() {
                        self.emitter.reasoning_end(true, start, out);
                    }
                    self.emitter.markup(start, out);
                    self.call_open(text(c), end, out);
                } else if self.wrappers.marker(self.probe.captures()) == Some(WrapperMarker::Opened)
                {
                    self.emitter.reasoning_start(end, out);
                    self.reasoning = true;
                } else {
                    if self.emitter.in_reasoning() {
                        self.emitter.reasoning_end(true, end, out);
                    } else {
                        self.emitter.markup(end, out);
                    }
                    self.reasoning = false;
                }
            }
            Probing::Body => {
                if let Some(c) = self.capture(r.arg_key) {
                    let key = text(c).trim_matches([' ', '\t']).to_string();
                    let tool = self.tools.iter().find(|t| t.name == self.function);
                    let types = declared_types(tool, &key);
                    let streams = streams_as_string(types.as_deref());
                    let prefix = format!(
                        "{}{}:",
                        if self.params == 0 { "{" } else { "," },
                        serde_json::Value::String(key)
                    );
                    let types: Option<Vec<String>> = (!streams).then(|| {
                        types
                            .unwrap_or_default()
                            .iter()
                            .map(|t| t.to_string())
                            .collect()
                    });
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
                        types,
                        raw: String::new(),
                    });
                    self.mode = Mode::Value;
                } else {
                    // The call's closer (GL-7).
                    self.call_close(true, end, out);
                }
            }
            Probing::ValueEnd => {
                self.value_close(start, out);
                self.emitter.markup(end, out);
                self.start_probe(Probing::Body, end);
            }
            Probing::Skip => self.emitter.markup(end, out),
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
            Probing::Body => {
                // Not a pair or the closer: the call is malformed (GL-8).
                self.param = None;
                self.call_close(false, start, out);
                self.pos = start;
                self.mode = Mode::Skip;
            }
            Probing::ValueEnd => {
                // The `<` is value text.
                self.value_text("<", start, out);
                self.pos = start + 1;
                self.mode = Mode::Value;
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
        match find_byte(b'<', &bytes[rel..]) {
            Some(k) => {
                self.value_text(&pending[rel..rel + k], self.pos, out);
                self.pos += k;
                self.start_probe(Probing::ValueEnd, self.pos);
                true
            }
            None => {
                self.value_text(&pending[rel..], self.pos, out);
                self.pos = end;
                if eof {
                    self.param = None;
                    self.call_close(false, end, out);
                    self.mode = Mode::Prose;
                }
                false
            }
        }
    }
}

impl Machine for GlmMachine {
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
                                    self.probe.start(entry);
                                    self.candidate = self.pos;
                                    self.mode = Mode::Probe(Probing::Prose);
                                }
                                None => self.prose_char(self.pos, pending, base, out),
                            }
                        }
                    }
                }
                Mode::Probe(probing) => {
                    let start = self.candidate;
                    let (outcome, _) = run(&mut self.probe, &pending[start - base..], eof);
                    match outcome {
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
            if self.emitter.in_call() {
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

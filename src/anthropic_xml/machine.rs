//! The anthropic-xml state machine: prose at top level, and the modes of the blocks.

use std::sync::OnceLock;

use compact_str::CompactString;
use indexmap::IndexMap;

use super::entities;
use super::event::Event;
use super::grammar;
use super::grammar::Name;
use super::options::{Options, OptionsProblem};
use super::typing::typed_input;
use crate::machine::{Outcome, ParsingMachine, RuleId};
use crate::reentry::{scan_tags, Machine, TagScanner, Verdict};
use crate::span::Span;

/// Where the machine stands (AX-5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Top,
    Thinking,
    /// Inside a tool-call block, outside any invoke.
    Calls,
    /// Inside an invoke, outside any parameter value.
    Invoke,
    /// Inside a parameter value.
    Value,
    /// Inside a tool-result block, outside any result.
    Results,
    /// Inside a result (or, with `error`, an error) element.
    Content {
        error: bool,
    },
}

/// The rules of grammar/anthropic-xml.pest the state machine runs and reads.
struct TagRules {
    /// The entry rule of each mode (AX-5).
    top: RuleId,
    thinking: RuleId,
    calls: RuleId,
    invoke: RuleId,
    value_end: RuleId,
    results: RuleId,
    result: RuleId,
    error: RuleId,
    /// The captured rules: the seven names, then the parts of a tag.
    names: [(RuleId, Name); 7],
    self_close: RuleId,
    key: RuleId,
    dq_value: RuleId,
    sq_value: RuleId,
    parameter_closer: RuleId,
}

impl TagRules {
    fn get() -> &'static TagRules {
        static RULES: OnceLock<TagRules> = OnceLock::new();
        RULES.get_or_init(|| {
            let program = grammar::program();
            // The rules are in the grammar file of the crate (tested).
            let rule = |name: &str| {
                program
                    .rule(name)
                    .expect("rule of grammar/anthropic-xml.pest")
            };
            TagRules {
                top: rule("top_tag"),
                thinking: rule("thinking_tag"),
                calls: rule("calls_tag"),
                invoke: rule("invoke_tag"),
                value_end: rule("value_end"),
                results: rule("results_tag"),
                result: rule("result_tag"),
                error: rule("error_tag"),
                names: Name::ALL.map(|name| (rule(name.as_str()), name)),
                self_close: rule("self_close"),
                key: rule("xml_key"),
                dq_value: rule("xml_value"),
                sq_value: rule("xml_sq_value"),
                parameter_closer: rule("parameter_closer"),
            }
        })
    }

    fn name(&self, rule: RuleId) -> Option<Name> {
        self.names.iter().find(|(r, _)| *r == rule).map(|(_, n)| *n)
    }
}

/// What the state machine needs of a complete tag (read from the captures).
struct TagReading {
    closing: bool,
    name: Name,
    self_closing: bool,
    /// The entity-decoded value of the last `name` attribute.
    name_attr: Option<CompactString>,
    /// The entity-decoded value of the last `tool_use_id` attribute.
    id_attr: Option<String>,
}

/// The invoke being read: what its `invoke_end` will carry.
#[derive(Clone, Debug, Default)]
struct OpenCall {
    name: CompactString,
    params: IndexMap<String, String>,
    /// The parameter whose value is being read.
    param: CompactString,
    value: String,
}

/// The anthropic-xml state machine (driven by [`crate::reentry::Stream`]).
#[derive(Clone, Debug)]
pub struct AnthropicXmlMachine {
    options: Options,
    mode: Mode,
    /// Runs the mode's entry rule on the candidate tag at the start of the unit.
    tags: ParsingMachine<'static>,
    /// Whether a candidate is being read.
    probing: bool,
    /// Index of the current top-level block, and of the next one.
    index: usize,
    next_index: usize,
    /// Whether the current block is a prose block (more prose joins it).
    in_text: bool,
    /// Calls or results finished so far in the current block.
    count: usize,
    call: OpenCall,
}

impl AnthropicXmlMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Result<Self, OptionsProblem> {
        options.validate()?;
        let mut options = options.clone();
        options.max_tag_bytes = options.max_tag_bytes.min(crate::reentry::MAX_SIZE_OPTION);
        let tags = ParsingMachine::new(grammar::program());
        Ok(AnthropicXmlMachine {
            options,
            mode: Mode::Top,
            tags,
            probing: false,
            index: 0,
            next_index: 0,
            in_text: false,
            count: 0,
            call: OpenCall::default(),
        })
    }

    /// The most bytes held back undecided (AX-21): one tag candidate or a parameter
    /// closer with its lookahead, plus a carried partial UTF-8 character.
    pub fn hold_back_bound(&self) -> usize {
        self.options.max_tag_bytes + 3
    }

    fn open_block(&mut self) -> usize {
        self.in_text = false;
        self.index = self.next_index;
        self.next_index += 1;
        self.count = 0;
        self.index
    }

    /// The entry rule of the current mode (AX-5).
    fn mode_rule(&self) -> RuleId {
        let rules = TagRules::get();
        match self.mode {
            Mode::Top => rules.top,
            Mode::Thinking => rules.thinking,
            Mode::Calls => rules.calls,
            Mode::Invoke => rules.invoke,
            Mode::Value => rules.value_end,
            Mode::Results => rules.results,
            Mode::Content { error: false } => rules.result,
            Mode::Content { error: true } => rules.error,
        }
    }

    /// Reads the complete tag `text` from the captures of its match.
    fn read_tag(&self, text: &str) -> Option<TagReading> {
        let rules = TagRules::get();
        let mut reading = TagReading {
            closing: text.as_bytes().get(1) == Some(&b'/'),
            name: Name::Thinking,
            self_closing: false,
            name_attr: None,
            id_attr: None,
        };
        let mut named = false;
        let mut key = "";
        for c in self.tags.captures() {
            let part = text.get(c.start..c.end)?;
            if c.rule == rules.self_close {
                reading.self_closing = true;
            } else if c.rule == rules.key {
                key = part;
            } else if c.rule == rules.dq_value || c.rule == rules.sq_value {
                // Duplicate keys: the last wins (AX-3).
                match key {
                    "name" => reading.name_attr = Some(entities::decode(part).into()),
                    "tool_use_id" => reading.id_attr = Some(entities::decode(part).into_owned()),
                    _ => {}
                }
            } else if let Some(name) = rules.name(c.rule) {
                reading.name = name;
                named = true;
            }
        }
        named.then_some(reading)
    }

    /// Emits the bytes of a run as the current mode's text.
    fn emit_mode_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        let span = Span::new(start, start + text.len());
        let index = self.index;
        let event = match self.mode {
            Mode::Top => {
                if !self.in_text {
                    self.open_block();
                    self.in_text = true;
                }
                Event::Text {
                    index: self.index,
                    text: text.into(),
                    span,
                }
            }
            Mode::Thinking => Event::ThinkingDelta {
                index,
                text: text.into(),
                span,
            },
            Mode::Calls | Mode::Invoke | Mode::Results => Event::Stray {
                index,
                text: text.into(),
                span,
            },
            Mode::Value => {
                self.call.value.push_str(text);
                Event::ParameterDelta {
                    index,
                    call: self.count,
                    text: text.into(),
                    span,
                }
            }
            Mode::Content { .. } => Event::ResultDelta {
                index,
                result: self.count,
                text: entities::decode(text).into(),
                span,
            },
        };
        out.push(event);
    }

    fn end_param(&mut self, closed: bool, span: Span, out: &mut Vec<Event>) {
        let name = std::mem::take(&mut self.call.param);
        let value = std::mem::take(&mut self.call.value);
        self.call.params.insert(name.to_string(), value);
        out.push(Event::ParameterEnd {
            index: self.index,
            call: self.count,
            name,
            closed,
            span,
        });
    }

    fn end_call(&mut self, closed: bool, span: Span, out: &mut Vec<Event>) {
        let call = std::mem::take(&mut self.call);
        let input = typed_input(self.options.tool(&call.name), &call.params);
        out.push(Event::InvokeEnd {
            index: self.index,
            call: self.count,
            name: call.name,
            params: Box::new(call.params),
            input: Box::new(input),
            closed,
            span,
        });
        self.count += 1;
    }

    /// Acts on a complete tag; false when it is not structure here (then it is text).
    fn take_tag(
        &mut self,
        text: &str,
        tag: TagReading,
        start: usize,
        out: &mut Vec<Event>,
    ) -> bool {
        let TagReading {
            closing,
            name,
            self_closing,
            name_attr,
            id_attr,
        } = tag;
        let span = Span::new(start, start + text.len());
        let after = Span::empty(span.end);
        match (self.mode, closing, name) {
            (Mode::Top, false, Name::Thinking) => {
                let index = self.open_block();
                out.push(Event::ThinkingStart { index, span });
                self.mode = Mode::Thinking;
            }
            (Mode::Top, false, Name::FunctionCalls) => {
                let index = self.open_block();
                out.push(Event::ToolCallsStart { index, span });
                self.mode = Mode::Calls;
            }
            (Mode::Top, false, Name::FunctionResults) => {
                let index = self.open_block();
                out.push(Event::ToolResultsStart { index, span });
                self.mode = Mode::Results;
            }
            (Mode::Thinking, true, Name::Thinking) => {
                out.push(Event::ThinkingEnd {
                    index: self.index,
                    closed: true,
                    span,
                });
                self.mode = Mode::Top;
            }
            (Mode::Calls, false, Name::Invoke) => {
                let Some(call_name) = name_attr else {
                    return false;
                };
                let (index, call) = (self.index, self.count);
                out.push(Event::InvokeStart {
                    index,
                    call,
                    name: call_name.clone(),
                    span,
                });
                self.call = OpenCall {
                    name: call_name,
                    ..OpenCall::default()
                };
                if self_closing {
                    self.end_call(true, after, out);
                } else {
                    self.mode = Mode::Invoke;
                }
            }
            (Mode::Calls, true, Name::FunctionCalls) => {
                out.push(Event::ToolCallsEnd {
                    index: self.index,
                    closed: true,
                    span,
                });
                self.mode = Mode::Top;
            }
            (Mode::Invoke, false, Name::Parameter) => {
                let Some(param) = name_attr else {
                    return false;
                };
                let (index, call) = (self.index, self.count);
                out.push(Event::ParameterStart {
                    index,
                    call,
                    name: param.clone(),
                    span,
                });
                self.call.param = param;
                if self_closing {
                    self.end_param(true, after, out);
                } else {
                    self.mode = Mode::Value;
                }
            }
            (Mode::Invoke, true, Name::Invoke) => {
                self.end_call(true, span, out);
                self.mode = Mode::Calls;
            }
            (Mode::Invoke, true, Name::FunctionCalls) => {
                self.end_call(false, Span::empty(span.start), out);
                out.push(Event::ToolCallsEnd {
                    index: self.index,
                    closed: true,
                    span,
                });
                self.mode = Mode::Top;
            }
            (Mode::Value, true, Name::Parameter) => {
                self.end_param(true, span, out);
                self.mode = Mode::Invoke;
            }
            (Mode::Results, false, Name::Result | Name::Error) => {
                let is_error = name == Name::Error;
                let (index, result) = (self.index, self.count);
                let tool_use_id = id_attr;
                out.push(Event::ResultStart {
                    index,
                    result,
                    tool_use_id,
                    is_error,
                    span,
                });
                if self_closing {
                    out.push(Event::ResultEnd {
                        index,
                        result,
                        closed: true,
                        span: after,
                    });
                    self.count += 1;
                } else {
                    self.mode = Mode::Content { error: is_error };
                }
            }
            (Mode::Results, true, Name::FunctionResults) => {
                out.push(Event::ToolResultsEnd {
                    index: self.index,
                    closed: true,
                    span,
                });
                self.mode = Mode::Top;
            }
            (Mode::Content { error }, true, Name::Result | Name::Error)
                if error == (name == Name::Error) =>
            {
                let (index, result) = (self.index, self.count);
                out.push(Event::ResultEnd {
                    index,
                    result,
                    closed: true,
                    span,
                });
                self.count += 1;
                self.mode = Mode::Results;
            }
            _ => return false,
        }
        true
    }

    /// End of input (AX-18): every open element and block ends, not closed.
    fn close_all(&mut self, end: usize, out: &mut Vec<Event>) {
        let span = Span::empty(end);
        let index = self.index;
        match self.mode {
            Mode::Top => {}
            Mode::Thinking => out.push(Event::ThinkingEnd {
                index,
                closed: false,
                span,
            }),
            Mode::Value | Mode::Invoke | Mode::Calls => {
                if self.mode == Mode::Value {
                    self.end_param(false, span, out);
                }
                if self.mode != Mode::Calls {
                    self.end_call(false, span, out);
                }
                out.push(Event::ToolCallsEnd {
                    index,
                    closed: false,
                    span,
                });
            }
            Mode::Content { .. } | Mode::Results => {
                if let Mode::Content { .. } = self.mode {
                    let result = self.count;
                    out.push(Event::ResultEnd {
                        index,
                        result,
                        closed: false,
                        span,
                    });
                }
                out.push(Event::ToolResultsEnd {
                    index,
                    closed: false,
                    span,
                });
            }
        }
        self.mode = Mode::Top;
    }
}

impl TagScanner for AnthropicXmlMachine {
    type Event = Event;

    fn probe_resume(&mut self, unit: &str, eof: bool) -> Option<Verdict> {
        if !self.probing {
            return None;
        }
        let max = self.options.max_tag_bytes;
        let bytes = unit.as_bytes();
        // A candidate must complete within `max` bytes (AX-4): the machine never sees
        // more, and past the bound the end of the input does not matter.
        let bounded = bytes.len() >= max;
        let outcome = if bounded {
            self.tags.resume(&bytes[..max])
        } else if eof {
            self.tags.finish(bytes)
        } else {
            self.tags.resume(bytes)
        };
        Some(match outcome {
            Outcome::Matched { end } => Verdict::Complete(end),
            Outcome::Rejected { .. } | Outcome::TooDeep { .. } => Verdict::Rejected,
            Outcome::NeedMore if !bounded => Verdict::NeedMore,
            // Undecided at the bound: a complete parameter closer ends the value
            // (AX-11); any other candidate is not a tag (AX-4).
            Outcome::NeedMore => {
                let closer = TagRules::get().parameter_closer;
                self.tags
                    .captures()
                    .iter()
                    .find(|c| c.rule == closer && c.is_closed())
                    .map_or(Verdict::Rejected, |c| Verdict::Complete(c.end))
            }
        })
    }

    fn probe_start(&mut self) {
        self.tags.start(self.mode_rule());
        self.probing = true;
    }

    fn probe_reject(&mut self) {
        self.probing = false;
    }

    fn probe_take(&mut self, tag: &str, start: usize, out: &mut Vec<Event>) -> bool {
        self.probing = false;
        match self.read_tag(tag) {
            Some(reading) => self.take_tag(tag, reading, start, out),
            None => false,
        }
    }

    fn emit_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        self.emit_mode_text(text, start, out);
    }

    fn emittable(&self, run: &str) -> usize {
        match self.mode {
            // Never split an entity between two deltas (AX-21).
            Mode::Content { .. } => entities::safe_end(run),
            _ => run.len(),
        }
    }

    fn end_of_input(&mut self, end: usize, out: &mut Vec<Event>) {
        self.close_all(end, out);
    }
}

impl Machine for AnthropicXmlMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        scan_tags(self, pending, base, eof, out)
    }
}

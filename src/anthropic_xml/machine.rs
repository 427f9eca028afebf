//! The anthropic-xml state machine: prose at top level, and the modes of the blocks.

use std::borrow::Cow;

use compact_str::CompactString;
use indexmap::IndexMap;

use super::entities;
use super::event::Event;
use super::grammar::Name;
use super::options::{Options, OptionsProblem};
use super::probe::{attr_in, Allowed, Probed, Shape, TagProbe};
use super::typing::typed_input;
use super::value_end::ValueEndProbe;
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

const TOP_TAGS: Allowed = &[
    (Shape::Bare, Name::Thinking),
    (Shape::Bare, Name::FunctionCalls),
    (Shape::Bare, Name::FunctionResults),
];
const THINKING_TAGS: Allowed = &[(Shape::Closer, Name::Thinking)];
const CALLS_TAGS: Allowed = &[
    (Shape::Element, Name::Invoke),
    (Shape::Closer, Name::FunctionCalls),
];
const INVOKE_TAGS: Allowed = &[
    (Shape::Element, Name::Parameter),
    (Shape::Closer, Name::Invoke),
    (Shape::Closer, Name::FunctionCalls),
];
const RESULTS_TAGS: Allowed = &[
    (Shape::Element, Name::Result),
    (Shape::Element, Name::Error),
    (Shape::Closer, Name::FunctionResults),
];
const RESULT_TAGS: Allowed = &[(Shape::Closer, Name::Result)];
const ERROR_TAGS: Allowed = &[(Shape::Closer, Name::Error)];

/// The probe for the candidate tag at the start of the unit.
#[derive(Clone, Debug)]
enum Probe {
    Tag(TagProbe),
    ValueEnd(ValueEndProbe),
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
    probe: Option<Probe>,
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
        Ok(AnthropicXmlMachine {
            options,
            mode: Mode::Top,
            probe: None,
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

    fn new_probe(&self) -> Probe {
        let allowed = match self.mode {
            Mode::Top => TOP_TAGS,
            Mode::Thinking => THINKING_TAGS,
            Mode::Calls => CALLS_TAGS,
            Mode::Invoke => INVOKE_TAGS,
            Mode::Value => return Probe::ValueEnd(ValueEndProbe::new()),
            Mode::Results => RESULTS_TAGS,
            Mode::Content { error: false } => RESULT_TAGS,
            Mode::Content { error: true } => ERROR_TAGS,
        };
        Probe::Tag(TagProbe::new(allowed))
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
    /// `probed` is what the probe read of it.
    fn take_tag(&mut self, text: &str, probed: Probed, start: usize, out: &mut Vec<Event>) -> bool {
        // The probe read the tag as it recognized it (a property test holds it to
        // pest's reading of the grammar). Only `name` and `tool_use_id` are used.
        let (closing, name, self_closing, name_attr, id_attr) = match probed {
            Probed::Tag(tag) => (tag.closing, tag.name, tag.self_closing, None, None),
            Probed::Element {
                name,
                attrs,
                self_closing,
            } => {
                let name_attr = attr_in(text, &attrs, "name").map(CompactString::from);
                let id_attr = attr_in(text, &attrs, "tool_use_id").map(Cow::into_owned);
                (false, name, self_closing, name_attr, id_attr)
            }
        };
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
        let max = self.options.max_tag_bytes;
        let verdict = match self.probe.as_mut()? {
            Probe::Tag(p) => p.resume(unit.as_bytes(), max),
            Probe::ValueEnd(p) => match p.resume(unit.as_bytes(), max) {
                Verdict::NeedMore if eof => p.at_end(),
                v => v,
            },
        };
        Some(match verdict {
            Verdict::NeedMore if eof => Verdict::Rejected,
            v => v,
        })
    }

    fn probe_start(&mut self) {
        self.probe = Some(self.new_probe());
    }

    fn probe_reject(&mut self) {
        self.probe = None;
    }

    fn probe_take(&mut self, tag: &str, start: usize, out: &mut Vec<Event>) -> bool {
        let probed = match self.probe.take() {
            Some(Probe::Tag(mut p)) => p.read(),
            Some(Probe::ValueEnd(mut p)) => p.read(),
            None => None,
        };
        probed.is_some_and(|probed| self.take_tag(tag, probed, start, out))
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

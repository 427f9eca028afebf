//! Building a family's events with spans that tile the input.
//!
//! Every family machine emits through an [`Emitter`]: it remembers how far the
//! events reach (`covered`), gives each event the span from there to where the
//! family says the event's bytes end, numbers the tool calls, and collects each
//! call's arguments text so that the end event carries the input (validated compact JSON text,
//! [`Input`]). A family
//! machine therefore only says *what* was decided and *up to where*.

use super::event::Event;
use super::input::{Input, Scratch};
use crate::span::Span;
use compact_str::CompactString;

/// Emits field events with tiling spans (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Emitter {
    covered: usize,
    next_index: usize,
    /// The index of the open tool call.
    call: Option<usize>,
    /// The open call's arguments so far (one buffer, reused call after call).
    arguments: String,
    /// The working memory of checking each call's input.
    scratch: Scratch,
    in_reasoning: bool,
}

impl Emitter {
    /// An emitter at offset 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// An emitter whose events start at `offset`: the bytes before it are
    /// another reader's.
    pub fn at(offset: usize) -> Self {
        Emitter {
            covered: offset,
            ..Self::default()
        }
    }

    /// How far the emitted spans reach.
    pub fn covered(&self) -> usize {
        self.covered
    }

    /// Whether a reasoning item is open.
    pub fn in_reasoning(&self) -> bool {
        self.in_reasoning
    }

    /// Whether a tool call is open.
    pub fn in_call(&self) -> bool {
        self.call.is_some()
    }

    /// The arguments text of the open call so far.
    pub fn arguments(&self) -> Option<&str> {
        self.call.map(|_| self.arguments.as_str())
    }

    #[inline]
    fn span_to(&mut self, end: usize) -> Span {
        let span = Span::new(self.covered, end.max(self.covered));
        self.covered = span.end;
        span
    }

    /// Covers the bytes up to `end` as markup (nothing when they are covered). Markup
    /// right after markup of the same feed (the last event of `out`) extends that
    /// event instead of adding one: the spans still tile the input (FD-4), and a
    /// call's header, written as several units, is one event, not six.
    #[inline]
    pub fn markup(&mut self, end: usize, out: &mut Vec<Event>) {
        if end > self.covered {
            let span = self.span_to(end);
            if let Some(Event::Markup { span: last }) = out.last_mut() {
                if last.end == span.start {
                    last.end = span.end;
                    return;
                }
            }
            out.push(Event::Markup { span });
        }
    }

    /// Answer text `text` that starts at `start`; bytes before it are markup.
    #[inline(always)]
    pub fn text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        self.markup(start, out);
        let span = self.span_to(start + text.len());
        out.push(Event::Text {
            text: CompactString::from(text),
            span,
        });
    }

    /// Opens a reasoning item whose opener ends at `end`.
    pub fn reasoning_start(&mut self, end: usize, out: &mut Vec<Event>) {
        let span = self.span_to(end);
        self.in_reasoning = true;
        out.push(Event::ReasoningStart { span });
    }

    /// Prose `text` that starts at `start`: reasoning when `reasoning` (a reasoning
    /// item opens again at its first byte when none is open, as after a call that
    /// broke out of one, FD-2), answer text otherwise; bytes before it are markup.
    #[inline(always)]
    pub fn prose(&mut self, reasoning: bool, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        if reasoning {
            if !self.in_reasoning {
                self.markup(start, out);
                self.reasoning_start(start, out);
            }
            self.reasoning(text, start, out);
        } else {
            self.text(text, start, out);
        }
    }

    /// Reasoning text `text` that starts at `start`; bytes before it are markup.
    #[inline]
    pub fn reasoning(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        self.markup(start, out);
        let span = self.span_to(start + text.len());
        out.push(Event::ReasoningDelta {
            text: CompactString::from(text),
            span,
        });
    }

    /// Ends the reasoning item; its closer (if any) ends at `end`.
    pub fn reasoning_end(&mut self, closed: bool, end: usize, out: &mut Vec<Event>) {
        let span = self.span_to(end);
        self.in_reasoning = false;
        out.push(Event::ReasoningEnd { closed, span });
    }

    /// Starts a tool call whose name ends at `end`; returns its index. The name is
    /// taken as a `String` or `&str` or as the event's own string type.
    pub fn call_start(
        &mut self,
        id: Option<String>,
        name: impl Into<CompactString>,
        end: usize,
        out: &mut Vec<Event>,
    ) -> usize {
        let index = self.next_index;
        self.next_index += 1;
        let span = self.span_to(end);
        self.call = Some(index);
        self.arguments.clear();
        out.push(Event::ToolCallStart {
            index,
            id: id.map(CompactString::from),
            name: name.into(),
            span,
        });
        index
    }

    /// A fragment of the open call's arguments, decided by the bytes up to `end`.
    #[inline(always)]
    pub fn arguments_delta(&mut self, text: &str, end: usize, out: &mut Vec<Event>) {
        let Some(index) = self.call else {
            return;
        };
        if text.is_empty() && end <= self.covered {
            return;
        }
        self.arguments.push_str(text);
        let span = self.span_to(end);
        out.push(Event::ArgumentsDelta {
            index,
            text: CompactString::from(text),
            span,
        });
    }

    /// Ends the open call complete, its arguments being compact JSON text the
    /// family wrote so that the input check gives it back unchanged
    /// ([`Input::built`]); the markup that ends it reaches `end`.
    pub(crate) fn call_end_built(&mut self, end: usize, out: &mut Vec<Event>) {
        let Some(index) = self.call.take() else {
            return;
        };
        let input = Input::built(&self.arguments);
        let span = self.span_to(end);
        out.push(Event::ToolCallEnd {
            index,
            complete: true,
            input,
            span,
        });
    }

    /// Ends the open call; the markup that ends it reaches `end`. The call is
    /// complete when `complete` says so and its arguments parse as JSON.
    pub fn call_end(&mut self, complete: bool, end: usize, out: &mut Vec<Event>) {
        let Some(index) = self.call.take() else {
            return;
        };
        let input = Input::parse_with(&self.arguments, &mut self.scratch);
        let span = self.span_to(end);
        out.push(Event::ToolCallEnd {
            index,
            complete: complete && input.is_some(),
            input: input.unwrap_or(Input::NULL),
            span,
        });
    }
}

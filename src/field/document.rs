//! The folded chat turn: `{"items": [...]}`.

use std::borrow::Cow;

use super::event::Event;
use super::input::Input;
use crate::fold::Fold;
use crate::reentry::{Machine, Stream};
use crate::span::Span;
use compact_str::CompactString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One item of a chat turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Item {
    /// A stretch of reasoning.
    Reasoning {
        /// The reasoning text, verbatim.
        text: String,
        /// False when the input ended inside it.
        closed: bool,
        /// Start to end (only with spans requested).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Span>")]
        span: Option<Span>,
    },
    /// A maximal run of answer text.
    Text {
        /// The text, verbatim.
        text: String,
        /// Its bytes (only with spans requested).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Span>")]
        span: Option<Span>,
    },
    /// A tool call.
    ToolCall {
        /// Position among the turn's tool calls, from 0.
        index: usize,
        /// The family's call id, or `null`.
        id: Option<String>,
        /// The tool's name.
        name: String,
        /// The JSON text of the arguments: the model's own text for JSON families,
        /// compact JSON built from the typed parameters for XML families.
        arguments: String,
        /// `arguments` as a JSON value, or `null` when it is not valid JSON; held
        /// as compact JSON text ([`Input::value`] builds the tree).
        input: Input,
        /// Whether the call may be run (see [`Event::ToolCallEnd`]).
        complete: bool,
        /// Start to end (only with spans requested).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Span>")]
        span: Option<Span>,
    },
}

/// A chat turn: its items in source order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// Reasoning, text and tool calls in source order.
    pub items: Vec<Item>,
}

impl Document {
    /// The document these events fold into (without spans).
    pub fn fold(events: &[Event]) -> Document {
        let mut folder = DocumentFolder::new(false);
        events.iter().for_each(|e| folder.push(e));
        folder.into_document()
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &Item> {
        self.items
            .iter()
            .filter(|i| matches!(i, Item::ToolCall { .. }))
    }
}

/// Folds field events into a [`Document`].
#[derive(Clone, Debug, Default)]
pub struct DocumentFolder {
    document: Document,
    spans: bool,
}

fn extend(span: &mut Option<Span>, with: Span) {
    if let Some(s) = span {
        s.end = with.end;
    }
}

impl DocumentFolder {
    /// A folder; `spans` gives every item its span.
    pub fn new(spans: bool) -> Self {
        DocumentFolder {
            document: Document::default(),
            spans,
        }
    }

    /// The folded document.
    pub fn into_document(self) -> Document {
        self.document
    }

    fn call(&mut self, index: usize) -> Option<&mut Item> {
        self.document
            .items
            .iter_mut()
            .rev()
            .find(|i| matches!(i, Item::ToolCall { index: n, .. } if *n == index))
    }
}

impl DocumentFolder {
    /// Folds one more event in, taking it by value: its texts and its input move
    /// into the document instead of being copied ([`Fold::push`] copies them).
    pub fn push_owned(&mut self, event: Event) {
        match event {
            Event::ReasoningStart { span } => self.reasoning_start(span),
            Event::ReasoningDelta { text, span } => self.reasoning(&text, span),
            Event::ReasoningEnd { closed, span } => self.reasoning_end(closed, span),
            Event::Text { text, span } => self.text(text, span),
            Event::ToolCallStart {
                index,
                id,
                name,
                span,
            } => self.call_start(
                index,
                id.map(CompactString::into_string),
                name.into_string(),
                span,
            ),
            Event::ArgumentsDelta { index, text, span } => self.arguments(index, text, span),
            Event::ToolCallEnd {
                index,
                complete,
                input,
                span,
            } => self.call_end(index, complete, Cow::Owned(input), span),
            Event::Markup { .. } => {}
        }
    }

    fn reasoning_start(&mut self, span: Span) {
        self.document.items.push(Item::Reasoning {
            text: String::new(),
            closed: false,
            span: self.spans.then_some(span),
        });
    }

    fn reasoning(&mut self, text: &str, span: Span) {
        if let Some(Item::Reasoning {
            text: t, span: s, ..
        }) = self.document.items.last_mut()
        {
            t.push_str(text);
            extend(s, span);
        }
    }

    fn reasoning_end(&mut self, closed: bool, span: Span) {
        if let Some(Item::Reasoning {
            closed: c, span: s, ..
        }) = self.document.items.last_mut()
        {
            *c = closed;
            extend(s, span);
        }
    }

    /// `text` is an event's text, borrowed or owned: an owned text that starts an
    /// item moves into it.
    fn text(&mut self, text: impl AsRef<str> + Into<String>, span: Span) {
        match self.document.items.last_mut() {
            Some(Item::Text { text: t, span: s }) => {
                t.push_str(text.as_ref());
                extend(s, span);
            }
            _ => self.document.items.push(Item::Text {
                text: text.into(),
                span: self.spans.then_some(span),
            }),
        }
    }

    fn call_start(&mut self, index: usize, id: Option<String>, name: String, span: Span) {
        self.document.items.push(Item::ToolCall {
            index,
            id,
            name,
            arguments: String::new(),
            input: Input::NULL,
            complete: false,
            span: self.spans.then_some(span),
        });
    }

    fn arguments(&mut self, index: usize, text: impl AsRef<str> + Into<String>, span: Span) {
        if let Some(Item::ToolCall {
            arguments, span: s, ..
        }) = self.call(index)
        {
            if arguments.is_empty() {
                *arguments = text.into();
            } else {
                arguments.push_str(text.as_ref());
            }
            extend(s, span);
        }
    }

    fn call_end(&mut self, index: usize, complete: bool, input: Cow<'_, Input>, span: Span) {
        if let Some(Item::ToolCall {
            complete: c,
            input: i,
            span: s,
            ..
        }) = self.call(index)
        {
            *c = complete;
            *i = input.into_owned();
            extend(s, span);
        }
    }
}

impl Fold<Event> for DocumentFolder {
    type Document = Document;

    fn push(&mut self, event: &Event) {
        match event {
            Event::ReasoningStart { span } => self.reasoning_start(*span),
            Event::ReasoningDelta { text, span } => self.reasoning(text, *span),
            Event::ReasoningEnd { closed, span } => self.reasoning_end(*closed, *span),
            Event::Text { text, span } => self.text(text.as_str(), *span),
            Event::ToolCallStart {
                index,
                id,
                name,
                span,
            } => self.call_start(
                *index,
                id.as_deref().map(String::from),
                String::from(name.as_str()),
                *span,
            ),
            Event::ArgumentsDelta { index, text, span } => {
                self.arguments(*index, text.as_str(), *span)
            }
            Event::ToolCallEnd {
                index,
                complete,
                input,
                span,
            } => self.call_end(*index, *complete, Cow::Borrowed(input), *span),
            Event::Markup { .. } => {}
        }
    }

    fn document(&self) -> &Document {
        &self.document
    }

    fn into_document(self) -> Document {
        self.document
    }
}

/// The piece size of [`parse_owned`]. A piece's events are collected in one
/// vector before they are folded, so the piece bounds that vector: at 64 KiB
/// (the size [`fold::fold_whole`](crate::fold::fold_whole) feeds) a turn of short
/// calls made it grow to about half a megabyte on every parse, and its growth
/// (reallocations, copies, fresh pages) cost more than the few more feeds of
/// smaller pieces. Any split gives the same document (S2).
const PIECE: usize = 4 * 1024;

/// Parses a whole input with `stream` and folds its events by value, piece by
/// piece ([`PIECE`]), so that no text or input is copied on its way into the
/// document: every family's `parse`.
pub(crate) fn parse_owned<M: Machine<Event = Event>>(
    mut stream: Stream<M>,
    input: &str,
) -> Document {
    let mut folder = DocumentFolder::new(false);
    // Pieces end on character boundaries, so they are text and are not
    // validated again.
    for piece in crate::fold::str_pieces(input, PIECE) {
        stream.feed_str(piece).for_each(|e| folder.push_owned(e));
    }
    stream.finish().for_each(|e| folder.push_owned(e));
    folder.into_document()
}

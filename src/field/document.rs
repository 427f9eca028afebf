//! The folded chat turn: `{"items": [...]}`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::event::Event;
use crate::fold::Fold;
use crate::span::Span;

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
        /// `arguments` parsed, or `null` when it is not valid JSON.
        input: Value,
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

impl Fold<Event> for DocumentFolder {
    type Document = Document;

    fn push(&mut self, event: &Event) {
        let spans = self.spans;
        let items = &mut self.document.items;
        match event {
            Event::ReasoningStart { span } => {
                items.push(Item::Reasoning {
                    text: String::new(),
                    closed: false,
                    span: spans.then_some(*span),
                });
            }
            Event::ReasoningDelta { text, span } => {
                if let Some(Item::Reasoning {
                    text: t, span: s, ..
                }) = items.last_mut()
                {
                    t.push_str(text);
                    extend(s, *span);
                }
            }
            Event::ReasoningEnd { closed, span } => {
                if let Some(Item::Reasoning {
                    closed: c, span: s, ..
                }) = items.last_mut()
                {
                    *c = *closed;
                    extend(s, *span);
                }
            }
            Event::Text { text, span } => match items.last_mut() {
                Some(Item::Text { text: t, span: s }) => {
                    t.push_str(text);
                    extend(s, *span);
                }
                _ => items.push(Item::Text {
                    text: text.clone(),
                    span: spans.then_some(*span),
                }),
            },
            Event::ToolCallStart {
                index,
                id,
                name,
                span,
            } => items.push(Item::ToolCall {
                index: *index,
                id: id.clone(),
                name: name.clone(),
                arguments: String::new(),
                input: Value::Null,
                complete: false,
                span: spans.then_some(*span),
            }),
            Event::ArgumentsDelta { index, text, span } => {
                if let Some(Item::ToolCall {
                    arguments, span: s, ..
                }) = self.call(*index)
                {
                    arguments.push_str(text);
                    extend(s, *span);
                }
            }
            Event::ToolCallEnd {
                index,
                complete,
                input,
                span,
            } => {
                if let Some(Item::ToolCall {
                    complete: c,
                    input: i,
                    span: s,
                    ..
                }) = self.call(*index)
                {
                    *c = *complete;
                    *i = input.clone();
                    extend(s, *span);
                }
            }
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

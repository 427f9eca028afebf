//! The folded plurnk document: `{"items": [...], "unparsedTail"?}` (PL-8).

use schemars::JsonSchema;
use serde::Serialize;

use super::machine::Event;
use super::model::{ParseError, Position, Statement, UnparsedTail};
use crate::fold::{Fold, Settle};
use crate::span::Span;

/// One item of the document, discriminated by `kind` as in the published package.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Item {
    /// A valid statement.
    Statement {
        /// The typed statement.
        statement: Box<Statement>,
        /// Opener to close tag (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
    /// A run of text between statements; adjacent runs are merged.
    Text {
        /// The text.
        text: String,
        /// Where its first character stands.
        position: Position,
        /// Where it stands in the input (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
    /// A statement that is not valid, in its place.
    Error {
        /// The error.
        error: ParseError,
        /// The broken statement (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
}

/// The document of the plurnk dialect.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct Document {
    /// Text, statements and errors in input order.
    pub items: Vec<Item>,
    /// Present when end of input came inside a statement.
    #[serde(rename = "unparsedTail", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "UnparsedTail")]
    pub unparsed_tail: Option<UnparsedTail>,
}

impl Document {
    /// Folds a whole event sequence (without spans).
    pub fn fold(events: &[Event]) -> Document {
        let mut folder = DocumentFolder::new(false);
        for event in events {
            folder.push(event);
        }
        folder.document
    }

    /// Whether the document has no error item and no unparsed tail (PL-24).
    pub fn is_clean(&self) -> bool {
        self.unparsed_tail.is_none() && !self.items.iter().any(|i| matches!(i, Item::Error { .. }))
    }
}

/// Builds a [`Document`] one event at a time.
#[derive(Clone, Debug, Default)]
pub struct DocumentFolder {
    document: Document,
    spans: bool,
    errors: bool,
}

impl DocumentFolder {
    /// A folder; with `spans`, items carry their input spans.
    pub fn new(spans: bool) -> Self {
        DocumentFolder {
            document: Document::default(),
            spans,
            errors: false,
        }
    }

    /// The finished document.
    pub fn into_document(self) -> Document {
        self.document
    }
}

impl Fold<Event> for DocumentFolder {
    type Document = Document;

    fn push(&mut self, event: &Event) {
        let span = self.spans.then_some(event.span());
        let items = &mut self.document.items;
        match event {
            Event::Text { text, position, .. } => match items.last_mut() {
                Some(Item::Text {
                    text: t, span: s, ..
                }) => {
                    t.push_str(text);
                    if let (Some(s), Some(with)) = (s, span) {
                        s.end = with.end;
                    }
                }
                _ => items.push(Item::Text {
                    text: text.clone(),
                    position: *position,
                    span,
                }),
            },
            Event::Statement { statement, .. } => items.push(Item::Statement {
                statement: statement.clone(),
                span,
            }),
            Event::Error { error, .. } => {
                self.errors = true;
                items.push(Item::Error {
                    error: error.clone(),
                    span,
                });
            }
            Event::Skipped { .. } => {
                if let (Some(Item::Error { span: Some(s), .. }), Some(with)) =
                    (items.last_mut(), span)
                {
                    s.end = with.end;
                }
            }
            Event::UnparsedTail { from, reason, .. } => {
                self.document.unparsed_tail = Some(UnparsedTail {
                    from: *from,
                    reason: reason.clone(),
                });
            }
        }
    }

    fn document(&self) -> &Document {
        &self.document
    }

    fn into_document(self) -> Document {
        self.document
    }

    const SETTLED_KEY: Option<&'static str> = Some("items");

    fn write_settled<S: Settle>(&mut self, out: &mut S) {
        // Only the last item can still grow or change.
        let items = &mut self.document.items;
        if items.len() > 1 {
            let n = items.len() - 1;
            for item in items.drain(..n) {
                out.element(item);
            }
        }
    }

    fn is_clean(&self) -> bool {
        !self.errors && self.document.unparsed_tail.is_none()
    }

    fn marks_unclean(event: &Event) -> bool {
        matches!(event, Event::Error { .. } | Event::UnparsedTail { .. })
    }
}

//! The folded sections document: `{"items": [...]}`.

use schemars::JsonSchema;
use serde::Serialize;

use super::attrs::Attrs;
use super::machine::Event;
use crate::fold::{Fold, Settle};
use crate::span::Span;

/// One item of the document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Item {
    /// A run of text outside sections; adjacent runs are merged.
    Text {
        /// The text.
        text: String,
        /// Where it stands in the input (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
    /// A section, from its opener to its closer (or end of input).
    Section {
        /// Canonical name.
        name: String,
        /// The spelling used in the opener.
        tag: String,
        /// Attributes in source order.
        #[schemars(with = "indexmap::IndexMap<String, String>")]
        attrs: Attrs,
        /// Everything between opener and closer, verbatim.
        content: String,
        /// False when end of input came before the closer.
        closed: bool,
        /// Present (and true) only for `<name .../>`.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        self_closing: bool,
        /// Opener to closer (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
}

/// The document of the sections dialect.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Document {
    /// Text and sections in input order.
    pub items: Vec<Item>,
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
}

/// Builds a [`Document`] one event at a time. After a `section_end`,
/// [`DocumentFolder::last`] is the completed section, ready to act on.
#[derive(Clone, Debug, Default)]
pub struct DocumentFolder {
    document: Document,
    spans: bool,
}

impl DocumentFolder {
    /// A folder; with `spans`, items carry their input spans.
    pub fn new(spans: bool) -> Self {
        DocumentFolder {
            document: Document::default(),
            spans,
        }
    }

    /// The most recent item.
    pub fn last(&self) -> Option<&Item> {
        self.document.items.last()
    }

    /// The finished document.
    pub fn into_document(self) -> Document {
        self.document
    }
}

fn extend(span: &mut Option<Span>, with: Span) {
    if let Some(s) = span {
        s.end = with.end;
    }
}

impl Fold<Event> for DocumentFolder {
    type Document = Document;

    fn push(&mut self, event: &Event) {
        let spans = self.spans;
        let items = &mut self.document.items;
        match event {
            Event::Text { text, span: s } => match items.last_mut() {
                Some(Item::Text { text: t, span }) => {
                    t.push_str(text);
                    extend(span, *s);
                }
                _ => items.push(Item::Text {
                    text: text.to_string(),
                    span: spans.then_some(*s),
                }),
            },
            Event::SectionStart {
                name,
                tag,
                attrs,
                self_closing,
                span,
            } => items.push(Item::Section {
                name: name.to_string(),
                tag: tag.to_string(),
                attrs: attrs.clone(),
                content: String::new(),
                closed: false,
                self_closing: *self_closing,
                span: spans.then_some(*span),
            }),
            Event::Content { text, span: s } => {
                if let Some(Item::Section { content, span, .. }) = items.last_mut() {
                    content.push_str(text);
                    extend(span, *s);
                }
            }
            Event::SectionEnd {
                closed: c, span: s, ..
            } => {
                if let Some(Item::Section { closed, span, .. }) = items.last_mut() {
                    *closed = *c;
                    extend(span, *s);
                }
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
}

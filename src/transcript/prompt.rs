//! Parse mode's events and its folded document (spec/transcript.md §2).

use schemars::JsonSchema;
use serde::Serialize;

use crate::fold::{Fold, Settle};
use crate::span::Span;

/// What a diagnostic is about (TR-11). Serialized in kebab-case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Code {
    /// human-assistant: the first turn is an Assistant turn.
    AssistantFirst,
    /// human-assistant: a turn has the same speaker as the one before it.
    RepeatedSpeaker,
    /// human-assistant: the last turn is a Human turn.
    HumanLast,
    /// completions, chatml: the speaker is not known.
    UnknownSpeaker,
    /// completions: a block after the first has no `Name:` header.
    MissingSpeaker,
    /// chatml: a message is cut by the next `<|im_start|>`.
    UnterminatedMessage,
    /// chatml: a role line is not ended by a newline.
    MalformedHeader,
    /// chatml: text outside any message.
    StrayText,
    /// The prompt has no turn at all.
    NoTurns,
}

/// An event of parse mode. Serialized with a `"type"` in snake_case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A turn header.
    TurnStart {
        /// The speaker it names.
        speaker: String,
        /// The header, with its optional space.
        span: Span,
    },
    /// The header of a ChatML system message.
    SystemStart {
        /// The header.
        span: Span,
    },
    /// Content of the current turn, or of the system prompt when no turn is open.
    Content {
        /// The content bytes.
        text: String,
        /// Where they stand in the input.
        span: Span,
    },
    /// The end of the current turn or system message.
    TurnEnd {
        /// Whether the turn is the open final turn.
        open: bool,
        /// The terminator, or zero-width.
        span: Span,
    },
    /// Newlines between turns that belong to no content.
    Separator {
        /// The newlines.
        text: String,
        /// Where they stand in the input.
        span: Span,
    },
    /// Text outside any message (chatml).
    Stray {
        /// The text.
        text: String,
        /// Where it stands in the input.
        span: Span,
    },
    /// A violation of the format; zero-width.
    Diagnostic {
        /// What is wrong.
        code: Code,
        /// Byte offset of the header concerned (0 for `no-turns`).
        offset: usize,
        /// The speaker, for `unknown-speaker`.
        #[serde(skip_serializing_if = "Option::is_none")]
        speaker: Option<String>,
        /// Where it was decided (zero-width).
        span: Span,
    },
}

/// One turn of the conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Message {
    /// Who speaks.
    pub speaker: String,
    /// What they say, verbatim.
    pub content: String,
    /// Header to end (only with spans requested).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Span")]
    pub span: Option<Span>,
}

/// A violation found while parsing (TR-11).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Diagnostic {
    /// What is wrong.
    pub code: Code,
    /// Byte offset of the header or text concerned.
    pub offset: usize,
    /// The speaker, for `unknown-speaker`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub speaker: Option<String>,
    /// The text, for `stray-text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub text: Option<String>,
}

/// The document of parse mode (TR-10).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PromptDocument {
    /// The system prompt, if any.
    pub system: Option<String>,
    /// The complete turns, in input order.
    pub messages: Vec<Message>,
    /// The open final turn, if the prompt ends with one.
    pub open: Option<Message>,
    /// Violations, in the order they were found.
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Debug, Default)]
enum Current {
    #[default]
    None,
    System,
    Turn(Message),
}

/// Folds parse-mode [`Event`]s into a [`PromptDocument`].
#[derive(Clone, Debug, Default)]
pub struct PromptFolder {
    document: PromptDocument,
    current: Current,
    spans: bool,
}

impl PromptFolder {
    /// A folder; with `spans`, messages carry their input spans.
    pub fn new(spans: bool) -> Self {
        PromptFolder {
            spans,
            ..Default::default()
        }
    }

    /// The finished document.
    pub fn into_document(self) -> PromptDocument {
        self.document
    }
}

fn extend(span: &mut Option<Span>, with: Span) {
    if let Some(s) = span {
        s.end = with.end;
    }
}

impl Fold<Event> for PromptFolder {
    type Document = PromptDocument;

    fn push(&mut self, event: &Event) {
        let doc = &mut self.document;
        match event {
            Event::TurnStart { speaker, span } => {
                self.current = Current::Turn(Message {
                    speaker: speaker.clone(),
                    content: String::new(),
                    span: self.spans.then_some(*span),
                })
            }
            Event::SystemStart { .. } => {
                doc.system = Some(String::new());
                self.current = Current::System;
            }
            Event::Content { text, span } => match &mut self.current {
                Current::Turn(message) => {
                    message.content.push_str(text);
                    extend(&mut message.span, *span);
                }
                _ => doc.system.get_or_insert_with(String::new).push_str(text),
            },
            Event::TurnEnd { open, span } => {
                if let Current::Turn(mut message) = std::mem::take(&mut self.current) {
                    extend(&mut message.span, *span);
                    if *open {
                        doc.open = Some(message);
                    } else {
                        doc.messages.push(message);
                    }
                }
            }
            Event::Separator { .. } => {}
            Event::Stray { text, span } => match doc.diagnostics.last_mut() {
                Some(d)
                    if d.code == Code::StrayText
                        && d.text
                            .as_ref()
                            .is_some_and(|t| d.offset + t.len() == span.start) =>
                {
                    if let Some(t) = &mut d.text {
                        t.push_str(text);
                    }
                }
                _ => doc.diagnostics.push(Diagnostic {
                    code: Code::StrayText,
                    offset: span.start,
                    speaker: None,
                    text: Some(text.clone()),
                }),
            },
            Event::Diagnostic {
                code,
                offset,
                speaker,
                ..
            } => doc.diagnostics.push(Diagnostic {
                code: *code,
                offset: *offset,
                speaker: speaker.clone(),
                text: None,
            }),
        }
    }

    fn document(&self) -> &PromptDocument {
        &self.document
    }

    fn into_document(self) -> PromptDocument {
        PromptFolder::into_document(self)
    }

    const SETTLED_KEY: Option<&'static str> = Some("messages");
    const SETTLED_HELD: bool = true;

    fn write_settled<S: Settle>(&mut self, out: &mut S) {
        // A message is pushed complete (at its turn's end) and never changes.
        for message in self.document.messages.drain(..) {
            out.element(message);
        }
    }

    fn is_clean(&self) -> bool {
        self.document.diagnostics.is_empty()
    }

    fn marks_unclean(event: &Event) -> bool {
        matches!(event, Event::Stray { .. } | Event::Diagnostic { .. })
    }
}

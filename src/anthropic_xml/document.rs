//! The folded anthropic-xml document: `{"blocks": [...]}` (AX-23).

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::event::Event;
use crate::fold::{Fold, Settle};
use crate::span::Span;

/// One tool call.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Call {
    /// The tool name.
    pub name: String,
    /// Raw parameter values in source order.
    pub params: IndexMap<String, String>,
    /// Typed parameter values.
    pub input: Map<String, Value>,
    /// Closed by its own closer inside a closed block: safe to run (AX-12).
    pub complete: bool,
}

/// One tool result or error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ToolResult {
    /// The `tool_use_id` attribute, or `null`.
    pub tool_use_id: Option<String>,
    /// True for an error element.
    pub is_error: bool,
    /// The content, entities decoded.
    pub content: String,
}

/// A top-level block.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Block {
    /// A maximal run of prose.
    Text {
        /// The prose.
        text: String,
        /// Its bytes (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
    /// A thinking block.
    Thinking {
        /// Its text, verbatim.
        text: String,
        /// False when end of input came before the closer.
        closed: bool,
        /// Opener to closer (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
    /// A tool-call block.
    ToolCalls {
        /// The calls in source order.
        calls: Vec<Call>,
        /// False when end of input came before the closer.
        closed: bool,
        /// Stray runs that are not all whitespace (AX-8).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        stray: Vec<String>,
        /// Opener to closer (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
    /// A tool-result block.
    ToolResults {
        /// The results in source order.
        results: Vec<ToolResult>,
        /// False when end of input came before the closer.
        closed: bool,
        /// Stray runs that are not all whitespace (AX-15).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        stray: Vec<String>,
        /// Opener to closer (only with spans requested).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Span")]
        span: Option<Span>,
    },
}

/// The document of the anthropic-xml dialect.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct Document {
    /// The top-level blocks in input order.
    pub blocks: Vec<Block>,
}

impl Document {
    /// Folds a whole event sequence (without spans).
    pub fn fold(events: &[Event]) -> Document {
        let mut folder = DocumentFolder::new(false);
        for event in events {
            folder.push(event);
        }
        folder.into_document()
    }

    /// Every call of every tool-call block, in order.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.blocks.iter().flat_map(|b| match b {
            Block::ToolCalls { calls, .. } => calls.as_slice(),
            _ => &[],
        })
    }
}

/// Builds a [`Document`] one event at a time.
#[derive(Clone, Debug, Default)]
pub struct DocumentFolder {
    document: Document,
    spans: bool,
    /// The stray run being gathered; listed when the next element or the block end
    /// comes, if it is not all whitespace.
    stray: String,
    /// The parameter whose value deltas are arriving.
    param: String,
    /// Blocks already written out and dropped ([`Fold::write_settled`]).
    settled: usize,
}

impl DocumentFolder {
    /// A folder; with `spans`, blocks carry their input spans.
    pub fn new(spans: bool) -> Self {
        DocumentFolder {
            spans,
            ..DocumentFolder::default()
        }
    }

    /// The finished document.
    pub fn into_document(self) -> Document {
        self.document
    }

    fn flush_stray(&mut self) {
        if self.stray.trim().is_empty() {
            self.stray.clear();
            return;
        }
        let run = std::mem::take(&mut self.stray);
        if let Some(Block::ToolCalls { stray, .. } | Block::ToolResults { stray, .. }) =
            self.document.blocks.last_mut()
        {
            stray.push(run);
        }
    }

    fn last_call(&mut self) -> Option<&mut Call> {
        match self.document.blocks.last_mut() {
            Some(Block::ToolCalls { calls, .. }) => calls.last_mut(),
            _ => None,
        }
    }

    fn push_block(&mut self, block: Block) {
        self.document.blocks.push(block);
    }

    fn extend_span(&mut self, with: Span) {
        if !self.spans {
            return;
        }
        let span = match self.document.blocks.last_mut() {
            Some(
                Block::Text { span, .. }
                | Block::Thinking { span, .. }
                | Block::ToolCalls { span, .. }
                | Block::ToolResults { span, .. },
            ) => span,
            None => return,
        };
        match span {
            Some(s) => s.end = with.end,
            None => *span = Some(with),
        }
    }
}

impl Fold<Event> for DocumentFolder {
    type Document = Document;

    fn push(&mut self, event: &Event) {
        match event {
            Event::Text { text, index, .. } => {
                // A new index starts a new prose block; the same index continues it.
                let continues = self.settled + self.document.blocks.len() == index + 1;
                match self.document.blocks.last_mut() {
                    Some(Block::Text { text: t, .. }) if continues => t.push_str(text),
                    _ => self.push_block(Block::Text {
                        text: text.to_string(),
                        span: None,
                    }),
                }
            }
            Event::ThinkingStart { .. } => self.push_block(Block::Thinking {
                text: String::new(),
                closed: false,
                span: None,
            }),
            Event::ThinkingDelta { text, .. } => {
                if let Some(Block::Thinking { text: t, .. }) = self.document.blocks.last_mut() {
                    t.push_str(text);
                }
            }
            Event::ThinkingEnd { closed, .. } => {
                if let Some(Block::Thinking { closed: c, .. }) = self.document.blocks.last_mut() {
                    *c = *closed;
                }
            }
            Event::ToolCallsStart { .. } => self.push_block(Block::ToolCalls {
                calls: Vec::new(),
                closed: false,
                stray: Vec::new(),
                span: None,
            }),
            Event::InvokeStart { name, .. } => {
                self.flush_stray();
                if let Some(Block::ToolCalls { calls, .. }) = self.document.blocks.last_mut() {
                    calls.push(Call {
                        name: name.to_string(),
                        params: IndexMap::new(),
                        input: Map::new(),
                        complete: false,
                    });
                }
            }
            Event::ParameterStart { name, .. } => {
                self.flush_stray();
                self.param = name.to_string();
                let param = self.param.clone();
                if let Some(call) = self.last_call() {
                    call.params.insert(param, String::new());
                }
            }
            Event::ParameterDelta { text, .. } => {
                let param = self.param.clone();
                if let Some(value) = self.last_call().and_then(|c| c.params.get_mut(&param)) {
                    value.push_str(text);
                }
            }
            Event::ParameterEnd { .. } => {}
            Event::InvokeEnd {
                params,
                input,
                closed,
                ..
            } => {
                self.flush_stray();
                if let Some(call) = self.last_call() {
                    call.params = params.as_ref().clone();
                    call.input = input.as_ref().clone();
                    call.complete = *closed;
                }
            }
            Event::ToolCallsEnd { closed, .. } => {
                self.flush_stray();
                if let Some(Block::ToolCalls {
                    calls, closed: c, ..
                }) = self.document.blocks.last_mut()
                {
                    *c = *closed;
                    if !closed {
                        calls.iter_mut().for_each(|call| call.complete = false);
                    }
                }
            }
            Event::ToolResultsStart { .. } => self.push_block(Block::ToolResults {
                results: Vec::new(),
                closed: false,
                stray: Vec::new(),
                span: None,
            }),
            Event::ResultStart {
                tool_use_id,
                is_error,
                ..
            } => {
                self.flush_stray();
                if let Some(Block::ToolResults { results, .. }) = self.document.blocks.last_mut() {
                    results.push(ToolResult {
                        tool_use_id: tool_use_id.clone(),
                        is_error: *is_error,
                        content: String::new(),
                    });
                }
            }
            Event::ResultDelta { text, .. } => {
                if let Some(Block::ToolResults { results, .. }) = self.document.blocks.last_mut() {
                    if let Some(result) = results.last_mut() {
                        result.content.push_str(text);
                    }
                }
            }
            Event::ResultEnd { .. } => {}
            Event::ToolResultsEnd { closed, .. } => {
                self.flush_stray();
                if let Some(Block::ToolResults { closed: c, .. }) = self.document.blocks.last_mut()
                {
                    *c = *closed;
                }
            }
            Event::Stray { text, .. } => self.stray.push_str(text),
        }
        self.extend_span(event.span());
    }

    fn document(&self) -> &Document {
        &self.document
    }

    fn into_document(self) -> Document {
        self.document
    }

    const SETTLED_KEY: Option<&'static str> = Some("blocks");

    fn write_settled<S: Settle>(&mut self, out: &mut S) {
        // Only the last block can still grow or change.
        let blocks = &mut self.document.blocks;
        if blocks.len() > 1 {
            let n = blocks.len() - 1;
            for block in blocks.drain(..n) {
                out.element(block);
            }
            self.settled += n;
        }
    }
}

//! The events of the anthropic-xml dialect (AX-19).

use compact_str::CompactString;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::span::Span;

/// An event of the anthropic-xml dialect. Serialized with a `"type"` in snake_case.
///
/// `index` is the top-level block the event belongs to (AX-20); `call` and `result`
/// are positions within that block.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Prose at top level, emitted as soon as it cannot belong to a tag.
    Text {
        /// Block index.
        index: usize,
        /// The text.
        text: CompactString,
        /// Where it stands in the input.
        span: Span,
    },
    /// A thinking block opened (span: the opener).
    ThinkingStart {
        /// Block index.
        index: usize,
        /// The opener.
        span: Span,
    },
    /// Thinking text, verbatim.
    ThinkingDelta {
        /// Block index.
        index: usize,
        /// The text.
        text: CompactString,
        /// Where it stands in the input.
        span: Span,
    },
    /// The thinking block ended: at its closer, or at end of input (`closed: false`).
    ThinkingEnd {
        /// Block index.
        index: usize,
        /// False when end of input came first.
        closed: bool,
        /// The closer (zero-width at end of input).
        span: Span,
    },
    /// A tool-call block opened.
    ToolCallsStart {
        /// Block index.
        index: usize,
        /// The opener.
        span: Span,
    },
    /// An invoke opened; the name is known at once.
    InvokeStart {
        /// Block index.
        index: usize,
        /// Position of the call in its block.
        call: usize,
        /// The tool name, entity-decoded.
        name: CompactString,
        /// The opener.
        span: Span,
    },
    /// A parameter opened.
    ParameterStart {
        /// Block index.
        index: usize,
        /// Position of the call in its block.
        call: usize,
        /// The parameter name, entity-decoded.
        name: CompactString,
        /// The opener.
        span: Span,
    },
    /// A piece of a parameter value, verbatim.
    ParameterDelta {
        /// Block index.
        index: usize,
        /// Position of the call in its block.
        call: usize,
        /// The bytes of the value.
        text: CompactString,
        /// Where they stand in the input.
        span: Span,
    },
    /// A parameter ended.
    ParameterEnd {
        /// Block index.
        index: usize,
        /// Position of the call in its block.
        call: usize,
        /// The parameter name.
        name: CompactString,
        /// False when end of input came first.
        closed: bool,
        /// The closer alone (zero-width when self-closing or at end of input).
        span: Span,
    },
    /// An invoke ended, carrying the whole call.
    InvokeEnd {
        /// Block index.
        index: usize,
        /// Position of the call in its block.
        call: usize,
        /// The tool name.
        name: CompactString,
        /// Raw parameter values, in source order (boxed to keep every event small).
        params: Box<IndexMap<String, String>>,
        /// Typed parameter values (AX-13, AX-14).
        input: Box<Map<String, Value>>,
        /// True when the call's own closer (or a self-closing opener) ended it.
        closed: bool,
        /// The closer (zero-width otherwise).
        span: Span,
    },
    /// The tool-call block ended.
    ToolCallsEnd {
        /// Block index.
        index: usize,
        /// False when end of input came first.
        closed: bool,
        /// The closer (zero-width at end of input).
        span: Span,
    },
    /// A tool-result block opened.
    ToolResultsStart {
        /// Block index.
        index: usize,
        /// The opener.
        span: Span,
    },
    /// A result or error element opened.
    ResultStart {
        /// Block index.
        index: usize,
        /// Position of the result in its block.
        result: usize,
        /// The `tool_use_id` attribute, if any.
        tool_use_id: Option<String>,
        /// True for an error element.
        is_error: bool,
        /// The opener.
        span: Span,
    },
    /// A piece of result content, entities decoded.
    ResultDelta {
        /// Block index.
        index: usize,
        /// Position of the result in its block.
        result: usize,
        /// The decoded text.
        text: CompactString,
        /// The raw bytes it came from.
        span: Span,
    },
    /// A result or error element ended.
    ResultEnd {
        /// Block index.
        index: usize,
        /// Position of the result in its block.
        result: usize,
        /// False when end of input came first.
        closed: bool,
        /// The closer (zero-width when self-closing or at end of input).
        span: Span,
    },
    /// The tool-result block ended.
    ToolResultsEnd {
        /// Block index.
        index: usize,
        /// False when end of input came first.
        closed: bool,
        /// The closer (zero-width at end of input).
        span: Span,
    },
    /// Bytes of a block outside its elements (AX-8): whitespace, stray text, tags
    /// that are not structure there.
    Stray {
        /// Block index.
        index: usize,
        /// The bytes.
        text: CompactString,
        /// Where they stand in the input.
        span: Span,
    },
}

impl Event {
    /// The input bytes this event covers.
    pub fn span(&self) -> Span {
        match self {
            Event::Text { span, .. }
            | Event::ThinkingStart { span, .. }
            | Event::ThinkingDelta { span, .. }
            | Event::ThinkingEnd { span, .. }
            | Event::ToolCallsStart { span, .. }
            | Event::InvokeStart { span, .. }
            | Event::ParameterStart { span, .. }
            | Event::ParameterDelta { span, .. }
            | Event::ParameterEnd { span, .. }
            | Event::InvokeEnd { span, .. }
            | Event::ToolCallsEnd { span, .. }
            | Event::ToolResultsStart { span, .. }
            | Event::ResultStart { span, .. }
            | Event::ResultDelta { span, .. }
            | Event::ResultEnd { span, .. }
            | Event::ToolResultsEnd { span, .. }
            | Event::Stray { span, .. } => *span,
        }
    }

    /// The top-level block this event belongs to.
    pub fn index(&self) -> usize {
        match self {
            Event::Text { index, .. }
            | Event::ThinkingStart { index, .. }
            | Event::ThinkingDelta { index, .. }
            | Event::ThinkingEnd { index, .. }
            | Event::ToolCallsStart { index, .. }
            | Event::InvokeStart { index, .. }
            | Event::ParameterStart { index, .. }
            | Event::ParameterDelta { index, .. }
            | Event::ParameterEnd { index, .. }
            | Event::InvokeEnd { index, .. }
            | Event::ToolCallsEnd { index, .. }
            | Event::ToolResultsStart { index, .. }
            | Event::ResultStart { index, .. }
            | Event::ResultDelta { index, .. }
            | Event::ResultEnd { index, .. }
            | Event::ToolResultsEnd { index, .. }
            | Event::Stray { index, .. } => *index,
        }
    }
}

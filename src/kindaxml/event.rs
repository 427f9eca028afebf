//! The events of the kindaxml dialect (KX-23): output text, tags read, decided
//! annotations and markers, and other markup.

use compact_str::CompactString;
use schemars::JsonSchema;
use serde::Serialize;

use super::attrs::Attrs;
use crate::span::Span;

/// How an annotation's span was chosen (`recovery`, KX-22).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Closed by its own end tag.
    Explicit,
    /// A self-closing tag's marker or target.
    SelfClosing,
    /// Chosen by `retro_line`.
    RetroLine,
    /// Chosen by `forward_until_tag`.
    ForwardUntilTag,
    /// Chosen by `forward_until_newline`.
    ForwardUntilNewline,
    /// Chosen by `forward_next_token`.
    ForwardNextToken,
}

/// Markup that produces no output text and decides no annotation (KX-23).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkupKind {
    /// An unknown tag under `unknown_mode: "strip"`.
    UnknownTag,
    /// A stray recognized end tag under `stray_end_tag_policy: "drop"`.
    StrayEndTag,
    /// `<![CDATA[`.
    CdataStart,
    /// `]]>` closing a literal block.
    CdataEnd,
    /// The backslash of `\<` or `\>`.
    Escape,
}

/// An event of the kindaxml dialect. Serialized with a `"type"` in snake_case; `span`
/// is always the input range, output positions are in the other fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Output text, emitted as soon as it cannot be markup.
    Text {
        /// The text.
        text: CompactString,
        /// Its output position.
        pos: usize,
        /// Where it comes from in the input.
        span: Span,
    },
    /// A recognized start tag (or a self-closing tag with a forward target) was read.
    Open {
        /// The tag as configured.
        tag: CompactString,
        /// Its attributes.
        attrs: Attrs,
        /// Its output position.
        pos: usize,
        /// The tag.
        span: Span,
    },
    /// A decided annotation of the output range `[start, end)`.
    Annotation {
        /// The tag as configured.
        tag: CompactString,
        /// Its attributes.
        attrs: Attrs,
        /// First output byte annotated.
        start: usize,
        /// One past the last output byte annotated.
        end: usize,
        /// How the span was chosen (only with `recovery_metadata`).
        #[serde(skip_serializing_if = "Option::is_none")]
        recovery: Option<Recovery>,
        /// The end tag that closed it, or zero-width where it was decided.
        span: Span,
    },
    /// A decided zero-width annotation.
    Marker {
        /// Its output position.
        pos: usize,
        /// The tag as configured.
        tag: CompactString,
        /// Its attributes.
        attrs: Attrs,
        /// How it came about (only with `recovery_metadata`).
        #[serde(skip_serializing_if = "Option::is_none")]
        recovery: Option<Recovery>,
        /// The self-closing or end tag, or zero-width where it was decided.
        span: Span,
    },
    /// Other markup, removed from the output text.
    Markup {
        /// What it was.
        kind: MarkupKind,
        /// The output position it stood at.
        pos: usize,
        /// The markup.
        span: Span,
    },
}

impl Event {
    /// The input bytes this event covers.
    pub fn span(&self) -> Span {
        match self {
            Event::Text { span, .. }
            | Event::Open { span, .. }
            | Event::Annotation { span, .. }
            | Event::Marker { span, .. }
            | Event::Markup { span, .. } => *span,
        }
    }
}

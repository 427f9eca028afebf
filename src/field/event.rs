//! The events of every field family: reasoning, text and tool calls as they are
//! decided.

use super::input::Input;
use crate::span::Span;
use compact_str::CompactString;
use serde::{Deserialize, Serialize};

/// An event of a field family. Serialized with a `"type"` in snake_case.
///
/// In emission order the spans tile the input (S8): markers, the whitespace a
/// family's template puts around them and the bytes of a dropped call are covered
/// by [`Event::Markup`] or by the span of the start or end event they decide.
/// The `arguments` text of a call is the concatenation of its
/// [`Event::ArgumentsDelta`] texts, in order.
///
/// Texts, names and ids are [`CompactString`]s: a string of up to 24 bytes (what a
/// streamed token or two decides) is held inline, without a heap allocation; each
/// derefs to `&str` and serializes as a JSON string, exactly as a `String` would.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Event {
    /// A reasoning item begins (span: its opener, or zero-width when the output
    /// starts inside reasoning or reasoning resumes after a call).
    ReasoningStart {
        /// The opener.
        span: Span,
    },
    /// Reasoning text, verbatim.
    ReasoningDelta {
        /// The text.
        text: CompactString,
        /// Where it stands in the input.
        span: Span,
    },
    /// The reasoning item ended: at its closer or at a call that breaks out of it
    /// (`closed: true`), or at end of input (`closed: false`).
    ReasoningEnd {
        /// False when the input ended inside the reasoning.
        closed: bool,
        /// The closer (zero-width otherwise).
        span: Span,
    },
    /// Answer text, verbatim, emitted as soon as it cannot belong to a marker.
    Text {
        /// The text.
        text: CompactString,
        /// Where it stands in the input.
        span: Span,
    },
    /// A tool call begins: emitted as soon as its name is complete.
    ToolCallStart {
        /// The call's position among the tool calls of the turn, from 0.
        index: usize,
        /// The family's call id, or `null` when the family writes none.
        id: Option<CompactString>,
        /// The tool's name.
        name: CompactString,
        /// The markup up to the end of the name.
        span: Span,
    },
    /// A fragment of the call's arguments JSON text.
    ArgumentsDelta {
        /// The call.
        index: usize,
        /// The fragment.
        text: CompactString,
        /// The bytes it was decided by (zero-width for text the family builds, such
        /// as the braces around XML parameters).
        span: Span,
    },
    /// The tool call ended. `complete` is true only when the call's markup and its
    /// arguments are whole and the arguments are valid JSON: a consumer runs only
    /// complete calls.
    ToolCallEnd {
        /// The call.
        index: usize,
        /// Whether the call may be run.
        complete: bool,
        /// The arguments as a JSON value (the typed input), or `null` when they
        /// are not valid JSON; held as compact JSON text ([`Input`]).
        input: Input,
        /// The markup that ended the call (zero-width at end of input).
        span: Span,
    },
    /// Markup with no content of its own: a marker, the whitespace around it, the
    /// rest of a malformed call, an incomplete call dropped at end of input.
    Markup {
        /// The bytes.
        span: Span,
    },
}

impl Event {
    /// The event's span.
    pub fn span(&self) -> Span {
        match self {
            Event::ReasoningStart { span }
            | Event::ReasoningDelta { span, .. }
            | Event::ReasoningEnd { span, .. }
            | Event::Text { span, .. }
            | Event::ToolCallStart { span, .. }
            | Event::ArgumentsDelta { span, .. }
            | Event::ToolCallEnd { span, .. }
            | Event::Markup { span } => *span,
        }
    }
}

impl Event {
    /// Whether the event owns no heap memory (no text, or texts held inline), so
    /// that forgetting it loses nothing.
    #[inline(always)]
    fn owns_nothing(&self) -> bool {
        match self {
            Event::Markup { .. } | Event::ReasoningStart { .. } | Event::ReasoningEnd { .. } => {
                true
            }
            Event::Text { text, .. }
            | Event::ReasoningDelta { text, .. }
            | Event::ArgumentsDelta { text, .. } => !text.is_heap_allocated(),
            Event::ToolCallStart { .. } | Event::ToolCallEnd { .. } => false,
        }
    }

    /// Empties `events`: when none of them owns heap memory (most chunks' events
    /// at a streamed token's size) without dropping them one by one, else as
    /// `Vec::clear`. For [`Machine::release`](crate::reentry::Machine::release).
    #[inline]
    pub(crate) fn release(events: &mut Vec<Event>) {
        if events.iter().all(Event::owns_nothing) {
            // SAFETY: length 0 leaves no element to be read; the elements are
            // not dropped, and none of them owns anything to free.
            unsafe { events.set_len(0) }
        } else {
            events.clear();
        }
    }
}

impl crate::fold::Spanned for Event {
    fn span(&self) -> Span {
        Event::span(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Event;
    use crate::field::{CompactString, Input};
    use crate::span::Span;

    /// Only events whose texts are all inline count as owning nothing; `release`
    /// empties a list either way.
    #[test]
    fn release_skips_drops_only_when_nothing_is_owned() {
        let span = Span::new(0, 1);
        let text = |s: &str| Event::Text {
            text: CompactString::from(s),
            span,
        };
        let long = "x".repeat(100);
        assert!(text("short").owns_nothing());
        assert!(Event::Markup { span }.owns_nothing());
        assert!(!text(&long).owns_nothing());
        let end = Event::ToolCallEnd {
            index: 0,
            complete: true,
            input: Input::NULL,
            span,
        };
        assert!(!end.owns_nothing());
        for mut events in [
            vec![text("a"), Event::Markup { span }],
            vec![text("a"), text(&long), end],
        ] {
            Event::release(&mut events);
            assert!(events.is_empty());
        }
    }
}

//! The delta projection: a field family's events as OpenAI chat-completion deltas,
//! the shape inference servers stream to their clients.
//!
//! Each [`Delta`] is one `choices[0].delta` object: `content`, `reasoning`, or
//! `tool_calls` with one entry carrying `index`, and on the call's first delta its
//! `id`, `type: "function"` and `function.name`, then `function.arguments`
//! fragments. Concatenating the `content` of every delta gives the document's text,
//! the `reasoning` its reasoning, and per index the `arguments` fragments the call's
//! `arguments`.
//!
//! [`DeltaMode::Live`] streams argument fragments as they are decided;
//! [`DeltaMode::WholeCalls`] releases each call in one delta when it ends complete,
//! so a consumer that executes whatever arrives never sees an incomplete call: an
//! incomplete call produces no delta at all (and its markup never produced any).
//!
//! Texts are [`CompactString`]s, as in [`Event`]: a fragment of up to 24 bytes is
//! held inline, without a heap allocation; each serializes exactly as a `String`
//! would.

use compact_str::CompactString;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::event::Event;

/// How tool calls are released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeltaMode {
    /// Name at the call's start, argument fragments as they arrive.
    #[default]
    Live,
    /// Each complete call in one delta when it ends; incomplete calls never appear.
    WholeCalls,
}

/// The `function` part of a tool-call delta.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionDelta {
    /// The tool's name: on the call's first delta only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<CompactString>,
    /// A fragment of the arguments JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<CompactString>,
}

/// One entry of a delta's `tool_calls`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// The call's position among the turn's tool calls.
    pub index: usize,
    /// The call id (on the first delta; `null` when the family writes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Option<CompactString>>,
    /// `"function"`, on the first delta.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<CompactString>,
    /// Name and argument fragments.
    pub function: FunctionDelta,
}

/// `"function"`, the `type` of a call's first delta (inline: no allocation).
const FUNCTION: CompactString = CompactString::const_new("function");

/// One chat-completion delta.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delta {
    /// Answer text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<CompactString>,
    /// Reasoning text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<CompactString>,
    /// Tool-call fragments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

impl Delta {
    fn call(entry: ToolCallDelta) -> Delta {
        Delta {
            tool_calls: Some(vec![entry]),
            ..Delta::default()
        }
    }
}

/// A call held back in [`DeltaMode::WholeCalls`].
#[derive(Clone, Debug)]
struct HeldCall {
    id: Option<CompactString>,
    name: CompactString,
    arguments: CompactString,
}

/// Turns field events into chat-completion deltas (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DeltaProjection {
    mode: DeltaMode,
    held: IndexMap<usize, HeldCall>,
}

impl DeltaProjection {
    /// A projection in `mode`.
    pub fn new(mode: DeltaMode) -> Self {
        DeltaProjection {
            mode,
            held: IndexMap::new(),
        }
    }

    /// Projects one event; pushes the deltas it releases (none for markup).
    pub fn push(&mut self, event: &Event, out: &mut Vec<Delta>) {
        match event {
            Event::Text { text, .. } | Event::ReasoningDelta { text, .. } if text.is_empty() => {}
            Event::Text { .. }
            | Event::ReasoningDelta { .. }
            | Event::ToolCallStart { .. }
            | Event::ArgumentsDelta { .. } => self.push_owned(event.clone(), out),
            Event::ToolCallEnd {
                index, complete, ..
            } => self.end_call(*index, *complete, out),
            _ => {}
        }
    }

    /// [`DeltaProjection::push`] for an event the caller gives up (as it comes out
    /// of a parser's `feed`): its texts move into the deltas instead of being copied.
    pub fn push_owned(&mut self, event: Event, out: &mut Vec<Delta>) {
        match event {
            Event::Text { text, .. } if !text.is_empty() => out.push(Delta {
                content: Some(text),
                ..Delta::default()
            }),
            Event::ReasoningDelta { text, .. } if !text.is_empty() => out.push(Delta {
                reasoning: Some(text),
                ..Delta::default()
            }),
            Event::ToolCallStart {
                index, id, name, ..
            } => match self.mode {
                DeltaMode::Live => out.push(Delta::call(ToolCallDelta {
                    index,
                    id: Some(id),
                    kind: Some(FUNCTION),
                    function: FunctionDelta {
                        name: Some(name),
                        arguments: None,
                    },
                })),
                DeltaMode::WholeCalls => {
                    self.held.insert(
                        index,
                        HeldCall {
                            id,
                            name,
                            arguments: CompactString::default(),
                        },
                    );
                }
            },
            Event::ArgumentsDelta { index, text, .. } if !text.is_empty() => match self.mode {
                DeltaMode::Live => out.push(Delta::call(ToolCallDelta {
                    index,
                    id: None,
                    kind: None,
                    function: FunctionDelta {
                        name: None,
                        arguments: Some(text),
                    },
                })),
                DeltaMode::WholeCalls => {
                    if let Some(call) = self.held.get_mut(&index) {
                        call.arguments.push_str(&text);
                    }
                }
            },
            Event::ToolCallEnd {
                index, complete, ..
            } => self.end_call(index, complete, out),
            _ => {}
        }
    }

    /// Call `index` ended: a held call is released when it is complete.
    fn end_call(&mut self, index: usize, complete: bool, out: &mut Vec<Delta>) {
        if let Some(call) = self.held.shift_remove(&index) {
            if complete {
                out.push(Delta::call(ToolCallDelta {
                    index,
                    id: Some(call.id),
                    kind: Some(FUNCTION),
                    function: FunctionDelta {
                        name: Some(call.name),
                        arguments: Some(call.arguments),
                    },
                }));
            }
        }
    }

    /// Projects a whole event list.
    pub fn project(mode: DeltaMode, events: &[Event]) -> Vec<Delta> {
        let mut projection = DeltaProjection::new(mode);
        let mut out = Vec::new();
        events.iter().for_each(|e| projection.push(e, &mut out));
        out
    }
}

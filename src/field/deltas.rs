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
    pub tool_calls: Option<ToolCalls>,
}

impl Delta {
    fn call(entry: ToolCallDelta) -> Delta {
        Delta {
            tool_calls: Some(ToolCalls::from(vec![entry])),
            ..Delta::default()
        }
    }
}

/// The `tool_calls` of a [`Delta`]: a list of [`ToolCallDelta`] entries,
/// serialized as a JSON list.
///
/// The common entry, a fragment of a call's arguments and nothing else, is held
/// inline (its index and text), so that a delta per streamed token costs no heap
/// allocation; any other list is held as a `Vec`. Iterating (by value with
/// `into_iter`, or [`ToolCalls::iter`]) gives the entries as [`ToolCallDelta`]s
/// whatever the form, and equal lists compare equal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCalls(Calls);

/// The two forms of [`ToolCalls`]; a list that is one bare fragment is always held
/// as `Fragment`, so the derived equality is the lists' equality.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Calls {
    /// One entry with only `index` and `function.arguments`.
    Fragment {
        index: usize,
        arguments: CompactString,
    },
    /// Any other list.
    List(Vec<ToolCallDelta>),
}

impl ToolCalls {
    /// One entry carrying a fragment of call `index`'s arguments.
    #[inline]
    pub fn fragment(index: usize, arguments: CompactString) -> Self {
        ToolCalls(Calls::Fragment { index, arguments })
    }

    /// How many entries the list has.
    pub fn len(&self) -> usize {
        match &self.0 {
            Calls::Fragment { .. } => 1,
            Calls::List(list) => list.len(),
        }
    }

    /// Whether the list has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, in order, as copies (a bare fragment is built as its entry).
    pub fn iter(&self) -> ToolCallsIter {
        self.clone().into_iter()
    }

    /// The entries as a `Vec`.
    pub fn into_vec(self) -> Vec<ToolCallDelta> {
        self.into_iter().collect()
    }
}

/// The entry of a bare argument fragment.
#[inline]
fn fragment_entry(index: usize, arguments: CompactString) -> ToolCallDelta {
    ToolCallDelta {
        index,
        id: None,
        kind: None,
        function: FunctionDelta {
            name: None,
            arguments: Some(arguments),
        },
    }
}

impl From<Vec<ToolCallDelta>> for ToolCalls {
    /// The list; one bare fragment is held inline.
    fn from(mut list: Vec<ToolCallDelta>) -> Self {
        if let [ToolCallDelta {
            id: None,
            kind: None,
            function:
                FunctionDelta {
                    name: None,
                    arguments: Some(_),
                },
            ..
        }] = list.as_slice()
        {
            if let Some(ToolCallDelta {
                index,
                function:
                    FunctionDelta {
                        arguments: Some(arguments),
                        ..
                    },
                ..
            }) = list.pop()
            {
                return ToolCalls::fragment(index, arguments);
            }
        }
        ToolCalls(Calls::List(list))
    }
}

/// The by-value iterator of [`ToolCalls`].
#[derive(Debug)]
pub struct ToolCallsIter(CallsIter);

#[derive(Debug)]
enum CallsIter {
    /// A bare fragment, built as its entry when it is taken.
    Fragment {
        index: usize,
        arguments: Option<CompactString>,
    },
    List(std::vec::IntoIter<ToolCallDelta>),
}

impl Iterator for ToolCallsIter {
    type Item = ToolCallDelta;

    #[inline]
    fn next(&mut self) -> Option<ToolCallDelta> {
        match &mut self.0 {
            CallsIter::Fragment { index, arguments } => arguments
                .take()
                .map(|arguments| fragment_entry(*index, arguments)),
            CallsIter::List(list) => list.next(),
        }
    }
}

impl IntoIterator for ToolCalls {
    type Item = ToolCallDelta;
    type IntoIter = ToolCallsIter;

    #[inline]
    fn into_iter(self) -> ToolCallsIter {
        ToolCallsIter(match self.0 {
            Calls::Fragment { index, arguments } => CallsIter::Fragment {
                index,
                arguments: Some(arguments),
            },
            Calls::List(list) => CallsIter::List(list.into_iter()),
        })
    }
}

impl IntoIterator for &ToolCalls {
    type Item = ToolCallDelta;
    type IntoIter = ToolCallsIter;

    /// [`ToolCalls::iter`].
    fn into_iter(self) -> ToolCallsIter {
        self.iter()
    }
}

impl Serialize for ToolCalls {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for entry in self.iter() {
            seq.serialize_element(&entry)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for ToolCalls {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<ToolCallDelta>::deserialize(deserializer).map(ToolCalls::from)
    }
}

/// A delta as [`DeltaProjection::push_lent`] lends it: the same delta as the
/// [`Delta`] that [`DeltaProjection::push`] builds for the event (`Delta::from`
/// gives it), its texts borrowed from the event or from the projection's held call
/// instead of moved or copied. A consumer that serializes each delta or copies the
/// pieces it keeps needs no delta of its own; it serializes exactly as the `Delta`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeltaRef<'a> {
    /// `content`: answer text.
    Content(&'a str),
    /// `reasoning`: reasoning text.
    Reasoning(&'a str),
    /// A call's first delta: `tool_calls` with one entry carrying `index`, `id`,
    /// `type: "function"` and `function.name`, and in [`DeltaMode::WholeCalls`]
    /// the whole `function.arguments`.
    Call {
        /// The call's position among the turn's tool calls.
        index: usize,
        /// The call id, `None` when the family writes none (serialized `null`).
        id: Option<&'a str>,
        /// The tool's name.
        name: &'a str,
        /// The whole arguments (a released call), or `None` (a live call's start).
        arguments: Option<&'a str>,
    },
    /// `tool_calls` with one entry carrying `index` and a `function.arguments`
    /// fragment.
    Arguments {
        /// The call's position among the turn's tool calls.
        index: usize,
        /// The fragment.
        text: &'a str,
    },
}

impl From<DeltaRef<'_>> for Delta {
    /// The owned delta: what [`DeltaProjection::push`] gives for the same event.
    fn from(delta: DeltaRef<'_>) -> Delta {
        match delta {
            DeltaRef::Content(text) => Delta {
                content: Some(CompactString::from(text)),
                ..Delta::default()
            },
            DeltaRef::Reasoning(text) => Delta {
                reasoning: Some(CompactString::from(text)),
                ..Delta::default()
            },
            DeltaRef::Call {
                index,
                id,
                name,
                arguments,
            } => Delta::call(ToolCallDelta {
                index,
                id: Some(id.map(CompactString::from)),
                kind: Some(FUNCTION),
                function: FunctionDelta {
                    name: Some(CompactString::from(name)),
                    arguments: arguments.map(CompactString::from),
                },
            }),
            DeltaRef::Arguments { index, text } => Delta {
                tool_calls: Some(ToolCalls::fragment(index, CompactString::from(text))),
                ..Delta::default()
            },
        }
    }
}

impl Serialize for DeltaRef<'_> {
    /// The JSON of the owned [`Delta`], written from the borrowed texts.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        /// One entry of `tool_calls`, as [`ToolCallDelta`] writes it.
        struct Entry<'a>(&'a DeltaRef<'a>);
        /// Its `function` object.
        struct Function<'a>(Option<&'a str>, Option<&'a str>);
        impl Serialize for Function<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                if let Some(name) = self.0 {
                    map.serialize_entry("name", name)?;
                }
                if let Some(arguments) = self.1 {
                    map.serialize_entry("arguments", arguments)?;
                }
                map.end()
            }
        }
        impl Serialize for Entry<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                match *self.0 {
                    DeltaRef::Call {
                        index,
                        id,
                        name,
                        arguments,
                    } => {
                        map.serialize_entry("index", &index)?;
                        map.serialize_entry("id", &id)?;
                        map.serialize_entry("type", "function")?;
                        map.serialize_entry("function", &Function(Some(name), arguments))?;
                    }
                    DeltaRef::Arguments { index, text } => {
                        map.serialize_entry("index", &index)?;
                        map.serialize_entry("function", &Function(None, Some(text)))?;
                    }
                    DeltaRef::Content(_) | DeltaRef::Reasoning(_) => {}
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(1))?;
        match self {
            DeltaRef::Content(text) => map.serialize_entry("content", text)?,
            DeltaRef::Reasoning(text) => map.serialize_entry("reasoning", text)?,
            DeltaRef::Call { .. } | DeltaRef::Arguments { .. } => {
                map.serialize_entry("tool_calls", &[Entry(self)])?
            }
        }
        map.end()
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
    ///
    /// The deltas of streamed tokens (text, reasoning, a live argument fragment)
    /// are built here; the rest go through `push_rest`, kept out of line.
    #[inline]
    pub fn push_owned(&mut self, event: Event, out: &mut Vec<Delta>) {
        match event {
            Event::Text { text, .. } => {
                if !text.is_empty() {
                    out.push(Delta {
                        content: Some(text),
                        ..Delta::default()
                    });
                }
            }
            Event::ReasoningDelta { text, .. } => {
                if !text.is_empty() {
                    out.push(Delta {
                        reasoning: Some(text),
                        ..Delta::default()
                    });
                }
            }
            Event::ArgumentsDelta { index, text, .. } if self.mode == DeltaMode::Live => {
                if !text.is_empty() {
                    out.push(Delta {
                        tool_calls: Some(ToolCalls::fragment(index, text)),
                        ..Delta::default()
                    });
                }
            }
            Event::Markup { .. } => {}
            other => self.push_rest(other, out),
        }
    }

    /// [`Self::push_owned`] for a call's start and end, and an argument fragment of
    /// a held call.
    #[inline(never)]
    fn push_rest(&mut self, event: Event, out: &mut Vec<Delta>) {
        match event {
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
            Event::ArgumentsDelta { index, text, .. } => {
                if let Some(call) = self.held.get_mut(&index) {
                    call.arguments.push_str(&text);
                }
            }
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

    /// [`DeltaProjection::push`] that lends each delta the event releases to `f`
    /// instead of building it (see [`DeltaRef`]): the same deltas, in the same
    /// order, with texts borrowed from `event` (or, for a call released whole,
    /// from the projection). Paired with [`crate::Stream::feed_lent`], a chunk's
    /// events are projected where the parser left them.
    ///
    /// ```
    /// use idiolect::field::{families, DeltaMode, DeltaProjection, DeltaRef};
    /// let hermes = families::family("hermes").unwrap();
    /// let mut parser = hermes.parser(&Default::default()).unwrap();
    /// let mut projection = DeltaProjection::new(DeltaMode::Live);
    /// let (mut content, mut arguments) = (String::new(), String::new());
    /// // What a server keeps (or serializes) of each delta.
    /// let mut keep = |delta: DeltaRef<'_>| match delta {
    ///     DeltaRef::Content(text) => content.push_str(text),
    ///     DeltaRef::Arguments { text, .. } => arguments.push_str(text),
    ///     _ => {}
    /// };
    /// let text = "Hi.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";
    /// for chunk in text.as_bytes().chunks(4) {
    ///     for event in parser.feed_lent(chunk) {
    ///         projection.push_lent(event, &mut keep);
    ///     }
    /// }
    /// for event in parser.finish_lent() {
    ///     projection.push_lent(event, &mut keep);
    /// }
    /// assert_eq!(content, "Hi.\n");
    /// assert_eq!(arguments, "{\"a\": 1}");
    /// ```
    #[inline]
    pub fn push_lent<F: FnMut(DeltaRef<'_>)>(&mut self, event: &Event, mut f: F) {
        match event {
            Event::Text { text, .. } => {
                if !text.is_empty() {
                    f(DeltaRef::Content(text));
                }
            }
            Event::ReasoningDelta { text, .. } => {
                if !text.is_empty() {
                    f(DeltaRef::Reasoning(text));
                }
            }
            Event::ArgumentsDelta { index, text, .. } if self.mode == DeltaMode::Live => {
                if !text.is_empty() {
                    f(DeltaRef::Arguments {
                        index: *index,
                        text,
                    });
                }
            }
            Event::ToolCallStart {
                index, id, name, ..
            } if self.mode == DeltaMode::Live => f(DeltaRef::Call {
                index: *index,
                id: id.as_deref(),
                name,
                arguments: None,
            }),
            Event::Markup { .. } | Event::ReasoningStart { .. } | Event::ReasoningEnd { .. } => {}
            other => self.push_lent_rest(other, f),
        }
    }

    /// [`Self::push_lent`] for what touches the held calls: a call's end, and in
    /// [`DeltaMode::WholeCalls`] its start and argument fragments.
    #[inline(never)]
    fn push_lent_rest<F: FnMut(DeltaRef<'_>)>(&mut self, event: &Event, mut f: F) {
        match event {
            Event::ToolCallStart {
                index, id, name, ..
            } => {
                self.held.insert(
                    *index,
                    HeldCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: CompactString::default(),
                    },
                );
            }
            Event::ArgumentsDelta { index, text, .. } => {
                if let Some(call) = self.held.get_mut(index) {
                    call.arguments.push_str(text);
                }
            }
            Event::ToolCallEnd {
                index, complete, ..
            } => {
                if let Some(call) = self.held.shift_remove(index) {
                    if *complete {
                        f(DeltaRef::Call {
                            index: *index,
                            id: call.id.as_deref(),
                            name: &call.name,
                            arguments: Some(&call.arguments),
                        });
                    }
                }
            }
            _ => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(index: usize, name: Option<&str>, arguments: Option<&str>) -> ToolCallDelta {
        ToolCallDelta {
            index,
            id: name.map(|_| None),
            kind: name.map(|_| FUNCTION),
            function: FunctionDelta {
                name: name.map(CompactString::from),
                arguments: arguments.map(CompactString::from),
            },
        }
    }

    /// A bare fragment held inline is the same list as the one entry in a `Vec`:
    /// equal, serialized alike, read back equal, iterated to the same entry.
    #[test]
    fn a_fragment_held_inline_is_the_list_of_its_entry() {
        let inline = ToolCalls::fragment(3, CompactString::from("{\"a\""));
        let listed = ToolCalls::from(vec![entry(3, None, Some("{\"a\""))]);
        assert_eq!(inline, listed);
        let json = serde_json::to_string(&inline).unwrap();
        assert_eq!(json, r#"[{"index":3,"function":{"arguments":"{\"a\""}}]"#);
        assert_eq!(
            json,
            serde_json::to_string(&vec![entry(3, None, Some("{\"a\""))]).unwrap()
        );
        let back: ToolCalls = serde_json::from_str(&json).unwrap();
        assert_eq!(back, inline);
        assert_eq!(inline.len(), 1);
        assert_eq!(
            inline.iter().collect::<Vec<_>>(),
            vec![entry(3, None, Some("{\"a\""))]
        );
        assert_eq!(inline.into_vec(), vec![entry(3, None, Some("{\"a\""))]);
    }

    /// Any other list (a call's first entry, several entries, none) keeps its
    /// entries as they are.
    #[test]
    fn other_lists_keep_their_entries() {
        let lists = [
            vec![entry(0, Some("f"), None)],
            vec![entry(0, Some("f"), Some("{}"))],
            vec![entry(0, None, Some("{")), entry(1, None, Some("}"))],
            vec![entry(2, None, None)],
            vec![],
        ];
        for list in lists {
            let calls = ToolCalls::from(list.clone());
            assert_eq!(calls.len(), list.len());
            assert_eq!(calls.is_empty(), list.is_empty());
            assert_eq!(
                serde_json::to_value(&calls).unwrap(),
                serde_json::to_value(&list).unwrap()
            );
            assert_eq!((&calls).into_iter().collect::<Vec<_>>(), list);
            assert_eq!(calls.into_iter().collect::<Vec<_>>(), list);
        }
    }

    /// Every kind of delta, live and released whole, lent by `push_lent`: the
    /// same deltas as `push` builds, each serialized to the same JSON.
    #[test]
    fn lent_deltas_are_the_built_ones() {
        use crate::field::Input;
        use crate::span::Span;
        let span = Span::new(0, 0);
        let long = "a fragment longer than twenty-four bytes, held on the heap";
        let events = vec![
            Event::ReasoningStart { span },
            Event::ReasoningDelta {
                text: "think".into(),
                span,
            },
            Event::ReasoningEnd { closed: true, span },
            Event::Text {
                text: "Hello".into(),
                span,
            },
            Event::Text {
                text: "".into(),
                span,
            },
            Event::Markup { span },
            Event::ToolCallStart {
                index: 0,
                id: Some("call_1".into()),
                name: "get_weather".into(),
                span,
            },
            Event::ArgumentsDelta {
                index: 0,
                text: "{\"city\":".into(),
                span,
            },
            Event::ArgumentsDelta {
                index: 0,
                text: "".into(),
                span,
            },
            Event::ArgumentsDelta {
                index: 0,
                text: long.into(),
                span,
            },
            Event::ToolCallEnd {
                index: 0,
                complete: true,
                input: Input::NULL,
                span,
            },
            Event::ToolCallStart {
                index: 1,
                id: None,
                name: "f".into(),
                span,
            },
            Event::ArgumentsDelta {
                index: 1,
                text: "{".into(),
                span,
            },
            Event::ToolCallEnd {
                index: 1,
                complete: false,
                input: Input::NULL,
                span,
            },
            Event::ToolCallStart {
                index: 2,
                id: None,
                name: "g".into(),
                span,
            },
            Event::ArgumentsDelta {
                index: 2,
                text: "{}".into(),
                span,
            },
            Event::ToolCallEnd {
                index: 2,
                complete: true,
                input: Input::NULL,
                span,
            },
        ];
        for (mode, count) in [(DeltaMode::Live, 9), (DeltaMode::WholeCalls, 4)] {
            let built = DeltaProjection::project(mode, &events);
            let mut projection = DeltaProjection::new(mode);
            let mut lent = Vec::new();
            let mut json = Vec::new();
            for event in &events {
                projection.push_lent(event, |delta| {
                    json.push(serde_json::to_string(&delta).unwrap());
                    lent.push(Delta::from(delta));
                });
            }
            assert_eq!(lent, built, "{mode:?}");
            assert_eq!(lent.len(), count, "{mode:?}");
            let want: Vec<String> = built
                .iter()
                .map(|d| serde_json::to_string(d).unwrap())
                .collect();
            assert_eq!(json, want, "{mode:?}");
        }
    }

    /// The delta of a streamed token stays small: one per fed chunk is built,
    /// moved and dropped, and the argument fragment needs no heap allocation.
    #[test]
    fn a_delta_stays_small() {
        assert!(std::mem::size_of::<ToolCalls>() <= 32);
        assert!(std::mem::size_of::<Delta>() <= 80);
    }
}

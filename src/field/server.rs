//! The server layer (spec/servers.md): a field family's turn as inference servers
//! send it, over the family's events and documents, without changing either.
//!
//! [`ServerProjection`] turns events into the deltas a server streams, one per feed
//! and at most one call per delta (SV-3, SV-8); [`message`] reads a whole document as
//! the one-shot message (SV-9). Both follow the same rules: a call is a call only
//! with a JSON object of arguments (SV-1), calls are numbered without gaps (SV-2),
//! whitespace-only text next to a call is formatting (SV-4), a key with nothing is
//! absent (SV-5), ids are the model's or minted in the caller's [`CallIds`] style
//! (SV-6), and calls to undeclared tools can be dropped (SV-7). The family's markers
//! (SV-10, SV-11) are in [`super::server_markers`].
//!
//! ```
//! use idiolect::field::{families, server::{ServerOptions, ServerProjection, CallIds}};
//! let hermes = families::family("hermes").unwrap();
//! let mut parser = hermes.parser(&Default::default()).unwrap();
//! let options = ServerOptions { ids: CallIds::Sequence, names: None };
//! let mut projection = ServerProjection::new(options);
//! let call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
//! // Two calls decided by one feed: the first delta carries the first only.
//! for event in parser.feed(format!("{call}\n{call}").as_bytes()) {
//!     projection.push(&event);
//! }
//! let first = projection.delta().unwrap();
//! let entries = first.tool_calls.unwrap().into_vec();
//! assert_eq!((entries.len(), entries[0].index), (1, 0));
//! assert_eq!(entries[0].id, Some(Some("call_0".into())));
//! // The second waits for the next feed (here, the end).
//! for event in parser.finish() {
//!     projection.push(&event);
//! }
//! let last = projection.finish().unwrap();
//! assert_eq!(last.tool_calls.unwrap().into_vec()[0].index, 1);
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use compact_str::CompactString;
use serde::Serialize;

use super::deltas::{Delta, FunctionDelta, ToolCallDelta, ToolCalls};
use super::{Document, Event, Item};

/// How a call whose markup writes no id gets one (SV-6); the model's own id always
/// wins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallIds {
    /// No id (`null`): the caller mints its own.
    #[default]
    Model,
    /// `call_` and 24 ASCII letters and digits, as OpenAI and SGLang send.
    Random,
    /// `chatcmpl-tool-` and 32 lowercase hex digits, as vLLM sends.
    Vllm,
    /// `call_N`, N the call's number (SV-2): the same ids for the same output.
    Sequence,
}

impl CallIds {
    /// The styles' names, as `--ids` and the Python package spell them.
    pub const NAMES: [&'static str; 4] = ["model", "random", "vllm", "sequence"];

    /// The style called `name` (one of [`CallIds::NAMES`]).
    pub fn from_name(name: &str) -> Option<CallIds> {
        match name {
            "model" => Some(CallIds::Model),
            "random" => Some(CallIds::Random),
            "vllm" => Some(CallIds::Vllm),
            "sequence" => Some(CallIds::Sequence),
            _ => None,
        }
    }

    /// The id of call `number` (SV-2) whose markup wrote `own`.
    pub fn id(self, own: Option<&str>, number: usize) -> Option<CompactString> {
        if let Some(own) = own {
            return Some(CompactString::from(own));
        }
        match self {
            CallIds::Model => None,
            CallIds::Sequence => Some(compact_str::format_compact!("call_{number}")),
            CallIds::Random => Some(random_id("call_", ALNUM, 24)),
            CallIds::Vllm => Some(random_id("chatcmpl-tool-", HEX, 32)),
        }
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &[u8] = b"0123456789abcdef";

/// `prefix` and `length` symbols of `alphabet`, drawn from the standard library's
/// randomly keyed hasher (keyed once per process) over a process-wide counter:
/// unique with overwhelming likelihood, without a dependency; not a secret.
fn random_id(prefix: &str, alphabet: &[u8], length: usize) -> CompactString {
    static KEYS: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let keys = KEYS.get_or_init(Default::default);
    let mut id = CompactString::from(prefix);
    let mut bits = 0u64;
    let mut left = 0u32;
    let radix = alphabet.len() as u64;
    for _ in 0..length {
        if left < 8 {
            let mut hasher = keys.build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            bits = hasher.finish();
            left = 64;
        }
        // 8 bits per symbol: the small bias of `% radix` is harmless for an id.
        id.push(alphabet[((bits & 0xff) % radix) as usize] as char);
        bits >>= 8;
        left -= 8;
    }
    id
}

/// What the server layer is told by its caller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerOptions {
    /// How calls without the model's own id get one (SV-6).
    pub ids: CallIds,
    /// The declared tools' names: calls to other tools are no calls (SV-7); `None`
    /// keeps every call.
    pub names: Option<Vec<String>>,
}

impl ServerOptions {
    fn declares(&self, name: &str) -> bool {
        self.names
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
    }
}

/// A part decided and not sent yet.
#[derive(Clone, Debug)]
enum Part {
    Content(CompactString),
    Reasoning(CompactString),
    /// A call's announcement: its number, id and name.
    Call(usize, Option<CompactString>, CompactString),
    /// A fragment of the arguments of call number `.0`.
    Arguments(usize, CompactString),
}

/// A call begun whose arguments have shown no byte but whitespace yet (SV-1).
#[derive(Clone, Debug)]
struct Held {
    index: usize,
    id: Option<CompactString>,
    name: CompactString,
    whitespace: CompactString,
}

/// A field family's events as the deltas a server streams (SV-1 to SV-8): push each
/// event a feed of the parser gives, then take the feed's [`ServerProjection::delta`];
/// after the parser's finish events, take [`ServerProjection::finish`].
#[derive(Clone, Debug, Default)]
pub struct ServerProjection {
    options: ServerOptions,
    parts: Vec<Part>,
    /// The family's call index → the number sent (SV-2), for announced calls.
    numbers: HashMap<usize, usize>,
    held: Option<Held>,
    /// Whitespace-only text since the last item, its fate waiting (SV-4).
    formatting: CompactString,
    /// Whether the item before the current text run is a call.
    after_call: bool,
    /// Whether the current text run has shown more than whitespace.
    text_begun: bool,
    announced: usize,
}

impl ServerProjection {
    /// A projection under `options`.
    pub fn new(options: ServerOptions) -> Self {
        ServerProjection {
            options,
            ..ServerProjection::default()
        }
    }

    /// How many calls were announced so far.
    pub fn calls(&self) -> usize {
        self.announced
    }

    /// Takes one event of the family's stream.
    pub fn push(&mut self, event: &Event) {
        match event {
            Event::Text { text, .. } => self.text(text),
            Event::ReasoningDelta { text, .. } if !text.is_empty() => {
                self.parts.push(Part::Reasoning(text.clone()))
            }
            Event::ReasoningStart { .. } => self.item_begins(false),
            Event::ToolCallStart {
                index, id, name, ..
            } => {
                self.item_begins(true);
                if self.options.declares(name) {
                    self.held = Some(Held {
                        index: *index,
                        id: id.clone(),
                        name: name.clone(),
                        whitespace: CompactString::default(),
                    });
                }
            }
            Event::ArgumentsDelta { index, text, .. } => self.arguments(*index, text),
            // A held call ended before its arguments showed a byte: a call only
            // when complete (no arguments at all), with nothing to stream.
            Event::ToolCallEnd {
                index, complete, ..
            } if self.held.as_ref().is_some_and(|h| h.index == *index) => {
                let held = self.held.take().expect("checked");
                if *complete {
                    self.announce(held);
                }
            }
            _ => {}
        }
    }

    /// The delta of what was pushed since the last delta, holding at most one call
    /// (SV-3); `None` when nothing is decided.
    pub fn delta(&mut self) -> Option<Delta> {
        self.take(false)
    }

    /// The last delta, once the parser's finish events are pushed: everything still
    /// held (the only delta that may carry several calls).
    pub fn finish(&mut self) -> Option<Delta> {
        if !self.formatting.is_empty() && !self.after_call {
            let text = std::mem::take(&mut self.formatting);
            self.parts.push(Part::Content(text));
        }
        self.formatting.clear();
        self.take(true)
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if !self.text_begun && is_formatting(text) {
            self.formatting.push_str(text);
            return;
        }
        let mut run = std::mem::take(&mut self.formatting);
        run.push_str(text);
        self.text_begun = true;
        self.parts.push(Part::Content(run));
    }

    /// Reasoning or a call begins: the text run before it ends.
    fn item_begins(&mut self, is_call: bool) {
        let formatting = std::mem::take(&mut self.formatting);
        if !(formatting.is_empty() || is_call || self.after_call) {
            self.parts.push(Part::Content(formatting));
        }
        self.text_begun = false;
        self.after_call = is_call;
    }

    fn announce(&mut self, held: Held) -> usize {
        let number = self.announced;
        self.announced += 1;
        self.numbers.insert(held.index, number);
        let id = self.options.ids.id(held.id.as_deref(), number);
        self.parts.push(Part::Call(number, id, held.name));
        number
    }

    fn arguments(&mut self, index: usize, text: &str) {
        if let Some(held) = self.held.as_mut().filter(|h| h.index == index) {
            held.whitespace.push_str(text);
            let Some(first) = held.whitespace.trim_start().chars().next() else {
                return;
            };
            let held = self.held.take().expect("checked");
            if first != '{' {
                return; // SV-1: arguments that are no object make no call.
            }
            let start = held.whitespace.clone();
            let number = self.announce(held);
            self.parts.push(Part::Arguments(number, start));
            return;
        }
        if let Some(&number) = self.numbers.get(&index) {
            if !text.is_empty() {
                self.parts
                    .push(Part::Arguments(number, CompactString::from(text)));
            }
        }
    }

    /// Builds the delta of the parts up to a second call (all of them with
    /// `everything`), removing them.
    fn take(&mut self, everything: bool) -> Option<Delta> {
        let mut content: Option<CompactString> = None;
        let mut reasoning: Option<CompactString> = None;
        let mut calls: Vec<ToolCallDelta> = Vec::new();
        let mut current: Option<usize> = None;
        let mut taken = 0;
        for part in &mut self.parts {
            match part {
                Part::Content(text) => content.get_or_insert_default().push_str(text),
                Part::Reasoning(text) => reasoning.get_or_insert_default().push_str(text),
                Part::Call(number, _, _) | Part::Arguments(number, _) => {
                    let number = *number;
                    if current.is_some_and(|c| c != number) && !everything {
                        break; // SV-3: a second call waits for the next feed.
                    }
                    current = Some(number);
                    match part {
                        Part::Call(_, id, name) => calls.push(ToolCallDelta {
                            index: number,
                            id: Some(id.take()),
                            kind: Some(CompactString::const_new("function")),
                            function: FunctionDelta {
                                name: Some(std::mem::take(name)),
                                arguments: None,
                            },
                        }),
                        Part::Arguments(_, text) => match calls.last_mut() {
                            Some(last) if last.index == number => last
                                .function
                                .arguments
                                .get_or_insert_default()
                                .push_str(text),
                            _ => calls.push(ToolCallDelta {
                                index: number,
                                id: None,
                                kind: None,
                                function: FunctionDelta {
                                    name: None,
                                    arguments: Some(std::mem::take(text)),
                                },
                            }),
                        },
                        _ => unreachable!("a call's part"),
                    }
                }
            }
            taken += 1;
        }
        self.parts.drain(..taken);
        let delta = Delta {
            content,
            reasoning,
            tool_calls: (!calls.is_empty()).then(|| ToolCalls::from(calls)),
        };
        (delta != Delta::default()).then_some(delta)
    }
}

/// Whether a text is whitespace only (SV-4).
fn is_formatting(text: &str) -> bool {
    text.trim().is_empty()
}

/// Whether a call of the document is one the stream announces (SV-1): its
/// arguments begin with `{`, or it ended complete with none.
fn is_sent(arguments: &str, complete: bool) -> bool {
    let start = arguments.trim_start();
    start.starts_with('{') || (complete && start.is_empty())
}

/// The one-shot message of a whole output (SV-9).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Message {
    /// The answer text less formatting (SV-4), or `None` when there is none.
    pub content: Option<String>,
    /// The reasoning, or `None` when there is none.
    pub reasoning: Option<String>,
    /// The complete calls (SV-1, SV-7), in order.
    pub tool_calls: Vec<MessageCall>,
}

/// One call of a [`Message`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MessageCall {
    /// The model's id or the minted one (SV-6), or `None`.
    pub id: Option<String>,
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The tool's name and the arguments' JSON text.
    pub function: MessageFunction,
}

/// The `function` of a [`MessageCall`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MessageFunction {
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object's text as the document holds it.
    pub arguments: String,
}

/// The message of a whole output's document under `options` (SV-9). A sequence id
/// is the number the stream of the same output gives the call (SV-2).
pub fn message(document: &Document, options: &ServerOptions) -> Message {
    let items = &document.items;
    let is_call = |at: Option<usize>| {
        at.and_then(|at| items.get(at))
            .is_some_and(|i| matches!(i, Item::ToolCall { .. }))
    };
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut tool_calls = Vec::new();
    let mut number = 0;
    for (at, item) in items.iter().enumerate() {
        match item {
            Item::Reasoning { text, .. } => reasoning.push_str(text),
            Item::Text { text, .. } => {
                let near_call = is_call(at.checked_sub(1)) || is_call(Some(at + 1));
                if !(near_call && is_formatting(text)) {
                    content.push_str(text);
                }
            }
            Item::ToolCall {
                id,
                name,
                arguments,
                complete,
                ..
            } => {
                if !options.declares(name) || !is_sent(arguments, *complete) {
                    continue;
                }
                if *complete {
                    tool_calls.push(MessageCall {
                        id: options.ids.id(id.as_deref(), number).map(String::from),
                        kind: "function",
                        function: MessageFunction {
                            name: name.clone(),
                            arguments: arguments.clone(),
                        },
                    });
                }
                number += 1;
            }
        }
    }
    Message {
        content: (!content.is_empty()).then_some(content),
        reasoning: (!reasoning.is_empty()).then_some(reasoning),
        tool_calls,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id styles, read from the spec (SV-6).
    #[test]
    fn ids_take_the_models_own_else_the_style() {
        for style in [
            CallIds::Model,
            CallIds::Random,
            CallIds::Vllm,
            CallIds::Sequence,
        ] {
            assert_eq!(
                style.id(Some("functions.f:0"), 3).as_deref(),
                Some("functions.f:0")
            );
        }
        assert_eq!(CallIds::Model.id(None, 3), None);
        assert_eq!(CallIds::Sequence.id(None, 3).as_deref(), Some("call_3"));
        let random = CallIds::Random.id(None, 0).unwrap();
        let rest = random.strip_prefix("call_").expect("call_ prefix");
        assert_eq!(rest.len(), 24);
        assert!(rest.bytes().all(|b| b.is_ascii_alphanumeric()), "{random}");
        let vllm = CallIds::Vllm.id(None, 0).unwrap();
        let rest = vllm.strip_prefix("chatcmpl-tool-").expect("vllm prefix");
        assert_eq!(rest.len(), 32);
        assert!(rest
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(CallIds::Random.id(None, 0), CallIds::Random.id(None, 0));
        for name in CallIds::NAMES {
            assert!(CallIds::from_name(name).is_some(), "{name}");
        }
        assert_eq!(CallIds::from_name("uuid"), None);
    }
}

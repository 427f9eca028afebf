//! The harmony state machine (spec/harmony.md): message headers, reasoning and text
//! content, tool calls with JSON arguments, each recognised by an entry rule of
//! grammar/harmony.pest on the parsing machine.

use std::sync::OnceLock;

use super::Options;
use crate::field::call_arguments::{CallArguments, Step};
use crate::field::grammars;
use crate::field::probe::{rule, MarkerProbe};
use crate::field::reasoning::family::{FamilyWrappers, ProseRules, WrapperMarker};
use crate::field::{Emitter, Event};
use crate::machine::{Outcome, RuleId};
use crate::reentry::{find_byte, Machine};

/// The entry and captured rules of grammar/harmony.pest.
struct Rules {
    first_header: RuleId,
    /// Between messages, with and without a wrapper's markers (HA-12, HA-19).
    between: ProseRules,
    /// In a text message's content (HA-7, HA-19).
    content: ProseRules,
    call_head_end: RuleId,
    call_tail: RuleId,
    arguments_stop: RuleId,
    header_begun: RuleId,
    channel_name: RuleId,
    recipient: RuleId,
    stray_marker: RuleId,
    header_marker: RuleId,
}

impl Rules {
    fn get() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| {
            let p = grammars::harmony();
            Rules {
                first_header: rule(p, "first_header"),
                between: ProseRules {
                    plain: rule(p, "between_marker"),
                    open: rule(p, "between_marker_open"),
                    close: rule(p, "between_marker_close"),
                },
                content: ProseRules {
                    plain: rule(p, "content_marker"),
                    open: rule(p, "content_marker_open"),
                    close: rule(p, "content_marker_close"),
                },
                call_head_end: rule(p, "call_head_end"),
                call_tail: rule(p, "call_tail"),
                arguments_stop: rule(p, "arguments_stop"),
                header_begun: rule(p, "header_begun"),
                channel_name: rule(p, "channel_name"),
                recipient: rule(p, "recipient"),
                stray_marker: rule(p, "stray_marker"),
                header_marker: rule(p, "header_marker"),
            }
        })
    }
}

/// What a message's content is (HA-6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Content {
    Reasoning,
    Text,
}

/// Where the machine stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    /// At offset 0: the first message's header, its role in the prompt (HA-4).
    FirstHeader,
    /// Between messages (HA-12).
    Between,
    /// In a reasoning or text message's content (HA-7).
    Content(Content),
    /// Right after a call header's `<|message|>` (HA-8): the call's name, until
    /// its `{` or tail decides it.
    CallHead(String),
    /// In a call, after its header: its arguments and tail (HA-9).
    Call,
}

/// The harmony state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct HarmonyMachine {
    emitter: Emitter,
    probe: MarkerProbe,
    /// The reasoning wrappers read in text (HA-19).
    wrappers: FamilyWrappers,
    /// Whether a wrapper opened reasoning in text that has not ended (HA-19).
    wrapped: bool,
    /// Whether a probe is active; its candidate is the first pending byte.
    probing: bool,
    arguments: CallArguments,
    /// Whether the last probe ran into the end of input still viable.
    cut: bool,
    mode: Mode,
    began: bool,
}

/// What a complete header says (HA-3, HA-6, HA-8).
enum Header {
    Content(Content),
    Call(String),
    /// A recipient without a name (`functions.` alone): not a header (HA-8).
    Invalid,
}

impl HarmonyMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        let r = Rules::get();
        let program = grammars::harmony();
        let wrappers = FamilyWrappers::new(program, &options.reasoning_markers, b'<');
        let own = [r.channel_name, r.recipient, r.stray_marker];
        let captured = [&own[..], &wrappers.captured()].concat();
        HarmonyMachine {
            emitter: Emitter::new(),
            probe: MarkerProbe::new(program, &captured),
            wrappers,
            wrapped: false,
            probing: false,
            cut: false,
            arguments: CallArguments::new(grammars::harmony(), r.call_tail, r.arguments_stop, None),
            mode: if options.start_in_reasoning {
                Mode::Content(Content::Reasoning)
            } else {
                Mode::FirstHeader
            },
            began: false,
        }
    }

    fn start_probe(&mut self, entry: RuleId) {
        self.probe.begin(entry);
        self.probing = true;
    }

    fn run_probe(&mut self, unit: &str, eof: bool) -> Outcome {
        let (outcome, cut) = self.probe.run_cut(unit, eof);
        self.cut = cut;
        if outcome != Outcome::NeedMore {
            self.probing = false;
        }
        outcome
    }

    /// Whether `cut`, a header cut by the end of input, had begun (HA-13).
    fn header_begun(&mut self, cut: &str) -> bool {
        self.probe.matches_at_end(Rules::get().header_begun, cut)
    }

    /// Reads the captures of the header that matched in `unit`.
    fn header(&self, unit: &str) -> Header {
        let r = Rules::get();
        let mut channel = None;
        let mut recipient = None;
        for c in self.probe.captures().iter().filter(|c| c.is_closed()) {
            let text = &unit[c.start..c.end];
            if c.rule == r.channel_name {
                channel = Some(text);
            } else if c.rule == r.recipient {
                // The recipient after the channel wins over the role's (HA-3).
                recipient = Some(text);
            }
        }
        match recipient {
            Some(to) => {
                let name = to.strip_prefix("functions.").unwrap_or(to);
                if name.is_empty() {
                    Header::Invalid
                } else {
                    Header::Call(name.to_string())
                }
            }
            None if channel == Some("analysis") => Header::Content(Content::Reasoning),
            None => Header::Content(Content::Text),
        }
    }

    /// A header matched over `start..end` (absolute): enter its message.
    fn enter(&mut self, header: Header, end: usize, out: &mut Vec<Event>) {
        match header {
            Header::Content(Content::Reasoning) => {
                self.emitter.reasoning_start(end, out);
                self.mode = Mode::Content(Content::Reasoning);
            }
            Header::Content(Content::Text) => {
                self.emitter.markup(end, out);
                self.mode = Mode::Content(Content::Text);
            }
            Header::Call(name) => self.mode = Mode::CallHead(name),
            Header::Invalid => {}
        }
    }

    /// A header that fails at `rest` (absolute `start`): its opener, when whole, is a
    /// stray marker (markup); otherwise its first character is text (HA-10, HA-20).
    /// The length decided.
    fn stray_opener(&mut self, rest: &str, start: usize, out: &mut Vec<Event>) -> usize {
        let opener = Rules::get().header_marker;
        if let Outcome::Matched { end } = self.probe.match_at(opener, rest) {
            self.emitter.markup(start + end, out);
            return end;
        }
        self.prose_char(rest, start, out)
    }

    /// Text between messages or in a text message, or reasoning.
    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if self.wrapped || self.mode == Mode::Content(Content::Reasoning) {
            self.emitter.reasoning(text, start, out);
        } else {
            self.emitter.text(text, start, out);
        }
    }

    /// The first character of `rest`, at absolute `start`, is prose; its length.
    fn prose_char(&mut self, rest: &str, start: usize, out: &mut Vec<Event>) -> usize {
        let len = rest.chars().next().map_or(1, char::len_utf8);
        self.prose(&rest[..len], start, out);
        len
    }

    /// Whether the marker that matched over `len` bytes at absolute `start`, in
    /// text, was a wrapper's: its opener opens reasoning, its closer closes it
    /// (HA-19).
    fn wrapper(&mut self, start: usize, len: usize, out: &mut Vec<Event>) -> bool {
        match self.wrappers.marker(self.probe.captures()) {
            Some(WrapperMarker::Opened) => {
                self.emitter.markup(start, out);
                self.emitter.reasoning_start(start + len, out);
                self.wrapped = true;
                true
            }
            Some(WrapperMarker::Closed) => {
                self.emitter.reasoning_end(true, start + len, out);
                self.wrapped = false;
                true
            }
            None => false,
        }
    }

    fn end_call(&mut self, complete: bool, end: usize, out: &mut Vec<Event>) {
        self.emitter.call_end(complete, end, out);
        self.mode = Mode::Between;
    }
}

impl Machine for HarmonyMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        let r = Rules::get();
        if !self.began {
            self.began = true;
            if self.mode == Mode::Content(Content::Reasoning) {
                // start_in_reasoning (HA-5): the item opens at offset 0.
                self.emitter.reasoning_start(base, out);
            }
        }
        let bytes = pending.as_bytes();
        let len = pending.len();
        let mut at = 0;
        loop {
            match self.mode.clone() {
                Mode::FirstHeader => {
                    if !self.probing {
                        self.start_probe(r.first_header);
                    }
                    match self.run_probe(&pending[at..], eof) {
                        Outcome::NeedMore => return at,
                        Outcome::Matched { end } => {
                            let header = self.header(&pending[at..]);
                            if matches!(header, Header::Invalid) {
                                self.mode = Mode::Between;
                                continue;
                            }
                            at += end;
                            self.enter(header, base + at, out);
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            if self.cut && self.header_begun(&pending[at..]) {
                                at = len;
                                self.emitter.markup(base + at, out);
                            }
                            self.mode = Mode::Between;
                        }
                    }
                }
                Mode::Between | Mode::Content(_) => {
                    let in_content = matches!(self.mode, Mode::Content(_));
                    // Wrappers are read in text only (HA-19).
                    let in_text = self.mode != Mode::Content(Content::Reasoning);
                    if !self.probing {
                        let found = if in_text {
                            self.wrappers.find(&bytes[at..])
                        } else {
                            find_byte(b'<', &bytes[at..])
                        };
                        match found {
                            None => {
                                self.prose(&pending[at..], base + at, out);
                                at = len;
                                break;
                            }
                            Some(k) => {
                                self.prose(&pending[at..at + k], base + at, out);
                                at += k;
                                let prose = if in_content { &r.content } else { &r.between };
                                let entry = if in_text {
                                    self.wrappers.entry(bytes[at], self.wrapped, prose)
                                } else {
                                    Some(prose.plain)
                                };
                                match entry {
                                    Some(entry) => self.start_probe(entry),
                                    None => {
                                        at += self.prose_char(&pending[at..], base + at, out);
                                        continue;
                                    }
                                }
                            }
                        }
                    }
                    match self.run_probe(&pending[at..], eof) {
                        Outcome::NeedMore => return at,
                        Outcome::Matched { end }
                            if in_text && self.wrapper(base + at, end, out) =>
                        {
                            at += end;
                        }
                        Outcome::Matched { end }
                            if self.probe.capture(r.stray_marker).is_some() =>
                        {
                            // A marker that opens nothing here (HA-20).
                            at += end;
                            self.emitter.markup(base + at, out);
                        }
                        Outcome::Matched { end } if in_content => {
                            // An end marker, or (end 0) the next header (HA-7).
                            at += end;
                            if self.emitter.in_reasoning() {
                                self.emitter.reasoning_end(true, base + at, out);
                            } else {
                                self.emitter.markup(base + at, out);
                            }
                            self.wrapped = false;
                            self.mode = Mode::Between;
                        }
                        Outcome::Matched { end } => match self.header(&pending[at..]) {
                            Header::Invalid => {
                                // Not a header: its opener is stray (HA-10, HA-20).
                                at += self.stray_opener(&pending[at..], base + at, out);
                            }
                            header => {
                                if self.wrapped {
                                    // A header ends wrapped reasoning (HA-19).
                                    self.emitter.reasoning_end(true, base + at, out);
                                    self.wrapped = false;
                                }
                                at += end;
                                self.enter(header, base + at, out);
                            }
                        },
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            let cut = self.cut;
                            if cut && !in_content && self.header_begun(&pending[at..]) {
                                // A header cut by the end of input (HA-13).
                                at = len;
                                self.emitter.markup(base + at, out);
                            } else if cut || in_content {
                                at += self.prose_char(&pending[at..], base + at, out);
                            } else {
                                // A header that fails: its opener is stray (HA-10, HA-20).
                                at += self.stray_opener(&pending[at..], base + at, out);
                            }
                        }
                    }
                }
                Mode::CallHead(name) => {
                    if !self.probing {
                        self.start_probe(r.call_head_end);
                    }
                    match self.run_probe(&pending[at..], eof) {
                        Outcome::NeedMore => return at,
                        Outcome::Matched { end } => {
                            at += end;
                            self.emitter.call_start(None, name, base + at, out);
                            self.arguments.begin(&pending[at..]);
                            self.mode = Mode::Call;
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            if self.cut {
                                // Cut before the arguments: no call (JA-8, HA-13).
                                at = len;
                                self.emitter.markup(base + at, out);
                                self.mode = Mode::Between;
                            } else {
                                // Not a call: the content is text (HA-10).
                                self.emitter.markup(base + at, out);
                                self.mode = Mode::Content(Content::Text);
                            }
                        }
                    }
                }
                Mode::Call => {
                    let step = self.arguments.advance(
                        pending,
                        &mut at,
                        base,
                        eof,
                        &mut self.emitter,
                        &mut self.probe,
                        out,
                    );
                    match step {
                        Step::More => return at,
                        Step::Ended { complete } => self.end_call(complete, base + at, out),
                    }
                }
            }
            if at == len && !eof && !self.probing {
                break;
            }
        }
        if eof {
            self.emitter.markup(base + len, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, base + len, out);
            }
        }
        at
    }
}

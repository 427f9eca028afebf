//! The state machine of a family defined at run time: the chat-turn semantics of
//! spec/custom-family.md, driven by the entry rules and captures its description
//! names, on the parsing machine running the user's grammar.

use std::sync::Arc;

use crate::field::call_object::{CallObject, ObjectEnd, ObjectKeys};
use crate::field::json_arguments::{is_json_ws, ArgumentsReader, ObjectRead};
use crate::field::parameter_values::{ParameterValues, Scan, ValueKind};
use crate::field::reasoning::family::{FamilyWrappers, RepeatedOpener, WrapperMarker};
use crate::field::reasoning::Spelling;
use crate::field::{Emitter, Event, Tool, ToolChoice};
use crate::machine::{Outcome, ParsingMachine, Program, RuleId};
use crate::reentry::Machine;

use super::description::NameCleaning;
use super::keywords::{KeywordArguments, LiteralSyntax};
use choice::Choice;

/// Nesting bound of the machine (pending calls and choices): deep JSON arguments
/// are a syntax error where they reach it, never a native stack overflow.
const DEPTH: usize = 1 << 16;

mod choice;

/// The bytes at which an entry rule can start a match, found by running the rule
/// on each possible first byte (CF-10).
#[derive(Clone, Debug)]
pub(crate) struct Finder {
    bytes: Vec<u8>,
    table: [bool; 256],
}

impl Finder {
    fn new(program: &'static Program, rule: RuleId) -> Finder {
        let mut machine = ParsingMachine::new(program);
        machine.capture_only(&[]);
        let mut table = [false; 256];
        let firsts = (0u8..0x80).chain(0xC2..=0xF4);
        for b in firsts {
            machine.start(rule);
            let viable = !matches!(
                machine.resume(&[b]),
                Outcome::Rejected { .. } | Outcome::TooDeep { .. }
            );
            table[b as usize] = viable;
        }
        Finder::of_table(table)
    }

    /// The finder of the bytes marked in `table`.
    fn of_table(table: [bool; 256]) -> Finder {
        let bytes = (0..=255u8).filter(|&b| table[b as usize]).collect();
        Finder { bytes, table }
    }

    /// The first candidate in `hay`.
    fn find(&self, hay: &[u8]) -> Option<usize> {
        match self.bytes[..] {
            [] => None,
            [a] => memchr::memchr(a, hay),
            [a, b] => memchr::memchr2(a, b, hay),
            [a, b, c] => memchr::memchr3(a, b, c, hay),
            _ => hay.iter().position(|&b| self.table[b as usize]),
        }
    }
}

/// An entry rule and its candidate bytes.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) rule: RuleId,
    finder: Finder,
}

impl Entry {
    pub(crate) fn new(program: &'static Program, rule: RuleId) -> Entry {
        Entry {
            rule,
            finder: Finder::new(program, rule),
        }
    }
}

/// The captured rules, by meaning (CF-6).
#[derive(Clone, Debug, Default)]
pub(crate) struct Roles {
    pub(crate) name: Option<RuleId>,
    pub(crate) call_open: Option<RuleId>,
    pub(crate) id: Option<RuleId>,
    pub(crate) reasoning_open: Option<RuleId>,
    pub(crate) reasoning_close: Option<RuleId>,
    pub(crate) block_open: Option<RuleId>,
    pub(crate) parameter: Option<RuleId>,
    pub(crate) call_close: Option<RuleId>,
    pub(crate) cut: Option<RuleId>,
    pub(crate) nested_open: Option<RuleId>,
    pub(crate) nested_close: Option<RuleId>,
    /// Keywords encoding: an argument's value (CF-27).
    pub(crate) value: Option<RuleId>,
}

/// A family compiled from its grammar and description.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub(crate) program: &'static Program,
    pub(crate) text: Entry,
    pub(crate) reasoning: Entry,
    /// Run once at offset 0 (CF-30).
    pub(crate) start: Option<Entry>,
    /// Run where the answer starts (CF-28).
    pub(crate) answer_start: Option<Entry>,
    pub(crate) call_body: Option<Entry>,
    pub(crate) value_end: Option<Entry>,
    /// Inside a value that quotes an open nested opener (CF-17).
    pub(crate) value_nested: Option<Entry>,
    pub(crate) arguments_end: Option<Entry>,
    /// After a call object (CF-23; default `arguments_end`).
    pub(crate) object_end: Option<Entry>,
    pub(crate) after_call: Option<Entry>,
    pub(crate) skip: Option<Entry>,
    /// JSON encoding: the object rule.
    pub(crate) object: Option<RuleId>,
    /// JSON encoding: the special-token markers, which end the arguments (CF-18).
    pub(crate) special_marker: Option<Entry>,
    /// `json_call_object` encoding: the keys of the call object.
    pub(crate) call_object: Option<ObjectKeys>,
    pub(crate) strip_newlines: bool,
    pub(crate) roles: Roles,
    pub(crate) captured: Vec<RuleId>,
    pub(crate) names: NameCleaning,
    pub(crate) calls_end_reasoning: bool,
    pub(crate) end_in_block_markup: bool,
    pub(crate) start_in_reasoning: bool,
    /// The reasoning wrappers, for a family that honours `reasoning_markers` (CF-19).
    pub(crate) wrapping: Option<Wrapping>,
    /// The value types written beside parameters' keys (CF-20).
    pub(crate) value_types: Option<super::value_type::ValueTypes>,
    /// Keywords encoding: the literal syntax of the values (CF-27).
    pub(crate) keywords: Option<LiteralSyntax>,
}

/// How a family reads the reasoning wrappers (CF-19).
#[derive(Clone, Debug)]
pub(crate) struct Wrapping {
    /// The option's default.
    pub(crate) default: Vec<Spelling>,
    /// The spelling `entries.text` and `entries.reasoning` read at its first byte.
    pub(crate) spelling: Spelling,
    /// The family's markers alone.
    pub(crate) plain: Entry,
    /// Whether an accepted closer in answer text is markup (RS-13).
    pub(crate) stray_closers: bool,
}

/// What a family machine is run with: the options resolved against the
/// description's defaults (CF-4, CF-19).
#[derive(Clone, Debug, Default)]
pub(crate) struct Settings {
    pub(crate) start_in_reasoning: bool,
    pub(crate) tools: Vec<Tool>,
    /// The accepted reasoning wrappers (empty without CF-19's key).
    pub(crate) spellings: Vec<Spelling>,
    /// The chosen value of each option of the family's own (CF-22).
    pub(crate) choice: Vec<usize>,
    /// What the request's `tool_choice` asked (FD-10).
    pub(crate) tool_choice: ToolChoice,
}

/// A family machine's reasoning wrappers (CF-19): which spellings apply, and the
/// prose candidates they add.
#[derive(Clone, Debug)]
struct Wrappers {
    wrappers: FamilyWrappers,
    /// The candidates in prose: `plain`'s and the accepted spellings' first bytes.
    finder: Finder,
}

impl Compiled {
    /// Makes `rule` the rule of the description's entry key `key` (CF-22; the key
    /// was checked to be one of the entry rules the description sets).
    pub(crate) fn replace(&mut self, key: &str, rule: RuleId) {
        let entry = Entry::new(self.program, rule);
        let slot = match key {
            "entries.text" => &mut self.text,
            "entries.reasoning" => &mut self.reasoning,
            "entries.start" => self.start.get_or_insert(entry.clone()),
            "entries.answer_start" => self.answer_start.get_or_insert(entry.clone()),
            "entries.call_body" => self.call_body.get_or_insert(entry.clone()),
            "entries.value_end" => self.value_end.get_or_insert(entry.clone()),
            "entries.value_nested" => self.value_nested.get_or_insert(entry.clone()),
            "entries.arguments_end" => self.arguments_end.get_or_insert(entry.clone()),
            "entries.object_end" => self.object_end.get_or_insert(entry.clone()),
            "entries.after_call" => self.after_call.get_or_insert(entry.clone()),
            "entries.skip" => self.skip.get_or_insert(entry.clone()),
            "arguments.special_marker" => self.special_marker.get_or_insert(entry.clone()),
            "reasoning_markers.plain" => match self.wrapping.as_mut() {
                Some(w) => &mut w.plain,
                None => return,
            },
            "arguments.object" => {
                self.object = Some(rule);
                return;
            }
            _ => return,
        };
        *slot = entry;
    }

    /// The entry rule inside a value: `value_nested` while the value quotes an open
    /// nested opener (CF-17), `value_end` otherwise.
    fn value_entry(&self, nested: bool) -> &Entry {
        let nested = self.value_nested.as_ref().filter(|_| nested);
        nested.or(self.value_end.as_ref()).unwrap_or(&self.text)
    }
}

/// What a probe was started for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probing {
    /// A marker in prose (answer text or reasoning).
    Prose,
    /// The start rule at offset 0 (CF-30).
    Start,
    /// The answer-start rule (CF-28).
    AnswerStart,
    /// What follows a complete call.
    AfterCall,
    /// A call's body, between parameters.
    CallBody,
    /// A closer inside a value.
    ValueEnd,
    /// The end of JSON arguments: after the object, or where it would begin.
    ArgumentsEnd { after_object: bool },
    /// The end of malformed JSON arguments.
    Recover,
    /// The end of a malformed call.
    Skip,
    /// What follows a complete call object (CF-16).
    ObjectEnd,
    /// Keywords encoding: what follows an argument (CF-27).
    KeywordNext,
    /// A special-token marker inside JSON arguments (CF-18): inside the object, or
    /// (`raw`) inside malformed arguments.
    Special { raw: bool },
    /// The end rule where a special-token marker ended the arguments (CF-18).
    SpecialEnd,
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Prose,
    Probe(Probing),
    /// JSON: after a call's start, before its object (whitespace is skipped).
    BeforeArguments,
    /// JSON: inside the object.
    Arguments,
    /// JSON: malformed arguments, up to the end rule.
    Recover,
    /// Parameters: inside a value.
    Value,
    /// After a malformed call.
    Skip,
    /// `json_call_object`: inside the call object.
    Object,
}

/// The state machine of a custom family, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct CustomMachine {
    family: Arc<Compiled>,
    start_in_reasoning: bool,
    emitter: Emitter,
    machine: ParsingMachine<'static>,
    /// JSON encoding: the arguments object's reader.
    arguments: Option<ArgumentsReader>,
    /// `json_call_object` encoding: the call object's reader.
    object: Option<CallObject>,
    mode: Mode,
    pos: usize,
    /// Where the active probe, object or pending arguments start (absolute).
    unit_start: usize,
    /// JSON encoding: where the arguments object starts (its `{`, absolute).
    object_start: usize,
    /// JSON encoding: where the search for the next special-token candidate in the
    /// object goes on (absolute; CF-18).
    scanned: usize,
    reasoning: bool,
    /// Whether the open reasoning is the family's own, opened by its
    /// `reasoning_open` capture or by the prompt (CF-31): no wrapper applies in it.
    own: bool,
    began: bool,
    /// Parameters encoding: the call's parameters, typed by the tools' schemas.
    values: ParameterValues,
    /// The reasoning wrappers (CF-19).
    wrappers: Option<Wrappers>,
    /// The start of the output: RS-6's opener at offset 0 (CF-19).
    first: RepeatedOpener,
    /// Keywords encoding: the open call's arguments (CF-27).
    keywords: Option<KeywordArguments>,
    /// The wrapper's rule to run at a prose candidate where the family's own
    /// markers, tried first, do not match (CF-29).
    fallback: Option<RuleId>,
    /// Whether answer text or a call came before: the answer has started (CF-28).
    answered: bool,
    /// What the request's `tool_choice` asked, and where its reading stands
    /// (FD-10).
    choice: Choice,
}

fn char_len(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(1, char::len_utf8)
}

impl CustomMachine {
    pub(crate) fn new(family: Arc<Compiled>, options: &Settings) -> CustomMachine {
        let mut machine = ParsingMachine::new(family.program);
        let wrappers = family.wrapping.as_ref().map(|w| {
            let wrappers =
                FamilyWrappers::new(family.program, &options.spellings, w.spelling.lead_byte());
            let wrappers = if w.stray_closers {
                wrappers.with_stray_closers()
            } else {
                wrappers
            };
            let mut table = w.plain.finder.table;
            for s in &options.spellings {
                table[s.lead_byte() as usize] = true;
            }
            Wrappers {
                wrappers,
                finder: Finder::of_table(table),
            }
        });
        let mut captured = family.captured.clone();
        if let Some(w) = &wrappers {
            captured.extend(w.wrappers.captured());
        }
        machine.capture_only(&captured);
        machine.set_depth_limit(DEPTH);
        let arguments = family
            .object
            .map(|object| ArgumentsReader::with_rule(family.program, object));
        let object = family.call_object.clone().map(CallObject::new);
        let values = ParameterValues::new(&options.tools, family.strip_newlines);
        // A family with reasoning markers of its own starts in its own reasoning
        // (CF-31); RS-6's opener is asked only where the wrappers are its markers.
        let own = family.roles.reasoning_open.is_some();
        let first = RepeatedOpener::new(
            options.start_in_reasoning && wrappers.is_some() && !own,
            &options.spellings,
        );
        let keywords = family
            .keywords
            .clone()
            .map(|syntax| KeywordArguments::new(syntax, &options.tools));
        CustomMachine {
            family,
            start_in_reasoning: options.start_in_reasoning,
            emitter: Emitter::new(),
            machine,
            arguments,
            object,
            mode: Mode::Prose,
            pos: 0,
            unit_start: 0,
            object_start: 0,
            scanned: 0,
            reasoning: false,
            own: false,
            began: false,
            values,
            wrappers,
            first,
            keywords,
            fallback: None,
            answered: false,
            choice: Choice::new(&options.tool_choice, &options.tools),
        }
    }

    /// The machine, for a reader whose input starts at `offset`: the bytes before
    /// it were read by another (a constrained answer's payload, FD-10c).
    pub(crate) fn starting_at(mut self, offset: usize) -> CustomMachine {
        self.pos = offset;
        self.emitter = Emitter::at(offset);
        self
    }

    /// The rule to run at a prose candidate whose byte is `byte` (CF-5; with
    /// the wrappers, CF-19), with the rule to run there when it does not match
    /// (CF-29), or `None` when nothing can start there.
    fn prose_rule(&self, byte: u8) -> Option<(RuleId, Option<RuleId>)> {
        let f = &self.family;
        let composed = if self.reasoning {
            &f.reasoning
        } else {
            &f.text
        };
        let (Some(w), Some(wrapping)) = (&self.wrappers, &f.wrapping) else {
            return Some((composed.rule, None));
        };
        let plain = wrapping.plain.finder.table[byte as usize].then_some(wrapping.plain.rule);
        if self.reasoning && self.own {
            // The family's own reasoning: its markers alone (CF-31).
            return plain.map(|p| (p, None));
        }
        let applies = Spelling::of_lead_byte(byte)
            .filter(|s| w.wrappers.applies(*s, self.reasoning))
            .is_some();
        if applies || byte == wrapping.spelling.lead_byte() {
            // The wrappers' rule for this byte (the family's composed rules at
            // its spelling's byte), or the family's markers alone there.
            if let Some(rule) = w.wrappers.entry(
                byte,
                self.reasoning,
                &crate::field::reasoning::family::ProseRules {
                    plain: wrapping.plain.rule,
                    open: f.text.rule,
                    close: f.reasoning.rule,
                },
            ) {
                if byte != wrapping.spelling.lead_byte() {
                    // The family's markers first, then the other spelling's (CF-29).
                    if let Some(plain) = plain {
                        return Some((plain, Some(rule)));
                    }
                }
                return Some((rule, None));
            }
        }
        plain.map(|p| (p, None))
    }

    fn prose(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if !self.reasoning && !text.is_empty() {
            self.answered = true;
        }
        self.emitter.prose(self.reasoning, text, start, out);
    }

    /// Reasoning closed at `end`: where no answer text and no call came before,
    /// the answer starts there (CF-28).
    fn reasoning_closed(&mut self, end: usize) {
        if !self.answered && self.family.answer_start.is_some() {
            self.start_probe(Probing::AnswerStart, end);
        }
    }

    fn start_probe(&mut self, probing: Probing, at: usize) {
        let f = &self.family;
        let entry = match probing {
            Probing::Prose if self.reasoning => &f.reasoning,
            Probing::Prose => &f.text,
            Probing::Start => f.start.as_ref().unwrap_or(&f.text),
            Probing::AnswerStart => f.answer_start.as_ref().unwrap_or(&f.text),
            Probing::AfterCall => f.after_call.as_ref().unwrap_or(&f.text),
            Probing::CallBody => f.call_body.as_ref().unwrap_or(&f.text),
            Probing::ValueEnd => f.value_entry(self.values.nested()),
            Probing::KeywordNext => f.value_end.as_ref().unwrap_or(&f.text),
            Probing::ObjectEnd => f
                .object_end
                .as_ref()
                .or(f.arguments_end.as_ref())
                .or(f.after_call.as_ref())
                .unwrap_or(&f.text),
            Probing::ArgumentsEnd { .. } | Probing::Recover | Probing::SpecialEnd => {
                f.arguments_end.as_ref().unwrap_or(&f.text)
            }
            Probing::Special { .. } => f.special_marker.as_ref().unwrap_or(&f.text),
            Probing::Skip => f.skip.as_ref().unwrap_or(&f.text),
        };
        self.start_rule(probing, entry.rule, at);
    }

    /// Starts `rule` at absolute `at`, for `probing`.
    fn start_rule(&mut self, probing: Probing, rule: RuleId, at: usize) {
        self.machine.start(rule);
        self.unit_start = at;
        self.pos = at;
        self.mode = Mode::Probe(probing);
    }

    /// The text of the first closed capture of `rule` in the last match.
    fn captured<'a>(&self, rule: Option<RuleId>, unit: &'a str) -> Option<&'a str> {
        let rule = rule?;
        self.machine
            .captures()
            .iter()
            .find(|c| c.rule == rule && c.is_closed())
            .map(|c| &unit[c.start..c.end])
    }

    /// A call (or a block of calls) begins at `start` inside reasoning: the
    /// reasoning item ends, and with `calls_end_reasoning` so does the state.
    fn leave_reasoning(&mut self, start: usize, out: &mut Vec<Event>) {
        if self.emitter.in_reasoning() {
            self.emitter.reasoning_end(true, start, out);
        }
        if self.family.calls_end_reasoning {
            self.reasoning = false;
        }
    }

    /// A prose or after-call match over `start..end` (CF-6); `marked`: not the
    /// answer-start rule's (CF-28).
    fn marker(&mut self, start: usize, end: usize, unit: &str, marked: bool, out: &mut Vec<Event>) {
        let roles = self.family.roles.clone();
        self.pos = end;
        self.mode = Mode::Prose;
        if self.captured(roles.cut, unit).is_some() {
            self.emitter.markup(end, out);
        } else if self.captured(roles.call_open, unit).is_some() {
            // A block of call objects when the match opens one too (CF-23).
            let block = self.captured(roles.block_open, unit).is_some();
            self.begin_object(start, end, block, marked, out);
        } else if let Some(raw) = self.captured(roles.name, unit) {
            let name = self.family.names.clean(raw);
            let id = self.captured(roles.id, unit).map(str::to_string);
            self.answered = true;
            self.leave_reasoning(start, out);
            self.emitter.markup(start, out);
            self.emitter.call_start(id, name.clone(), end, out);
            if self.family.object.is_some() {
                self.unit_start = end;
                self.mode = Mode::BeforeArguments;
            } else if let Some(keywords) = self.keywords.as_mut() {
                keywords.open(&name);
                self.start_probe(Probing::CallBody, end);
            } else {
                self.values.call_open(&name);
                self.start_probe(Probing::CallBody, end);
            }
        } else if let Some(marker) = self.wrapper_marker() {
            if marker == WrapperMarker::Opened {
                self.emitter.reasoning_start(end, out);
                self.reasoning = true;
                self.own = false;
            } else {
                // A closer in answer text is stray (RS-13): markup.
                if self.emitter.in_reasoning() {
                    self.emitter.reasoning_end(true, end, out);
                } else {
                    self.emitter.markup(end, out);
                }
                self.reasoning = false;
                self.reasoning_closed(end);
            }
        } else if self.captured(roles.reasoning_open, unit).is_some() {
            // Open reasoning ends before the next opens (CF-6).
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(true, start, out);
            }
            self.emitter.reasoning_start(end, out);
            self.reasoning = true;
            self.own = true;
        } else if self.captured(roles.reasoning_close, unit).is_some() {
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(true, end, out);
            } else {
                self.emitter.markup(end, out);
            }
            self.reasoning = false;
            self.reasoning_closed(end);
        } else if self.captured(roles.block_open, unit).is_some() {
            // A block of calls opens: its body is what follows a call (CF-6).
            self.leave_reasoning(start, out);
            self.emitter.markup(end, out);
            self.after_call(end);
        } else {
            self.emitter.markup(end, out);
        }
    }

    /// A call object follows the match over `start..end` (CF-16); in a block, the
    /// match is markup at once and ends open reasoning (CF-23).
    fn begin_object(
        &mut self,
        start: usize,
        end: usize,
        block: bool,
        marked: bool,
        out: &mut Vec<Event>,
    ) {
        if self.object.is_none() {
            return;
        }
        if block {
            self.leave_reasoning(start, out);
            self.emitter.markup(end, out);
        }
        if let Some(object) = self.object.as_mut() {
            object.begin(start, end, block, marked);
            self.mode = Mode::Object;
        }
    }

    /// The wrapper marker the last match was, if any (CF-19).
    fn wrapper_marker(&mut self) -> Option<WrapperMarker> {
        let wrappers = self.wrappers.as_mut()?;
        wrappers.wrappers.marker(self.machine.captures())
    }

    /// Whether a probe undecided at the end of input is a block of calls cut short
    /// whose bytes are markup (CF-12): `Some(true)` when its bytes hold a block
    /// opener, `Some(false)` after a call, `None` when its rule decides.
    fn cut_in_block(&self, probing: Probing) -> Option<bool> {
        if !self.family.end_in_block_markup {
            return None;
        }
        match probing {
            Probing::AfterCall => Some(false),
            Probing::Prose | Probing::Start | Probing::AnswerStart => {
                let block = self.family.roles.block_open?;
                self.machine
                    .captures()
                    .iter()
                    .any(|c| c.rule == block && c.is_closed())
                    .then_some(true)
            }
            _ => None,
        }
    }

    /// After a complete call ending at `end`: the after-call rule, or prose.
    fn after_call(&mut self, end: usize) {
        if self.family.after_call.is_some() {
            self.start_probe(Probing::AfterCall, end);
        } else {
            self.pos = end;
            self.mode = Mode::Prose;
        }
    }

    /// After a malformed call, at `at`: the skip rule, or prose.
    fn skip(&mut self, at: usize) {
        self.pos = at;
        self.mode = if self.family.skip.is_some() {
            Mode::Skip
        } else {
            Mode::Prose
        };
    }

    fn matched(
        &mut self,
        probing: Probing,
        start: usize,
        end: usize,
        unit: &str,
        out: &mut Vec<Event>,
    ) {
        match probing {
            Probing::Prose | Probing::Start | Probing::AfterCall | Probing::AnswerStart => {
                self.fallback = None;
                let marked = probing != Probing::AnswerStart;
                self.marker(start, end, unit, marked, out)
            }
            Probing::CallBody | Probing::KeywordNext if self.keywords.is_some() => {
                self.keyword_unit(probing, start, end, unit, out)
            }
            Probing::KeywordNext => {}
            Probing::CallBody => {
                let roles = self.family.roles.clone();
                if let Some(raw) = self.captured(roles.parameter, unit) {
                    let key = self.family.names.clean(raw);
                    let kind = self.value_kind(unit);
                    self.open_value(key, kind, start, end, out);
                } else {
                    let closes = self.captured(roles.call_close, unit).is_some();
                    self.function_close(true, end, out);
                    if closes {
                        self.after_call(end);
                    } else {
                        self.pos = end;
                        self.mode = Mode::Prose;
                    }
                }
            }
            Probing::ValueEnd => {
                let roles = &self.family.roles;
                let (open, close) = (roles.nested_open, roles.nested_close);
                let opens = self.captured(open, unit).is_some();
                let closes = !opens && self.captured(close, unit).is_some();
                if opens || closes || self.values.nested() {
                    // Value text (CF-17); a match that consumed nothing is one
                    // character of it, so the scan moves on.
                    let len = if end > start {
                        end - start
                    } else {
                        char_len(unit, 0)
                    };
                    let len = len.min(unit.len());
                    let quoted = &unit[..len];
                    if opens {
                        self.values.nest_open(quoted, start, &mut self.emitter, out);
                    } else if closes {
                        self.values
                            .nest_close(quoted, start, &mut self.emitter, out);
                    } else {
                        self.value_text(quoted, start, out);
                    }
                    self.pos = start + len;
                    self.mode = Mode::Value;
                    return;
                }
                self.value_close(start, out);
                self.emitter.markup(end, out);
                self.start_probe(Probing::CallBody, end);
            }
            Probing::ArgumentsEnd { after_object } => {
                if !after_object {
                    self.emitter.markup(start, out);
                    self.emitter.arguments_delta("{}", end, out);
                }
                self.emitter.call_end(true, end, out);
                self.after_call(end);
            }
            Probing::Recover => {
                self.emitter.call_end(false, end, out);
                self.after_call(end);
            }
            Probing::Special { .. } => {
                // A special token: the arguments end before it; the end rule reads
                // it as the call's tail, or it is left to what follows (CF-18).
                self.start_probe(Probing::SpecialEnd, start);
            }
            Probing::SpecialEnd => {
                self.emitter.call_end(false, end, out);
                self.after_call(end);
            }
            Probing::ObjectEnd if self.captured(self.family.roles.call_open, unit).is_some() => {
                // Another call object follows, in the same block (CF-23).
                let block = self.object.as_ref().is_some_and(CallObject::in_block);
                self.begin_object(start, end, block, true, out);
            }
            Probing::ObjectEnd if self.captured(self.family.roles.name, unit).is_some() => {
                // A named call follows (CF-23 with the keywords encoding).
                self.marker(start, end, unit, true, out);
            }
            Probing::Skip | Probing::ObjectEnd => {
                self.emitter.markup(end, out);
                self.pos = end;
                self.mode = Mode::Prose;
            }
        }
    }

    /// A probe at `start` was rejected; `cut`: it was still viable when the input
    /// ended.
    fn rejected(
        &mut self,
        probing: Probing,
        start: usize,
        cut: bool,
        pending: &str,
        base: usize,
        out: &mut Vec<Event>,
    ) {
        let rel = start - base;
        let len = if rel < pending.len() {
            char_len(pending, rel)
        } else {
            0
        };
        match probing {
            Probing::Start | Probing::AnswerStart => {
                // Not a start: text is scanned from there (CF-28, CF-30).
                self.pos = start;
                self.mode = Mode::Prose;
            }
            Probing::Prose if self.fallback.is_some() => {
                // The family's markers did not match: the spelling's rule (CF-29).
                if let Some(rule) = self.fallback.take() {
                    self.start_rule(Probing::Prose, rule, start);
                }
            }
            Probing::CallBody | Probing::KeywordNext if self.keywords.is_some() => {
                if cut {
                    // Cut by the end of input: markup, the call incomplete (CF-27).
                    let end = base + pending.len();
                    self.emitter.call_end(false, end, out);
                    self.pos = end;
                    self.mode = Mode::Prose;
                } else {
                    self.keywords_malformed(start, out);
                }
            }
            Probing::Prose => {
                self.prose(&pending[rel..rel + len], start, out);
                self.pos = start + len;
                self.mode = Mode::Prose;
            }
            Probing::AfterCall | Probing::ObjectEnd => {
                self.pos = start;
                self.mode = Mode::Prose;
            }
            Probing::CallBody | Probing::KeywordNext => {
                self.values.abandon();
                self.function_close(false, start, out);
                self.skip(start);
            }
            Probing::ValueEnd => {
                self.value_text(&pending[rel..rel + len], start, out);
                self.pos = start + len;
                self.mode = Mode::Value;
            }
            Probing::ArgumentsEnd { after_object: true } if cut => {
                // The object is whole; the input ended before its end rule (CF-8).
                let end = base + pending.len();
                self.emitter.call_end(true, end, out);
                self.pos = end;
                self.mode = Mode::Prose;
            }
            Probing::Recover if self.special_candidate(pending, rel) => {
                // Not the end rule, maybe a special token (CF-18).
                self.start_probe(Probing::Special { raw: true }, start);
            }
            Probing::ArgumentsEnd { .. } | Probing::Recover | Probing::Special { raw: true } => {
                // Malformed arguments: this character is arguments text (CF-8).
                self.emitter
                    .arguments_delta(&pending[rel..rel + len], start + len, out);
                self.pos = start + len;
                self.mode = Mode::Recover;
            }
            Probing::Special { raw: false } => {
                // Not a special token (nor a cut one): the object goes on (CF-18).
                self.scanned = start + len;
                self.mode = Mode::Arguments;
            }
            Probing::SpecialEnd => {
                // The token is not the call's tail: it is left to what follows.
                self.emitter.call_end(false, start, out);
                self.after_call(start);
            }
            Probing::Skip => {
                self.pos = start + len;
                self.mode = Mode::Skip;
            }
        }
    }

    /// A call-body or after-argument match over `start..end` of the keywords
    /// encoding (CF-27).
    fn keyword_unit(
        &mut self,
        probing: Probing,
        start: usize,
        end: usize,
        unit: &str,
        out: &mut Vec<Event>,
    ) {
        let roles = self.family.roles.clone();
        if self.captured(roles.call_close, unit).is_some() {
            let Some(keywords) = self.keywords.as_ref() else {
                return;
            };
            let (text, complete) = keywords.close();
            self.emitter.arguments_delta(text, end, out);
            self.emitter.call_end(complete, end, out);
            self.after_call(end);
            return;
        }
        if probing == Probing::KeywordNext {
            // A separator: the next argument may begin after it.
            self.emitter.markup(end, out);
            self.start_probe(Probing::CallBody, end);
            return;
        }
        let key = self
            .captured(roles.parameter, unit)
            .map(|k| self.family.names.clean(k));
        let value = self.captured(roles.value, unit);
        let delta = match (key, value, self.keywords.as_mut()) {
            (Some(key), Some(value), Some(keywords)) => keywords.argument(key, value),
            _ => None,
        };
        match delta {
            Some(delta) => {
                self.emitter.arguments_delta(&delta, end, out);
                self.start_probe(Probing::KeywordNext, end);
            }
            // No argument, or a value without a JSON form: malformed (CF-27).
            None => self.keywords_malformed(start, out),
        }
    }

    /// A keywords call that cannot go on at `at`: it ends incomplete there, and the
    /// skip rule (or prose) follows (CF-27).
    fn keywords_malformed(&mut self, at: usize, out: &mut Vec<Event>) {
        self.emitter.call_end(false, at, out);
        self.skip(at);
    }

    /// How the value the last call-body match opens is read (CF-20).
    fn value_kind(&self, unit: &str) -> ValueKind {
        let Some(types) = &self.family.value_types else {
            return ValueKind::Schema;
        };
        types.kind(self.captured(Some(types.rule), unit))
    }

    /// A parameter `key` whose opener spans `start..end`, read as `kind` says
    /// (CF-9, CF-20).
    fn open_value(
        &mut self,
        key: String,
        kind: ValueKind,
        start: usize,
        end: usize,
        out: &mut Vec<Event>,
    ) {
        self.values
            .open_as(&key, kind, start, end, &mut self.emitter, out);
        self.pos = end;
        self.mode = Mode::Value;
    }

    /// Value text at `start` (CF-9).
    fn value_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        self.values.text(text, start, &mut self.emitter, out);
    }

    /// The value ended at a closer that starts at `at` (a held newline is dropped).
    fn value_close(&mut self, at: usize, out: &mut Vec<Event>) {
        self.values.close(at, &mut self.emitter, out);
    }

    /// The call ends (parameters encoding); its markup reaches `end`.
    fn function_close(&mut self, complete: bool, end: usize, out: &mut Vec<Event>) {
        self.values
            .call_close(complete, end, &mut self.emitter, out);
    }

    /// Scans value text from `self.pos`; false when more input is needed.
    fn scan_value(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> bool {
        let family = &self.family;
        let finder = &family.value_entry(self.values.nested()).finder;
        let scan = self.values.scan(
            pending,
            base,
            &mut self.pos,
            eof,
            |hay| finder.find(hay),
            &mut self.emitter,
            out,
        );
        match scan {
            Scan::More => false,
            Scan::Again => true,
            Scan::Candidate => {
                self.start_probe(Probing::ValueEnd, self.pos);
                true
            }
            Scan::Cut => {
                self.function_close(false, self.pos, out);
                self.mode = Mode::Prose;
                false
            }
        }
    }

    /// Whether the byte at `rel` of `pending` may begin a special-token marker.
    fn special_candidate(&self, pending: &str, rel: usize) -> bool {
        let special = self.family.special_marker.as_ref();
        let byte = pending.as_bytes().get(rel);
        special
            .zip(byte)
            .is_some_and(|(s, &b)| s.finder.table[b as usize])
    }

    /// Reads the JSON object from `self.object_start`, up to the next byte that may
    /// begin a special-token marker (CF-18); false when more input is needed.
    fn read_object(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> bool {
        let start = self.object_start;
        let unit = &pending[start - base..];
        let from = self.scanned - start;
        let next = self
            .family
            .special_marker
            .as_ref()
            .and_then(|s| s.finder.find(&unit.as_bytes()[from..]))
            .map(|k| from + k);
        let upto = next.unwrap_or(unit.len());
        let Some(arguments) = self.arguments.as_mut() else {
            return false;
        };
        let read = arguments.read_emitting(
            &unit[..upto],
            start,
            eof && next.is_none(),
            &mut self.emitter,
            out,
        );
        match read {
            ObjectRead::More => {
                if let Some(candidate) = next {
                    self.start_probe(Probing::Special { raw: false }, start + candidate);
                    return true;
                }
                self.scanned = start + upto;
                self.pos = base + pending.len();
                false
            }
            ObjectRead::Complete(k) => {
                self.start_probe(Probing::ArgumentsEnd { after_object: true }, start + k);
                true
            }
            ObjectRead::Stopped(stop) => {
                self.pos = start + stop;
                if eof && stop == unit.len() {
                    // Cut inside the object (CF-8).
                    self.emitter.call_end(false, self.pos, out);
                    self.mode = Mode::Prose;
                    return false;
                }
                // A syntax error: the arguments run on to the end rule (CF-8).
                self.mode = Mode::Recover;
                true
            }
        }
    }
}

impl Machine for CustomMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        if self.choice.is_auto() {
            self.read(pending, base, eof, out)
        } else {
            self.read_chosen(pending, base, eof, out)
        }
    }
}

impl CustomMachine {
    /// Decides as much of `pending` as the family's own reading can (FD-10a; the
    /// rest of FD-10 is `read_chosen`'s).
    fn read(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        if !self.first.decided() {
            // RS-6's opener at offset 0 (CF-19).
            let mut begun = None;
            let read = self.first.read(
                pending.as_bytes(),
                base,
                eof,
                &mut self.emitter,
                |b| begun = Some(b),
                out,
            );
            if let (Some(b), Some(w)) = (begun, self.wrappers.as_mut()) {
                w.wrappers.begun(b);
                self.reasoning = true;
                self.began = true;
            }
            match read {
                None => return self.emitter.covered().max(base) - base,
                Some(n) => self.pos = self.pos.max(base + n),
            }
        }
        if !self.began {
            self.began = true;
            if self.start_in_reasoning {
                self.reasoning = true;
                self.own = self.family.roles.reasoning_open.is_some();
                self.emitter.reasoning_start(base, out);
            } else if let Some(start) = &self.family.start {
                // The start rule, once at offset 0 (CF-30).
                self.start_rule(Probing::Start, start.rule, base);
            } else if let Some(start) = &self.family.answer_start {
                // The answer starts at offset 0 (CF-28).
                self.start_rule(Probing::AnswerStart, start.rule, base);
            }
        }
        let bytes = pending.as_bytes();
        let end = base + bytes.len();
        loop {
            match self.mode {
                Mode::Object => {
                    let Some(object) = self.object.as_mut() else {
                        self.mode = Mode::Prose;
                        continue;
                    };
                    let read = object.read(pending, base, eof, &mut self.emitter, out);
                    if object.started() {
                        self.answered = true;
                        if self.family.calls_end_reasoning {
                            // The call left the reasoning state (CF-11).
                            self.reasoning = false;
                        }
                    }
                    let from = object.unit_start();
                    match read {
                        ObjectEnd::More => {
                            if eof {
                                self.pos = end;
                                self.mode = Mode::Prose;
                            }
                            break;
                        }
                        ObjectEnd::Prose(to) => {
                            // No call: the unit is prose (CF-16).
                            self.prose(&pending[from - base..to - base], from, out);
                            self.pos = to;
                            self.mode = Mode::Prose;
                        }
                        ObjectEnd::Called(at) | ObjectEnd::Skipped(at) => {
                            self.start_probe(Probing::ObjectEnd, at)
                        }
                        ObjectEnd::Malformed(at) => self.skip(at),
                        ObjectEnd::Stopped(at) => {
                            // The block ends there (CF-23).
                            self.pos = at;
                            self.mode = Mode::Prose;
                        }
                    }
                }
                Mode::Prose => {
                    let rel = self.pos - base;
                    let finder = match &self.wrappers {
                        Some(w) => &w.finder,
                        None if self.reasoning => &self.family.reasoning.finder,
                        None => &self.family.text.finder,
                    };
                    match finder.find(&bytes[rel..]) {
                        None => {
                            self.prose(&pending[rel..], self.pos, out);
                            self.pos = end;
                            break;
                        }
                        Some(k) => {
                            self.prose(&pending[rel..rel + k], self.pos, out);
                            let at = self.pos + k;
                            match self.prose_rule(bytes[rel + k]) {
                                Some((rule, fallback)) => {
                                    self.fallback = fallback;
                                    self.start_rule(Probing::Prose, rule, at)
                                }
                                None => {
                                    // No marker can start here (CF-19): one
                                    // character of prose.
                                    let len = char_len(pending, rel + k);
                                    self.prose(&pending[rel + k..rel + k + len], at, out);
                                    self.pos = at + len;
                                }
                            }
                        }
                    }
                }
                Mode::Probe(probing) => {
                    let start = self.unit_start;
                    let unit = &pending[start - base..];
                    let mut outcome = self.machine.resume(unit.as_bytes());
                    let mut cut = false;
                    if eof && outcome == Outcome::NeedMore {
                        if let Some(block) = self.cut_in_block(probing) {
                            if block {
                                self.leave_reasoning(start, out);
                            }
                            self.emitter.markup(end, out);
                            self.pos = end;
                            self.mode = Mode::Prose;
                            continue;
                        }
                        outcome = self.machine.finish(unit.as_bytes());
                        cut = !matches!(outcome, Outcome::Matched { .. });
                    }
                    match outcome {
                        Outcome::NeedMore => break,
                        // An empty match starts nothing where the mode would come
                        // back to the same byte with the same rule (CF-6): no loop.
                        // A start rule's empty match counts when a call starts
                        // there (CF-28, CF-30).
                        Outcome::Matched { end: 0 }
                            if matches!(probing, Probing::Prose | Probing::CallBody)
                                || (probing == Probing::AnswerStart
                                    && self
                                        .captured(self.family.roles.call_open, unit)
                                        .is_none())
                                || (probing == Probing::Start
                                    && self
                                        .captured(self.family.roles.call_open, unit)
                                        .is_none()
                                    && self.captured(self.family.roles.name, unit).is_none()) =>
                        {
                            self.rejected(probing, start, false, pending, base, out)
                        }
                        Outcome::Matched { end: 0 } if probing == Probing::AfterCall => {
                            self.pos = start;
                            self.mode = Mode::Prose;
                        }
                        Outcome::Matched { end: len } => {
                            self.matched(probing, start, start + len, unit, out)
                        }
                        Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                            self.rejected(probing, start, cut, pending, base, out)
                        }
                    }
                }
                Mode::BeforeArguments => {
                    let rel = self.pos - base;
                    let skipped = bytes[rel..].iter().take_while(|&&b| is_json_ws(b)).count();
                    match bytes.get(rel + skipped) {
                        None => {
                            self.pos += skipped;
                            if eof {
                                self.emitter.call_end(false, end, out);
                                self.mode = Mode::Prose;
                            }
                            break;
                        }
                        Some(b'{') => {
                            self.pos += skipped;
                            self.emitter.markup(self.pos, out);
                            self.unit_start = self.pos;
                            self.object_start = self.pos;
                            self.scanned = self.pos;
                            if let Some(arguments) = self.arguments.as_mut() {
                                arguments.start();
                            }
                            self.mode = Mode::Arguments;
                        }
                        Some(_) => {
                            // No object: the end rule decides, from the first
                            // byte after the call's start.
                            let from = self.unit_start;
                            self.start_probe(
                                Probing::ArgumentsEnd {
                                    after_object: false,
                                },
                                from,
                            );
                        }
                    }
                }
                Mode::Arguments => {
                    if !self.read_object(pending, base, eof, out) {
                        break;
                    }
                }
                Mode::Recover => {
                    let rel = self.pos - base;
                    let family = &self.family;
                    let finder = &family.arguments_end.as_ref().unwrap_or(&family.text).finder;
                    let mut found = finder.find(&bytes[rel..]);
                    if let Some(special) = family.special_marker.as_ref() {
                        // A special token ends malformed arguments too (CF-18).
                        let limit = found.unwrap_or(bytes.len() - rel);
                        if let Some(k) = special.finder.find(&bytes[rel..rel + limit]) {
                            found = Some(k);
                        }
                    }
                    match found {
                        None => {
                            self.emitter.arguments_delta(&pending[rel..], end, out);
                            self.pos = end;
                            break;
                        }
                        Some(k) => {
                            self.emitter
                                .arguments_delta(&pending[rel..rel + k], self.pos + k, out);
                            self.start_probe(Probing::Recover, self.pos + k);
                        }
                    }
                }
                Mode::Value => {
                    if !self.scan_value(pending, base, eof, out) {
                        break;
                    }
                }
                Mode::Skip => {
                    let rel = self.pos - base;
                    let finder = &self
                        .family
                        .skip
                        .as_ref()
                        .unwrap_or(&self.family.text)
                        .finder;
                    match finder.find(&bytes[rel..]) {
                        None => {
                            self.emitter.markup(end, out);
                            self.pos = end;
                            break;
                        }
                        Some(k) => {
                            self.emitter.markup(self.pos + k, out);
                            self.start_probe(Probing::Skip, self.pos + k);
                        }
                    }
                }
            }
        }
        if eof {
            if self.emitter.in_call() {
                self.values.abandon();
                self.emitter.call_end(false, end, out);
            }
            self.emitter.markup(end, out);
            if self.emitter.in_reasoning() {
                self.emitter.reasoning_end(false, end, out);
            }
            return pending.len();
        }
        // The object being read stays in the buffer: the parsing machine re-reads
        // the unit's bytes when it backtracks (their events are out already).
        let keep = match (&self.mode, &self.object) {
            (Mode::Arguments | Mode::Probe(Probing::Special { raw: false }), _) => {
                self.emitter.covered().min(self.object_start)
            }
            (Mode::Object, Some(object)) => self.emitter.covered().min(object.needed_from()),
            _ => self.emitter.covered(),
        };
        keep.max(base) - base
    }
}

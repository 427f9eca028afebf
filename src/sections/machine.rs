//! The sections state machine: text outside sections, verbatim content inside.
//!
//! Tags are recognized by the entry rules of grammar/sections.pest running on the
//! parsing machine (src/machine); the registry, the modes, the tag bound and what an
//! attribute means are decided here.

use std::sync::OnceLock;

use compact_str::CompactString;
use serde::Serialize;

use super::attrs::Attrs;
use super::grammar;
use super::options::{NameMatch, Options, OptionsProblem, Registry};
use crate::machine::{Capture, Outcome, ParsingMachine, RuleId};
use crate::reentry::{scan_tags, Machine, TagScanner, Verdict};
use crate::span::Span;

/// Deepest `{` nesting an attribute value may have (SEC-6): the nesting bound the
/// sections program is compiled with on the recursive rule `brace_value`.
pub const MAX_BRACE_DEPTH: usize = 64;

/// An event of the sections dialect. Serialized with a `"type"` in snake_case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Text outside any section (SEC-2), emitted as soon as it cannot be markup.
    Text {
        /// The text (stored inline when short: no allocation per small event).
        text: CompactString,
        /// Where it stands in the input.
        span: Span,
    },
    /// A section opened: emitted at the opener's `>` (SEC-10).
    SectionStart {
        /// Canonical name.
        name: CompactString,
        /// The spelling used in the opener, as written.
        tag: CompactString,
        /// Attributes in source order, keys lowercased, values raw (SEC-5).
        attrs: Attrs,
        /// Whether the opener was `<name .../>`; a `section_end` follows at once.
        self_closing: bool,
        /// The opener.
        span: Span,
    },
    /// Content of the open section, verbatim (SEC-9).
    Content {
        /// The content bytes (stored inline when short).
        text: CompactString,
        /// Where they stand in the input.
        span: Span,
    },
    /// The open section ended: at its closer's `>`, right after a self-closing
    /// opener, or at end of input with `closed: false` (SEC-12).
    SectionEnd {
        /// Canonical name.
        name: CompactString,
        /// False when end of input came first.
        closed: bool,
        /// The closer (zero-width for self-closing and unclosed sections).
        span: Span,
    },
}

impl Event {
    /// The input bytes this event covers.
    pub fn span(&self) -> Span {
        match self {
            Event::Text { span, .. }
            | Event::SectionStart { span, .. }
            | Event::Content { span, .. }
            | Event::SectionEnd { span, .. } => *span,
        }
    }
}

/// The rules of grammar/sections.pest (with grammar/common.pest) the state machine
/// runs and reads.
struct TagRules {
    /// Outside a section: an opener.
    opener_tag: RuleId,
    /// Inside a section: a closer.
    closer_tag: RuleId,
    /// Captured rules the state machine tells apart (the grammar captures only
    /// [`grammar::CAPTURED`]: the tag name first, then keys, values and the slash).
    key: RuleId,
    self_close: RuleId,
}

impl TagRules {
    fn get() -> &'static TagRules {
        static RULES: OnceLock<TagRules> = OnceLock::new();
        RULES.get_or_init(|| {
            let program = grammar::program();
            // The rules are in the grammar files of the crate (tested).
            let rule = |name: &str| program.rule(name).expect("rule of grammar/sections.pest");
            TagRules {
                opener_tag: rule("opener_tag"),
                closer_tag: rule("closer_tag"),
                key: rule("attr_key"),
                self_close: rule("self_close"),
            }
        })
    }
}

/// Where the candidate at the start of the unit stands.
#[derive(Clone, Copy, Debug)]
enum Candidate {
    /// No candidate is being read.
    Idle,
    /// The tag rule of the mode is running and the tag name has not ended: the
    /// name read so far is checked against the registry up to `checked` (SEC-16).
    Name { name: NameMatch, checked: usize },
    /// The tag name is `start..end` and spells `section`; the rest of the tag is
    /// being read.
    Named {
        section: usize,
        start: usize,
        end: usize,
    },
}

/// The sections state machine (driven by [`crate::reentry::Stream`]).
#[derive(Clone, Debug)]
pub struct SectionMachine {
    registry: Registry,
    max_tag_bytes: usize,
    /// The open section, if any.
    open: Option<usize>,
    /// Runs the mode's entry rules on the candidate tag at the start of the unit.
    tags: ParsingMachine<'static>,
    candidate: Candidate,
    /// Where an opener's attributes are gathered (reused from tag to tag).
    scratch: Vec<(CompactString, CompactString)>,
}

impl SectionMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Result<Self, OptionsProblem> {
        let tags = ParsingMachine::new(grammar::program());
        Ok(SectionMachine {
            registry: Registry::new(options)?,
            max_tag_bytes: options.max_tag_bytes.min(crate::reentry::MAX_SIZE_OPTION),
            open: None,
            tags,
            candidate: Candidate::Idle,
            scratch: Vec::new(),
        })
    }

    /// The most bytes held back undecided: one tag candidate, plus a carried
    /// partial UTF-8 character.
    pub fn hold_back_bound(&self) -> usize {
        self.max_tag_bytes + 3
    }

    /// Runs the machine on `bytes`, the whole unit if `finish`.
    fn run(&mut self, bytes: &[u8], finish: bool) -> Outcome {
        if finish {
            self.tags.finish(bytes)
        } else {
            self.tags.resume(bytes)
        }
    }

    /// Reads the candidate on `bytes` (at most `max_tag_bytes` of the unit; `bounded`
    /// when the bound cut them, `finish` when the input ends with them).
    fn read_candidate(&mut self, bytes: &[u8], finish: bool, bounded: bool) -> Verdict {
        let outcome = self.run(bytes, finish);
        if let Outcome::Rejected { .. } | Outcome::TooDeep { .. } = outcome {
            return Verdict::Rejected;
        }
        if let Candidate::Name { mut name, checked } = self.candidate {
            // A closer names the open section; an opener any registered one (SEC-10).
            let only = self.open;
            // The name read so far is the `tag_name` capture, the first of the tag
            // and open while its bytes arrive: each of its bytes is checked against
            // the registry once, so a name that no spelling starts with is rejected
            // on the byte that rules it out (SEC-16).
            let Some(&cap) = self.tags.captures().first() else {
                return match outcome {
                    Outcome::NeedMore if !bounded => Verdict::NeedMore,
                    _ => Verdict::Rejected,
                };
            };
            let end = if cap.is_closed() {
                cap.end
            } else {
                bytes.len()
            };
            let from = checked.max(cap.start);
            let unseen = bytes.get(from..end).unwrap_or_default();
            let checked = match self.registry.scan_name(&mut name, unseen, only) {
                Some(n) => from + n,
                None => return Verdict::Rejected,
            };
            self.candidate = if cap.is_closed() {
                match self.registry.matched(&name, only) {
                    Some(section) => Candidate::Named {
                        section,
                        start: cap.start,
                        end: cap.end,
                    },
                    None => return Verdict::Rejected,
                }
            } else {
                Candidate::Name { name, checked }
            };
        }
        match (outcome, self.candidate) {
            (Outcome::Matched { end }, Candidate::Named { .. }) => Verdict::Complete(end),
            (Outcome::NeedMore, _) if !bounded => Verdict::NeedMore,
            _ => Verdict::Rejected,
        }
    }
}

/// The attributes and the self-closing slash of a complete opener, read from the
/// captures of `opener_tag` over `tag`, built in `scratch` (SEC-5).
fn read_opener(
    captures: &[Capture],
    tag: &str,
    scratch: &mut Vec<(CompactString, CompactString)>,
) -> (Attrs, bool) {
    let rules = TagRules::get();
    let text = |c: &Capture| tag.get(c.start..c.end).unwrap_or_default();
    let mut i = 0;
    // A key's value, if it has one, is the capture right after it.
    let pairs = std::iter::from_fn(|| {
        while let Some(c) = captures.get(i) {
            i += 1;
            if c.rule != rules.key {
                continue;
            }
            let value = match captures.get(i) {
                Some(v) if v.rule != rules.key && v.rule != rules.self_close => {
                    i += 1;
                    text(v)
                }
                _ => "",
            };
            return Some((text(c), value));
        }
        None
    });
    let attrs = Attrs::from_pairs_in(scratch, pairs);
    let self_closing = captures.last().is_some_and(|c| c.rule == rules.self_close);
    (attrs, self_closing)
}

impl TagScanner for SectionMachine {
    type Event = Event;

    fn emit_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        let span = Span::new(start, start + text.len());
        let text = CompactString::from(text);
        out.push(match self.open {
            None => Event::Text { text, span },
            Some(_) => Event::Content { text, span },
        });
    }

    fn probe_resume(&mut self, unit: &str, eof: bool) -> Option<Verdict> {
        if let Candidate::Idle = self.candidate {
            return None;
        }
        let max = self.max_tag_bytes;
        let bytes = unit.as_bytes();
        // A candidate must complete within `max` bytes (SEC-8): the machine never
        // sees more, and past the bound the end of the input does not matter.
        let bounded = bytes.len() >= max;
        let bytes = &bytes[..bytes.len().min(max)];
        Some(self.read_candidate(bytes, eof && !bounded, bounded))
    }

    fn probe_start(&mut self) {
        let rules = TagRules::get();
        self.tags.start(match self.open {
            None => rules.opener_tag,
            Some(_) => rules.closer_tag,
        });
        self.candidate = Candidate::Name {
            name: NameMatch::default(),
            checked: 0,
        };
    }

    fn probe_reject(&mut self) {
        self.candidate = Candidate::Idle;
    }

    fn probe_take(&mut self, tag: &str, start: usize, out: &mut Vec<Event>) -> bool {
        let candidate = std::mem::replace(&mut self.candidate, Candidate::Idle);
        let Candidate::Named {
            section,
            start: name_start,
            end: name_end,
        } = candidate
        else {
            return false;
        };
        let span = Span::new(start, start + tag.len());
        let name = self.registry.names[section].clone();
        if self.open.is_some() {
            // A closer carries nothing but its name (SEC-10).
            out.push(Event::SectionEnd {
                name,
                closed: true,
                span,
            });
            self.open = None;
            return true;
        }
        let spelling = CompactString::from(&tag[name_start..name_end]);
        let (attrs, self_closing) = read_opener(self.tags.captures(), tag, &mut self.scratch);
        out.push(Event::SectionStart {
            name: name.clone(),
            tag: spelling,
            attrs,
            self_closing,
            span,
        });
        if self_closing {
            out.push(Event::SectionEnd {
                name,
                closed: true,
                span: Span::empty(span.end),
            });
        } else {
            self.open = Some(section);
        }
        true
    }

    fn end_of_input(&mut self, end: usize, out: &mut Vec<Event>) {
        if let Some(section) = self.open.take() {
            let name = self.registry.names[section].clone();
            out.push(Event::SectionEnd {
                name,
                closed: false,
                span: Span::empty(end),
            });
        }
    }
}

impl Machine for SectionMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        scan_tags(self, pending, base, eof, out)
    }
}

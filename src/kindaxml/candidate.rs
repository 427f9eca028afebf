//! A candidate tag run on grammar/kindaxml.pest (KX-6 to KX-8, KX-11): the parsing
//! machine started at a `<` with the head rule, then, once the name is read and
//! looked up in the registry, with the rule for the rest of that kind of tag; resumed
//! as the candidate's bytes arrive, so a candidate that arrives in pieces costs what
//! it costs whole.
//!
//! The grammar knows tags; this module knows the region (KX-7): it hands the machine
//! at most `max_tag_bytes` bytes and, for a start tag of an unknown name, the bytes up
//! to the first newline, and ends the machine's input where the region ends. Deciding
//! on the byte that decides (a `<`, a name that can no longer be recognized) is what
//! lets text be emitted promptly (S4).

use super::grammar::{self, TagRules};
use super::options::{Config, UnknownMode};
use crate::machine::{Outcome, ParsingMachine};
use crate::reentry::Verdict;

/// What a complete candidate is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// A start or self-closing tag.
    Start,
    /// An end tag.
    End,
    /// The `<![CDATA[` that opens a literal block.
    CdataOpen,
}

/// Which rule the machine is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The head: `<` and the name, or the literal block opener.
    Head,
    /// The rest of the tag, from `from` (where the name ends).
    Rest { from: usize },
}

/// One candidate tag at a time; the unit always starts with its `<`.
#[derive(Clone, Debug)]
pub struct Candidate {
    machine: ParsingMachine<'static>,
    step: Step,
    kind: UnitKind,
    /// The recognized tag the name spells, once the head is read.
    recognized: Option<usize>,
    /// Where the region of a start tag with an unknown name ends at a newline, once
    /// one has arrived; and how far the unit was searched for it.
    line_end: Option<usize>,
    searched: usize,
}

impl Candidate {
    /// A machine for candidates, idle until [`Candidate::start`].
    pub fn new() -> Self {
        Candidate {
            machine: ParsingMachine::new(grammar::program()),
            step: Step::Head,
            kind: UnitKind::Start,
            recognized: None,
            line_end: None,
            searched: 0,
        }
    }

    /// Starts on a candidate at a `<`.
    pub fn start(&mut self, config: &Config) {
        let rules = TagRules::get();
        self.machine.start(if config.cdata {
            rules.head_or_cdata
        } else {
            rules.head
        });
        self.step = Step::Head;
        self.kind = UnitKind::Start;
        self.recognized = None;
        self.line_end = None;
        self.searched = 0;
    }

    /// What the candidate is, once [`Candidate::resume`] said it is complete.
    pub fn kind(&self) -> UnitKind {
        self.kind
    }

    /// The recognized tag the name spells (KX-5), if any.
    pub fn recognized(&self) -> Option<usize> {
        self.recognized
    }

    /// The captures of the rest of a start tag, and where in the unit they count from.
    pub fn rest_captures(&self) -> (&[crate::machine::Capture], usize) {
        let from = match self.step {
            Step::Rest { from } => from,
            Step::Head => 0,
        };
        (self.machine.captures(), from)
    }

    /// Runs the candidate over `unit`, its bytes so far; at `eof` they are all there
    /// will be. Once it says complete, [`Candidate::kind`],
    /// [`Candidate::recognized`] and [`Candidate::rest_captures`] describe the tag.
    pub fn resume(&mut self, unit: &[u8], config: &Config, eof: bool) -> Verdict {
        let rules = TagRules::get();
        loop {
            let region = self.region(unit, config);
            let closed = eof || region < unit.len() || unit.len() >= config.max_tag_bytes;
            let from = match self.step {
                Step::Head => 0,
                Step::Rest { from } => from,
            };
            let input = &unit[from.min(region)..region];
            let outcome = if closed {
                self.machine.finish(input)
            } else {
                self.machine.resume(input)
            };
            let head_end = match (self.step, outcome) {
                (_, Outcome::Rejected { .. } | Outcome::TooDeep { .. }) => {
                    return Verdict::Rejected
                }
                (Step::Head, Outcome::NeedMore)
                    if !self.name_may_be_recognized(unit, region, config) =>
                {
                    return Verdict::Rejected
                }
                (_, Outcome::NeedMore) => return Verdict::NeedMore,
                (Step::Rest { from }, Outcome::Matched { end }) => {
                    return Verdict::Complete(from + end)
                }
                (Step::Head, Outcome::Matched { end }) => end,
            };
            let captures = self.machine.captures();
            if captures.iter().any(|c| c.rule == rules.cdata_open) {
                self.kind = UnitKind::CdataOpen;
                return Verdict::Complete(head_end);
            }
            let Some(name) = captures.iter().find(|c| c.rule == rules.name) else {
                return Verdict::Rejected;
            };
            let name_start = name.start;
            self.recognized = config.lookup(&unit[name.start..name.end]);
            let unknown = self.recognized.is_none();
            if unknown && config.unknown_mode == UnknownMode::TreatAsText {
                return Verdict::Rejected;
            }
            let rule = if unit[1] != b'/' {
                rules.start_rest
            } else if !unknown {
                self.kind = UnitKind::End;
                rules.end_rest
            } else if name_start == 2 {
                self.kind = UnitKind::End;
                rules.unknown_end_rest
            } else {
                // Whitespace before an unknown end tag's name (KX-6).
                return Verdict::Rejected;
            };
            self.searched = head_end;
            self.machine.start(rule);
            self.step = Step::Rest { from: head_end };
        }
    }

    /// Where the candidate's region ends in what has arrived of `unit` (KX-7): at
    /// `max_tag_bytes`, and for a start tag of an unknown name at the first newline.
    /// The next `<` ends it too, but no rule of the grammar reads past one.
    fn region(&mut self, unit: &[u8], config: &Config) -> usize {
        let upto = unit.len().min(config.max_tag_bytes);
        let line_bound = self.kind == UnitKind::Start
            && self.recognized.is_none()
            && matches!(self.step, Step::Rest { .. });
        if line_bound && self.line_end.is_none() && self.searched < upto {
            // Each byte is searched once, however the candidate arrives.
            self.line_end =
                memchr::memchr(b'\n', &unit[self.searched..upto]).map(|k| self.searched + k);
            self.searched = upto;
        }
        self.line_end.map_or(upto, |nl| nl.min(upto))
    }

    /// While the head is read under `unknown_mode: "treat_as_text"`: whether the name
    /// so far (up to `region`) still begins some recognized name; if not, the `<` is
    /// text at once.
    fn name_may_be_recognized(&self, unit: &[u8], region: usize, config: &Config) -> bool {
        if config.unknown_mode != UnknownMode::TreatAsText {
            return true;
        }
        let name = TagRules::get().name;
        match self
            .machine
            .captures()
            .iter()
            .rev()
            .find(|c| c.rule == name)
        {
            Some(c) => config.is_prefix(&unit[c.start..region]),
            None => true,
        }
    }
}

//! A marker candidate run on a family's grammar: the parsing machine started at a
//! candidate byte with the entry rule of the family's mode, resumed as the
//! candidate's bytes arrive. Every family machine that probes its grammar (hermes,
//! qwen3-coder, deepseek, harmony, mistral) runs its candidates through one.

use crate::field::json_arguments;
use crate::machine::{Capture, Outcome, ParsingMachine, Program, RuleId};

/// The parsing machine of one family grammar, probing one candidate at a time.
#[derive(Clone, Debug)]
pub struct MarkerProbe {
    machine: ParsingMachine<'static>,
    /// Where the active candidate starts (absolute), if one is active.
    start: Option<usize>,
}

/// A rule of `program`, which is a grammar of the crate (its rules are tested).
pub fn rule(program: &Program, name: &str) -> RuleId {
    program
        .rule(name)
        .unwrap_or_else(|| panic!("rule {name} of a crate grammar (tested)"))
}

impl MarkerProbe {
    /// A probe for `program` that records the captures of `captured` only.
    pub fn new(program: &'static Program, captured: &[RuleId]) -> Self {
        let mut machine = ParsingMachine::new(program);
        machine.capture_only(captured);
        MarkerProbe {
            machine,
            start: None,
        }
    }

    /// Where the active candidate starts.
    pub fn active(&self) -> Option<usize> {
        self.start
    }

    /// Starts `rule` on a candidate at absolute offset `start`.
    pub fn start(&mut self, rule: RuleId, start: usize) {
        self.machine.start(rule);
        self.start = Some(start);
    }

    /// Starts `rule` on a candidate whose position the caller keeps ([`Self::active`]
    /// stays as it was).
    pub fn begin(&mut self, rule: RuleId) {
        self.machine.start(rule);
    }

    /// Runs the candidate over `unit`, its bytes so far (from its start), resumed and
    /// at `eof` finished; also says whether the unit was cut (every byte of it still
    /// viable when the input ended; see [`json_arguments::run`]). A decided outcome
    /// ends the candidate.
    pub fn run_cut(&mut self, unit: &str, eof: bool) -> (Outcome, bool) {
        let (outcome, cut) = json_arguments::run(&mut self.machine, unit, eof);
        if outcome != Outcome::NeedMore {
            self.start = None;
        }
        (outcome, cut)
    }

    /// Whether `rule` matches at the start of `unit`, the rest of the input (a
    /// one-off check, outside any candidate).
    pub fn matches_at_end(&mut self, rule: RuleId, unit: &str) -> bool {
        self.machine.start(rule);
        matches!(
            self.machine.finish(unit.as_bytes()),
            Outcome::Matched { .. }
        )
    }

    /// How `rule` fares at the start of `unit`, all the bytes there are (a one-off
    /// check, outside any candidate).
    pub fn match_at(&mut self, rule: RuleId, unit: &str) -> Outcome {
        self.machine.start(rule);
        self.machine.finish(unit.as_bytes())
    }

    /// The captures of the last match.
    pub fn captures(&self) -> &[Capture] {
        self.machine.captures()
    }

    /// Runs the candidate over `unit`, its bytes so far (from its start); at `eof`
    /// they are all there will be. A decided outcome ends the candidate.
    pub fn run(&mut self, unit: &[u8], eof: bool) -> Outcome {
        let outcome = if eof {
            self.machine.finish(unit)
        } else {
            self.machine.resume(unit)
        };
        if outcome != Outcome::NeedMore {
            self.start = None;
        }
        outcome
    }

    /// The first closed capture of `rule` in the last match, relative to the
    /// candidate's start.
    pub fn capture(&self, rule: RuleId) -> Option<Capture> {
        self.machine
            .captures()
            .iter()
            .find(|c| c.rule == rule && c.is_closed())
            .copied()
    }
}

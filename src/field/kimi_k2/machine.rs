//! The kimi-k2 state machine (spec/kimi-k2.md): the sectioned JSON machine
//! (`field::sectioned`) on the rules of grammar/kimi-k2.pest, whose headers carry
//! the call id; a tool section breaks out of reasoning, which resumes after it (KK-5).

use std::sync::OnceLock;

use super::Options;
use crate::field::grammars;
use crate::field::probe::rule;
use crate::field::reasoning::family::ProseRules;
use crate::field::sectioned::{Format, SectionedMachine};
use crate::field::Event;
use crate::reentry::Machine;

/// The family's format on grammar/kimi-k2.pest.
fn format() -> Format {
    static FORMAT: OnceLock<Format> = OnceLock::new();
    *FORMAT.get_or_init(|| {
        let p = grammars::kimi_k2();
        Format {
            program: p,
            prose: ProseRules::new(p, "structure_marker"),
            section_space: rule(p, "section_space"),
            section_marker: rule(p, "section_marker"),
            call_tail: rule(p, "call_tail"),
            arguments_stop: rule(p, "arguments_stop"),
            section_begin: rule(p, "section_begin"),
            section_end: rule(p, "section_end"),
            tool_name: rule(p, "tool_name"),
            // The written `functions.NAME:IDX` is the call id (KK-9).
            call_id: Some(rule(p, "call_id")),
            raw_stop: None,
        }
    })
}

/// The kimi-k2 state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct KimiK2Machine(SectionedMachine);

impl KimiK2Machine {
    /// A machine with these options.
    pub fn new(options: &Options) -> Self {
        KimiK2Machine(SectionedMachine::new(
            format(),
            &options.reasoning_markers,
            options.start_in_reasoning,
        ))
    }
}

impl Machine for KimiK2Machine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        self.0.advance(pending, base, eof, out)
    }
}

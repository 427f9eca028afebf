//! The minimax-m2 state machine: the XML-parameter core driven with
//! grammar/minimax-m2.pest's rules (spec/minimax-m2.md).

use std::sync::OnceLock;

use super::Options;
use crate::field::grammars;
use crate::field::probe::rule;
use crate::field::reasoning::family::ProseRules;
use crate::field::xml_parameters::{AfterCall, ParameterFamily, ParameterMachine};
use crate::field::Event;
use crate::reentry::Machine;

/// The family's rules: `<minimax:tool_call>` and an invoke opener start a block
/// (MM-4), parameters follow (MM-5), `</invoke>` ends a call and the block goes on
/// with the next invoke or its closer (MM-4, MM-7); names are kept as written.
fn family() -> &'static ParameterFamily {
    static FAMILY: OnceLock<ParameterFamily> = OnceLock::new();
    FAMILY.get_or_init(|| {
        let p = grammars::minimax_m2();
        ParameterFamily {
            program: p,
            prose: ProseRules::new(p, "block_marker_or_stray"),
            body: rule(p, "invoke_body"),
            value_end: rule(p, "value_end"),
            nesting: None,
            skip: rule(p, "skip_marker"),
            name: rule(p, "invoke_name"),
            key: rule(p, "parameter_name"),
            cut: rule(p, "cut_block"),
            inner_close: Some((
                rule(p, "invoke_close"),
                AfterCall::Block {
                    space: rule(p, "block_space"),
                    marker: rule(p, "block_marker"),
                },
            )),
            clean_name: |name| name,
            clean_key: |key| key,
            strip_newlines: false,
        }
    })
}

/// The minimax-m2 state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct MinimaxM2Machine(ParameterMachine);

impl MinimaxM2Machine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        MinimaxM2Machine(ParameterMachine::new(
            family(),
            &options.tools,
            options.start_in_reasoning,
            &options.reasoning_markers,
        ))
    }
}

impl Machine for MinimaxM2Machine {
    type Event = Event;

    #[inline(always)]
    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        self.0.advance(pending, base, eof, out)
    }

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }
}

//! The glm state machine: the XML-parameter core driven with grammar/glm.pest's
//! rules (spec/glm.md).

use std::sync::OnceLock;

use super::Options;
use crate::field::grammars;
use crate::field::probe::rule;
use crate::field::reasoning::family::ProseRules;
use crate::field::xml_parameters::{ParameterFamily, ParameterMachine};
use crate::field::Event;
use crate::reentry::Machine;

/// The family's rules: `<tool_call>NAME` starts a call (GL-3), pairs of
/// `<arg_key>` and `<arg_value>` follow (GL-5), `</tool_call>` ends it (GL-7); the
/// name is kept as written, the key without surrounding spaces and tabs.
fn family() -> &'static ParameterFamily {
    static FAMILY: OnceLock<ParameterFamily> = OnceLock::new();
    FAMILY.get_or_init(|| {
        let p = grammars::glm();
        ParameterFamily {
            program: p,
            prose: ProseRules::new(p, "call_start"),
            body: rule(p, "call_body"),
            value_end: rule(p, "value_end"),
            nesting: None,
            skip: rule(p, "skip_marker"),
            name: rule(p, "tool_name"),
            key: rule(p, "arg_key"),
            cut: rule(p, "cut_call"),
            inner_close: None,
            clean_name: |name| name,
            clean_key: |key| key.trim_matches([' ', '\t']),
            strip_newlines: false,
        }
    })
}

/// The glm state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct GlmMachine(ParameterMachine);

impl GlmMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        GlmMachine(ParameterMachine::new(
            family(),
            &options.tools,
            options.start_in_reasoning,
            &options.reasoning_markers,
        ))
    }
}

impl Machine for GlmMachine {
    type Event = Event;

    #[inline(always)]
    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        self.0.advance(pending, base, eof, out)
    }
}

//! The DeepSeek state machine (spec/deepseek-v3.md, spec/deepseek-v3.1.md): the
//! sectioned JSON machine (`field::sectioned`) on the rules of grammar/deepseek.pest,
//! whose calls-begin marker opens the section and whose call headers and tails are
//! the variant's.

use std::sync::OnceLock;

use super::{Options, Variant};
use crate::field::grammars;
use crate::field::probe::rule;
use crate::field::reasoning::family::ProseRules;
use crate::field::sectioned::{Format, SectionedMachine};
use crate::field::Event;
use crate::reentry::Machine;

/// The two variants' formats on grammar/deepseek.pest.
fn format(variant: Variant) -> Format {
    static FORMATS: OnceLock<[Format; 2]> = OnceLock::new();
    let [v3, v31] = FORMATS.get_or_init(|| {
        let p = grammars::deepseek();
        let format = |section_marker, call_tail, arguments_stop, raw_stop| Format {
            program: p,
            prose: ProseRules::new(p, "structure_marker"),
            section_space: rule(p, "section_space"),
            section_marker: rule(p, section_marker),
            call_tail: rule(p, call_tail),
            arguments_stop: rule(p, arguments_stop),
            section_begin: rule(p, "calls_begin"),
            section_end: rule(p, "calls_end"),
            tool_name: rule(p, "tool_name"),
            call_id: None,
            raw_stop,
        };
        [
            // v3's arguments sit in a fence: malformed ones may end at its backquote.
            format(
                "v3_section_marker",
                "v3_call_tail",
                "v3_arguments_stop",
                Some(b'`'),
            ),
            format(
                "v31_section_marker",
                "v31_call_tail",
                "v31_arguments_stop",
                None,
            ),
        ]
    });
    match variant {
        Variant::V3 => *v3,
        Variant::V31 => *v31,
    }
}

/// The DeepSeek state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct DeepseekMachine(SectionedMachine);

impl DeepseekMachine {
    /// A machine for `variant` with these options.
    pub fn new(variant: Variant, options: &Options) -> Self {
        DeepseekMachine(SectionedMachine::new(
            format(variant),
            &options.reasoning_markers,
            options.start_in_reasoning,
        ))
    }
}

impl Machine for DeepseekMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        self.0.advance(pending, base, eof, out)
    }
}

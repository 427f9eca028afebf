//! The qwen3-coder state machine: the XML-parameter core driven with
//! grammar/qwen3-coder.pest's rules (spec/qwen3-coder.md).

use std::sync::OnceLock;

use super::Options;
use crate::field::grammars;
use crate::field::probe::rule;
use crate::field::reasoning::family::ProseRules;
use crate::field::xml_parameters::{AfterCall, Nesting, ParameterFamily, ParameterMachine};
use crate::field::Event;
use crate::reentry::Machine;

/// A name as written, without surrounding whitespace and quotes (QC-5).
fn clean_name(raw: &str) -> &str {
    let name = raw.trim();
    for q in ['"', '\''] {
        if let Some(inner) = name.strip_prefix(q).and_then(|n| n.strip_suffix(q)) {
            return inner;
        }
    }
    name
}

/// The family's rules: `<tool_call>` and `<function=NAME>` (or the function opener
/// alone) start a call (QC-3), `</function>` is followed by `</tool_call>` (QC-9),
/// and a value's template newlines are stripped (QC-7).
fn family() -> &'static ParameterFamily {
    static FAMILY: OnceLock<ParameterFamily> = OnceLock::new();
    FAMILY.get_or_init(|| {
        let p = grammars::qwen3_coder();
        ParameterFamily {
            program: p,
            prose: ProseRules::new(p, "call_marker"),
            body: rule(p, "function_body"),
            value_end: rule(p, "value_end"),
            nesting: Some(Nesting {
                entry: rule(p, "value_nested"),
                open: rule(p, "nested_open"),
                close: rule(p, "nested_close"),
            }),
            skip: rule(p, "skip_marker"),
            name: rule(p, "function_name"),
            key: rule(p, "parameter_name"),
            cut: rule(p, "cut_call"),
            inner_close: Some((
                rule(p, "function_close"),
                AfterCall::Closer(rule(p, "call_end")),
            )),
            clean_name,
            clean_key: clean_name,
            strip_newlines: true,
        }
    })
}

/// The qwen3-coder state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct Qwen3CoderMachine(ParameterMachine);

impl Qwen3CoderMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        Qwen3CoderMachine(ParameterMachine::new(
            family(),
            &options.tools,
            options.start_in_reasoning,
            &options.reasoning_markers,
        ))
    }
}

impl Machine for Qwen3CoderMachine {
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

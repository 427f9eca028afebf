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
            prose: ProseRules::new(p, "call_marker"),
            body: rule(p, "call_body"),
            value_end: rule(p, "value_end"),
            nesting: None,
            skip: rule(p, "skip_marker"),
            name: rule(p, "tool_name"),
            key: rule(p, "arg_key"),
            cut: rule(p, "cut_call"),
            inner_close: None,
            clean_name: |name| name,
            clean_key: trim_spaces_and_tabs,
            strip_newlines: false,
        }
    })
}

/// `key` without the spaces and tabs around it (GL-5), by its bytes (both are ASCII,
/// so the cut falls between characters).
fn trim_spaces_and_tabs(key: &str) -> &str {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let bytes = key.as_bytes();
    let start = bytes.iter().position(|b| !blank(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !blank(b))
        .map_or(start, |i| i + 1);
    &key[start..end]
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

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }
}

#[cfg(test)]
mod tests {
    use super::trim_spaces_and_tabs;

    /// The byte trim says what `str::trim_matches` with the two characters says,
    /// for keys blank at either end, all blank, empty, and with non-ASCII text and
    /// other whitespace (kept).
    #[test]
    fn the_key_trim_agrees_with_trim_matches() {
        for key in [
            "city",
            " city",
            "city\t",
            " \t city \t ",
            "  ",
            "\t",
            "",
            "a b",
            " café ",
            "\u{a0}x\u{a0}",
            "\rkey\r",
            " ключ\t",
        ] {
            assert_eq!(
                trim_spaces_and_tabs(key),
                key.trim_matches([' ', '\t']),
                "{key:?}"
            );
        }
    }
}

//! A call's arguments read on the parsing machine, for the families whose models
//! write them as one JSON object (deepseek-v3, deepseek-v3.1, harmony, mistral;
//! rules JA-n of spec/field-json-arguments.md).
//!
//! The object is grammar/field-json.pest's `json_object`, compiled into each of
//! these families' programs. Run over the arguments as they arrive, the machine's
//! *need more* says that every byte so far can still belong to the object (so each
//! is an argument delta at once, JA-3), a match ends at the object's `}` (a closer
//! quoted in a string never ends the call, JA-4), and a rejection's furthest
//! position is the first byte that cannot continue the object (JA-7). The grammar
//! is LL(1), so that position is exact, whatever the chunking.

use crate::field::{Emitter, Event};
use crate::machine::{Outcome, ParsingMachine, Program, RuleId};

/// How far the arguments object has been read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectRead {
    /// Every byte so far can belong to the object; more are needed.
    More,
    /// The object ends after this many bytes (one past its `}`).
    Complete(usize),
    /// The bytes stop being the object at this offset: a syntax error there, or the
    /// end of the input (then the offset is the unit's length).
    Stopped(usize),
}

/// Nesting bound of the arguments' machine: pending calls and choices (about six
/// per level of JSON nesting). Deeper input is a syntax error where it reaches it.
const DEPTH: usize = 1 << 16;

/// The parsing machine reading one call's arguments object.
#[derive(Clone, Debug)]
pub struct ArgumentsReader {
    machine: ParsingMachine<'static>,
    object: RuleId,
    /// Bytes of the current object already emitted as argument deltas.
    emitted: usize,
}

impl ArgumentsReader {
    /// A reader for `program`, a family grammar compiled with grammar/field-json.pest.
    pub fn new(program: &'static Program) -> Self {
        let object = program
            .rule("json_object")
            .expect("every JSON-argument family grammar has json_object (tested)");
        Self::with_rule(program, object)
    }

    /// A reader whose object is `object`, a rule of `program` (a family defined at
    /// run time names its own).
    pub fn with_rule(program: &'static Program, object: RuleId) -> Self {
        let mut machine = ParsingMachine::new(program);
        machine.capture_only(&[]);
        machine.set_depth_limit(DEPTH);
        ArgumentsReader {
            machine,
            object,
            emitted: 0,
        }
    }

    /// Starts reading a new object (its `{` is the first byte of the next unit).
    pub fn start(&mut self) {
        self.machine.start(self.object);
        self.emitted = 0;
    }

    /// Continues over `unit`, the object's bytes so far from its `{`; at `eof` they
    /// are all there will be.
    pub fn read(&mut self, unit: &str, eof: bool) -> ObjectRead {
        let (outcome, cut) = run(&mut self.machine, unit, eof);
        if cut {
            return ObjectRead::Stopped(unit.len());
        }
        match outcome {
            Outcome::NeedMore => ObjectRead::More,
            Outcome::Matched { end } => ObjectRead::Complete(end),
            Outcome::Rejected { furthest } => ObjectRead::Stopped(self.clamp(unit, furthest)),
            Outcome::TooDeep { at } => ObjectRead::Stopped(self.clamp(unit, at)),
        }
    }

    /// A stop position: never before what was emitted, on a char boundary.
    fn clamp(&self, unit: &str, at: usize) -> usize {
        let mut at = at.clamp(self.emitted, unit.len());
        while !unit.is_char_boundary(at) {
            at += 1;
        }
        at
    }

    /// The bytes of `unit` not yet emitted, up to `to`, marked emitted.
    pub fn take<'a>(&mut self, unit: &'a str, to: usize) -> &'a str {
        let from = self.emitted.min(to);
        self.emitted = to.max(self.emitted);
        &unit[from..to]
    }

    /// [`Self::read`] over `unit`, which starts at absolute offset `start`, and the
    /// bytes it shows to be arguments (all of them while the object is open, up to
    /// its end or its stop otherwise) emitted as one argument delta (JA-3).
    pub fn read_emitting(
        &mut self,
        unit: &str,
        start: usize,
        eof: bool,
        emitter: &mut Emitter,
        out: &mut Vec<Event>,
    ) -> ObjectRead {
        let read = self.read(unit, eof);
        let upto = match read {
            ObjectRead::More => unit.len(),
            ObjectRead::Complete(end) | ObjectRead::Stopped(end) => end,
        };
        let text = self.take(unit, upto);
        emitter.arguments_delta(text, start + upto, out);
        read
    }
}

/// Runs `machine` over `unit`; at `eof`, also says whether the unit was cut: every
/// byte of it was still viable when the input ended (a rejection's furthest
/// position does not say so: a literal cut short fails where it began).
pub fn run(machine: &mut ParsingMachine<'static>, unit: &str, eof: bool) -> (Outcome, bool) {
    let outcome = machine.resume(unit.as_bytes());
    if !eof || outcome != Outcome::NeedMore {
        return (outcome, false);
    }
    let outcome = machine.finish(unit.as_bytes());
    let cut = !matches!(outcome, Outcome::Matched { .. });
    (outcome, cut)
}

/// JSON whitespace (JA-1).
pub fn is_json_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::grammars;
    use crate::machine::{compile, Program};
    use std::sync::OnceLock;

    /// grammar/field-json.pest alone.
    fn json() -> &'static Program {
        static PROGRAM: OnceLock<Program> = OnceLock::new();
        PROGRAM.get_or_init(|| compile(grammars::FIELD_JSON).expect("the JSON grammar compiles"))
    }

    fn whole(text: &str) -> ObjectRead {
        let mut reader = ArgumentsReader::new(json());
        reader.start();
        reader.read(text, true)
    }

    #[test]
    fn an_object_ends_at_its_brace_whatever_its_strings_hold() {
        assert_eq!(
            whole(r#"{"a": "}<｜tool▁call▁end｜>"} x"#),
            ObjectRead::Complete(35)
        );
        assert_eq!(
            whole(r#"{"a": [1, {"b": "\"}"}]}"#),
            ObjectRead::Complete(24)
        );
    }

    #[test]
    fn a_syntax_error_stops_at_the_offending_byte() {
        assert_eq!(whole("{city: 1}"), ObjectRead::Stopped(1));
        assert_eq!(whole(r#"{"a": tru}"#), ObjectRead::Stopped(9));
        assert_eq!(whole(r#"{"a": 1.}"#), ObjectRead::Stopped(8));
        assert_eq!(whole("{\"a\": \"x\ny\"}"), ObjectRead::Stopped(8));
        assert_eq!(whole("[1]"), ObjectRead::Stopped(0));
    }

    #[test]
    fn a_cut_object_stops_at_the_end() {
        assert_eq!(whole(r#"{"a": "Par"#), ObjectRead::Stopped(10));
    }

    #[test]
    fn any_split_gives_the_same_outcome() {
        for text in [r#"{"k": "v\"}", "n": [1, 2e5]} tail"#, r#"{"a": nul!}"#] {
            let expected = whole(text);
            for cut in 0..=text.len() {
                if !text.is_char_boundary(cut) {
                    continue;
                }
                let mut reader = ArgumentsReader::new(json());
                reader.start();
                let first = reader.read(&text[..cut], false);
                let outcome = match first {
                    ObjectRead::More => reader.read(text, true),
                    decided => decided,
                };
                assert_eq!(outcome, expected, "cut at {cut}");
            }
        }
    }
}

//! A call's JSON arguments and the tail that ends the call, as the families that
//! write a header, then an arguments object, then a closing marker read them
//! (deepseek, kimi-k2, harmony): the object read structurally as its bytes arrive
//! (JA-1 to JA-4), the tail probed on the family's grammar after it (JA-5, JA-6),
//! malformed arguments read raw up to the tail (JA-7, JA-8), and the family's
//! special-token markers, which end the arguments wherever they begin (JA-12).

use crate::field::json_arguments::{is_json_ws, ArgumentsReader, ObjectRead};
use crate::field::probe::MarkerProbe;
use crate::field::{Emitter, Event};
use crate::machine::{Outcome, Program, RuleId};

/// Where a call's arguments stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Reading the arguments object (JA-1).
    Object,
    /// After the object, or right after the header with empty arguments: the
    /// call's tail.
    Tail {
        /// The header was followed by the tail at once (JA-6).
        empty: bool,
    },
    /// Malformed arguments, read raw up to the tail (JA-7).
    Raw,
}

/// What [`CallArguments::advance`] came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Every pending byte up to the returned position is decided; the rest waits
    /// for more input.
    More,
    /// The call ended, complete or not; the caller's mode follows.
    Ended {
        /// Whether the call is complete (FD-6).
        complete: bool,
    },
}

/// A call's arguments and tail, from the end of its header to the end of the call.
#[derive(Clone, Debug)]
pub(crate) struct CallArguments {
    reader: ArgumentsReader,
    part: Part,
    /// The family's rule for the call's tail.
    tail: RuleId,
    /// A byte besides JSON whitespace and `<` at which malformed arguments may end
    /// (deepseek-v3's closing fence).
    raw_stop: Option<u8>,
    /// The family's rule that ends the arguments at a marker: the call's tail, or a
    /// special token not consumed (JA-12).
    stop: RuleId,
    /// Whether the tail probe is active; its candidate is the first pending byte
    /// (in the object: the byte at `candidate`).
    probing: bool,
    /// In the object: the offset from its `{` of the `<` being probed, or from
    /// which the next one is searched.
    candidate: usize,
}

/// The first byte of every special-token marker of the families that read their
/// arguments here (deepseek's `<｜…｜>`, kimi-k2's and harmony's `<|…|>`): the only
/// bytes of an object at which the `stop` rule is probed (JA-12).
const SPECIAL_LEAD: u8 = b'<';

impl CallArguments {
    /// Arguments of calls in `program`, ended by its rule `tail`, or by its rule
    /// `stop` at a special-token marker (JA-12).
    pub(crate) fn new(
        program: &'static Program,
        tail: RuleId,
        stop: RuleId,
        raw_stop: Option<u8>,
    ) -> Self {
        CallArguments {
            reader: ArgumentsReader::new(program),
            part: Part::Tail { empty: true },
            tail,
            raw_stop,
            stop,
            probing: false,
            candidate: 0,
        }
    }

    /// A call's header ended right before `rest`: its arguments begin, with an
    /// object if `rest` starts with `{`, else with the tail (empty arguments).
    pub(crate) fn begin(&mut self, rest: &str) {
        self.probing = false;
        self.candidate = 0;
        if rest.as_bytes().first() == Some(&b'{') {
            self.reader.start();
            self.part = Part::Object;
        } else {
            self.part = Part::Tail { empty: true };
        }
    }

    /// Reads `pending` (at absolute `base`) from `*at`, which it moves past what it
    /// decides, emitting argument deltas through `emitter`; `probe` runs the tail
    /// and stop rules on the family's grammar.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn advance(
        &mut self,
        pending: &str,
        at: &mut usize,
        base: usize,
        eof: bool,
        emitter: &mut Emitter,
        probe: &mut MarkerProbe,
        out: &mut Vec<Event>,
    ) -> Step {
        let bytes = pending.as_bytes();
        let len = pending.len();
        loop {
            match self.part {
                Part::Object => {
                    let unit = &pending[*at..];
                    if self.probing {
                        // A `<` inside the object: a special token ends the call there
                        // (JA-12); anything else is the object's byte.
                        let (outcome, _) = probe.run_cut(&unit[self.candidate..], eof);
                        if outcome == Outcome::NeedMore {
                            return Step::More;
                        }
                        self.probing = false;
                        if let Outcome::Matched { end } = outcome {
                            *at += self.candidate + end;
                            return Step::Ended { complete: false };
                        }
                        // Not a special token (a cut one at end of input neither):
                        // the `<` belongs to the object.
                        self.candidate += 1;
                    }
                    // The reader runs up to the next `<`, the only byte that may begin
                    // a special token: the hot path stays one memchr per chunk.
                    let next = memchr::memchr(SPECIAL_LEAD, &unit.as_bytes()[self.candidate..])
                        .map(|k| self.candidate + k);
                    let upto = next.unwrap_or(unit.len());
                    let read = self.reader.read_emitting(
                        &unit[..upto],
                        base + *at,
                        eof && next.is_none(),
                        emitter,
                        out,
                    );
                    match read {
                        ObjectRead::More => {
                            let Some(candidate) = next else {
                                // Searched to here: the next chunk's search starts here.
                                self.candidate = upto;
                                return Step::More;
                            };
                            self.candidate = candidate;
                            probe.begin(self.stop);
                            self.probing = true;
                        }
                        ObjectRead::Complete(end) => {
                            *at += end;
                            self.part = Part::Tail { empty: false };
                        }
                        ObjectRead::Stopped(stop) => {
                            *at += stop;
                            if eof && *at == len {
                                // Cut inside the object (JA-8).
                                return Step::Ended { complete: false };
                            }
                            self.part = Part::Raw;
                        }
                    }
                }
                Part::Tail { empty } => {
                    if !self.probing {
                        if *at == len && !eof {
                            return Step::More;
                        }
                        probe.begin(self.tail);
                        self.probing = true;
                    }
                    let (outcome, cut) = probe.run_cut(&pending[*at..], eof);
                    if outcome == Outcome::NeedMore {
                        return Step::More;
                    }
                    self.probing = false;
                    match outcome {
                        Outcome::Matched { end } => {
                            if empty {
                                emitter.arguments_delta("{}", base + *at, out);
                            }
                            *at += end;
                            return Step::Ended { complete: true };
                        }
                        _ if cut => {
                            // The input ended after the object (JA-5).
                            *at = len;
                            return Step::Ended { complete: true };
                        }
                        // Something else follows the object (JA-7).
                        _ => self.part = Part::Raw,
                    }
                }
                Part::Raw => {
                    if !self.probing {
                        let stop = self.raw_stop;
                        let candidate = bytes[*at..]
                            .iter()
                            .position(|&b| is_json_ws(b) || b == b'<' || Some(b) == stop);
                        let Some(k) = candidate else {
                            emitter.arguments_delta(&pending[*at..], base + len, out);
                            *at = len;
                            return if eof {
                                Step::Ended { complete: false }
                            } else {
                                Step::More
                            };
                        };
                        emitter.arguments_delta(&pending[*at..*at + k], base + *at + k, out);
                        *at += k;
                        probe.begin(self.stop);
                        self.probing = true;
                    }
                    let (outcome, _) = probe.run_cut(&pending[*at..], eof);
                    if outcome == Outcome::NeedMore {
                        return Step::More;
                    }
                    self.probing = false;
                    if let Outcome::Matched { end } = outcome {
                        *at += end;
                        return Step::Ended { complete: false };
                    }
                    // Not the tail: the candidate (a whitespace run, which no later
                    // start inside it can change) is raw arguments.
                    let run = if is_json_ws(bytes[*at]) {
                        bytes[*at..].iter().take_while(|&&b| is_json_ws(b)).count()
                    } else {
                        1
                    };
                    emitter.arguments_delta(&pending[*at..*at + run], base + *at + run, out);
                    *at += run;
                }
            }
        }
    }
}

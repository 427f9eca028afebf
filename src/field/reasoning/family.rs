//! The reasoning wrappers inside a field family (spec/reasoning.md RS-11): which
//! spellings the family reads, which one opened the open reasoning, and which
//! entry rule of the family's grammar (with grammar/reasoning.pest appended) runs at
//! a candidate byte of prose. Every family that honours `reasoning_markers` drives
//! its prose through one of these, so the spellings behave alike everywhere.

use super::spelling::{MarkerRules, Spelling, Wrappers};
use crate::field::grammars;
use crate::field::probe::{rule, MarkerProbe};
use crate::field::{Emitter, Event};
use crate::machine::{Capture, Outcome, Program, RuleId};

/// The family's prose entry rules at its own lead byte (`<`, or `[` for mistral):
/// its markers alone, with the opener of the spelling that shares the byte, and
/// with that spelling's closer.
#[derive(Clone, Copy, Debug)]
pub struct ProseRules {
    /// The family's markers alone (the spelling of the lead byte does not apply).
    pub plain: RuleId,
    /// In answer text, with the opener of the lead byte's spelling.
    pub open: RuleId,
    /// In reasoning, with that spelling's closer.
    pub close: RuleId,
}

impl ProseRules {
    /// The rules of a family grammar that names them as the families do: `plain`
    /// its markers alone, `text_marker` and `reasoning_marker` the two with the
    /// wrapper of its lead byte.
    pub fn new(program: &Program, plain: &str) -> ProseRules {
        ProseRules {
            plain: rule(program, plain),
            open: rule(program, "text_marker"),
            close: rule(program, "reasoning_marker"),
        }
    }
}

/// What a matched prose unit was, as far as the wrappers go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrapperMarker {
    /// An accepted opener: reasoning opens.
    Opened,
    /// The closer of the open reasoning: it closes.
    Closed,
}

/// The accepted reasoning wrappers of one family machine (RS-11).
#[derive(Clone, Debug)]
pub struct FamilyWrappers {
    wrappers: Wrappers,
    rules: MarkerRules,
    family_lead: u8,
    /// The bytes that may start a marker in prose: the family's lead first.
    leads: [u8; 3],
    /// How many of `leads` are distinct.
    lead_count: usize,
    /// Whether an accepted closer in answer text is read (a stray closer, RS-13:
    /// the family makes it markup).
    stray_closers: bool,
}

impl FamilyWrappers {
    /// The wrappers of `spellings` for a family whose markers start with
    /// `family_lead`, in `program` (the family's grammar with grammar/reasoning.pest
    /// appended).
    pub fn new(program: &Program, spellings: &[Spelling], family_lead: u8) -> FamilyWrappers {
        let wrappers = Wrappers::new(spellings);
        let mut leads = [family_lead; 3];
        let mut lead_count = 1;
        for byte in wrappers.lead_bytes() {
            if !leads[..lead_count].contains(&byte) {
                leads[lead_count] = byte;
                lead_count += 1;
            }
        }
        FamilyWrappers {
            wrappers,
            rules: MarkerRules::of(program),
            family_lead,
            leads,
            lead_count,
            stray_closers: false,
        }
    }

    /// These wrappers also read, in answer text, an accepted closer at a byte other
    /// than the family's lead (a stray closer, RS-13): [`Self::marker`] then says
    /// [`WrapperMarker::Closed`] outside reasoning, and the family makes it markup.
    /// (At the family's lead byte its own `text_marker` rule says so.)
    pub fn with_stray_closers(mut self) -> FamilyWrappers {
        self.stray_closers = true;
        self
    }

    /// Whether a marker of `spelling` applies: accepted, and in reasoning the
    /// spelling that opened it (any accepted one when the output started in it).
    pub fn applies(&self, spelling: Spelling, reasoning: bool) -> bool {
        self.wrappers.applies(spelling, reasoning)
    }

    /// The rules whose captures [`Self::marker`] reads: the probe must record them.
    pub fn captured(&self) -> [RuleId; 6] {
        self.rules.all()
    }

    /// Where the next candidate byte of prose is in `bytes`.
    pub fn find(&self, bytes: &[u8]) -> Option<usize> {
        let [a, b, c] = self.leads;
        match self.lead_count {
            1 => crate::reentry::find_byte(a, bytes),
            2 => memchr::memchr2(a, b, bytes),
            _ => crate::reentry::find_byte3(a, b, c, bytes),
        }
    }

    /// The entry rule for a candidate at `byte` of prose (`reasoning`: inside
    /// reasoning) whose entry rules at the family's lead byte are `prose`, or `None`
    /// when nothing can start there (a wrapper spelling that is not accepted, or whose
    /// closer does not close the open reasoning, RS-6).
    pub fn entry(&self, byte: u8, reasoning: bool, prose: &ProseRules) -> Option<RuleId> {
        let applies = Spelling::of_lead_byte(byte).filter(|s| self.wrappers.applies(*s, reasoning));
        if byte == self.family_lead {
            return Some(match applies {
                None => prose.plain,
                Some(_) if reasoning => prose.close,
                Some(_) => prose.open,
            });
        }
        applies.map(|s| {
            if reasoning {
                self.rules.close[s.index()]
            } else if self.stray_closers {
                self.rules.text[s.index()]
            } else {
                self.rules.open[s.index()]
            }
        })
    }

    /// Whether the prose unit that matched with `captures` was a wrapper marker; an
    /// opener records its spelling (only its closer closes, RS-6). A closer is
    /// [`WrapperMarker::Closed`] in answer text too (a stray one, RS-13).
    pub fn marker(&mut self, captures: &[Capture]) -> Option<WrapperMarker> {
        let closed = |rule: RuleId| captures.iter().any(|c| c.rule == rule && c.is_closed());
        if let Some(s) = Spelling::ALL
            .into_iter()
            .find(|s| closed(self.rules.open[s.index()]))
        {
            self.wrappers.open(Some(s));
            return Some(WrapperMarker::Opened);
        }
        Spelling::ALL
            .into_iter()
            .any(|s| closed(self.rules.close[s.index()]))
            .then_some(WrapperMarker::Closed)
    }

    /// The output starts in reasoning, or reasoning ended without a closer (kimi-k2's
    /// tool section): any accepted closer closes what opens next without an opener.
    pub fn reset(&mut self) {
        self.wrappers.open(None);
    }

    /// The output began in reasoning ([`RepeatedOpener`]): see
    /// [`Wrappers::begun`].
    pub fn begun(&mut self, begun: Begun) {
        self.wrappers.begun(begun);
    }
}

/// What [`RepeatedOpener::read`] tells the family machine about the start of
/// the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Begun {
    /// The output starts in reasoning: a reasoning item opened at offset 0,
    /// without an opener (its `reasoning_start` is emitted).
    Reasoning,
    /// The open reasoning was spelled again by an accepted opener at offset 0
    /// (RS-6, emitted as markup): only its closer closes.
    Opener(Spelling),
}

/// The start of an output that starts in reasoning: the reasoning item opened
/// at offset 0, then the check of RS-6, whether the output begins with an
/// accepted opener, run on grammar/reasoning.pest's opener rule of the spelling
/// its first byte leads. Every family machine that honours `reasoning_markers`
/// asks it before its first byte.
#[derive(Clone, Debug)]
pub struct RepeatedOpener {
    /// The accepted spellings while the first bytes are undecided; `None` once
    /// they are (or from the start when the output does not start in reasoning).
    pending: Option<Wrappers>,
    /// Whether the reasoning the output starts in has been opened.
    started: bool,
    /// The opener rule running on them, with its spelling.
    probe: Option<(MarkerProbe, Spelling)>,
}

impl RepeatedOpener {
    /// The check for an output that starts in reasoning when `start_in_reasoning`,
    /// with the accepted `spellings`.
    pub fn new(start_in_reasoning: bool, spellings: &[Spelling]) -> RepeatedOpener {
        RepeatedOpener {
            pending: start_in_reasoning.then(|| Wrappers::new(spellings)),
            started: false,
            probe: None,
        }
    }

    /// Reads `bytes`, the output from offset `base` (all that arrived; at `eof`
    /// all there is): `None` while they may still be an accepted opener (hold
    /// them back), then how many of them it decided. When the output starts in
    /// reasoning, the first call emits its `reasoning_start` through `emitter`
    /// and tells `begun` ([`Begun::Reasoning`]). The number decided is the
    /// opener's length when the bytes begin with one: it is emitted as markup,
    /// and `begun` gets its spelling ([`Begun::Opener`]). Otherwise, and on every
    /// later call, it is 0: the bytes are read as usual.
    #[inline]
    pub fn read(
        &mut self,
        bytes: &[u8],
        base: usize,
        eof: bool,
        emitter: &mut Emitter,
        begun: impl FnMut(Begun),
        out: &mut Vec<Event>,
    ) -> Option<usize> {
        // Every chunk asks; all but the first few are answered here.
        if self.pending.is_none() {
            return Some(0);
        }
        self.read_first(bytes, base, eof, emitter, begun, out)
    }

    /// Whether the first bytes are decided: [`Self::read`] answers 0 from now on.
    #[inline]
    pub fn decided(&self) -> bool {
        self.pending.is_none()
    }

    /// [`Self::read`] while the first bytes are undecided.
    fn read_first(
        &mut self,
        bytes: &[u8],
        base: usize,
        eof: bool,
        emitter: &mut Emitter,
        mut begun: impl FnMut(Begun),
        out: &mut Vec<Event>,
    ) -> Option<usize> {
        let Some(accepted) = self.pending else {
            return Some(0);
        };
        if !self.started {
            self.started = true;
            emitter.reasoning_start(base, out);
            begun(Begun::Reasoning);
        }
        if self.probe.is_none() {
            let Some(&first) = bytes.first() else {
                if eof {
                    self.pending = None;
                    return Some(0);
                }
                return None;
            };
            let Some(spelling) = Spelling::of_lead_byte(first).filter(|s| accepted.accepts(*s))
            else {
                self.pending = None;
                return Some(0);
            };
            let program = grammars::reasoning();
            let mut probe = MarkerProbe::new(program, &[]);
            probe.begin(MarkerRules::of(program).open[spelling.index()]);
            self.probe = Some((probe, spelling));
        }
        let Some((probe, spelling)) = self.probe.as_mut() else {
            return Some(0);
        };
        let outcome = probe.run(bytes, eof);
        if outcome == Outcome::NeedMore {
            return None;
        }
        let spelling = *spelling;
        self.pending = None;
        self.probe = None;
        match outcome {
            Outcome::Matched { end } => {
                emitter.markup(end, out);
                begun(Begun::Opener(spelling));
                Some(end)
            }
            _ => Some(0),
        }
    }
}

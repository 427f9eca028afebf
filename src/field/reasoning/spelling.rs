//! The spellings of the reasoning wrappers (spec/reasoning.md RS-2, RS-11), shared
//! by the `reasoning` dialect and the field families that honour
//! `reasoning_markers`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::family::Begun;
use crate::machine::{Program, RuleId};

/// One spelling of the reasoning wrappers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Spelling {
    /// `<think>…</think>` (DeepSeek-R1, QwQ, Qwen3, …).
    Think,
    /// `[THINK]…[/THINK]` (Magistral).
    Bracket,
    /// `◁think▷…◁/think▷` (Kimi 1.5).
    Triangle,
}

impl Spelling {
    /// Every spelling, in the order of RS-2.
    pub const ALL: [Spelling; 3] = [Spelling::Think, Spelling::Bracket, Spelling::Triangle];

    /// The spelling's position in [`Spelling::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The opener.
    pub fn opener(self) -> &'static str {
        match self {
            Spelling::Think => "<think>",
            Spelling::Bracket => "[THINK]",
            Spelling::Triangle => "◁think▷",
        }
    }

    /// The closer.
    pub fn closer(self) -> &'static str {
        match self {
            Spelling::Think => "</think>",
            Spelling::Bracket => "[/THINK]",
            Spelling::Triangle => "◁/think▷",
        }
    }

    /// The first byte of both markers: at a candidate byte at most one spelling
    /// applies.
    pub fn lead_byte(self) -> u8 {
        self.opener().as_bytes()[0]
    }

    /// The spelling whose markers start with `byte`.
    pub fn of_lead_byte(byte: u8) -> Option<Spelling> {
        Spelling::ALL.into_iter().find(|s| s.lead_byte() == byte)
    }
}

/// The marker rules of grammar/reasoning.pest in a program that appends it.
#[derive(Clone, Copy, Debug)]
pub struct MarkerRules {
    /// Per spelling, the opener's rule.
    pub open: [RuleId; 3],
    /// Per spelling, the closer's rule.
    pub close: [RuleId; 3],
    /// Per spelling, the opener or the closer: answer text's rule where a stray
    /// closer is markup (RS-13).
    pub text: [RuleId; 3],
}

impl MarkerRules {
    /// The rules in `program` (a crate grammar that appends grammar/reasoning.pest).
    pub fn of(program: &Program) -> MarkerRules {
        let get = |name: &str| {
            program
                .rule(name)
                .unwrap_or_else(|| panic!("rule {name} of grammar/reasoning.pest (tested)"))
        };
        MarkerRules {
            open: [
                get("rs_think_open"),
                get("rs_bracket_open"),
                get("rs_triangle_open"),
            ],
            close: [
                get("rs_think_close"),
                get("rs_bracket_close"),
                get("rs_triangle_close"),
            ],
            text: [
                get("rs_think_text"),
                get("rs_bracket_text"),
                get("rs_triangle_text"),
            ],
        }
    }

    /// Every rule, to capture.
    pub fn all(&self) -> [RuleId; 6] {
        [
            self.open[0],
            self.open[1],
            self.open[2],
            self.close[0],
            self.close[1],
            self.close[2],
        ]
    }
}

/// Which spellings are accepted, and which one the open reasoning must close with.
#[derive(Clone, Copy, Debug, Default)]
pub struct Wrappers {
    accepted: [bool; 3],
    /// The spelling of the opener of the open reasoning; `None` when the output
    /// started in reasoning (any accepted closer closes it, RS-6).
    opened: Option<Spelling>,
}

impl Wrappers {
    /// Accepting `spellings`.
    pub fn new(spellings: &[Spelling]) -> Wrappers {
        let mut accepted = [false; 3];
        spellings.iter().for_each(|s| accepted[s.index()] = true);
        Wrappers {
            accepted,
            opened: None,
        }
    }

    /// Whether `spelling` is accepted.
    pub fn accepts(&self, spelling: Spelling) -> bool {
        self.accepted[spelling.index()]
    }

    /// In answer text, whether a marker of `spelling` may open reasoning; in
    /// reasoning, whether it may close it.
    pub fn applies(&self, spelling: Spelling, in_reasoning: bool) -> bool {
        self.accepts(spelling) && (!in_reasoning || self.opened.is_none_or(|o| o == spelling))
    }

    /// Reasoning was opened by `spelling` (`None`: the output started in it).
    pub fn open(&mut self, spelling: Option<Spelling>) {
        self.opened = spelling;
    }

    /// The output began in reasoning ([`Begun`]): opened without an opener, so
    /// any accepted closer closes it, or spelled again by an accepted opener at
    /// its start, so only that spelling's closer does (RS-6).
    pub fn begun(&mut self, begun: Begun) {
        self.open(match begun {
            Begun::Reasoning => None,
            Begun::Opener(spelling) => Some(spelling),
        });
    }

    /// The bytes that may start an accepted marker.
    pub fn lead_bytes(&self) -> impl Iterator<Item = u8> + '_ {
        Spelling::ALL
            .into_iter()
            .filter(|s| self.accepts(*s))
            .map(Spelling::lead_byte)
    }
}

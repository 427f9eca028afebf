//! A compiled grammar: the instructions of the parsing machine, the byte sets and
//! literals they refer to, and the rules by name.

use super::charset::ByteTable;

/// A rule of a compiled grammar (its index in [`Program::rule_names`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(pub(crate) u16);

impl RuleId {
    /// The index of the rule in [`Program::rule_names`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An address in the code.
pub(crate) type Addr = u32;

/// One instruction. Instructions that read input check first that the byte they need
/// is there: when it is not (and more input may come), the machine stops *before*
/// the instruction, so resuming runs it again with more bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inst {
    /// One byte.
    Byte(u8),
    /// The bytes `literals[at..at + len]`.
    Literal { at: u32, len: u32 },
    /// The bytes `literals[at..at + len]` (stored lowercase), ASCII case ignored.
    LiteralInsens { at: u32, len: u32 },
    /// One byte in `sets[n]`.
    Set(u32),
    /// One character whose first byte is in `sets[n]`: a set that holds every byte
    /// from 0x80 up, so a non-ASCII lead byte takes its whole character.
    Char(u32),
    /// Zero or more bytes in `sets[n]` (never fails).
    Span(u32),
    /// One or more bytes in `sets[n]`: the fused form of a `Set(n)` or `Char(n)` at
    /// this address followed by the `Span(n)` that stays right after it. When the
    /// input runs out inside the span, the run stops in that `Span` (so resuming
    /// continues the span, nothing is read again); otherwise it goes on after it.
    SpanPlus(u32),
    /// The fused form of `Open(rule)`, `Set(set)` or `Char(set)`, `Span(set)`,
    /// `Close(rule)` (a captured rule that is one or more bytes of a set), which stay
    /// after it: the capture is recorded closed at once. When the input runs out
    /// inside the span, the capture is left open and the run stops in that `Span`,
    /// whose `Close` ends it later.
    CaptureSpanPlus { rule: RuleId, set: u32 },
    /// The fused form of `Byte(byte)` and the `Span(set)` that stays right after it
    /// (a delimiter and the run after it: a string's opening quote and its plain
    /// characters, `,` and whitespace). When the input runs out inside the span, the
    /// run stops in that `Span`.
    ByteSpan { byte: u8, set: u32 },
    /// Zero or more bytes other than the `n` (1 to 3) bytes in `stops`: a span over
    /// a set with a small complement, found with memchr.
    SpanUntil { stops: [u8; 3], n: u8 },
    /// Jumps to `miss` unless the next byte is in `sets[set]`; consumes nothing.
    TestSet { set: u32, miss: Addr },
    /// The fused form of `TestSet { set, miss: alt }` and the `Choice(alt)` that
    /// stays right after it (a choice with a head test): when the next byte is in
    /// `sets[set]`, pushes the backtrack entry to `alt` and goes on after that
    /// `Choice`; else jumps to `alt` (also at the end of the input).
    TestChoice { set: u32, alt: Addr },
    /// One byte in `sets[set]` if the next byte is one, else a jump to `miss` (also
    /// at the end of the input): an optional byte of a set, without a backtrack
    /// entry (the fused `TestSet; Choice; Set; Commit` of `e?`).
    SetOr { set: u32, miss: Addr },
    /// One character whose first byte is in `sets[set]` (a set that holds every byte
    /// from 0x80 up, as for `Char`) if the next byte is one, else a jump to `miss`
    /// (also when the input ends, or ends inside the character).
    CharOr { set: u32, miss: Addr },
    /// Pushes a backtrack entry: on failure, resume at the address with the current
    /// position and captures.
    Choice(Addr),
    /// Pops the backtrack entry and jumps.
    Commit(Addr),
    /// Updates the top backtrack entry to the current position and captures and
    /// jumps (the loop step of a repetition).
    PartialCommit(Addr),
    /// Pops the backtrack entry, restores its position and captures, and jumps (the
    /// success of a `&` predicate).
    BackCommit(Addr),
    /// Pops the backtrack entry and fails (the success of what a `!` predicate
    /// refuses).
    FailTwice,
    /// Fails.
    Fail,
    /// Calls the subroutine at the address.
    Call(Addr),
    /// Calls the subroutine of a rule with a nesting bound, as `Call` does, unless
    /// `bounds[slot]` calls of that rule are pending already: then it fails (a
    /// mismatch, so the machine backtracks).
    CallBounded { to: Addr, slot: u16 },
    /// Returns from a subroutine; on an empty stack, the entry rule matched (a run
    /// starts in the entry rule's subroutine, not in a call of it).
    Return,
    /// Opens a capture of the rule.
    Open(RuleId),
    /// Closes the innermost open capture of the rule.
    Close(RuleId),
    /// Succeeds only at position 0.
    Soi,
    /// Succeeds only at the end of the input (needs more input until the input ends).
    Eoi,
    /// The entry rule matched.
    End,
}

/// A grammar compiled for the parsing machine (see [`super::compile`]).
#[derive(Clone, Debug)]
pub struct Program {
    pub(crate) code: Vec<Inst>,
    pub(crate) sets: Vec<ByteTable>,
    pub(crate) literals: Vec<u8>,
    pub(crate) names: Vec<String>,
    /// Per rule: where a run of it starts (its subroutine, or a stub that calls it).
    pub(crate) entries: Vec<Addr>,
    /// Per nesting slot: how many calls of its rule may be pending at once.
    pub(crate) bounds: Vec<u32>,
}

impl Program {
    /// The rule called `name`, if the grammar has it (`EOI` is a rule too, as in pest).
    pub fn rule(&self, name: &str) -> Option<RuleId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| RuleId(i as u16))
    }

    /// The name of a rule.
    pub fn name(&self, rule: RuleId) -> &str {
        &self.names[rule.index()]
    }

    /// Every rule name, indexed by [`RuleId::index`].
    pub fn rule_names(&self) -> &[String] {
        &self.names
    }

    /// How many instructions the program has.
    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// Whether the program has no instruction (never true for a compiled grammar).
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }
}

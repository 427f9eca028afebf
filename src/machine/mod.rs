//! The resumable parsing machine: pest grammars compiled into programs for a small
//! virtual machine for PEGs that can stop when the bytes run out and continue when
//! the next chunk arrives.
//!
//! The design follows LPeg's parsing machine (Medeiros and Ierusalimschy, "A Parsing
//! Machine for PEGs", 2008): a flat array of instructions for bytes, byte sets
//! (256-bit bitmaps), spans over a set, ordered choice with a backtrack stack
//! (choice, commit, partial commit, back commit, fail twice), calls and returns,
//! and capture open/close. Resumability adds one outcome: when an instruction needs
//! a byte that has not arrived, the machine answers [`Outcome::NeedMore`] and keeps
//! its instruction pointer, position, backtrack stack and captures; the next call
//! continues from there. The caller passes the unit's bytes so far each time (PEG
//! backtracking re-reads bytes of the current unit, and the re-entry layer holds the
//! undecided unit anyway), so nothing is re-run from the start and a unit that grows
//! over many chunks costs what it costs fed at once.
//!
//! # The compiler
//!
//! [`compile`] reads .pest text with `pest_meta` (pest's own parser and validator)
//! and lowers it as pest's optimizer does (`lower.rs`), so the syntax and the errors
//! are pest's and `pest_derive`'s parser of the same text is an exact oracle (the
//! property tests in `oracle_tests.rs` compare the two on every rule of every grammar
//! of the crate). A dialect compiles its grammar once, at first use, behind a
//! `OnceLock` (see `anthropic_xml::grammar`), with [`compile_capturing`] and the rules
//! it reads: compiling takes a few milliseconds once per process.
//!
//! Compiling is bounded whatever the text: written out, a grammar's bounded
//! repetitions hold at most [`MAX_NODES`] expression nodes nested at most
//! [`MAX_DEPTH`] deep, pest's validator meets at most [`MAX_REFERENCE_PATHS`] rule
//! expansions, and a program holds at most [`MAX_INSTRUCTIONS`] instructions; past
//! one of them the grammar is refused with a [`CompileError::Bound`] naming the rule.
//!
//! # Supported subset
//!
//! Literals `"..."`, case-insensitive literals `^"..."` (ASCII case, as pest),
//! character ranges `'a'..'z'` (over Unicode scalar values, matched on UTF-8 bytes),
//! sequences, ordered choice, `?`, `*`, `+`, bounded repetition `{n}`, `{n,}`,
//! `{,m}`, `{n,m}` (written out as pest's optimizer does), the predicates `&` and `!`, rule
//! calls (recursion included: the machine's stacks are bounded, [`Outcome::TooDeep`],
//! never a native stack overflow; [`compile_bounded`] can also bound how deep one
//! rule nests, which pest's syntax cannot say), normal, silent `_`, atomic `@`, compound-atomic
//! `$` and non-atomic `!` rules, implicit `WHITESPACE`/`COMMENT` between the parts
//! of sequences and repetitions in non-atomic rules exactly as pest inserts them, and
//! the built-ins `SOI`, `EOI` (a rule that is captured, as in pest), `ANY` (one whole
//! UTF-8 character), `NEWLINE` and the ASCII classes (`ASCII_DIGIT`,
//! `ASCII_NONZERO_DIGIT`, `ASCII_BIN_DIGIT`, `ASCII_OCT_DIGIT`, `ASCII_HEX_DIGIT`,
//! `ASCII_ALPHA_LOWER`, `ASCII_ALPHA_UPPER`, `ASCII_ALPHA`, `ASCII_ALPHANUMERIC`,
//! `ASCII`). Stack operations (`PUSH`, `POP`, `PEEK`, `DROP`, slices), Unicode
//! property classes, and a repetition of something that can match nothing are
//! refused by [`compile`] with a [`CompileError`] naming the rule.
//!
//! # Input
//!
//! The machine reads bytes; the input must be valid UTF-8 (the re-entry layer
//! guarantees it), possibly cut inside a character at the end of what has arrived.
//! Captures are pest's pairs: a rule that pest would give a pair (not silent, not
//! inside an atomic rule, not inside a predicate) is captured, in pest's order.

mod analysis;
mod charset;
mod compile;
mod lower;
mod program;
mod run;

#[cfg(test)]
mod oracle_tests;

pub use compile::{compile, compile_bounded, compile_capturing, CompileError, MAX_INSTRUCTIONS};
pub use lower::{MAX_DEPTH, MAX_NODES, MAX_REFERENCE_PATHS};
pub use program::{Program, RuleId};
pub use run::{Capture, Outcome, ParsingMachine, DEFAULT_DEPTH};

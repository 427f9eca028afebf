//! The compiler from pest grammar text to a [`Program`] for the parsing machine.
//!
//! The grammar is read by pest_meta's parser and validator and lowered as pest's
//! optimizer lowers it (`lower.rs`: bounded repetitions written out, `(!s ~ ANY)*`
//! turned into a skip, within a bound), so its syntax, its validation errors and the
//! rules it compiles are exactly the ones `pest_derive` generates its parser from.
//! Each rule is then translated into a subroutine once per *context* it is reached
//! in, because pest decides two things at run time from the caller's state:
//!
//! - atomicity (non-atomic, compound-atomic `$`, atomic `@`): whether the implicit
//!   `WHITESPACE`/`COMMENT` skip runs between the parts of a sequence and the rounds
//!   of a repetition, and whether called rules produce pairs (not inside `@`);
//! - lookahead: rules matched inside `&` or `!` produce no pairs.
//!
//! Optimizations are done here, so the machine stays small: single-character
//! expressions (one-character strings, ranges, ASCII built-ins, `ANY`, choices of
//! them, `!c ~ d`, silent rules made of them) are folded into one set test;
//! repetitions of a set become a span (memchr for a set with at most three bytes
//! left out); choices, options and loops whose first byte is known get a head test
//! that skips the backtrack entry (a part that can match nothing, such as `ws*`,
//! adds the bytes it can start with to the part after it); and, last, common shapes
//! (one or more bytes of a set, captured or not; a head test and the choice it
//! guards; a byte and the span after it) are fused into one instruction that keeps
//! the original ones after it for when the input runs out inside.

use std::collections::{HashMap, HashSet};

use pest_meta::optimizer::{OptimizedExpr as Expr, OptimizedRule};

use super::analysis::Memo;

use super::charset::{ByteSet, ByteTable, Class, Extent};
use super::program::{Addr, Inst, Program, RuleId};

/// Why a grammar cannot be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompileError {
    /// pest refused the grammar (syntax or validation); pest's messages.
    Pest(Vec<String>),
    /// Compiling the grammar would pass the compiler's bound on time and memory
    /// (see `machine::lower`): written out, its bounded repetitions grow too large or
    /// nest too deep, its references reach rules along too many paths, or its
    /// compiled program grows too large.
    Bound {
        /// The rule that passes the bound.
        rule: String,
        /// What grows past it.
        what: String,
    },
    /// The grammar uses a construct the machine does not support.
    Unsupported {
        /// The rule that uses it.
        rule: String,
        /// What it is.
        construct: String,
    },
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::Pest(messages) => {
                write!(f, "pest refused the grammar: {}", messages.join("; "))
            }
            CompileError::Bound { rule, what } => {
                write!(f, "rule `{rule}` is past the compiler's bound: {what}")
            }
            CompileError::Unsupported { rule, construct } => {
                write!(
                    f,
                    "rule `{rule}` uses {construct}, which the parsing machine does not support"
                )
            }
        }
    }
}

impl std::error::Error for CompileError {}

/// A deliberate mis-compilation, for the test that shows the oracle catches one.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Miscompile {
    /// Character ranges lose their last character.
    RangeEndExclusive,
    /// Nesting bounds let one level more through.
    BoundOneTooMany,
    /// A run of optionals misses to one instruction past its end.
    OptionalRunPastEnd,
}

/// Compiles pest grammar text (several files may be concatenated, as pest does);
/// every rule pest gives a pair is captured.
pub fn compile(grammar: &str) -> Result<Program, CompileError> {
    compile_with(grammar, None, None)
}

/// Compiles pest grammar text capturing only the rules named in `captures` (the
/// others cost nothing at run time, and single-character rules among them fold into
/// sets). A name that is not a rule of the grammar is refused.
pub fn compile_capturing(grammar: &str, captures: &[&str]) -> Result<Program, CompileError> {
    compile_with(grammar, Some(captures), None)
}

/// Compiles pest grammar text capturing the rules named in `captures` (every rule
/// pest gives a pair when `None`), with a nesting bound on each rule of `nesting`:
/// `(name, n)` lets at most `n` matches of rule `name` be in progress at once (the
/// entry rule's own match counts). A call of the rule beyond the bound fails like a
/// mismatch, so the machine backtracks exactly as it would on the grammar with the
/// recursion written out `n` levels deep and no reference to the rule in the
/// innermost level. pest has no such bound (its own parser of the same text accepts
/// any depth); this is how a dialect keeps a nesting limit of its spec without
/// spelling the levels out. A name that is not a rule, or a bound of 0, is refused.
pub fn compile_bounded(
    grammar: &str,
    captures: Option<&[&str]>,
    nesting: &[(&str, u32)],
) -> Result<Program, CompileError> {
    compile_full(grammar, captures, nesting, None)
}

/// How a rule is reached: the caller's atomicity and whether pairs are produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Ctx {
    pub(super) atomicity: Atomicity,
    /// False inside `&` and `!`.
    pub(super) capture: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Atomicity {
    NonAtomic,
    CompoundAtomic,
    Atomic,
}

/// Rules with at most this many expression nodes are inlined where they are used.
const INLINE_LIMIT: usize = 24;

/// A small rule is inlined only if, with the small rules it references inlined in
/// turn, it emits at most this many nodes (small rules that each name the one
/// before twice would otherwise double the code at each level).
const INLINE_EXPANDED_LIMIT: usize = 512;

/// The most instructions a compiled program may hold.
pub const MAX_INSTRUCTIONS: usize = 1 << 21;

/// How many nodes an expression has (a rule reference counts as one).
fn expr_size(expr: &Expr) -> usize {
    match expr {
        Expr::PosPred(e)
        | Expr::NegPred(e)
        | Expr::Opt(e)
        | Expr::Rep(e)
        | Expr::RestoreOnErr(e)
        | Expr::Push(e) => 1 + expr_size(e),
        Expr::Seq(a, b) | Expr::Choice(a, b) => 1 + expr_size(a) + expr_size(b),
        _ => 1,
    }
}

pub(super) const BUILTIN_CLASSES: &[(&str, &[(char, char)])] = &[
    ("ASCII_DIGIT", &[('0', '9')]),
    ("ASCII_NONZERO_DIGIT", &[('1', '9')]),
    ("ASCII_BIN_DIGIT", &[('0', '1')]),
    ("ASCII_OCT_DIGIT", &[('0', '7')]),
    ("ASCII_HEX_DIGIT", &[('0', '9'), ('a', 'f'), ('A', 'F')]),
    ("ASCII_ALPHA_LOWER", &[('a', 'z')]),
    ("ASCII_ALPHA_UPPER", &[('A', 'Z')]),
    ("ASCII_ALPHA", &[('a', 'z'), ('A', 'Z')]),
    ("ASCII_ALPHANUMERIC", &[('a', 'z'), ('A', 'Z'), ('0', '9')]),
    ("ASCII", &[('\0', '\x7F')]),
];

pub(super) struct Compiler<'g> {
    pub(super) rules: &'g [OptimizedRule],
    pub(super) index: HashMap<&'g str, usize>,
    /// Names of the rules, then `EOI`.
    pub(super) names: Vec<String>,
    pub(super) eoi: RuleId,
    pub(super) has_whitespace: bool,
    pub(super) has_comment: bool,
    pub(super) code: Vec<Inst>,
    pub(super) sets: Vec<ByteSet>,
    pub(super) set_index: HashMap<ByteSet, u32>,
    pub(super) literals: Vec<u8>,
    /// Subroutine address per (rule, context), once emitted.
    pub(super) variants: HashMap<(usize, Ctx), Addr>,
    /// Variants still to emit.
    pub(super) pending: Vec<(usize, Ctx)>,
    /// Every variant ever put in `pending`.
    pub(super) queued: HashSet<(usize, Ctx)>,
    /// What the analyses found, per rule (and context).
    pub(super) memo: Memo,
    /// Per rule: how many nodes its expression has.
    pub(super) sizes: Vec<usize>,
    /// Calls whose target is a variant not yet placed.
    pub(super) patches: Vec<(usize, (usize, Ctx))>,
    /// The rule being compiled, for error messages.
    pub(super) current: usize,
    /// Per rule (and `EOI`): whether it is captured at all (`None`: every rule).
    pub(super) capture_filter: Option<Vec<bool>>,
    /// The rules whose bodies are being emitted (a reference to one of them is a call).
    pub(super) inlining: Vec<usize>,
    /// Per rule: its nesting slot, if it has a bound (such a rule is never inlined).
    pub(super) slots: Vec<Option<u16>>,
    #[cfg(test)]
    pub(super) miscompile: Option<Miscompile>,
}

pub(crate) fn compile_with(
    grammar: &str,
    captures: Option<&[&str]>,
    miscompile: Option<MiscompileArg>,
) -> Result<Program, CompileError> {
    compile_full(grammar, captures, &[], miscompile)
}

pub(crate) fn compile_full(
    grammar: &str,
    captures: Option<&[&str]>,
    nesting: &[(&str, u32)],
    miscompile: Option<MiscompileArg>,
) -> Result<Program, CompileError> {
    on_compile_stack(|| {
        let rules = super::lower::lower_text(grammar)?;
        compile_rules(rules, captures, nesting, miscompile)
    })
}

/// Runs `f` on a stack of its own: the lowering, the compiler and the analyses
/// recurse as deep as the grammar's expressions nest (at most `lower::MAX_DEPTH`),
/// which that stack fits whatever the caller's thread has.
pub(crate) fn on_compile_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::grow(COMPILE_STACK, f)
}

/// The stack the compiler runs on (reserved, not committed: the pages a compile
/// does not reach cost nothing).
const COMPILE_STACK: usize = 256 << 20;

/// [`compile_full`] after pest_meta's part.
fn compile_rules(
    rules: Vec<OptimizedRule>,
    captures: Option<&[&str]>,
    nesting: &[(&str, u32)],
    #[allow(unused_variables)] miscompile: Option<MiscompileArg>,
) -> Result<Program, CompileError> {
    let index: HashMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let mut names: Vec<String> = rules.iter().map(|r| r.name.clone()).collect();
    names.push("EOI".to_string());
    if names.len() > u16::MAX as usize {
        return Err(CompileError::Unsupported {
            rule: rules[0].name.clone(),
            construct: "more than 65535 rules".to_string(),
        });
    }
    let mut capture_filter = None;
    if let Some(captures) = captures {
        let mut filter = vec![false; names.len()];
        for name in captures {
            match names.iter().position(|n| n == name) {
                Some(i) => filter[i] = true,
                None => {
                    return Err(CompileError::Unsupported {
                        rule: (*name).to_string(),
                        construct: "a capture of a rule the grammar does not have".to_string(),
                    })
                }
            }
        }
        capture_filter = Some(filter);
    }
    let mut slots = vec![None; rules.len()];
    let mut bounds = Vec::with_capacity(nesting.len());
    for &(name, limit) in nesting {
        let problem = match rules.iter().position(|r| r.name == name) {
            None => Some("a nesting bound on a rule the grammar does not have"),
            Some(_) if limit == 0 => Some("a nesting bound of 0"),
            Some(i) if slots[i].is_some() => Some("two nesting bounds"),
            Some(i) => {
                slots[i] = Some(bounds.len() as u16);
                #[cfg(test)]
                let limit = limit + u32::from(miscompile == Some(Miscompile::BoundOneTooMany));
                bounds.push(limit);
                None
            }
        };
        if let Some(construct) = problem {
            return Err(CompileError::Unsupported {
                rule: name.to_string(),
                construct: construct.to_string(),
            });
        }
    }
    let mut c = Compiler {
        rules: &rules,
        capture_filter,
        inlining: Vec::new(),
        slots,
        index,
        eoi: RuleId((names.len() - 1) as u16),
        names,
        has_whitespace: rules.iter().any(|r| r.name == "WHITESPACE"),
        has_comment: rules.iter().any(|r| r.name == "COMMENT"),
        code: Vec::new(),
        sets: Vec::new(),
        set_index: HashMap::new(),
        literals: Vec::new(),
        variants: HashMap::new(),
        pending: Vec::new(),
        queued: HashSet::new(),
        memo: Memo::default(),
        sizes: rules.iter().map(|r| expr_size(&r.expr)).collect(),
        patches: Vec::new(),
        current: 0,
        #[cfg(test)]
        miscompile,
    };
    for (i, rule) in rules.iter().enumerate() {
        c.current = i;
        c.check(&rule.expr)?;
    }
    // Entries: as `Parser::parse` calls a rule, non-atomic and producing pairs. A
    // run starts in the rule's subroutine itself, whose `Return` on an empty stack
    // ends the run matched; a rule with a nesting bound gets a stub that calls it
    // (the entry's match counts against the bound), as does `EOI`.
    let top = Ctx {
        atomicity: Atomicity::NonAtomic,
        capture: true,
    };
    let mut entries = vec![0; c.names.len()];
    for (i, entry) in entries.iter_mut().enumerate().take(rules.len()) {
        if c.slots[i].is_some() {
            *entry = c.code.len() as Addr;
            c.call(i, top);
            c.code.push(Inst::End);
        } else if c.queued.insert((i, top)) {
            c.pending.push((i, top));
        }
    }
    entries[rules.len()] = c.code.len() as Addr;
    c.eoi_in(top);
    c.code.push(Inst::End);
    while let Some((rule, ctx)) = c.pending.pop() {
        c.current = rule;
        c.emit_variant(rule, ctx)?;
    }
    for (i, entry) in entries.iter_mut().enumerate().take(rules.len()) {
        if c.slots[i].is_none() {
            *entry = c.variants[&(i, top)];
        }
    }
    for (at, key) in std::mem::take(&mut c.patches) {
        let to = c.variants[&key];
        c.code[at] = match c.code[at] {
            Inst::CallBounded { slot, .. } => Inst::CallBounded { to, slot },
            _ => Inst::Call(to),
        };
    }
    fuse(&mut c.code, &entries);
    Ok(Program {
        code: c.code,
        sets: c.sets.iter().map(ByteTable::from).collect(),
        literals: c.literals,
        names: c.names,
        entries,
        bounds,
    })
}

/// Rewrites common shapes into fused instructions, in place: the fused instruction
/// replaces the first of the shape and the rest stay where they were, as the path the
/// machine takes when the input runs out inside the shape. Addresses do not move, so
/// no jump needs patching; a shape is fused only if no jump, call, return or entry
/// lands inside it (only at its start).
fn fuse(code: &mut [Inst], entries: &[Addr]) {
    let mut target = vec![false; code.len() + 1];
    for &entry in entries {
        target[entry as usize] = true;
    }
    for (at, inst) in code.iter().enumerate() {
        match *inst {
            Inst::TestSet { miss: to, .. }
            | Inst::SetOr { miss: to, .. }
            | Inst::CharOr { miss: to, .. }
            | Inst::Choice(to)
            | Inst::Commit(to)
            | Inst::PartialCommit(to)
            | Inst::BackCommit(to) => target[to as usize] = true,
            Inst::Call(to) | Inst::CallBounded { to, .. } => {
                target[to as usize] = true;
                target[at + 1] = true;
            }
            _ => {}
        }
    }
    for k in 0..code.len() {
        let inside = |n: usize| (k + 1..=k + n).any(|a| target[a]);
        match code[k..] {
            [Inst::Open(rule), Inst::Set(s) | Inst::Char(s), Inst::Span(t), Inst::Close(r), ..]
                if s == t && r == rule && !inside(3) =>
            {
                code[k] = Inst::CaptureSpanPlus { rule, set: s };
            }
            [Inst::Set(s) | Inst::Char(s), Inst::Span(t), ..] if s == t && !inside(1) => {
                code[k] = Inst::SpanPlus(s);
            }
            [Inst::TestSet { set, miss }, Inst::Choice(alt), ..] if miss == alt && !inside(1) => {
                code[k] = Inst::TestChoice { set, alt };
            }
            [Inst::Byte(byte), Inst::Span(set), ..] if !inside(1) => {
                code[k] = Inst::ByteSpan { byte, set };
            }
            _ => {}
        }
    }
}

/// The mis-compilation argument (a type that exists only in tests).
#[cfg(test)]
pub(crate) type MiscompileArg = Miscompile;
/// The mis-compilation argument (a type that exists only in tests).
#[cfg(not(test))]
pub(crate) type MiscompileArg = std::convert::Infallible;

impl<'g> Compiler<'g> {
    fn unsupported(&self, construct: impl Into<String>) -> CompileError {
        CompileError::Unsupported {
            rule: self.rules[self.current].name.clone(),
            construct: construct.into(),
        }
    }

    /// Refuses what the machine does not run, naming the rule.
    fn check(&self, expr: &Expr) -> Result<(), CompileError> {
        match expr {
            Expr::Str(_) | Expr::Insens(_) | Expr::Range(..) | Expr::Skip(_) => Ok(()),
            Expr::Ident(name) => {
                if self.index.contains_key(name.as_str()) || self.builtin_ok(name) {
                    Ok(())
                } else {
                    Err(self.unsupported(format!("the built-in `{name}`")))
                }
            }
            Expr::PeekSlice(..) => Err(self.unsupported("a stack slice (PEEK[..])")),
            Expr::Push(_) => Err(self.unsupported("the stack operation PUSH")),
            Expr::PosPred(e) | Expr::NegPred(e) | Expr::Opt(e) | Expr::RestoreOnErr(e) => {
                self.check(e)
            }
            Expr::Rep(e) => {
                if self.nullable(e, &mut Vec::new()) {
                    return Err(
                        self.unsupported("a repetition of an expression that can match nothing")
                    );
                }
                self.check(e)
            }
            Expr::Seq(a, b) | Expr::Choice(a, b) => {
                self.check(a)?;
                self.check(b)
            }
            #[allow(unreachable_patterns)]
            _ => Err(self.unsupported("a construct outside the supported subset")),
        }
    }

    fn builtin_ok(&self, name: &str) -> bool {
        matches!(name, "ANY" | "SOI" | "EOI" | "NEWLINE")
            || BUILTIN_CLASSES.iter().any(|(n, _)| *n == name)
    }

    // ---- emission ----------------------------------------------------------------

    fn here(&self) -> Addr {
        self.code.len() as Addr
    }

    fn set(&mut self, set: ByteSet) -> u32 {
        if let Some(&i) = self.set_index.get(&set) {
            return i;
        }
        let i = self.sets.len() as u32;
        self.sets.push(set);
        self.set_index.insert(set, i);
        i
    }

    /// Emits an instruction whose jump target is patched later; returns its index.
    fn hole(&mut self, inst: Inst) -> usize {
        self.code.push(inst);
        self.code.len() - 1
    }

    fn patch(&mut self, at: usize, to: Addr) {
        self.code[at] = match self.code[at] {
            Inst::Choice(_) => Inst::Choice(to),
            Inst::Commit(_) => Inst::Commit(to),
            Inst::PartialCommit(_) => Inst::PartialCommit(to),
            Inst::BackCommit(_) => Inst::BackCommit(to),
            Inst::TestSet { set, .. } => Inst::TestSet { set, miss: to },
            Inst::SetOr { set, .. } => Inst::SetOr { set, miss: to },
            Inst::CharOr { set, .. } => Inst::CharOr { set, miss: to },
            other => other,
        };
    }

    fn call(&mut self, r: usize, ctx: Ctx) {
        let key = (r, ctx);
        let addr = self.variants.get(&key).copied();
        let at = self.hole(match self.slots[r] {
            Some(slot) => Inst::CallBounded {
                to: addr.unwrap_or(0),
                slot,
            },
            None => Inst::Call(addr.unwrap_or(0)),
        });
        if addr.is_none() {
            if self.queued.insert(key) {
                self.pending.push(key);
            }
            self.patches.push((at, key));
        }
    }

    fn emit_variant(&mut self, r: usize, ctx: Ctx) -> Result<(), CompileError> {
        self.variants.insert((r, ctx), self.here());
        self.rule_body(r, ctx)?;
        self.code.push(Inst::Return);
        Ok(())
    }

    /// Whether rule `r` is small enough to be inlined where it is used (and has no
    /// nesting bound, which needs a call).
    pub(super) fn inline_candidate(&self, r: usize) -> bool {
        self.sizes[r] <= INLINE_LIMIT && self.slots[r].is_none()
    }

    /// A rule's match, capture included: inlined when the rule is small, also with
    /// the small rules it references inlined, and not already being emitted further
    /// up (recursion), else a call of its subroutine.
    fn rule_ref(&mut self, r: usize, ctx: Ctx) -> Result<(), CompileError> {
        let small = self.inline_candidate(r)
            && self.expanded_size(r, &mut Vec::new()) <= INLINE_EXPANDED_LIMIT;
        if small && !self.inlining.contains(&r) && self.inlining.len() < 32 {
            self.rule_body(r, ctx)
        } else {
            self.call(r, ctx);
            Ok(())
        }
    }

    fn rule_body(&mut self, r: usize, ctx: Ctx) -> Result<(), CompileError> {
        let rules = self.rules;
        if self.code.len() > MAX_INSTRUCTIONS {
            return Err(CompileError::Bound {
                rule: rules[r].name.clone(),
                what: format!("its program would hold more than {MAX_INSTRUCTIONS} instructions"),
            });
        }
        let captured = self.captured(r, ctx);
        let id = RuleId(r as u16);
        if captured {
            self.code.push(Inst::Open(id));
        }
        let (body, skips) = self.body_ctx(r, ctx);
        self.inlining.push(r);
        let outer = std::mem::replace(&mut self.current, r);
        let result = self.expr(&rules[r].expr, body, skips);
        self.current = outer;
        self.inlining.pop();
        result?;
        if captured {
            self.code.push(Inst::Close(id));
        }
        Ok(())
    }

    fn eoi_in(&mut self, ctx: Ctx) {
        let captured =
            self.wanted(self.eoi.index()) && ctx.capture && ctx.atomicity != Atomicity::Atomic;
        if captured {
            self.code.push(Inst::Open(self.eoi));
        }
        self.code.push(Inst::Eoi);
        if captured {
            self.code.push(Inst::Close(self.eoi));
        }
    }

    fn literal(&mut self, s: &str, insensitive: bool) {
        let bytes = s.as_bytes();
        match bytes {
            [] => {}
            [b] if !insensitive || !b.is_ascii_alphabetic() => self.code.push(Inst::Byte(*b)),
            _ => {
                let at = self.literals.len() as u32;
                if insensitive {
                    self.literals
                        .extend(bytes.iter().map(u8::to_ascii_lowercase));
                    self.code.push(Inst::LiteralInsens {
                        at,
                        len: bytes.len() as u32,
                    });
                } else {
                    self.literals.extend_from_slice(bytes);
                    self.code.push(Inst::Literal {
                        at,
                        len: bytes.len() as u32,
                    });
                }
            }
        }
    }

    /// One character of `class`.
    fn class(&mut self, class: &Class) {
        if class.is_empty() {
            self.code.push(Inst::Fail);
            return;
        }
        let ascii = class.ascii();
        match class.non_ascii_extent() {
            Extent::None if ascii.len() == 1 => {
                let b = ascii.bytes().next().unwrap_or(0);
                self.code.push(Inst::Byte(b));
            }
            Extent::None => {
                let s = self.set(ascii);
                self.code.push(Inst::Set(s));
            }
            Extent::All => {
                let mut set = ascii;
                set.insert_range(0x80, 0xFF);
                let s = self.set(set);
                self.code.push(Inst::Char(s));
            }
            Extent::Some => {
                // ASCII members in one test, then the byte sequences of the others.
                let mut alternatives: Vec<Vec<(u8, u8)>> = Vec::new();
                if !ascii.is_empty() {
                    alternatives.push(Vec::new());
                }
                let non_ascii = class.minus(&Class::range('\0', '\x7F'));
                alternatives.extend(non_ascii.utf8_sequences());
                let mut ends = Vec::new();
                let last = alternatives.len() - 1;
                for (i, seq) in alternatives.iter().enumerate() {
                    let choice = (i < last).then(|| self.hole(Inst::Choice(0)));
                    if seq.is_empty() {
                        let s = self.set(ascii);
                        self.code.push(Inst::Set(s));
                    } else {
                        for &(lo, hi) in seq {
                            let mut set = ByteSet::EMPTY;
                            set.insert_range(lo, hi);
                            let s = self.set(set);
                            self.code.push(Inst::Set(s));
                        }
                    }
                    if let Some(choice) = choice {
                        ends.push(self.hole(Inst::Commit(0)));
                        let next = self.here();
                        self.patch(choice, next);
                    }
                }
                let end = self.here();
                for at in ends {
                    self.patch(at, end);
                }
            }
        }
    }

    /// Zero or more characters of `class`, if a byte span does that: the class has
    /// none or all of the non-ASCII characters (valid UTF-8 never has an ASCII byte
    /// inside a character, so spanning bytes >= 0x80 takes whole characters).
    fn span(&mut self, class: &Class) -> bool {
        let mut set = class.ascii();
        match class.non_ascii_extent() {
            Extent::None => {}
            Extent::All => set.insert_range(0x80, 0xFF),
            Extent::Some => return false,
        }
        let stops: Vec<u8> = set.complement().bytes().collect();
        if (1..=3).contains(&stops.len()) {
            let mut arr = [stops[0]; 3];
            arr[..stops.len()].copy_from_slice(&stops);
            self.code.push(Inst::SpanUntil {
                stops: arr,
                n: stops.len() as u8,
            });
        } else {
            let s = self.set(set);
            self.code.push(Inst::Span(s));
        }
        true
    }

    /// A head test that jumps to the returned hole when the next byte cannot start
    /// `expr`.
    fn head_test(&mut self, expr: &Expr, ctx: Ctx, skips: bool) -> Option<usize> {
        let first = self.first(expr, ctx, skips, &mut Vec::new())?;
        let set = self.set(first);
        Some(self.hole(Inst::TestSet { set, miss: 0 }))
    }

    fn skip_call(&mut self, ctx: Ctx) {
        // pest: WHITESPACE* then (COMMENT ~ WHITESPACE*)*, with no skips inside.
        let ws = self.index.get("WHITESPACE").copied();
        let comment = self.index.get("COMMENT").copied();
        if let Some(ws) = ws {
            self.loop_of(|c| c.call(ws, ctx));
        }
        if let Some(comment) = comment {
            self.loop_of(|c| {
                c.call(comment, ctx);
                if let Some(ws) = ws {
                    c.loop_of(|c| c.call(ws, ctx));
                }
            });
        }
    }

    /// `body*` without skips: `L: Choice X; body; PartialCommit L; X:`.
    fn loop_of(&mut self, body: impl FnOnce(&mut Self)) {
        let choice = self.hole(Inst::Choice(0));
        let top = self.here();
        body(self);
        self.code.push(Inst::PartialCommit(top));
        let exit = self.here();
        self.patch(choice, exit);
    }

    fn expr(&mut self, expr: &Expr, ctx: Ctx, skips: bool) -> Result<(), CompileError> {
        if !matches!(expr, Expr::Str(_)) {
            if let Some(class) = self.class_of(expr, ctx, skips, &mut Vec::new()) {
                self.class(&class);
                return Ok(());
            }
        }
        match expr {
            Expr::Str(s) => self.literal(s, false),
            Expr::Insens(s) => self.literal(s, true),
            // A range that is not a class cannot occur; keep the match total.
            Expr::Range(..) => self.code.push(Inst::Fail),
            Expr::Ident(name) => match self.index.get(name.as_str()) {
                Some(&r) => self.rule_ref(r, ctx)?,
                None => match name.as_str() {
                    "SOI" => self.code.push(Inst::Soi),
                    "EOI" => self.eoi_in(ctx),
                    "NEWLINE" => {
                        let newline = Expr::Choice(
                            Box::new(Expr::Str("\n".into())),
                            Box::new(Expr::Choice(
                                Box::new(Expr::Str("\r\n".into())),
                                Box::new(Expr::Str("\r".into())),
                            )),
                        );
                        self.expr(&newline, ctx, false)?;
                    }
                    other => return Err(self.unsupported(format!("the built-in `{other}`"))),
                },
            },
            Expr::PosPred(e) => {
                // Choice L1; e; BackCommit L2; L1: Fail; L2:
                let choice = self.hole(Inst::Choice(0));
                self.expr(
                    e,
                    Ctx {
                        capture: false,
                        ..ctx
                    },
                    skips,
                )?;
                let back = self.hole(Inst::BackCommit(0));
                let fail = self.here();
                self.code.push(Inst::Fail);
                let end = self.here();
                self.patch(choice, fail);
                self.patch(back, end);
            }
            Expr::NegPred(e) => {
                // Choice L1; e; FailTwice; L1:
                let choice = self.hole(Inst::Choice(0));
                self.expr(
                    e,
                    Ctx {
                        capture: false,
                        ..ctx
                    },
                    skips,
                )?;
                self.code.push(Inst::FailTwice);
                let end = self.here();
                self.patch(choice, end);
            }
            Expr::Seq(a, b) => {
                if let Expr::Opt(e) = &**a {
                    if !self.skip_active(ctx, skips) {
                        return self.optional_run(e, b, ctx, skips);
                    }
                }
                self.expr(a, ctx, skips)?;
                if self.skip_active(ctx, skips) {
                    self.skip_call(ctx);
                }
                self.expr(b, ctx, skips)?;
            }
            Expr::Choice(..) => self.choice(expr, ctx, skips)?,
            Expr::Opt(e) if self.optional_class(e, ctx, skips).is_some() => {
                let hole = self.optional_step(e, ctx, skips)?;
                let end = self.here();
                for at in hole {
                    self.patch(at, end);
                }
            }
            Expr::Opt(e) => {
                let test = self.head_test(e, ctx, skips);
                let choice = self.hole(Inst::Choice(0));
                self.expr(e, ctx, skips)?;
                let commit = self.hole(Inst::Commit(0));
                let end = self.here();
                self.patch(choice, end);
                self.patch(commit, end);
                if let Some(test) = test {
                    self.patch(test, end);
                }
            }
            Expr::Rep(e) => self.repetition(e, ctx, skips)?,
            Expr::Skip(strings) => self.skip_until(strings, ctx)?,
            Expr::RestoreOnErr(e) => self.expr(e, ctx, skips)?,
            _ => return Err(self.unsupported("a construct outside the supported subset")),
        }
        Ok(())
    }

    /// The instruction that takes one character of `e` or jumps, if `e` is a class
    /// one set test decides (ASCII only, or every non-ASCII character in it).
    fn optional_class(&mut self, e: &Expr, ctx: Ctx, skips: bool) -> Option<Inst> {
        let class = self.class_of(e, ctx, skips, &mut Vec::new())?;
        if class.is_empty() {
            return None;
        }
        let mut set = class.ascii();
        let extent = class.non_ascii_extent();
        match extent {
            Extent::None => Some(Inst::SetOr {
                set: self.set(set),
                miss: 0,
            }),
            Extent::All => {
                set.insert_range(0x80, 0xFF);
                Some(Inst::CharOr {
                    set: self.set(set),
                    miss: 0,
                })
            }
            Extent::Some => None,
        }
    }

    /// One `e?` whose miss (`e` does not match here) is to jump past it, or past a
    /// run of them: emits it and returns the holes to patch with that address.
    fn optional_step(
        &mut self,
        e: &Expr,
        ctx: Ctx,
        skips: bool,
    ) -> Result<Vec<usize>, CompileError> {
        if let Some(inst) = self.optional_class(e, ctx, skips) {
            return Ok(vec![self.hole(inst)]);
        }
        let mut holes: Vec<usize> = self.head_test(e, ctx, skips).into_iter().collect();
        holes.push(self.hole(Inst::Choice(0)));
        self.expr(e, ctx, skips)?;
        let commit = self.hole(Inst::Commit(0));
        let next = self.here();
        self.patch(commit, next);
        Ok(holes)
    }

    /// `e? ~ e? ~ … ~ rest` without skips between the parts, as pest unrolls the
    /// optional rounds of `e{n,m}` (up to `m - n` of them). A PEG expression's result
    /// depends only on the input and the position, so once one `e?` matches nothing
    /// every later one fails at the same position: each one's miss jumps past the
    /// whole run instead of trying the others (`tool_name{1,256}` tried 255 more
    /// tests after a short name).
    fn optional_run(
        &mut self,
        e: &Expr,
        after: &Expr,
        ctx: Ctx,
        skips: bool,
    ) -> Result<(), CompileError> {
        let mut count = 1;
        let mut rest = Some(after);
        while let Some(next) = rest {
            match next {
                Expr::Seq(x, y) if matches!(&**x, Expr::Opt(f) if **f == *e) => {
                    count += 1;
                    rest = Some(y);
                }
                Expr::Opt(f) if **f == *e => {
                    count += 1;
                    rest = None;
                }
                _ => break,
            }
        }
        let mut misses = Vec::new();
        for _ in 0..count {
            misses.extend(self.optional_step(e, ctx, skips)?);
        }
        let end = self.here();
        #[cfg(test)]
        let end = end + Addr::from(self.miscompile == Some(Miscompile::OptionalRunPastEnd));
        for at in misses {
            self.patch(at, end);
        }
        if let Some(rest) = rest {
            self.expr(rest, ctx, skips)?;
        }
        Ok(())
    }

    fn choice(&mut self, expr: &Expr, ctx: Ctx, skips: bool) -> Result<(), CompileError> {
        let mut alternatives = Vec::new();
        let mut rest = expr;
        while let Expr::Choice(a, b) = rest {
            alternatives.push(&**a);
            rest = b;
        }
        alternatives.push(rest);
        // Merge runs of single-character alternatives into one set.
        let mut merged: Vec<Result<Class, &Expr>> = Vec::new();
        for alt in alternatives {
            let class = self.class_of(alt, ctx, skips, &mut Vec::new());
            match (class, merged.last_mut()) {
                (Some(c), Some(Ok(prev))) => *prev = prev.union(&c),
                (Some(c), _) => merged.push(Ok(c)),
                (None, _) => merged.push(Err(alt)),
            }
        }
        let last = merged.len() - 1;
        let mut ends = Vec::new();
        for (i, alt) in merged.iter().enumerate() {
            if i == last {
                match alt {
                    Ok(class) => self.class(class),
                    Err(e) => self.expr(e, ctx, skips)?,
                }
                break;
            }
            let test = match alt {
                Ok(class) => {
                    let set = self.set(class.lead_bytes());
                    Some(self.hole(Inst::TestSet { set, miss: 0 }))
                }
                Err(e) => self.head_test(e, ctx, skips),
            };
            let choice = self.hole(Inst::Choice(0));
            match alt {
                Ok(class) => self.class(class),
                Err(e) => self.expr(e, ctx, skips)?,
            }
            ends.push(self.hole(Inst::Commit(0)));
            let next = self.here();
            self.patch(choice, next);
            if let Some(test) = test {
                self.patch(test, next);
            }
        }
        let end = self.here();
        for at in ends {
            self.patch(at, end);
        }
        Ok(())
    }

    fn repetition(&mut self, e: &Expr, ctx: Ctx, skips: bool) -> Result<(), CompileError> {
        let skip = self.skip_active(ctx, skips);
        if !skip {
            if let Some(class) = self.class_of(e, ctx, skips, &mut Vec::new()) {
                if self.span(&class) {
                    return Ok(());
                }
            }
            // Tested: `L: TestSet X; Choice X; e; Commit L; X:` (nothing pending at
            // the test). Untested: `Choice X; B: e; PartialCommit B; X:`.
            let top = self.here();
            let test = self.head_test(e, ctx, skips);
            let choice = self.hole(Inst::Choice(0));
            let body = self.here();
            self.expr(e, ctx, skips)?;
            if test.is_some() {
                self.code.push(Inst::Commit(top));
            } else {
                self.code.push(Inst::PartialCommit(body));
            }
            let exit = self.here();
            self.patch(choice, exit);
            if let Some(test) = test {
                self.patch(test, exit);
            }
            return Ok(());
        }
        // pest, non-atomic: (e ~ (skip ~ e)*)?
        let outer = self.hole(Inst::Choice(0));
        self.expr(e, ctx, skips)?;
        let inner = self.hole(Inst::Choice(0));
        let top = self.here();
        self.skip_call(ctx);
        self.expr(e, ctx, skips)?;
        self.code.push(Inst::PartialCommit(top));
        let inner_exit = self.here();
        self.patch(inner, inner_exit);
        let commit = self.hole(Inst::Commit(0));
        let end = self.here();
        self.patch(outer, end);
        self.patch(commit, end);
        Ok(())
    }

    /// pest's skip: to the first of `strings`, or to the end (never fails), that is
    /// `(!(s1 | s2 | ...) ~ ANY)*`.
    fn skip_until(&mut self, strings: &[String], ctx: Ctx) -> Result<(), CompileError> {
        let singles: Option<Vec<char>> = strings
            .iter()
            .map(|s| {
                let mut chars = s.chars();
                let c = chars.next()?;
                chars.next().is_none().then_some(c)
            })
            .collect();
        if let Some(chars) = singles {
            let refused = chars
                .iter()
                .fold(Class::default(), |acc, &c| acc.union(&Class::range(c, c)));
            let class = refused.complement();
            if self.span(&class) {
                return Ok(());
            }
        }
        if strings.iter().any(String::is_empty) {
            // `!""` always fails: the skip matches nothing.
            return Ok(());
        }
        let mut refused = Expr::Str(strings[strings.len() - 1].clone());
        for s in strings[..strings.len() - 1].iter().rev() {
            refused = Expr::Choice(Box::new(Expr::Str(s.clone())), Box::new(refused));
        }
        let step = Expr::Seq(
            Box::new(Expr::NegPred(Box::new(refused))),
            Box::new(Expr::Ident("ANY".into())),
        );
        let atomic = Ctx {
            atomicity: Atomicity::Atomic,
            ..ctx
        };
        self.repetition(&step, atomic, false)
    }
}

//! Grammars that pest_meta parsed, validated and optimized when the crate was
//! built (build.rs), kept as a flat list of steps and rebuilt into pest_meta's
//! optimized rules at first use, so that a process does not run the optimizer
//! again.
//!
//! pest's optimizer unrolls a bounded repetition `e{0,256}` into 256 nested
//! optionals, and its restorer then walks (and clones) that nest once for every
//! choice and optional around each reference to it: for the field grammars with
//! bounded names (minimax-m2, glm, harmony, mistral, deepseek, kimi-k2) that was
//! 40–800 ms of optimizing per process before the first byte was parsed. The
//! rebuilt rules are equal to what pest_meta gives for the same text (a test of
//! `field::grammars` compares them), so the program compiled from them is too.

use pest_meta::ast::RuleType;
use pest_meta::optimizer::{OptimizedExpr, OptimizedRule};

/// One step of rebuilding a grammar's optimized rules, in postfix order: leaves
/// push an expression, operators pop their operands and push the result, and
/// [`Op::Rule`] pops a rule's expression.
#[derive(Clone, Copy, Debug)]
#[allow(
    dead_code,
    reason = "build.rs writes every kind of expression; the crate's grammars use some"
)]
pub enum Op {
    /// `"…"`.
    Str(&'static str),
    /// `^"…"`.
    Insens(&'static str),
    /// `'a'..'z'`.
    Range(&'static str, &'static str),
    /// A rule or built-in by name.
    Ident(&'static str),
    /// `PEEK[a..b]`.
    PeekSlice(i32, Option<i32>),
    /// `&e`.
    PosPred,
    /// `!e`.
    NegPred,
    /// `a ~ b` (pops `b`, then `a`).
    Seq,
    /// `a | b` (pops `b`, then `a`).
    Choice,
    /// `e?`.
    Opt,
    /// `e*`.
    Rep,
    /// The optimizer's skip to one of these strings.
    Skip(&'static [&'static str]),
    /// `PUSH(e)`.
    Push,
    /// The restorer's wrapper of a branch that changes the stack.
    RestoreOnErr,
    /// A rule whose expression is on the stack: its name and type
    /// (0 normal, 1 silent, 2 atomic, 3 compound-atomic, 4 non-atomic).
    Rule(&'static str, u8),
}

/// The optimized rules that `ops` (written by build.rs) describe.
///
/// # Panics
/// On a malformed list, which build.rs never writes (tested).
pub fn rules(ops: &[Op]) -> Vec<OptimizedRule> {
    let mut stack: Vec<OptimizedExpr> = Vec::new();
    let mut rules = Vec::new();
    let pop = |stack: &mut Vec<OptimizedExpr>| {
        Box::new(stack.pop().expect("an operand (build.rs writes postfix)"))
    };
    for op in ops {
        let expr = match *op {
            Op::Str(s) => OptimizedExpr::Str(s.to_string()),
            Op::Insens(s) => OptimizedExpr::Insens(s.to_string()),
            Op::Range(a, b) => OptimizedExpr::Range(a.to_string(), b.to_string()),
            Op::Ident(s) => OptimizedExpr::Ident(s.to_string()),
            Op::PeekSlice(a, b) => OptimizedExpr::PeekSlice(a, b),
            Op::PosPred => OptimizedExpr::PosPred(pop(&mut stack)),
            Op::NegPred => OptimizedExpr::NegPred(pop(&mut stack)),
            Op::Seq | Op::Choice => {
                let b = pop(&mut stack);
                let a = pop(&mut stack);
                if matches!(op, Op::Seq) {
                    OptimizedExpr::Seq(a, b)
                } else {
                    OptimizedExpr::Choice(a, b)
                }
            }
            Op::Opt => OptimizedExpr::Opt(pop(&mut stack)),
            Op::Rep => OptimizedExpr::Rep(pop(&mut stack)),
            Op::Skip(strings) => {
                OptimizedExpr::Skip(strings.iter().map(|s| s.to_string()).collect())
            }
            Op::Push => OptimizedExpr::Push(pop(&mut stack)),
            Op::RestoreOnErr => OptimizedExpr::RestoreOnErr(pop(&mut stack)),
            Op::Rule(name, ty) => {
                let ty = match ty {
                    0 => RuleType::Normal,
                    1 => RuleType::Silent,
                    2 => RuleType::Atomic,
                    3 => RuleType::CompoundAtomic,
                    _ => RuleType::NonAtomic,
                };
                rules.push(OptimizedRule {
                    name: name.to_string(),
                    ty,
                    expr: *pop(&mut stack),
                });
                continue;
            }
        };
        stack.push(expr);
    }
    assert!(stack.is_empty(), "every expression belongs to a rule");
    rules
}

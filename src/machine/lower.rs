//! From grammar text to the expressions the compiler reads, in bounded time and
//! memory.
//!
//! pest_meta parses the text and validates it (so the syntax and the errors stay
//! pest's), and this module does the rest of what `pest_meta::parse_and_optimize`
//! does, with a bound. pest's optimizer is not used: its restorer walks, and clones,
//! the whole expression below every choice, option and repetition (and the rules it
//! references, anew each time), and its unroller multiplies nested bounded
//! repetitions, so a grammar of a few lines (`(… ~ x{0,1024}){0,8}`) kept it busy
//! for minutes. pest_meta's validator, too, follows references without remembering
//! what it found, so its cost grows with the number of paths through the rules'
//! references, which doubles with each rule that names the one before it twice: that
//! number is counted first, and a grammar with too many is refused before the
//! validator runs.
//!
//! The lowering keeps every rewrite of pest's optimizer that changes what the
//! generated parser does or how it is shaped, because `pest_derive` generates its
//! parser from the optimized rules and that parser is the machine's oracle: sequences
//! and choices associate to the right; in atomic rules `(!("a" | "b") ~ ANY)*` becomes
//! a skip to the next `"a"` or `"b"` and adjacent literals join; bounded repetitions
//! are written out (`e{2,4}` is `e ~ e ~ e? ~ e?`, `e+` is `e ~ e*`); choices whose
//! alternatives start alike are factored; and `(a ~ b)* ~ a` becomes `a ~ (b ~ a)*`.
//! For every grammar the crate ships, the result equals pest_meta's (tested). The
//! restorer's wrapping is left out: it only concerns the stack operations, which the
//! compiler refuses.
//!
//! The bound: written out, a grammar's expressions may hold at most [`MAX_NODES`]
//! nodes and nest at most [`MAX_DEPTH`] deep; past that, the rule that crosses the
//! line is named in a [`CompileError::Bound`].

use std::collections::HashMap;

use pest::iterators::Pairs;
use pest_meta::ast::{Expr, Rule, RuleType};
use pest_meta::optimizer::{OptimizedExpr as Lowered, OptimizedRule};
use pest_meta::parser::Rule as Meta;

use super::compile::CompileError;

/// The most expression nodes a grammar's rules may hold with their bounded
/// repetitions written out.
pub const MAX_NODES: usize = 1 << 18;

/// The deepest a rule's expression may nest with its bounded repetitions written
/// out (a sequence of `n` parts nests `n` deep).
pub const MAX_DEPTH: usize = 4096;

/// The most rule expansions pest_meta's validator may meet when it follows every
/// path through the rules' references (see [`reference_paths`]).
pub const MAX_REFERENCE_PATHS: u64 = 1 << 14;

/// The rules of grammar text, lowered; pest's errors, or the rule past the bound.
pub(crate) fn lower_text(grammar: &str) -> Result<Vec<OptimizedRule>, CompileError> {
    let pest_errors = |errors: Vec<pest::error::Error<Meta>>| {
        CompileError::Pest(errors.iter().map(|e| e.to_string()).collect())
    };
    let pairs =
        pest_meta::parser::parse(Meta::grammar_rules, grammar).map_err(|e| pest_errors(vec![e]))?;
    pest_meta::validator::validate_pairs(pairs.clone()).map_err(pest_errors)?;
    reference_paths(pairs.clone())?;
    let rules = pest_meta::parser::consume_rules(pairs).map_err(pest_errors)?;
    lower(rules)
}

/// Refuses a grammar through whose references pest_meta's validator would walk more
/// than [`MAX_REFERENCE_PATHS`] rule expansions. The validator's checks (can an
/// expression fail, can it match nothing, is a rule left-recursive) each follow a
/// rule's references depth first, skipping only a rule already on the current
/// path; this walks the same way from every rule in turn, counting the expansions
/// of all the walks together, and names the rule whose walk passes the bound.
fn reference_paths(pairs: Pairs<'_, Meta>) -> Result<(), CompileError> {
    let mut names: Vec<&str> = Vec::new();
    let mut references: Vec<Vec<&str>> = Vec::new();
    for pair in pairs.filter(|p| p.as_rule() == Meta::grammar_rule) {
        let mut inner = pair.into_inner();
        let Some(name) = inner.next().filter(|p| p.as_rule() == Meta::identifier) else {
            continue;
        };
        names.push(name.as_str());
        references.push(
            inner
                .flatten()
                .filter(|p| p.as_rule() == Meta::identifier)
                .map(|p| p.as_str())
                .collect(),
        );
    }
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let edges: Vec<Vec<usize>> = references
        .iter()
        .map(|refs| refs.iter().filter_map(|r| index.get(r).copied()).collect())
        .collect();
    let mut on_path = vec![false; names.len()];
    let mut walked = 0u64;
    for (start, name) in names.iter().enumerate() {
        if !walk(start, &edges, &mut on_path, &mut walked) {
            return Err(CompileError::Bound {
                rule: name.to_string(),
                what: format!(
                    "with the rules before it, its references reach rules along more than \
                     {MAX_REFERENCE_PATHS} paths, too many for pest's validator"
                ),
            });
        }
    }
    Ok(())
}

/// One depth-first walk from `rule` (see [`reference_paths`]); false once the
/// count passes the bound.
fn walk(rule: usize, edges: &[Vec<usize>], on_path: &mut [bool], walked: &mut u64) -> bool {
    *walked += 1;
    if *walked > MAX_REFERENCE_PATHS {
        return false;
    }
    on_path[rule] = true;
    let mut within = true;
    for &next in &edges[rule] {
        if !on_path[next] && !walk(next, edges, on_path, walked) {
            within = false;
            break;
        }
    }
    on_path[rule] = false;
    within
}

/// What pest's optimizer makes of `rules` (see the module's documentation), within
/// the bound.
pub(crate) fn lower(rules: Vec<Rule>) -> Result<Vec<OptimizedRule>, CompileError> {
    // The skip looks literals up in the rules as written.
    let written: HashMap<String, Expr> = rules
        .iter()
        .map(|r| (r.name.clone(), r.expr.clone()))
        .collect();
    let mut budget = Budget {
        nodes: MAX_NODES,
        rule: String::new(),
    };
    let mut lowered = Vec::with_capacity(rules.len());
    for Rule { name, ty, expr } in rules {
        budget.rule.clone_from(&name);
        let expr = associate(expr);
        let expr = if ty == RuleType::Atomic {
            skips(expr, &written)
        } else {
            expr
        };
        let (mut expr, ..) = budget.write_out(expr)?;
        if ty == RuleType::Atomic {
            join_literals(&mut expr);
        }
        factor(&mut expr, ty);
        fold_lists(&mut expr);
        lowered.push(OptimizedRule { name, ty, expr });
    }
    Ok(lowered)
}

/// Sequences and choices nested to the right: `(a ~ b) ~ c` is `a ~ (b ~ c)`.
fn associate(expr: Expr) -> Expr {
    fn parts(expr: Expr, seq: bool, out: &mut Vec<Expr>) {
        match expr {
            Expr::Seq(a, b) if seq => {
                parts(*a, seq, out);
                parts(*b, seq, out);
            }
            Expr::Choice(a, b) if !seq => {
                parts(*a, seq, out);
                parts(*b, seq, out);
            }
            other => out.push(associate(other)),
        }
    }
    fn right(mut parts: Vec<Expr>, seq: bool) -> Expr {
        let mut expr = parts.pop().expect("a sequence or choice has parts");
        while let Some(part) = parts.pop() {
            expr = if seq {
                Expr::Seq(Box::new(part), Box::new(expr))
            } else {
                Expr::Choice(Box::new(part), Box::new(expr))
            };
        }
        expr
    }
    let unary = |e: Box<Expr>| Box::new(associate(*e));
    match expr {
        Expr::Seq(..) | Expr::Choice(..) => {
            let seq = matches!(expr, Expr::Seq(..));
            let mut out = Vec::new();
            parts(expr, seq, &mut out);
            right(out, seq)
        }
        Expr::PosPred(e) => Expr::PosPred(unary(e)),
        Expr::NegPred(e) => Expr::NegPred(unary(e)),
        Expr::Opt(e) => Expr::Opt(unary(e)),
        Expr::Rep(e) => Expr::Rep(unary(e)),
        Expr::RepOnce(e) => Expr::RepOnce(unary(e)),
        Expr::RepExact(e, n) => Expr::RepExact(unary(e), n),
        Expr::RepMin(e, n) => Expr::RepMin(unary(e), n),
        Expr::RepMax(e, n) => Expr::RepMax(unary(e), n),
        Expr::RepMinMax(e, n, m) => Expr::RepMinMax(unary(e), n, m),
        Expr::Push(e) => Expr::Push(unary(e)),
        other => other,
    }
}

/// In an atomic rule, `(!(s1 | s2 | …) ~ ANY)*` where each alternative is a literal
/// or a rule written as literals becomes a skip to the first of them.
fn skips(expr: Expr, written: &HashMap<String, Expr>) -> Expr {
    if let Expr::Rep(body) = &expr {
        if let Expr::Seq(first, any) = &**body {
            if let (Expr::NegPred(refused), Expr::Ident(name)) = (&**first, &**any) {
                if name == "ANY" {
                    let mut strings = Vec::new();
                    if literals(refused, written, &mut strings, 0) {
                        return Expr::Skip(strings);
                    }
                }
            }
        }
    }
    let inner = |e: Box<Expr>| Box::new(skips(*e, written));
    match expr {
        Expr::Seq(a, b) => Expr::Seq(inner(a), inner(b)),
        Expr::Choice(a, b) => Expr::Choice(inner(a), inner(b)),
        Expr::PosPred(e) => Expr::PosPred(inner(e)),
        Expr::NegPred(e) => Expr::NegPred(inner(e)),
        Expr::Opt(e) => Expr::Opt(inner(e)),
        Expr::Rep(e) => Expr::Rep(inner(e)),
        Expr::RepOnce(e) => Expr::RepOnce(inner(e)),
        Expr::RepExact(e, n) => Expr::RepExact(inner(e), n),
        Expr::RepMin(e, n) => Expr::RepMin(inner(e), n),
        Expr::RepMax(e, n) => Expr::RepMax(inner(e), n),
        Expr::RepMinMax(e, n, m) => Expr::RepMinMax(inner(e), n, m),
        Expr::Push(e) => Expr::Push(inner(e)),
        other => other,
    }
}

/// Appends the literals `expr` is a choice of, as pest's skip reads them: a
/// literal, a rule whose written expression is such a choice, or a right-nested
/// choice whose left sides are literals or such rules and whose last alternative is
/// one of the first two. False if `expr` is not of that form (rules are looked up
/// at most a few levels deep, which also stops a cycle).
fn literals(
    expr: &Expr,
    written: &HashMap<String, Expr>,
    out: &mut Vec<String>,
    depth: usize,
) -> bool {
    if depth > 64 {
        return false;
    }
    match expr {
        Expr::Str(s) => {
            out.push(s.clone());
            true
        }
        Expr::Ident(name) => written
            .get(name)
            .is_some_and(|e| literals(e, written, out, depth + 1)),
        Expr::Choice(first, rest) => {
            let first_ok = match &**first {
                Expr::Str(s) => {
                    out.push(s.clone());
                    true
                }
                Expr::Ident(name) => {
                    // A rule on the left must be a choice of literals on its own.
                    let mut own = Vec::new();
                    let ok = written
                        .get(name)
                        .is_some_and(|e| literals(e, written, &mut own, depth + 1));
                    out.extend(own);
                    ok
                }
                _ => false,
            };
            first_ok && literals(rest, written, out, depth)
        }
        _ => false,
    }
}

/// The node budget of one grammar, and the rule being lowered (for the error).
struct Budget {
    nodes: usize,
    rule: String,
}

impl Budget {
    fn exceeded(&self, what: String) -> CompileError {
        CompileError::Bound {
            rule: self.rule.clone(),
            what,
        }
    }

    /// Takes `n` nodes of nesting `depth` from the budget.
    fn take(&mut self, n: usize, depth: usize) -> Result<(), CompileError> {
        if n > self.nodes {
            return Err(self.exceeded(format!(
                "written out, the grammar's expressions would hold more than {MAX_NODES} nodes"
            )));
        }
        if depth > MAX_DEPTH {
            return Err(self.exceeded(format!(
                "written out, its expression would nest more than {MAX_DEPTH} deep"
            )));
        }
        self.nodes -= n;
        Ok(())
    }

    /// `expr` with its repetitions written out as pest's parser runs them, how deep
    /// it nests and how many nodes it has.
    fn write_out(&mut self, expr: Expr) -> Result<Written, CompileError> {
        let leaf = |budget: &mut Self, e: Lowered| budget.take(1, 1).map(|()| (e, 1, 1));
        match expr {
            Expr::Str(s) => leaf(self, Lowered::Str(s)),
            Expr::Insens(s) => leaf(self, Lowered::Insens(s)),
            Expr::Range(a, b) => leaf(self, Lowered::Range(a, b)),
            Expr::Ident(name) => leaf(self, Lowered::Ident(name)),
            Expr::PeekSlice(a, b) => leaf(self, Lowered::PeekSlice(a, b)),
            Expr::Skip(strings) => leaf(self, Lowered::Skip(strings)),
            Expr::PosPred(e) => self.unary(*e, Lowered::PosPred),
            Expr::NegPred(e) => self.unary(*e, Lowered::NegPred),
            Expr::Opt(e) => self.unary(*e, Lowered::Opt),
            Expr::Rep(e) => self.unary(*e, Lowered::Rep),
            Expr::Push(e) => self.unary(*e, Lowered::Push),
            Expr::Seq(a, b) => self.binary(*a, *b, Lowered::Seq),
            Expr::Choice(a, b) => self.binary(*a, *b, Lowered::Choice),
            // `e+`: `e ~ e*`.
            Expr::RepOnce(e) => self.repeat(*e, 1, None),
            // `e{n}`: n times `e`.
            Expr::RepExact(e, n) => self.repeat(*e, n, Some(n)),
            // `e{n,}`: n times `e`, then `e*`.
            Expr::RepMin(e, n) => self.repeat(*e, n, None),
            // `e{,m}`: m times `e?`.
            Expr::RepMax(e, m) => self.repeat(*e, 0, Some(m)),
            // `e{n,m}`: n times `e`, then `e?` up to m in all (pest takes n above m
            // as m).
            Expr::RepMinMax(e, n, m) => self.repeat(*e, n.min(m), Some(m)),
            #[allow(unreachable_patterns)]
            _ => Err(CompileError::Unsupported {
                rule: self.rule.clone(),
                construct: "a construct outside the supported subset".to_string(),
            }),
        }
    }

    fn binary(
        &mut self,
        a: Expr,
        b: Expr,
        wrap: fn(Box<Lowered>, Box<Lowered>) -> Lowered,
    ) -> Result<Written, CompileError> {
        let (a, da, na) = self.write_out(a)?;
        let (b, db, nb) = self.write_out(b)?;
        let depth = 1 + da.max(db);
        self.take(1, depth)?;
        Ok((wrap(Box::new(a), Box::new(b)), depth, 1 + na + nb))
    }

    fn unary(
        &mut self,
        e: Expr,
        wrap: fn(Box<Lowered>) -> Lowered,
    ) -> Result<Written, CompileError> {
        let (e, d, n) = self.write_out(e)?;
        self.take(1, d + 1)?;
        Ok((wrap(Box::new(e)), d + 1, n + 1))
    }

    /// `e` written `required` times, then `e?` up to `max` times in all, or `e*`
    /// when there is no `max`, as a right-nested sequence.
    fn repeat(
        &mut self,
        e: Expr,
        required: u32,
        max: Option<u32>,
    ) -> Result<Written, CompileError> {
        let (e, d, size) = self.write_out(e)?;
        let required = required as usize;
        let optional = max.map_or(0, |m| m as usize - required);
        let tail = usize::from(max.is_none());
        let parts = required + optional + tail;
        if parts == 0 {
            // pest's parser refuses `{0}` and `{,0}`; an AST from elsewhere might not.
            return Err(CompileError::Unsupported {
                rule: self.rule.clone(),
                construct: "a repetition of 0 times".to_string(),
            });
        }
        // The copies beyond the one already written, one wrapper per `e?` and `e*`,
        // one `~` between parts.
        let extra = (parts - 1)
            .saturating_mul(size)
            .saturating_add(optional + tail)
            .saturating_add(parts - 1);
        let wrapped = d + usize::from(optional + tail > 0);
        self.take(extra, (parts - 1).saturating_add(wrapped))?;
        let mut chain: Vec<Lowered> = Vec::with_capacity(parts);
        chain.extend(std::iter::repeat_n(e.clone(), required));
        chain.extend(std::iter::repeat_n(
            Lowered::Opt(Box::new(e.clone())),
            optional,
        ));
        if tail == 1 {
            chain.push(Lowered::Rep(Box::new(e)));
        }
        let mut expr = chain.pop().expect("a repetition has a part");
        while let Some(part) = chain.pop() {
            expr = Lowered::Seq(Box::new(part), Box::new(expr));
        }
        Ok((expr, (parts - 1) + wrapped, size + extra))
    }
}

/// A written-out expression, how deep it nests and how many nodes it has.
type Written = (Lowered, usize, usize);

/// Applies `f` to each child of `expr`, in place.
fn children(expr: &mut Lowered, mut f: impl FnMut(&mut Lowered)) {
    match expr {
        Lowered::PosPred(e)
        | Lowered::NegPred(e)
        | Lowered::Opt(e)
        | Lowered::Rep(e)
        | Lowered::Push(e) => f(e),
        Lowered::Seq(a, b) | Lowered::Choice(a, b) => {
            f(a);
            f(b);
        }
        _ => {}
    }
}

/// Takes `expr` out of its place, leaving an empty literal (which allocates nothing)
/// to be overwritten.
fn take(expr: &mut Lowered) -> Lowered {
    std::mem::replace(expr, Lowered::Str(String::new()))
}

/// In an atomic rule, `"a" ~ "b"` is `"ab"` (and so for `^"…"`), innermost first.
fn join_literals(expr: &mut Lowered) {
    children(expr, join_literals);
    if let Lowered::Seq(a, b) = expr {
        let joined = match (&mut **a, &**b) {
            (Lowered::Str(a), Lowered::Str(b)) => Lowered::Str(std::mem::take(a) + b),
            (Lowered::Insens(a), Lowered::Insens(b)) => Lowered::Insens(std::mem::take(a) + b),
            _ => return,
        };
        *expr = joined;
    }
}

/// Choices whose alternatives start alike, outermost first: `a ~ b | a ~ c` is
/// `a ~ (b | c)`; `a | a ~ b` is `a` (the second cannot match where the first did
/// not); in atomic and compound-atomic rules, `a ~ b | a` is `a ~ b?`.
fn factor(expr: &mut Lowered, ty: RuleType) {
    /// Which rewrite applies to a choice.
    enum Rewrite {
        CommonStart,
        OptionalRest,
        First,
    }
    if let Lowered::Choice(left, right) = expr {
        let rewrite = match (&**left, &**right) {
            (Lowered::Seq(a, _), Lowered::Seq(c, _)) => (a == c).then_some(Rewrite::CommonStart),
            (Lowered::Seq(a, _), other)
                if matches!(ty, RuleType::Atomic | RuleType::CompoundAtomic) =>
            {
                (**a == *other).then_some(Rewrite::OptionalRest)
            }
            (first, Lowered::Seq(c, _)) => (*first == **c).then_some(Rewrite::First),
            _ => None,
        };
        if let Some(rewrite) = rewrite {
            if let Lowered::Choice(left, right) = take(expr) {
                *expr = match (rewrite, *left, *right) {
                    (Rewrite::CommonStart, Lowered::Seq(a, b), Lowered::Seq(_, d)) => {
                        Lowered::Seq(a, Box::new(Lowered::Choice(b, d)))
                    }
                    (Rewrite::OptionalRest, Lowered::Seq(a, b), _) => {
                        Lowered::Seq(a, Box::new(Lowered::Opt(b)))
                    }
                    (_, first, _) => first,
                };
            }
        }
    }
    children(expr, |e| factor(e, ty));
}

/// `(a ~ b)* ~ a` is `a ~ (b ~ a)*` (the last `a` is not tried twice), innermost
/// first.
fn fold_lists(expr: &mut Lowered) {
    children(expr, fold_lists);
    let Lowered::Seq(first, after) = expr else {
        return;
    };
    let Lowered::Rep(body) = &**first else {
        return;
    };
    if !matches!(&**body, Lowered::Seq(a, _) if **a == **after) {
        return;
    }
    if let Lowered::Seq(first, after) = take(expr) {
        if let Lowered::Rep(body) = *first {
            if let Lowered::Seq(a, b) = *body {
                *expr = Lowered::Seq(a, Box::new(Lowered::Rep(Box::new(Lowered::Seq(b, after)))));
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::machine::compile::on_compile_stack;
    use crate::machine::{compile, MAX_INSTRUCTIONS};

    /// The grammar files joined by newlines, as the crate joins them.
    fn text(files: &[&str]) -> String {
        files
            .iter()
            .map(|f| {
                std::fs::read_to_string(format!("{}/{f}", env!("CARGO_MANIFEST_DIR")))
                    .unwrap_or_else(|e| panic!("{f}: {e}"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every grammar the crate ships (and the oracle's test grammar) but the two
    /// minimax-m2 ones, which pest's optimizer takes minutes over (the oracle's
    /// property tests compare the machine with pest_derive's parser on those).
    pub(in crate::machine) const SHIPPED: &[&[&str]] = &[
        &["grammar/anthropic-xml.pest", "grammar/common.pest"],
        &["grammar/sections.pest", "grammar/common.pest"],
        &["grammar/kindaxml.pest"],
        &["grammar/plurnk.pest"],
        &["grammar/transcript.pest"],
        &[
            "grammar/deepseek.pest",
            "grammar/field-json.pest",
            "grammar/reasoning.pest",
        ],
        &[
            "grammar/harmony.pest",
            "grammar/field-json.pest",
            "grammar/reasoning.pest",
        ],
        &[
            "grammar/mistral.pest",
            "grammar/field-json.pest",
            "grammar/reasoning.pest",
        ],
        &["grammar/json-call-object.pest", "grammar/field-json.pest"],
        &["grammar/hermes.pest", "grammar/reasoning.pest"],
        &["grammar/qwen3-coder.pest", "grammar/reasoning.pest"],
        &[
            "grammar/llama3-json.pest",
            "grammar/python-call.pest",
            "grammar/reasoning.pest",
        ],
        &[
            "grammar/pythonic.pest",
            "grammar/python-call.pest",
            "grammar/reasoning.pest",
        ],
        &["grammar/reasoning.pest"],
        &["grammar/reasoning-dialect.pest", "grammar/reasoning.pest"],
        &[
            "grammar/kimi-k2.pest",
            "grammar/field-json.pest",
            "grammar/reasoning.pest",
        ],
        &["grammar/glm.pest", "grammar/reasoning.pest"],
        &["grammar/seed-oss.pest"],
        &["grammar/deepseek-dsml.pest", "grammar/reasoning.pest"],
        &["grammar/gigachat-gcml.pest", "grammar/reasoning.pest"],
        &["grammar/step3.pest", "grammar/reasoning.pest"],
        &["grammar/hunyuan.pest"],
        &[
            "grammar/hunyuan-a13b.pest",
            "grammar/field-json.pest",
            "grammar/reasoning.pest",
        ],
        &[
            "grammar/granite.pest",
            "grammar/field-json.pest",
            "grammar/reasoning.pest",
        ],
        &["grammar/cohere.pest", "grammar/field-json.pest"],
        &[
            "grammar/internlm.pest",
            "grammar/field-json.pest",
            "grammar/reasoning.pest",
        ],
        &[
            "grammar/nemotron.pest",
            "grammar/field-json.pest",
            "grammar/reasoning.pest",
        ],
        &["grammar/apertus.pest", "grammar/field-json.pest"],
        &["grammar/kimi-k3.pest"],
        &["src/machine/oracle_wide.pest"],
    ];

    /// The lowering gives exactly pest's optimized rules (what `pest_derive`
    /// generates its parser from) for every grammar the crate ships.
    #[test]
    fn lowering_equals_pests_optimizer_on_every_shipped_grammar() {
        for files in SHIPPED {
            let grammar = text(files);
            let (_, expected) = pest_meta::parse_and_optimize(&grammar)
                .unwrap_or_else(|e| panic!("{files:?}: {e:?}"));
            let lowered = on_compile_stack(|| lower_text(&grammar))
                .unwrap_or_else(|e| panic!("{files:?}: {e}"));
            assert_eq!(lowered, expected, "{files:?}");
        }
    }

    /// Each rewrite of pest's optimizer, on a grammar made to need it, gives what
    /// pest gives.
    #[test]
    fn lowering_equals_pests_optimizer_on_each_rewrite() {
        for grammar in [
            // Association, bounded repetitions of every form, `{n,m}` with n > m.
            "a = { (\"x\" ~ \"y\") ~ \"z\" | (\"p\" | \"q\") | \"r\" }\n\
             b = { \"x\"+ ~ \"y\"{3} ~ \"z\"{2,} ~ \"w\"{,2} ~ \"v\"{1,3} ~ \"u\"{0,2} ~ \"t\"{3,2} }",
            // Skips: literals, a rule of literals, a choice through rules.
            "lit = { \"<\" }\ntwo = _{ \"a\" | \"b\" }\n\
             s1 = @{ (!(\"<\" | \">\") ~ ANY)* }\ns2 = @{ (!lit ~ ANY)* }\n\
             s3 = @{ (!(lit | two | \"c\") ~ ANY)* }\ns4 = { (!\"<\" ~ ANY)* }",
            // Joined literals (atomic only), factoring, folded lists.
            "j = @{ \"a\" ~ \"b\" ~ ^\"c\" ~ ^\"d\" ~ \"e\"{2} }\nk = { \"a\" ~ \"b\" }\n\
             f1 = { \"a\" ~ \"b\" | \"a\" ~ \"c\" }\nf2 = @{ \"a\" ~ \"b\" | \"a\" }\n\
             f3 = { \"a\" | \"a\" ~ \"b\" }\nl = { (\"a\" ~ \",\")* ~ \"a\" }",
        ] {
            let (_, expected) = pest_meta::parse_and_optimize(grammar)
                .unwrap_or_else(|e| panic!("{grammar}: {e:?}"));
            let lowered = on_compile_stack(|| lower_text(grammar)).expect(grammar);
            assert_eq!(lowered, expected, "{grammar}");
        }
    }

    fn refused_rule(grammar: &str) -> String {
        match compile(grammar) {
            Err(e @ CompileError::Bound { .. }) => {
                let message = e.to_string();
                assert!(!message.contains('\n'), "one line: {message}");
                let CompileError::Bound { rule, .. } = e else {
                    unreachable!()
                };
                assert!(message.contains(&format!("rule `{rule}`")), "{message}");
                rule
            }
            other => panic!("refused with a bound, not {other:?}"),
        }
    }

    /// The grammars that kept pest_meta (or the compiler) busy for seconds to
    /// minutes compile, or are refused with the bound, naming the rule.
    #[test]
    fn pathological_grammars_compile_or_are_refused() {
        // pest's optimizer spent 74–163 s on this one (issue 34).
        let minimax = text(&["src/machine/slow_optimizer.pest"]);
        assert!(compile(&minimax).is_ok());
        // Nested bounded repetitions multiply: a million nodes.
        assert_eq!(
            refused_rule("top = { \"<\" }\nnest = { ((\"x\"{0,100}){0,100}){0,100} }"),
            "nest"
        );
        // One long repetition nests too deep.
        assert_eq!(refused_rule("long = { \"x\"{1,100000} }"), "long");
        // Each rule names the one before twice: pest's validator doubles its work
        // per rule.
        let doubling = |levels: usize, choice: bool| {
            let mut g = String::from("a0 = { \"x\" | \"y\" }\n");
            for i in 1..levels {
                let j = i - 1;
                if choice {
                    g += &format!("a{i} = {{ a{j} ~ \"z\" | a{j} ~ \"w\" }}\n");
                } else {
                    g += &format!("a{i} = {{ a{j} ~ a{j} }}\n");
                }
            }
            g
        };
        assert!(refused_rule(&doubling(40, true)).starts_with('a'));
        assert!(refused_rule(&doubling(40, false)).starts_with('a'));
        // Below the bound the same shapes compile, small rules inlined only while
        // their expansion stays small.
        assert!(compile(&doubling(10, true)).is_ok());
        let program = compile(&doubling(12, false)).expect("compiles");
        assert!(program.code.len() < 20_000, "{}", program.code.len());
        assert!(program.code.len() < MAX_INSTRUCTIONS);
    }

    /// The walk that counts the validator's work stops at the bound, and a grammar
    /// just under it passes.
    #[test]
    fn reference_paths_count_each_rule_expansion() {
        // a{i} names a{i-1} twice: 2^(i+1) - 1 expansions from a{i}.
        let grammar = |levels: usize| {
            let mut g = String::from("a0 = { \"x\" }\n");
            for i in 1..levels {
                g += &format!("a{i} = {{ a{} ~ a{} }}\n", i - 1, i - 1);
            }
            g
        };
        let count = |levels: usize| -> u64 { (0..levels as u32).map(|i| (2u64 << i) - 1).sum() };
        let passes = |levels: usize| {
            let text = grammar(levels);
            let pairs = pest_meta::parser::parse(Meta::grammar_rules, &text).expect("parses");
            reference_paths(pairs).is_ok()
        };
        let last_within = (1..40)
            .take_while(|&n| count(n) <= MAX_REFERENCE_PATHS)
            .last();
        let last_within = last_within.expect("a grammar within the bound");
        assert!(passes(last_within));
        assert!(!passes(last_within + 1));
    }
}

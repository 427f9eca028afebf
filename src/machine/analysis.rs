//! What the compiler knows about an expression before it emits code: the context a
//! rule runs in (atomicity, whether it is captured, whether pest skips whitespace in
//! it), and the analyses that drive the optimizations (the class of characters a
//! single-character expression matches, the bytes an expression can start with,
//! whether it can match nothing).
//!
//! What an analysis finds for a rule (and a context) is remembered for the rest of
//! the compile: without that, a grammar whose rules each name the one before twice
//! took time exponential in their number.

use std::cell::RefCell;
use std::collections::HashMap;

use pest_meta::ast::RuleType;
use pest_meta::optimizer::OptimizedExpr as Expr;

use super::charset::{ByteSet, Class};
#[cfg(test)]
use super::compile::Miscompile;
use super::compile::{Atomicity, Compiler, Ctx, BUILTIN_CLASSES};

/// The analyses' findings per rule, or per rule and context.
#[derive(Default)]
pub(super) struct Memo {
    nullable: RefCell<HashMap<usize, bool>>,
    class: RefCell<HashMap<(usize, Ctx), Option<Class>>>,
    first: RefCell<HashMap<(usize, Ctx), Option<ByteSet>>>,
    lead: RefCell<HashMap<(usize, Ctx), Option<ByteSet>>>,
    expanded: RefCell<HashMap<usize, usize>>,
}

/// What `table` holds for `key`, or what `compute` finds (then remembered).
fn remembered<K: std::hash::Hash + Eq + Copy, V: Clone>(
    table: &RefCell<HashMap<K, V>>,
    key: K,
    compute: impl FnOnce() -> V,
) -> V {
    if let Some(found) = table.borrow().get(&key) {
        return found.clone();
    }
    let found = compute();
    table.borrow_mut().insert(key, found.clone());
    found
}

impl Compiler<'_> {
    /// How many nodes rule `r` emits where it is inlined, with the small rules it
    /// references inlined in turn (a reference back into a rule being expanded
    /// counts one, as the call it compiles to).
    pub(super) fn expanded_size(&self, r: usize, expanding: &mut Vec<usize>) -> usize {
        if expanding.contains(&r) {
            return 1;
        }
        if let Some(&n) = self.memo.expanded.borrow().get(&r) {
            return n;
        }
        expanding.push(r);
        let n = self.expanded_expr(&self.rules[r].expr, expanding);
        expanding.pop();
        self.memo.expanded.borrow_mut().insert(r, n);
        n
    }

    fn expanded_expr(&self, expr: &Expr, expanding: &mut Vec<usize>) -> usize {
        match expr {
            Expr::PosPred(e)
            | Expr::NegPred(e)
            | Expr::Opt(e)
            | Expr::Rep(e)
            | Expr::RestoreOnErr(e)
            | Expr::Push(e) => 1usize.saturating_add(self.expanded_expr(e, expanding)),
            Expr::Seq(a, b) | Expr::Choice(a, b) => 1usize
                .saturating_add(self.expanded_expr(a, expanding))
                .saturating_add(self.expanded_expr(b, expanding)),
            Expr::Ident(name) => match self.index.get(name.as_str()) {
                Some(&t) if self.inline_candidate(t) => self.expanded_size(t, expanding),
                _ => 1,
            },
            _ => 1,
        }
    }

    /// Whether `expr` can succeed without consuming input.
    pub(super) fn nullable(&self, expr: &Expr, visiting: &mut Vec<usize>) -> bool {
        match expr {
            Expr::Str(s) | Expr::Insens(s) => s.is_empty(),
            Expr::Range(..) => false,
            Expr::Ident(name) => match self.index.get(name.as_str()) {
                Some(&r) => {
                    if visiting.contains(&r) {
                        return false;
                    }
                    remembered(&self.memo.nullable, r, || {
                        visiting.push(r);
                        let n = self.nullable(&self.rules[r].expr, visiting);
                        visiting.pop();
                        n
                    })
                }
                None => matches!(name.as_str(), "SOI" | "EOI"),
            },
            Expr::PosPred(_) | Expr::NegPred(_) | Expr::Opt(_) | Expr::Rep(_) | Expr::Skip(_) => {
                true
            }
            Expr::Seq(a, b) => self.nullable(a, visiting) && self.nullable(b, visiting),
            Expr::Choice(a, b) => self.nullable(a, visiting) || self.nullable(b, visiting),
            Expr::RestoreOnErr(e) => self.nullable(e, visiting),
            _ => true,
        }
    }

    // ---- contexts ---------------------------------------------------------------

    /// Whether a call of rule `r` in `ctx` produces a pair (pest's `state.rule`).
    pub(super) fn captured(&self, r: usize, ctx: Ctx) -> bool {
        let rule = &self.rules[r];
        self.wanted(r)
            && ctx.capture
            && match rule.ty {
                RuleType::Silent => false,
                RuleType::Normal | RuleType::Atomic => ctx.atomicity != Atomicity::Atomic,
                RuleType::CompoundAtomic | RuleType::NonAtomic => true,
            }
    }

    /// Whether rule `r` (or `EOI`, past the rules) is captured at all.
    pub(super) fn wanted(&self, r: usize) -> bool {
        self.capture_filter.as_ref().is_none_or(|f| f[r])
    }

    /// The context the body of rule `r` runs in, and whether pest generated it with
    /// skips (non-atomic generation).
    pub(super) fn body_ctx(&self, r: usize, ctx: Ctx) -> (Ctx, bool) {
        let rule = &self.rules[r];
        let special = rule.name == "WHITESPACE" || rule.name == "COMMENT";
        let (atomicity, skips) = match rule.ty {
            RuleType::Atomic => (Atomicity::Atomic, false),
            RuleType::CompoundAtomic => (Atomicity::CompoundAtomic, false),
            _ if special => (Atomicity::Atomic, false),
            RuleType::NonAtomic => (Atomicity::NonAtomic, true),
            _ => (ctx.atomicity, true),
        };
        (
            Ctx {
                atomicity,
                capture: ctx.capture,
            },
            skips,
        )
    }

    /// Whether the implicit skip runs between parts here.
    pub(super) fn skip_active(&self, ctx: Ctx, skips: bool) -> bool {
        skips && ctx.atomicity == Atomicity::NonAtomic && (self.has_whitespace || self.has_comment)
    }

    // ---- analysis ----------------------------------------------------------------

    /// The class of characters `expr` matches when it always consumes exactly one
    /// character and produces no pair in `ctx`.
    pub(super) fn class_of(
        &self,
        expr: &Expr,
        ctx: Ctx,
        skips: bool,
        visiting: &mut Vec<usize>,
    ) -> Option<Class> {
        match expr {
            Expr::Str(s) | Expr::Insens(s) => {
                let mut chars = s.chars();
                let c = chars.next()?;
                if chars.next().is_some() {
                    return None;
                }
                let mut class = Class::range(c, c);
                if matches!(expr, Expr::Insens(_)) && c.is_ascii_alphabetic() {
                    let (l, u) = (c.to_ascii_lowercase(), c.to_ascii_uppercase());
                    class = Class::range(l, l).union(&Class::range(u, u));
                }
                Some(class)
            }
            Expr::Range(a, b) => {
                let (a, b) = (a.chars().next()?, b.chars().next()?);
                #[cfg(test)]
                if self.miscompile == Some(Miscompile::RangeEndExclusive) && a < b {
                    let b = char::from_u32(b as u32 - 1).unwrap_or(a);
                    return Some(Class::range(a, b));
                }
                Some(Class::range(a, b))
            }
            Expr::Ident(name) => {
                if let Some(&r) = self.index.get(name.as_str()) {
                    if self.captured(r, ctx) || visiting.contains(&r) {
                        return None;
                    }
                    return remembered(&self.memo.class, (r, ctx), || {
                        let (body, body_skips) = self.body_ctx(r, ctx);
                        visiting.push(r);
                        let class = self.class_of(&self.rules[r].expr, body, body_skips, visiting);
                        visiting.pop();
                        class
                    });
                }
                if name == "ANY" {
                    return Some(Class::full());
                }
                let (_, ranges) = BUILTIN_CLASSES.iter().find(|(n, _)| *n == name.as_str())?;
                Some(ranges.iter().fold(Class::default(), |acc, &(a, b)| {
                    acc.union(&Class::range(a, b))
                }))
            }
            Expr::Choice(a, b) => {
                let a = self.class_of(a, ctx, skips, visiting)?;
                let b = self.class_of(b, ctx, skips, visiting)?;
                Some(a.union(&b))
            }
            Expr::Seq(a, b) if !self.skip_active(ctx, skips) => {
                let Expr::NegPred(refused) = &**a else {
                    return None;
                };
                let quiet = Ctx {
                    capture: false,
                    ..ctx
                };
                let refused = self.class_of(refused, quiet, skips, visiting)?;
                let b = self.class_of(b, ctx, skips, visiting)?;
                Some(b.minus(&refused))
            }
            Expr::RestoreOnErr(e) => self.class_of(e, ctx, skips, visiting),
            _ => None,
        }
    }

    /// Bytes one of which must come next for `expr` to succeed, if such a set is
    /// known (`None`: `expr` may succeed without consuming, or it is not known).
    pub(super) fn first(
        &self,
        expr: &Expr,
        ctx: Ctx,
        skips: bool,
        visiting: &mut Vec<usize>,
    ) -> Option<ByteSet> {
        if let Some(class) = self.class_of(expr, ctx, skips, &mut Vec::new()) {
            return Some(class.lead_bytes());
        }
        match expr {
            Expr::Str(s) | Expr::Insens(s) => {
                let b = *s.as_bytes().first()?;
                let mut set = ByteSet::EMPTY;
                set.insert(b);
                if matches!(expr, Expr::Insens(_)) {
                    set.insert(b.to_ascii_lowercase());
                    set.insert(b.to_ascii_uppercase());
                }
                Some(set)
            }
            Expr::Ident(name) => {
                let &r = self.index.get(name.as_str())?;
                if visiting.contains(&r) {
                    return None;
                }
                remembered(&self.memo.first, (r, ctx), || {
                    let (body, body_skips) = self.body_ctx(r, ctx);
                    visiting.push(r);
                    let set = self.first(&self.rules[r].expr, body, body_skips, visiting);
                    visiting.pop();
                    set
                })
            }
            Expr::Seq(a, b) => match &**a {
                // A predicate consumes nothing: the bytes after it decide.
                Expr::PosPred(_) | Expr::NegPred(_) => self.first(b, ctx, skips, visiting),
                Expr::Ident(n) if n == "SOI" || n == "EOI" => self.first(b, ctx, skips, visiting),
                _ => {
                    if !self.nullable(a, &mut Vec::new()) {
                        self.first(a, ctx, skips, visiting)
                    } else if self.skip_active(ctx, skips) {
                        // The implicit skip between `a` and `b` could start it too.
                        None
                    } else {
                        // `a` either consumes (a byte of its lead set first) or
                        // matches nothing and leaves the next byte to `b`.
                        let lead = self.lead(a, ctx, skips, &mut Vec::new())?;
                        let b = self.first(b, ctx, skips, visiting)?;
                        Some(lead.union(&b))
                    }
                }
            },
            Expr::Choice(a, b) => {
                let a = self.first(a, ctx, skips, visiting)?;
                let b = self.first(b, ctx, skips, visiting)?;
                Some(a.union(&b))
            }
            Expr::RestoreOnErr(e) => self.first(e, ctx, skips, visiting),
            _ => None,
        }
    }

    /// Bytes every match of `expr` that consumes input starts with, whether or not
    /// `expr` can also match nothing (`None`: not known). Unlike [`Self::first`], it
    /// says nothing about the empty match; a predicate gives `None`, since it looks
    /// at bytes without consuming them.
    pub(super) fn lead(
        &self,
        expr: &Expr,
        ctx: Ctx,
        skips: bool,
        visiting: &mut Vec<usize>,
    ) -> Option<ByteSet> {
        if let Some(class) = self.class_of(expr, ctx, skips, &mut Vec::new()) {
            return Some(class.lead_bytes());
        }
        match expr {
            Expr::Str(_) | Expr::Insens(_) => Some(
                self.first(expr, ctx, skips, visiting)
                    .unwrap_or(ByteSet::EMPTY),
            ),
            Expr::Ident(name) => match self.index.get(name.as_str()) {
                Some(&r) => {
                    if visiting.contains(&r) {
                        return None;
                    }
                    remembered(&self.memo.lead, (r, ctx), || {
                        let (body, body_skips) = self.body_ctx(r, ctx);
                        visiting.push(r);
                        let set = self.lead(&self.rules[r].expr, body, body_skips, visiting);
                        visiting.pop();
                        set
                    })
                }
                None => match name.as_str() {
                    "NEWLINE" => {
                        let mut set = ByteSet::EMPTY;
                        set.insert(b'\n');
                        set.insert(b'\r');
                        Some(set)
                    }
                    _ => None,
                },
            },
            Expr::Seq(a, b) => {
                let lead = self.lead(a, ctx, skips, visiting)?;
                if !self.nullable(a, &mut Vec::new()) {
                    return Some(lead);
                }
                if self.skip_active(ctx, skips) {
                    return None;
                }
                Some(lead.union(&self.lead(b, ctx, skips, visiting)?))
            }
            Expr::Choice(a, b) => {
                let a = self.lead(a, ctx, skips, visiting)?;
                Some(a.union(&self.lead(b, ctx, skips, visiting)?))
            }
            // A repetition's first round comes first (skips run only between rounds).
            Expr::Opt(e) | Expr::Rep(e) | Expr::RestoreOnErr(e) => {
                self.lead(e, ctx, skips, visiting)
            }
            _ => None,
        }
    }
}

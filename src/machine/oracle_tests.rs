//! The oracle: the `pest_derive` parser of each grammar against the parsing machine
//! running the same grammar, on every rule, on random and grammar-built inputs fed
//! to the machine in random chunks. Matched or rejected, the end of the match and
//! every capture span must be equal.

use std::collections::HashMap;

use pest_meta::optimizer::OptimizedExpr as Expr;
use proptest::prelude::*;

use super::compile::{compile_capturing, compile_full, compile_with, Miscompile};
use super::*;

/// What pest made of one input from one rule: the pairs in order, and where the
/// top-level pair ends (for a rule that produces one).
type Parsed = Option<(Vec<(String, usize, usize)>, Option<usize>)>;

/// A pest_derive parser, driven by rule name.
trait Oracle {
    fn parse(rule: &str, input: &str) -> Parsed;
}

macro_rules! oracle {
    ($module:ident, $($grammar:literal),+) => {
        mod $module {
            #![allow(missing_docs)]
            use pest::Parser as _;
            #[derive(pest_derive::Parser)]
            $(#[grammar = $grammar])+
            pub struct Grammar;

            pub struct Oracle;
            impl super::Oracle for Oracle {
                fn parse(rule: &str, input: &str) -> super::Parsed {
                    let rule = *Rule::all_rules().iter().find(|r| format!("{r:?}") == rule)?;
                    let pairs = Grammar::parse(rule, input).ok()?;
                    let top_end = pairs.clone().next().filter(|p| p.as_rule() == rule).map(|p| p.as_span().end());
                    let flat = pairs
                        .flatten()
                        .map(|p| (format!("{:?}", p.as_rule()), p.as_span().start(), p.as_span().end()))
                        .collect();
                    Some((flat, top_end))
                }
            }
        }
    };
}

oracle!(
    anthropic_xml_oracle,
    "grammar/anthropic-xml.pest",
    "grammar/common.pest"
);
oracle!(
    sections_oracle,
    "grammar/sections.pest",
    "grammar/common.pest"
);
oracle!(kindaxml_oracle, "grammar/kindaxml.pest");
oracle!(plurnk_oracle, "grammar/plurnk.pest");
oracle!(transcript_oracle, "grammar/transcript.pest");
oracle!(
    deepseek_oracle,
    "grammar/deepseek.pest",
    "grammar/field-json.pest",
    "grammar/reasoning.pest"
);
oracle!(
    harmony_oracle,
    "grammar/harmony.pest",
    "grammar/field-json.pest",
    "grammar/reasoning.pest"
);
oracle!(
    mistral_oracle,
    "grammar/mistral.pest",
    "grammar/field-json.pest",
    "grammar/reasoning.pest"
);
oracle!(
    json_call_object_oracle,
    "grammar/json-call-object.pest",
    "grammar/field-json.pest"
);
oracle!(
    hermes_oracle,
    "grammar/hermes.pest",
    "grammar/reasoning.pest"
);
oracle!(
    llama3_json_oracle,
    "grammar/llama3-json.pest",
    "grammar/python-call.pest",
    "grammar/reasoning.pest"
);
oracle!(
    pythonic_oracle,
    "grammar/pythonic.pest",
    "grammar/python-call.pest",
    "grammar/reasoning.pest"
);
oracle!(glm_oracle, "grammar/glm.pest", "grammar/reasoning.pest");
oracle!(
    minimax_m2_oracle,
    "grammar/minimax-m2.pest",
    "grammar/reasoning.pest"
);
oracle!(
    kimi_k2_oracle,
    "grammar/kimi-k2.pest",
    "grammar/field-json.pest",
    "grammar/reasoning.pest"
);
oracle!(
    qwen3_coder_oracle,
    "grammar/qwen3-coder.pest",
    "grammar/reasoning.pest"
);

oracle!(wide_oracle, "src/machine/oracle_wide.pest");

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Builds inputs by walking the grammar, with mistakes thrown in.
struct Builder {
    rules: HashMap<String, Expr>,
    names: Vec<String>,
    /// Characters from the grammar's literals and ranges, plus a few others.
    alphabet: Vec<char>,
}

impl Builder {
    fn new(grammar: &str) -> Builder {
        let rules = super::compile::on_compile_stack(|| super::lower::lower_text(grammar))
            .expect("grammar");
        let mut alphabet: Vec<char> = " \n\ta<>/\"'=é€😀\u{0}".chars().collect();
        for rule in &rules {
            for e in rule.expr.iter_top_down() {
                match e {
                    Expr::Str(s) | Expr::Insens(s) => alphabet.extend(s.chars()),
                    Expr::Range(a, b) => alphabet.extend(a.chars().chain(b.chars())),
                    Expr::Skip(strings) => alphabet.extend(strings.iter().flat_map(|s| s.chars())),
                    _ => {}
                }
            }
        }
        alphabet.sort_unstable();
        alphabet.dedup();
        Builder {
            names: rules.iter().map(|r| r.name.clone()).collect(),
            rules: rules.into_iter().map(|r| (r.name, r.expr)).collect(),
            alphabet,
        }
    }

    fn any_char(&self, rng: &mut Rng) -> char {
        self.alphabet[rng.below(self.alphabet.len())]
    }

    fn build(&self, expr: &Expr, rng: &mut Rng, depth: usize, out: &mut String) {
        if out.len() > 200 {
            return;
        }
        match expr {
            Expr::Str(s) => {
                out.push_str(s);
                if rng.chance(3) {
                    out.pop();
                }
            }
            Expr::Insens(s) => out.extend(s.chars().map(|c| {
                if rng.chance(50) {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })),
            Expr::Range(a, b) => {
                let (a, b) = (
                    a.chars().next().unwrap() as u32,
                    b.chars().next().unwrap() as u32,
                );
                let pick = match rng.below(4) {
                    0 => a,
                    1 => b,
                    _ => a + (rng.next() % (u64::from(b.saturating_sub(a)) + 1)) as u32,
                };
                out.push(char::from_u32(pick).unwrap_or('x'));
            }
            Expr::Ident(name) => match name.as_str() {
                "ANY" => out.push(self.any_char(rng)),
                "SOI" | "EOI" => {}
                "NEWLINE" => out.push_str(["\n", "\r\n", "\r"][rng.below(3)]),
                "ASCII_DIGIT" => out.push((b'0' + rng.below(10) as u8) as char),
                "ASCII_ALPHA" | "ASCII_ALPHANUMERIC" => {
                    out.push((b'a' + rng.below(26) as u8) as char)
                }
                other => match self.rules.get(other) {
                    Some(body) if depth < 12 => self.build(body, rng, depth + 1, out),
                    Some(_) => {}
                    None => out.push(self.any_char(rng)),
                },
            },
            Expr::PosPred(e) if rng.chance(30) => self.build(e, rng, depth + 1, out),
            Expr::NegPred(e) if rng.chance(15) => self.build(e, rng, depth + 1, out),
            Expr::Seq(a, b) => {
                self.build(a, rng, depth, out);
                if rng.chance(2) {
                    out.push(' ');
                }
                self.build(b, rng, depth, out);
            }
            Expr::Choice(..) => {
                let mut alts = Vec::new();
                let mut rest = expr;
                while let Expr::Choice(a, b) = rest {
                    alts.push(&**a);
                    rest = b;
                }
                alts.push(rest);
                let pick = alts[rng.below(alts.len())];
                self.build(pick, rng, depth, out);
            }
            Expr::Opt(e) if rng.chance(50) => self.build(e, rng, depth, out),
            Expr::Rep(e) => {
                for _ in 0..rng.below(4) {
                    self.build(e, rng, depth + 1, out);
                }
            }
            Expr::Skip(strings) => {
                for _ in 0..rng.below(5) {
                    out.push(self.any_char(rng));
                }
                if rng.chance(70) && !strings.is_empty() {
                    out.push_str(&strings[rng.below(strings.len())]);
                }
            }
            Expr::RestoreOnErr(e) => self.build(e, rng, depth, out),
            _ => {}
        }
    }

    /// One input: built from a random rule (or random characters), then perhaps
    /// damaged.
    fn input(&self, rng: &mut Rng) -> String {
        let rule = &self.names[rng.below(self.names.len())];
        self.input_from(rule, rng)
    }

    /// One input: built from `rule` (or random characters), then perhaps damaged.
    fn input_from(&self, rule: &str, rng: &mut Rng) -> String {
        let mut out = String::new();
        if rng.chance(15) {
            for _ in 0..rng.below(16) {
                out.push(self.any_char(rng));
            }
            return out;
        }
        self.build(&self.rules[rule], rng, 0, &mut out);
        if rng.chance(40) {
            let mut chars: Vec<char> = out.chars().collect();
            for _ in 0..1 + rng.below(2) {
                let at = rng.below(chars.len() + 1);
                match rng.below(3) {
                    0 if at < chars.len() => {
                        chars.remove(at);
                    }
                    1 => chars.insert(at, self.any_char(rng)),
                    _ => chars.truncate(at),
                }
            }
            out = chars.into_iter().collect();
        }
        out
    }
}

/// Runs `rule` on `input` fed in the chunks `cuts` makes, then finished.
fn run_machine(
    machine: &mut ParsingMachine<'_>,
    rule: RuleId,
    input: &[u8],
    cuts: &[usize],
) -> (Outcome, Vec<(String, usize, usize)>) {
    machine.start(rule);
    for &cut in cuts {
        let outcome = machine.resume(&input[..cut]);
        if outcome != Outcome::NeedMore {
            break;
        }
    }
    let outcome = machine.finish(input);
    let program = machine.program();
    let caps = match outcome {
        Outcome::Matched { .. } => machine
            .captures()
            .iter()
            .map(|c| (program.name(c.rule).to_string(), c.start, c.end))
            .collect(),
        _ => Vec::new(),
    };
    (outcome, caps)
}

/// Compares the machine with the oracle on one input for every rule; the first
/// disagreement, described.
fn disagreement<O: Oracle>(program: &Program, input: &str, rng: &mut Rng) -> Option<String> {
    disagreement_capturing::<O>(program, None, input, rng)
}

/// [`disagreement`] for a program that captures only the rules in `only`.
fn disagreement_capturing<O: Oracle>(
    program: &Program,
    only: Option<&[String]>,
    input: &str,
    rng: &mut Rng,
) -> Option<String> {
    let mut machine = ParsingMachine::new(program);
    let bytes = input.as_bytes();
    for (i, name) in program.rule_names().iter().enumerate() {
        if name == "EOI" {
            continue;
        }
        let mut cuts: Vec<usize> = (0..rng.below(4))
            .map(|_| rng.below(bytes.len() + 1))
            .collect();
        if rng.chance(10) {
            cuts = (0..=bytes.len()).collect();
        }
        cuts.sort_unstable();
        let (outcome, caps) = run_machine(&mut machine, RuleId(i as u16), bytes, &cuts);
        let mut pest = O::parse(name, input);
        if let (Some(only), Some((pairs, _))) = (only, pest.as_mut()) {
            pairs.retain(|(rule, _, _)| only.contains(rule));
        }
        if std::env::var("ORACLE_STATS").is_ok() {
            eprintln!("STAT {name} {}", matches!(outcome, Outcome::Matched { .. }));
        }
        let agree = match (&outcome, &pest) {
            (Outcome::Matched { end }, Some((pairs, top_end))) => {
                &caps == pairs && top_end.is_none_or(|t| t == *end)
            }
            (Outcome::Rejected { .. }, None) => true,
            _ => false,
        };
        if !agree {
            return Some(format!(
                "rule `{name}` on {input:?} (cuts {cuts:?}): machine {outcome:?} {caps:?}, pest {pest:?}"
            ));
        }
    }
    None
}

fn check_grammar<O: Oracle>(grammar: &str, seed: u64) -> Result<(), TestCaseError> {
    thread_local! {
        static CACHE: std::cell::RefCell<HashMap<String, (&'static Program, &'static Builder)>> =
            std::cell::RefCell::new(HashMap::new());
    }
    let (program, builder) = CACHE.with(|cache| {
        *cache
            .borrow_mut()
            .entry(grammar.to_string())
            .or_insert_with(|| {
                let program: &'static Program =
                    Box::leak(Box::new(compile(grammar).expect("compiles")));
                let builder: &'static Builder = Box::leak(Box::new(Builder::new(grammar)));
                (program, builder)
            })
    });
    let mut rng = Rng(seed | 1);
    let input = builder.input(&mut rng);
    if let Some(problem) = disagreement::<O>(program, &input, &mut rng) {
        return Err(TestCaseError::fail(problem));
    }
    Ok(())
}

/// The rules kindaxml's state machine starts the machine with (src/kindaxml/candidate.rs).
const KINDAXML_ENTRY_RULES: [&str; 5] = [
    "head",
    "head_or_cdata",
    "start_rest",
    "end_rest",
    "unknown_end_rest",
];

/// One input built from one of kindaxml's entry rules (so that most inputs are tags
/// or near-misses of one), checked on every rule of the program the dialect runs,
/// which captures only the rules its state machine reads.
fn check_kindaxml_entry_rules(seed: u64) -> Result<(), TestCaseError> {
    thread_local! {
        static BUILDER: Builder = Builder::new(&grammar_text(&["grammar/kindaxml.pest"]));
    }
    let mut rng = Rng(seed | 1);
    let rule = KINDAXML_ENTRY_RULES[rng.below(KINDAXML_ENTRY_RULES.len())];
    let input = BUILDER.with(|builder| builder.input_from(rule, &mut rng));
    let captured: Vec<String> = crate::kindaxml::grammar::CAPTURED
        .iter()
        .map(|r| r.to_string())
        .collect();
    let program = crate::kindaxml::grammar::program();
    match disagreement_capturing::<kindaxml_oracle::Oracle>(
        program,
        Some(&captured),
        &input,
        &mut rng,
    ) {
        Some(problem) => Err(TestCaseError::fail(problem)),
        None => Ok(()),
    }
}

fn grammar_text(files: &[&str]) -> String {
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(format!("{}/{f}", env!("CARGO_MANIFEST_DIR")))
                .expect("grammar file")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Cases per grammar: every case runs every rule of the grammar, so each rule is
/// checked on this many inputs.
const CASES: u32 = 10_000;

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn anthropic_xml_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<anthropic_xml_oracle::Oracle>(&grammar_text(&["grammar/anthropic-xml.pest", "grammar/common.pest"]), seed)?;
    }

    #[test]
    fn sections_and_common_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<sections_oracle::Oracle>(&grammar_text(&["grammar/sections.pest", "grammar/common.pest"]), seed)?;
    }

    #[test]
    fn kindaxml_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<kindaxml_oracle::Oracle>(&grammar_text(&["grammar/kindaxml.pest"]), seed)?;
    }

    /// Every entry rule is checked on every case (`CASES` inputs each), in random
    /// chunks, with the captures the dialect reads.
    #[test]
    fn kindaxml_entry_rules_on_the_dialects_program_agree_with_pest(seed in any::<u64>()) {
        check_kindaxml_entry_rules(seed)?;
    }

    #[test]
    fn plurnk_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<plurnk_oracle::Oracle>(&grammar_text(&["grammar/plurnk.pest"]), seed)?;
    }

    #[test]
    fn transcript_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<transcript_oracle::Oracle>(&grammar_text(&["grammar/transcript.pest"]), seed)?;
    }

    #[test]
    fn deepseek_and_field_json_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<deepseek_oracle::Oracle>(&grammar_text(&["grammar/deepseek.pest", "grammar/field-json.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn harmony_and_field_json_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<harmony_oracle::Oracle>(&grammar_text(&["grammar/harmony.pest", "grammar/field-json.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn mistral_and_field_json_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<mistral_oracle::Oracle>(&grammar_text(&["grammar/mistral.pest", "grammar/field-json.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn json_call_object_and_field_json_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<json_call_object_oracle::Oracle>(&grammar_text(&["grammar/json-call-object.pest", "grammar/field-json.pest"]), seed)?;
    }

    #[test]
    fn llama3_json_python_call_and_reasoning_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<llama3_json_oracle::Oracle>(&grammar_text(&["grammar/llama3-json.pest", "grammar/python-call.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn pythonic_python_call_and_reasoning_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<pythonic_oracle::Oracle>(&grammar_text(&["grammar/pythonic.pest", "grammar/python-call.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn kimi_k2_and_field_json_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<kimi_k2_oracle::Oracle>(&grammar_text(&["grammar/kimi-k2.pest", "grammar/field-json.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn minimax_m2_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<minimax_m2_oracle::Oracle>(&grammar_text(&["grammar/minimax-m2.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn glm_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<glm_oracle::Oracle>(&grammar_text(&["grammar/glm.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn hermes_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<hermes_oracle::Oracle>(&grammar_text(&["grammar/hermes.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn qwen3_coder_rules_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<qwen3_coder_oracle::Oracle>(&grammar_text(&["grammar/qwen3-coder.pest", "grammar/reasoning.pest"]), seed)?;
    }

    #[test]
    fn whitespace_comments_and_every_rule_type_agree_with_pest(seed in any::<u64>()) {
        check_grammar::<wide_oracle::Oracle>(&grammar_text(&["src/machine/oracle_wide.pest"]), seed)?;
    }
}

#[test]
fn a_deliberate_miscompilation_is_caught() {
    let grammar = grammar_text(&["grammar/sections.pest", "grammar/common.pest"]);
    let broken =
        compile_with(&grammar, None, Some(Miscompile::RangeEndExclusive)).expect("compiles");
    let builder = Builder::new(&grammar);
    let mut rng = Rng(0x5EED);
    let caught = (0..5_000).find_map(|_| {
        let input = builder.input(&mut rng);
        disagreement::<sections_oracle::Oracle>(&broken, &input, &mut rng)
    });
    assert!(
        caught.is_some(),
        "the oracle did not notice ranges losing their last character"
    );
    // The same search on the correct program finds nothing.
    let program = compile(&grammar).expect("compiles");
    let mut rng = Rng(0x5EED);
    for _ in 0..5_000 {
        let input = builder.input(&mut rng);
        assert_eq!(
            disagreement::<sections_oracle::Oracle>(&program, &input, &mut rng),
            None
        );
    }
}

/// The jump past a run of optionals (pest's unrolled `e{n,m}`) is checked by the
/// oracle: a run that jumps one instruction too far (past the `Close` of
/// `tool_name{1,256}` or `arg_key{1,256}`) is caught on glm's rules.
#[test]
fn a_miscompiled_optional_run_is_caught() {
    let grammar = grammar_text(&["grammar/glm.pest", "grammar/reasoning.pest"]);
    let broken =
        compile_with(&grammar, None, Some(Miscompile::OptionalRunPastEnd)).expect("compiles");
    let builder = Builder::new(&grammar);
    let mut rng = Rng(0x0971);
    let caught = (0..5_000).find_map(|_| {
        let input = builder.input(&mut rng);
        disagreement::<glm_oracle::Oracle>(&broken, &input, &mut rng)
    });
    assert!(
        caught.is_some(),
        "the oracle did not notice a run of optionals jumping past its end"
    );
}

#[test]
fn unsupported_constructs_are_refused_naming_the_rule() {
    let cases = [
        ("a = { \"x\" }\nb = { PUSH(a) ~ POP }", "b", "PUSH"),
        ("a = { \"x\" }\nb = { a ~ PEEK[..] }", "b", "PEEK"),
        ("letter = { LETTER }", "letter", "LETTER"),
        ("a = { \"x\" ~ DROP }", "a", "DROP"),
    ];
    for (grammar, rule, construct) in cases {
        match compile(grammar) {
            Err(CompileError::Unsupported {
                rule: r,
                construct: c,
            }) => {
                assert_eq!(r, rule, "{grammar}");
                assert!(c.contains(construct), "{grammar}: {c}");
            }
            other => panic!("{grammar}: {other:?}"),
        }
    }
    assert!(matches!(compile("a = { "), Err(CompileError::Pest(_))));
}

#[test]
fn deep_recursion_is_refused_not_overflowed() {
    let program = compile("nested = { \"(\" ~ nested? ~ \")\" }").expect("compiles");
    let mut machine = ParsingMachine::new(&program);
    machine.set_depth_limit(64);
    let rule = program.rule("nested").expect("rule");
    let deep = format!("{}{}", "(".repeat(100), ")".repeat(100));
    machine.start(rule);
    assert!(matches!(
        machine.finish(deep.as_bytes()),
        Outcome::TooDeep { .. }
    ));
    machine.start(rule);
    assert_eq!(machine.finish(b"((()))"), Outcome::Matched { end: 6 });
}

/// A recursive grammar whose rule `v` nests; `bound` levels of it written out
/// instead (`v`, `v_2`, ..., the last with no nested `v`) when `unrolled`.
fn nesting_grammar(bound: usize, unrolled: bool) -> String {
    let level = |name: &str, inner: Option<&str>| match inner {
        Some(inner) => format!("{name} = {{ \"(\" ~ (s | {inner} | \"x\")* ~ \")\" }}\n"),
        None => format!("{name} = {{ \"(\" ~ (s | \"x\")* ~ \")\" }}\n"),
    };
    let mut text = String::from(
        "top = { v ~ (\",\" ~ v)* }\n\
         w = { v ~ \"!\" | \"(\" ~ ANY* }\n\
         s = @{ \"'\" ~ (!\"'\" ~ ANY)* ~ \"'\" }\n",
    );
    if !unrolled {
        text.push_str(&level("v", Some("v")));
        return text;
    }
    let name = |k: usize| {
        if k == 1 {
            "v".to_string()
        } else {
            format!("v_{k}")
        }
    };
    for k in 1..=bound {
        let inner = (k < bound).then(|| name(k + 1));
        text.push_str(&level(&name(k), inner.as_deref()));
    }
    text
}

/// The first input on which the recursive grammar compiled with a nesting bound on
/// `v` and the same grammar written out that many levels deep disagree (outcome or
/// captures, the written-out levels' captures named `v`), fed in random chunks.
fn bound_disagreement(bound: usize, miscompile: Option<Miscompile>) -> Option<String> {
    let bounded = compile_full(
        &nesting_grammar(bound, false),
        None,
        &[("v", bound as u32)],
        miscompile,
    )
    .expect("compiles");
    let unrolled = compile(&nesting_grammar(bound, true)).expect("compiles");
    let mut rng = Rng(0xB0B0 + bound as u64);
    let mut a = ParsingMachine::new(&bounded);
    let mut b = ParsingMachine::new(&unrolled);
    let pieces = ["(", ")", "x", "'", ",", "!", "((", "))"];
    for case in 0..3_000 {
        let input = if case % 10 == 0 {
            // Exactly at, below and above the bound.
            let depth = bound + 1 - rng.below(3).min(bound);
            format!("{}{}", "(".repeat(depth), ")".repeat(depth))
        } else {
            (0..rng.below(16))
                .map(|_| pieces[rng.below(pieces.len())])
                .collect()
        };
        let bytes = input.as_bytes();
        let mut cuts: Vec<usize> = (0..rng.below(4))
            .map(|_| rng.below(bytes.len() + 1))
            .collect();
        cuts.sort_unstable();
        for rule in ["top", "w", "v"] {
            let (ra, rb) = (
                bounded.rule(rule).expect("rule"),
                unrolled.rule(rule).expect("rule"),
            );
            let (oa, ca) = run_machine(&mut a, ra, bytes, &cuts);
            let (ob, mut cb) = run_machine(&mut b, rb, bytes, &cuts);
            for (name, _, _) in &mut cb {
                if name.starts_with("v_") {
                    *name = "v".to_string();
                }
            }
            if (oa, &ca) != (ob, &cb) {
                return Some(format!(
                    "bound {bound}, rule `{rule}` on {input:?} (cuts {cuts:?}): bounded {oa:?} {ca:?}, written out {ob:?} {cb:?}"
                ));
            }
        }
    }
    None
}

#[test]
fn a_nesting_bound_is_the_recursion_written_out() {
    for bound in 1..=4 {
        if let Some(problem) = bound_disagreement(bound, None) {
            panic!("{problem}");
        }
    }
    // The check notices a bound that lets one level too many through.
    assert!(bound_disagreement(2, Some(Miscompile::BoundOneTooMany)).is_some());
    // Bounds name rules of the grammar and are at least 1.
    for nesting in [&[("nope", 3)][..], &[("v", 0)], &[("v", 2), ("v", 3)]] {
        assert!(matches!(
            compile_bounded(&nesting_grammar(1, false), None, nesting),
            Err(CompileError::Unsupported { .. })
        ));
    }
}

#[test]
fn need_more_keeps_the_state_and_decides_on_the_deciding_byte() {
    let program = compile(&grammar_text(&[
        "grammar/anthropic-xml.pest",
        "grammar/common.pest",
    ]))
    .expect("compiles");
    let mut machine = ParsingMachine::new(&program);
    let rule = program.rule("closer").expect("rule");
    machine.start(rule);
    let text = b"</thinking >tail";
    for end in 0..12 {
        assert_eq!(machine.resume(&text[..end]), Outcome::NeedMore, "{end}");
    }
    assert_eq!(machine.resume(&text[..12]), Outcome::Matched { end: 12 });
    machine.start(rule);
    assert_eq!(machine.resume(b"</thinkin"), Outcome::NeedMore);
    assert!(matches!(
        machine.resume(b"</thinkinx"),
        Outcome::Rejected { furthest: 9 }
    ));
}

#[test]
fn every_grammar_of_the_crate_compiles() {
    // The lowering's list of shipped grammars, and the minimax-m2 one it leaves out.
    let minimax: &[&str] = &["grammar/minimax-m2.pest", "grammar/reasoning.pest"];
    for files in super::lower::tests::SHIPPED
        .iter()
        .copied()
        .chain([minimax])
    {
        let program = compile(&grammar_text(files)).unwrap_or_else(|e| panic!("{files:?}: {e}"));
        assert!(!program.is_empty());
    }
    assert!(crate::anthropic_xml::grammar::program()
        .rule("opener")
        .is_some());
    assert!(matches!(
        compile_capturing("a = { \"x\" }", &["b"]),
        Err(CompileError::Unsupported { .. })
    ));
    assert!(crate::sections::grammar::program()
        .rule("opener_rest")
        .is_some());
    assert!(crate::field::grammars::hermes()
        .rule("text_marker")
        .is_some());
    assert!(crate::field::grammars::json_call_object()
        .rule("member_name")
        .is_some());
}

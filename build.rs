//! Optimizes the field families' grammars with pest_meta once, when the crate is
//! built, and writes the optimized rules as a flat list of steps
//! (`src/machine/prebuilt.rs`) to `$OUT_DIR/prebuilt_grammars.rs`, so that a process
//! does not run pest's optimizer again at first use (it takes up to most of a
//! second on grammars with bounded repetitions). src/field/grammars.rs compiles
//! each list; a test there checks that each equals what pest_meta gives for the
//! same text at run time.

use std::fmt::Write as _;
use std::path::Path;

use pest_meta::ast::RuleType;
use pest_meta::optimizer::OptimizedExpr;

/// Each grammar: its name in the output, and its files, joined by newlines in
/// this order (as src/field/grammars.rs joins their texts).
const GRAMMARS: &[(&str, &[&str])] = &[
    ("DEEPSEEK", &["deepseek", "field-json", "reasoning"]),
    ("HARMONY", &["harmony", "field-json", "reasoning"]),
    ("MISTRAL", &["mistral", "field-json", "reasoning"]),
    ("HERMES", &["hermes", "reasoning"]),
    ("QWEN3_CODER", &["qwen3-coder", "reasoning"]),
    (
        "LLAMA3_JSON",
        &["llama3-json", "python-call", "field-json", "reasoning"],
    ),
    (
        "PYTHONIC",
        &["pythonic", "python-call", "field-json", "reasoning"],
    ),
    ("REASONING", &["reasoning"]),
    ("KIMI_K2", &["kimi-k2", "field-json", "reasoning"]),
    ("MINIMAX_M2", &["minimax-m2", "reasoning"]),
    ("GLM", &["glm", "reasoning"]),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=grammar");
    let mut out = String::from("// Written by build.rs: pest_meta's optimized rules, postfix.\n");
    for (name, files) in GRAMMARS {
        let texts: Vec<String> = files
            .iter()
            .map(|file| {
                let path = format!("grammar/{file}.pest");
                println!("cargo:rerun-if-changed={path}");
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
            })
            .collect();
        let text = texts.join("\n");
        // A grammar that does not compile is left to the run-time compiler, whose
        // error names the problem (and a test of the crate fails on it).
        let Ok((_, rules)) = pest_meta::parse_and_optimize(&text) else {
            writeln!(out, "pub(crate) static {name}: Option<&[Op]> = None;").unwrap();
            continue;
        };
        write!(out, "pub(crate) static {name}: Option<&[Op]> = Some(&[").unwrap();
        for rule in &rules {
            expr(&rule.expr, &mut out);
            let ty = match rule.ty {
                RuleType::Normal => 0,
                RuleType::Silent => 1,
                RuleType::Atomic => 2,
                RuleType::CompoundAtomic => 3,
                RuleType::NonAtomic => 4,
            };
            write!(out, "Rule({:?},{ty}),", rule.name).unwrap();
        }
        out.push_str("]);\n");
    }
    let path = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("prebuilt_grammars.rs");
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Writes `e` in postfix order.
fn expr(e: &OptimizedExpr, out: &mut String) {
    match e {
        OptimizedExpr::Str(s) => write!(out, "Str({s:?}),"),
        OptimizedExpr::Insens(s) => write!(out, "Insens({s:?}),"),
        OptimizedExpr::Range(a, b) => write!(out, "Range({a:?},{b:?}),"),
        OptimizedExpr::Ident(s) => write!(out, "Ident({s:?}),"),
        OptimizedExpr::PeekSlice(a, b) => write!(out, "PeekSlice({a},{b:?}),"),
        OptimizedExpr::PosPred(e) => unary(e, "PosPred", out),
        OptimizedExpr::NegPred(e) => unary(e, "NegPred", out),
        OptimizedExpr::Seq(a, b) => binary(a, b, "Seq", out),
        OptimizedExpr::Choice(a, b) => binary(a, b, "Choice", out),
        OptimizedExpr::Opt(e) => unary(e, "Opt", out),
        OptimizedExpr::Rep(e) => unary(e, "Rep", out),
        OptimizedExpr::Skip(strings) => write!(out, "Skip(&{strings:?}),"),
        OptimizedExpr::Push(e) => unary(e, "Push", out),
        OptimizedExpr::RestoreOnErr(e) => unary(e, "RestoreOnErr", out),
    }
    .unwrap();
}

fn unary(e: &OptimizedExpr, op: &str, out: &mut String) -> std::fmt::Result {
    expr(e, out);
    write!(out, "{op},")
}

fn binary(a: &OptimizedExpr, b: &OptimizedExpr, op: &str, out: &mut String) -> std::fmt::Result {
    expr(a, out);
    expr(b, out);
    write!(out, "{op},")
}

//! How long compiling each grammar the crate ships takes at run time (the lowering
//! and the compiler, from the text; spec/custom-family.md CF-2 bounds it): the best
//! and the median of several compiles, in milliseconds.
//!
//! `cargo bench --bench grammar_compile [-- RUNS]` (default 21 runs per grammar).

use std::time::{Duration, Instant};

/// Each shipped grammar: a name, and its files, joined by newlines as the crate joins
/// them.
const GRAMMARS: &[(&str, &[&str])] = &[
    ("deepseek", &["deepseek", "field-json", "reasoning"]),
    ("harmony", &["harmony", "field-json", "reasoning"]),
    ("mistral", &["mistral", "field-json", "reasoning"]),
    ("hermes", &["hermes", "reasoning"]),
    ("qwen3-coder", &["qwen3-coder", "reasoning"]),
    (
        "llama3-json",
        &["llama3-json", "python-call", "field-json", "reasoning"],
    ),
    (
        "pythonic",
        &["pythonic", "python-call", "field-json", "reasoning"],
    ),
    ("reasoning", &["reasoning-dialect", "reasoning"]),
    ("kimi-k2", &["kimi-k2", "field-json", "reasoning"]),
    ("minimax-m2", &["minimax-m2", "reasoning"]),
    ("glm", &["glm", "reasoning"]),
    ("seed-oss", &["seed-oss"]),
    ("deepseek-dsml", &["deepseek-dsml", "reasoning"]),
    ("gigachat-gcml", &["gigachat-gcml", "reasoning"]),
    ("step3", &["step3", "reasoning"]),
    ("hunyuan", &["hunyuan"]),
    ("hunyuan-a13b", &["hunyuan-a13b", "field-json", "reasoning"]),
    ("granite", &["granite", "field-json", "reasoning"]),
    ("cohere", &["cohere", "field-json"]),
    ("internlm", &["internlm", "field-json", "reasoning"]),
    ("nemotron", &["nemotron", "field-json", "reasoning"]),
    ("apertus", &["apertus", "field-json"]),
    ("kimi-k3", &["kimi-k3"]),
    ("anthropic-xml", &["anthropic-xml", "common"]),
    ("sections", &["sections", "common"]),
    ("kindaxml", &["kindaxml"]),
    ("plurnk", &["plurnk"]),
    ("transcript", &["transcript"]),
];

fn read(path: &str) -> String {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn measure(name: &str, text: &str, runs: usize) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let program =
                idiolect::machine::compile(text).unwrap_or_else(|e| panic!("{name} compiles: {e}"));
            let elapsed = start.elapsed();
            assert!(!program.is_empty());
            elapsed
        })
        .collect();
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "| {name} | {:.2} | {:.2} |",
        ms(times[0]),
        ms(times[times.len() / 2])
    );
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(21);
    println!("| grammar | best ms | median ms |");
    println!("|---|---|---|");
    for (name, files) in GRAMMARS {
        let texts: Vec<String> = files
            .iter()
            .map(|f| read(&format!("grammar/{f}.pest")))
            .collect();
        measure(name, &texts.join("\n"), runs);
    }
    // The grammar that kept pest's optimizer busy for minutes (a test fixture).
    measure(
        "slow_optimizer (fixture)",
        &read("src/machine/slow_optimizer.pest"),
        runs,
    );
}

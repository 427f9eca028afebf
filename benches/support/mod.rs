//! Deterministic input generators and a small timing harness for the benchmarks.

pub mod anthropic_xml;
pub mod kindaxml;
pub mod plurnk;
pub mod sections;
pub mod transcript;

pub use anthropic_xml::*;
pub use kindaxml::*;
pub use plurnk::*;
pub use sections::*;
pub use transcript::*;

use std::time::{Duration, Instant};

/// xorshift64*: the same inputs on every machine and every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "model",
    "writes",
    "a",
    "plan",
    "then",
    "edits",
    "files",
    "and",
    "summarizes",
    "what",
    "changed",
    "because",
    "tests",
    "should",
    "pass",
    "before",
    "merge",
    "streaming",
    "parser",
    "output",
    "section",
    "review",
    "latency",
    "budget",
    "ship",
    "it",
    "carefully",
    "über",
    "naïve",
];

/// A sentence of prose ending in ". ".
pub fn sentence(rng: &mut Rng, out: &mut String) {
    let n = 6 + rng.below(12);
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(rng.pick(WORDS));
    }
    out.push_str(". ");
}

pub const CODE: &[&str] = &[
    "if (a < b) { return x; }\n",
    "const m: Map<string, Array<number>> = new Map();\n",
    "let y = x << 2 | z;\n",
    "return <>{items.map(i => <Item key={i.id} />)}</>;\n",
    "for (let i = 0; i <= n; i++) sum += v[i];\n",
    "// <!-- not a comment in TS -->\n",
    "type P = Promise<Result<T, E>>;\n",
];

/// Runs `f` repeatedly for at least `min` (and at least twice); returns the fastest run.
pub fn best_of(min: Duration, mut f: impl FnMut() -> usize) -> Duration {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut runs = 0;
    let mut sink = 0usize;
    while runs < 2 || start.elapsed() < min {
        let t = Instant::now();
        sink = sink.wrapping_add(f());
        best = best.min(t.elapsed());
        runs += 1;
    }
    std::hint::black_box(sink);
    best
}

/// MB/s (10^6 bytes per second).
pub fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

//! Deterministic input generators and a small timing harness for the benchmarks.

use std::time::{Duration, Instant};

mod anthropic_xml;
pub use anthropic_xml::*;
pub mod plurnk;

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

/// A mixed sections document of about `size` bytes: prose, think sections,
/// write-file sections dense with `<` in code, and self-closing tags.
pub fn sections_mixed(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    while out.len() < size {
        match rng.below(10) {
            0..=3 => {
                for _ in 0..3 {
                    sentence(&mut rng, &mut out);
                }
                out.push('\n');
            }
            4 | 5 => {
                out.push_str("<think>");
                sentence(&mut rng, &mut out);
                sentence(&mut rng, &mut out);
                out.push_str("</think>\n");
            }
            6..=8 => {
                let tag = rng.pick(&["write-file", "create-file", "dyad-write"]);
                out.push_str(&format!(
                    "<{tag} path=\"src/f{}.ts\" mode={{\"a\": 1}}>\n",
                    rng.below(1000)
                ));
                for _ in 0..(5 + rng.below(20)) {
                    out.push_str(rng.pick(CODE));
                }
                out.push_str(&format!(
                    "</{}>\n",
                    rng.pick(&["write-file", "create-file", "dyad-write"])
                ));
            }
            _ => out.push_str("<summary status=done/>\n"),
        }
    }
    out
}

/// Prose with a think section every few kilobytes.
pub fn sections_prose(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    while out.len() < size {
        for _ in 0..30 {
            sentence(&mut rng, &mut out);
        }
        out.push_str("\n<think>");
        sentence(&mut rng, &mut out);
        out.push_str("</think>\n");
    }
    out
}

/// Short sections back to back: markup every few bytes.
pub fn sections_dense(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 256);
    while out.len() < size {
        match rng.below(4) {
            0 => out.push_str("<think>a<b</think>"),
            1 => out.push_str("<write-file path='x' force>y</create-file>"),
            2 => out.push_str("<div>x</div> "),
            _ => out.push_str("<run-bash/>"),
        }
    }
    out
}

/// One `write-file` section with a body of `size` bytes of code.
pub fn sections_big_body(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::from("<write-file path=\"big.ts\">");
    while out.len() < size {
        out.push_str(rng.pick(CODE));
    }
    out.push_str("</write-file>");
    out
}

/// Splits `input` into chunks of `size` bytes (the last may be shorter).
pub fn chunks(input: &[u8], size: usize) -> impl Iterator<Item = &[u8]> {
    input.chunks(size)
}

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

/// An annotated kindaxml answer of about `size` bytes: prose lines with postfix
/// cites, inline claims, self-closing todos, unknown tags, `a < b` prose and the
/// occasional literal block.
pub fn kindaxml_annotated(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    while out.len() < size {
        sentence(&mut rng, &mut out);
        match rng.below(8) {
            0..=2 => out.push_str(&format!("<cite id={}>\n", rng.below(100))),
            3 => {
                out.push_str("<claim confidence=\"high\">");
                sentence(&mut rng, &mut out);
                out.push_str("</claim>\n");
            }
            4 => out.push_str("<todo owner='ann'/> check a < b first\n"),
            5 => {
                out.push_str("the <b>bold</b> part <note>");
                sentence(&mut rng, &mut out);
                out.push('\n');
            }
            6 => out.push_str("<![CDATA[if (a < b) { x = <y>; }]]>\n"),
            _ => out.push('\n'),
        }
    }
    out
}

/// `n` unclosed cites on one line, each after one word.
pub fn kindaxml_unclosed_line(n: usize) -> String {
    "word <cite id=7>".repeat(n)
}

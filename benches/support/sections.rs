//! Generated sections documents: prose, code-dense sections, markup-dense and pathological inputs.

use super::{sentence, Rng, CODE};

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

/// `n` openers of a registered section and no closer: the first opens a section
/// that runs to the end of input, every later one is content.
pub fn sections_unclosed(n: usize) -> String {
    "word <think>".repeat(n)
}

/// One opener whose quoted attribute value is `size` bytes (parse it with a
/// `max_tag_bytes` above that size), then a short body.
pub fn sections_big_attribute(size: usize) -> String {
    let mut out = String::from("<write-file path=\"");
    while out.len() < size {
        out.push_str("segment/of/a/long/path/");
    }
    out.push_str("\">body</write-file>");
    out
}

/// One opener with `n` attributes, half of them repeating an earlier key (parse it
/// with a `max_tag_bytes` above its size), then a short body.
pub fn sections_many_attributes(n: usize) -> String {
    let mut out = String::from("<write-file");
    for i in 0..n {
        out.push_str(&format!(" k{}=v{i}", i % (n / 2).max(1)));
    }
    out.push_str(">body</write-file>");
    out
}

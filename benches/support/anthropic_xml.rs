//! Input generators for the anthropic-xml benchmarks.

use super::{sentence, Rng, CODE};

/// Prose with a thinking block every few kilobytes and an occasional `a < b`.
pub fn axml_prose(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    while out.len() < size {
        for i in 0..30 {
            sentence(&mut rng, &mut out);
            if i == 15 {
                out.push_str("when a < b ");
            }
        }
        out.push_str("\n<thinking>");
        sentence(&mut rng, &mut out);
        out.push_str("</thinking>\n");
    }
    out
}

/// An agent transcript dense with markup: thinking, tool-call blocks of several
/// invokes with code values full of `<`, and result blocks with entities and a
/// distinct `tool_use_id` each.
pub fn axml_dense(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    while out.len() < size {
        sentence(&mut rng, &mut out);
        out.push_str("\n<thinking>");
        sentence(&mut rng, &mut out);
        out.push_str("</thinking>\n<function_calls>\n");
        for _ in 0..(1 + rng.below(3)) {
            let tool = rng.pick(&["Read", "Edit", "get_thinking_notes"]);
            out.push_str(&format!("<invoke name=\"{tool}\">\n"));
            out.push_str(&format!(
                "<parameter name=\"path\">src/f{}.ts</parameter>\n",
                rng.below(100)
            ));
            out.push_str("<parameter name=\"code\">");
            for _ in 0..(1 + rng.below(4)) {
                out.push_str(rng.pick(CODE));
            }
            out.push_str("</parameter>\n<parameter name=\"limit\">42</parameter>\n</invoke>\n");
        }
        // Every result carries its own id, as in real transcripts.
        out.push_str(&format!(
            "</function_calls>\n<function_results>\n<result tool_use_id=\"toolu_01{:016x}\">ok &lt;done&gt; &amp; fine</result>\n</function_results>\n",
            rng.next()
        ));
    }
    out
}

/// One call whose `code` parameter value is `size` bytes of code (full of `<`).
pub fn axml_big_parameter(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::from(
        "Writing it.\n<function_calls>\n<invoke name=\"Write\">\n<parameter name=\"code\">",
    );
    while out.len() < size {
        out.push_str(rng.pick(CODE));
    }
    out.push_str("</parameter>\n</invoke>\n</function_calls>\nDone.");
    out
}

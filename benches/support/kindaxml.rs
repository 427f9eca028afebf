//! Generated kindaxml documents.

use super::{sentence, Rng};

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

/// Like [`kindaxml_annotated`] but ASCII only, for the reference crate (which
/// panics on a multibyte character right after a tag).
pub fn kindaxml_annotated_ascii(size: usize, seed: u64) -> String {
    kindaxml_annotated(size, seed)
        .replace('ü', "u")
        .replace('ï', "i")
}

/// One start tag with `n` attributes, half of them repeating an earlier key,
/// then a sentence it annotates.
pub fn kindaxml_many_attributes(n: usize) -> String {
    let mut out = String::from("<claim");
    for i in 0..n {
        out.push_str(&format!(" k{}=v{i}", i % (n / 2).max(1)));
    }
    out.push_str(">a claimed sentence</claim>\n");
    out
}

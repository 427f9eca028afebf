//! The oracle every fuzz target uses: the stream under fuzzer-chosen chunking
//! against the whole parse.
//!
//! The first input byte chooses the chunking (sizes cycling through a small
//! pattern derived from it); the rest is the document. The checks are those of the
//! conformance runner: no panic, spans tile the input (S8), the folded stream equals
//! the whole parse (S2), and emission after each chunk reaches exactly as far as
//! when the same prefix is fed byte by byte (S4).

use idiolect::conformance::run_chunked;
use serde_json::Value;

pub fn check(dialect: &str, data: &[u8]) {
    check_with(dialect, &Value::Null, data)
}

/// [`check`] with the dialect's options.
pub fn check_with(dialect: &str, options: &Value, data: &[u8]) {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
    let whole = run_chunked(dialect, options, &[input], "whole").unwrap_or_else(|e| panic!("{e}"));
    let pattern = [
        1 + (control & 7) as usize,
        1 + (control >> 3 & 3) as usize,
        1 + (control >> 5) as usize * 9,
    ];
    let mut chunks = Vec::new();
    let mut at = 0;
    for size in pattern.iter().cycle() {
        if at >= input.len() {
            break;
        }
        let end = (at + size).min(input.len());
        chunks.push(&input[at..end]);
        at = end;
    }
    let streamed =
        run_chunked(dialect, options, &chunks, "chunked").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        whole.document, streamed.document,
        "chunked stream folds to a different document"
    );
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    let by_byte = run_chunked(dialect, options, &bytes, "bytes").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        whole.document, by_byte.document,
        "1-byte stream folds to a different document"
    );
    let mut reach_at = vec![0; input.len() + 1];
    for (delivered, covered) in by_byte.reach {
        reach_at[delivered] = covered;
    }
    for (delivered, covered) in streamed.reach {
        assert_eq!(
            covered, reach_at[delivered],
            "emission after {delivered} bytes depends on the chunking"
        );
    }
}

#![no_main]
//! Fuzz the transcript dialect in every format and mode: stream vs whole input
//! (see ../oracle.rs). The first byte picks the options, the rest is the oracle's.

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

#[path = "../oracle.rs"]
#[allow(dead_code)]
mod oracle;

fn options(selector: u8) -> Value {
    match selector % 11 {
        0 => json!({"format": "human-assistant"}),
        1 => json!({"format": "participants", "participants": ["Alice", "Bob", "Claude"]}),
        2 => json!({"format": "participants", "max_name_bytes": 6}),
        3 => json!({"format": "completions"}),
        4 => json!({"format": "completions", "participants": ["Alice"], "eot": "</s>"}),
        5 => json!({"format": "chatml", "max_name_bytes": 5}),
        6 => json!({"mode": "scan", "stop": ["\nUser:", "</function_calls>", "aab"]}),
        7 => json!({"mode": "scan", "stop": ["\nUser:"], "structure_aware": true}),
        8 => {
            json!({"mode": "scan", "format": "completions", "participants": ["Alice", "Claude"], "assistant": "Claude"})
        }
        9 => json!({"mode": "render", "format": "participants"}),
        _ => json!({"mode": "request", "request": {"formatter": "chatml"}}),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some((&selector, rest)) = data.split_first() {
        oracle::check_with("transcript", &options(selector), rest);
    }
});

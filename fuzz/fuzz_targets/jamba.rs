#![no_main]
//! Fuzz the jamba field family: stream vs whole parse (see ../oracle.rs), from
//! answer text and from inside reasoning (JB-5).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    oracle::check("jamba", data);
    oracle::check_with("jamba", &serde_json::json!({"start_in_reasoning": true}), data);
});

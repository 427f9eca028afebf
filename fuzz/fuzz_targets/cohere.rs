#![no_main]
//! Fuzz the cohere field family: stream vs whole parse (see ../oracle.rs), from
//! answer text and from inside reasoning (CO-6).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    oracle::check("cohere", data);
    oracle::check_with("cohere", &serde_json::json!({"start_in_reasoning": true}), data);
});

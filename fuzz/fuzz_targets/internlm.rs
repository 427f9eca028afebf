#![no_main]
//! Fuzz the internlm field family: stream vs whole parse (see ../oracle.rs), from
//! answer text and from inside reasoning (IL-5).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    oracle::check("internlm", data);
    oracle::check_with("internlm", &serde_json::json!({"start_in_reasoning": true}), data);
});

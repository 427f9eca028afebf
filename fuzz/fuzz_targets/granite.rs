#![no_main]
//! Fuzz the granite field family: stream vs whole parse (see ../oracle.rs), in both
//! variants (GR-1), from answer text and from inside reasoning (GR-8).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    oracle::check("granite", data);
    oracle::check_with("granite", &serde_json::json!({"start_in_reasoning": true}), data);
    oracle::check_with("granite", &serde_json::json!({"variant": "20b-fc"}), data);
});

#![no_main]
//! Fuzz the nemotron field family: stream vs whole parse (see ../oracle.rs), from
//! answer text and from inside reasoning (NE-5).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    oracle::check("nemotron", data);
    oracle::check_with("nemotron", &serde_json::json!({"start_in_reasoning": true}), data);
});

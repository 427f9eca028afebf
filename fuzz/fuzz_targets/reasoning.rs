#![no_main]
//! Fuzz the reasoning wrappers: stream vs whole parse (see ../oracle.rs), from answer
//! text and from inside reasoning (`start_in_reasoning`, where an opener at offset 0
//! is markup, RS-6).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    oracle::check("reasoning", data);
    oracle::check_with(
        "reasoning",
        &serde_json::json!({"start_in_reasoning": true}),
        data,
    );
});

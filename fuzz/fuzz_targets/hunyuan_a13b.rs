#![no_main]
//! Fuzz the hunyuan-a13b field family: stream vs whole parse (see ../oracle.rs), from
//! answer text and from inside reasoning (HY-24).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    oracle::check("hunyuan-a13b", data);
    oracle::check_with("hunyuan-a13b", &serde_json::json!({"start_in_reasoning": true}), data);
});

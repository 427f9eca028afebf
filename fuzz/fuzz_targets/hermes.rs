#![no_main]
//! Fuzz the hermes field family: stream vs whole parse (see ../oracle.rs), with the
//! default options and with each `tool_choice` that changes the reading (FD-10).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    oracle::check("hermes", data);
    for choice in [
        serde_json::json!("none"),
        serde_json::json!("required"),
        serde_json::json!({"type": "function", "function": {"name": "f"}}),
    ] {
        oracle::check_with("hermes", &serde_json::json!({"tool_choice": choice}), data);
    }
});

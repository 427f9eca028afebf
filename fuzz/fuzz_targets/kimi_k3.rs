#![no_main]
//! Fuzz the kimi-k3 field family: stream vs whole parse (see ../oracle.rs), untyped
//! and with a tool whose schema types the arguments that carry no `type` (K3-8).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    let tools = serde_json::json!({"tools": [{"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "object"}, "s": {"type": "string"}
    }}}]});
    oracle::check("kimi-k3", data);
    oracle::check_with("kimi-k3", &tools, data);
});

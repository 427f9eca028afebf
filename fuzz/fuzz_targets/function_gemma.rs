#![no_main]
//! Fuzz the function-gemma field family: stream vs whole parse (see ../oracle.rs), untyped
//! and with a tool whose schema types its bare values (G4-9).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    let tools = serde_json::json!({"tools": [{"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "object"}, "s": {"type": "string"}
    }}}]});
    oracle::check("function-gemma", data);
    oracle::check_with("function-gemma", &tools, data);
});

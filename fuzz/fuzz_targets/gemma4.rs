#![no_main]
//! Fuzz the gemma4 field family: stream vs whole parse (see ../oracle.rs), untyped
//! and with a tool whose schema types its bare values (G4-9).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    let tools = serde_json::json!({"tools": [{"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "object"}, "s": {"type": "string"}
    }}}]});
    oracle::check("gemma4", data);
    oracle::check_with("gemma4", &tools, data);
});

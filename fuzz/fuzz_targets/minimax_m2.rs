#![no_main]
//! Fuzz the minimax-m2 field family: stream vs whole parse (see ../oracle.rs), with a
//! tool whose schema types its parameters, so the typing of values by the schema
//! runs on every input as well as the untyped reading.

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    let tools = serde_json::json!({"tools": [{"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "object"}, "s": {"type": "string"}
    }}}]});
    oracle::check("minimax-m2", data);
    oracle::check_with("minimax-m2", &tools, data);
});

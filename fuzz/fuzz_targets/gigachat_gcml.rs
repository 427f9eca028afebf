#![no_main]
//! Fuzz the gigachat-gcml field family: stream vs whole parse (see ../oracle.rs),
//! with a tool whose schema types its parameters, so the `string=` reading (CF-20)
//! meets the schema's typing on every input as well as the untyped reading.

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    let tools = serde_json::json!({"tools": [{"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "object"}, "s": {"type": "string"},
        "e": {"enum": ["x", 1]}
    }}}]});
    oracle::check("gigachat-gcml", data);
    oracle::check_with("gigachat-gcml", &tools, data);
});

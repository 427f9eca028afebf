#![no_main]
//! Fuzz grammar compilation: arbitrary grammar text, and a family description after
//! a NUL byte, go to the grammar compiler and to `field::custom::Family::new`. Either
//! may refuse; neither may panic, hang or take memory past the bound (spec
//! custom-family.md, CF-2), and the family's refusal is one line (CF-13).

use idiolect::machine::CompileError;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (grammar, description) = text.split_once('\0').unwrap_or((text, "{}"));
    // pest's own messages span lines (the family puts them on one); the compiler's
    // own are one line.
    if let Err(e @ (CompileError::Bound { .. } | CompileError::Unsupported { .. })) =
        idiolect::machine::compile(grammar)
    {
        assert!(!e.to_string().contains('\n'), "one line: {e}");
    }
    if let Err(e) = idiolect::field::custom::Family::new(grammar, description) {
        assert!(!e.to_string().contains('\n'), "one line: {e}");
    }
});

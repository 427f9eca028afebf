#![no_main]
//! Fuzz the reasoning reasoning wrappers: stream vs whole parse (see ../oracle.rs).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| oracle::check("reasoning", data));

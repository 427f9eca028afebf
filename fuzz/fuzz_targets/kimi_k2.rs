#![no_main]
//! Fuzz the kimi-k2 field family: stream vs whole parse (see ../oracle.rs).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| oracle::check("kimi-k2", data));

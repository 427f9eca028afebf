#![no_main]
//! Fuzz the deepseek-v3 field family: stream vs whole parse (see ../oracle.rs).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| oracle::check("deepseek-v3", data));

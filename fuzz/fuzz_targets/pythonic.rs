#![no_main]
//! Fuzz the pythonic field family: stream vs whole parse (see ../oracle.rs).

use libfuzzer_sys::fuzz_target;

#[path = "../oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| oracle::check("pythonic", data));

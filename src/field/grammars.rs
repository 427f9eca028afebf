//! The grammars of the field families, compiled once at first use.
//!
//! A grammar here is part of the crate: a tests asserts that each compiles, so the
//! `expect` below can only fire on a grammar edit that the test suite refuses.

use std::sync::OnceLock;

use crate::machine::{compile, Program};

/// The text of grammar/hermes.pest.
pub const HERMES: &str = include_str!("../../grammar/hermes.pest");

/// The program of grammar/hermes.pest.
pub fn hermes() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| compile(HERMES).expect("grammar/hermes.pest compiles (tested)"))
}

/// The text of grammar/qwen3-coder.pest.
pub const QWEN3_CODER: &str = include_str!("../../grammar/qwen3-coder.pest");

/// The program of grammar/qwen3-coder.pest.
pub fn qwen3_coder() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM
        .get_or_init(|| compile(QWEN3_CODER).expect("grammar/qwen3-coder.pest compiles (tested)"))
}

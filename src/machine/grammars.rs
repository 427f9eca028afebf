//! The dialect grammars of the crate, compiled once at first use.
//!
//! A grammar here is part of the crate: a tests asserts that each compiles, so the
//! `expect`s below can only fire on a grammar edit that the test suite refuses.

use std::sync::OnceLock;

use super::{compile, Program};

/// The text of grammar/anthropic-xml.pest.
pub const ANTHROPIC_XML: &str = include_str!("../../grammar/anthropic-xml.pest");

/// The program of grammar/anthropic-xml.pest.
pub fn anthropic_xml() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile(ANTHROPIC_XML).expect("grammar/anthropic-xml.pest compiles (tested)")
    })
}

/// The text of grammar/sections.pest followed by grammar/common.pest (concatenated,
/// as pest does with the two `#[grammar]` files of the sections parser).
pub const SECTIONS: &str = concat!(
    include_str!("../../grammar/sections.pest"),
    "\n",
    include_str!("../../grammar/common.pest")
);

/// The program of grammar/sections.pest with grammar/common.pest.
pub fn sections() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile(SECTIONS).expect("grammar/sections.pest with common.pest compiles (tested)")
    })
}

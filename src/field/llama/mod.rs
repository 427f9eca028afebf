//! llama3-json's state machine, and the rendering of llama3-json and pythonic
//! (pythonic runs on the engine, spec/custom-family.md CF-27; its Python literals
//! are read by the engine's `python` literal syntax, which this machine's
//! built-in calls use too).

pub mod machine;
pub mod render;

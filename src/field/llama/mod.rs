//! What llama3-json and pythonic share: one state machine (the families differ in
//! where calls start and how they are written), Python literals turned into JSON,
//! and rendering.

pub mod machine;
pub mod render;

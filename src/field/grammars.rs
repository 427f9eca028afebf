//! The grammars of the field families, compiled once at first use.
//!
//! A grammar here is part of the crate: a tests asserts that each compiles, so the
//! `expect` below can only fire on a grammar edit that the test suite refuses.

use std::sync::OnceLock;

use crate::machine::{compile, Program};

/// The text of grammar/field-json.pest: the JSON of tool-call arguments, appended to
/// each JSON-argument field family's grammar.
pub const FIELD_JSON: &str = include_str!("../../grammar/field-json.pest");

/// The text of grammar/deepseek.pest (deepseek-v3 and deepseek-v3.1).
pub const DEEPSEEK: &str = include_str!("../../grammar/deepseek.pest");

/// The text of grammar/harmony.pest.
pub const HARMONY: &str = include_str!("../../grammar/harmony.pest");

/// The text of grammar/mistral.pest.
pub const MISTRAL: &str = include_str!("../../grammar/mistral.pest");

/// Compiles a field family's grammar followed by grammar/field-json.pest and
/// grammar/reasoning.pest.
fn with_field_json(family: &str, file: &str) -> Program {
    compile(&format!("{family}\n{FIELD_JSON}\n{REASONING}")).unwrap_or_else(|e| {
        panic!("{file} with grammar/field-json.pest and reasoning.pest compiles (tested): {e}")
    })
}

/// Compiles a field family's grammar followed by grammar/reasoning.pest.
fn with_reasoning(family: &str, file: &str) -> Program {
    compile(&format!("{family}\n{REASONING}"))
        .unwrap_or_else(|e| panic!("{file} with grammar/reasoning.pest compiles (tested): {e}"))
}

/// The program of grammar/deepseek.pest with grammar/field-json.pest and
/// grammar/reasoning.pest.
pub fn deepseek() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| with_field_json(DEEPSEEK, "grammar/deepseek.pest"))
}

/// The program of grammar/harmony.pest with grammar/field-json.pest and
/// grammar/reasoning.pest.
pub fn harmony() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| with_field_json(HARMONY, "grammar/harmony.pest"))
}

/// The program of grammar/mistral.pest with grammar/field-json.pest and
/// grammar/reasoning.pest.
pub fn mistral() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| with_field_json(MISTRAL, "grammar/mistral.pest"))
}

/// The text of grammar/hermes.pest.
pub const HERMES: &str = include_str!("../../grammar/hermes.pest");

/// The program of grammar/hermes.pest with grammar/reasoning.pest.
pub fn hermes() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile(&format!("{HERMES}\n{REASONING}")).unwrap_or_else(|e| {
            panic!("grammar/hermes.pest with grammar/reasoning.pest compiles (tested): {e}")
        })
    })
}

/// The text of grammar/qwen3-coder.pest.
pub const QWEN3_CODER: &str = include_str!("../../grammar/qwen3-coder.pest");

/// The program of grammar/qwen3-coder.pest with grammar/reasoning.pest.
pub fn qwen3_coder() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| with_reasoning(QWEN3_CODER, "grammar/qwen3-coder.pest"))
}

/// The text of grammar/python-call.pest: Python keyword arguments and literals,
/// appended to the pythonic and llama3-json grammars.
pub const PYTHON_CALL: &str = include_str!("../../grammar/python-call.pest");

/// The text of grammar/llama3-json.pest.
pub const LLAMA3_JSON: &str = include_str!("../../grammar/llama3-json.pest");

/// The text of grammar/pythonic.pest.
pub const PYTHONIC: &str = include_str!("../../grammar/pythonic.pest");

/// The program of grammar/llama3-json.pest with grammar/python-call.pest,
/// grammar/field-json.pest and grammar/reasoning.pest.
pub fn llama3_json() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile(&format!(
            "{LLAMA3_JSON}\n{PYTHON_CALL}\n{FIELD_JSON}\n{REASONING}"
        ))
        .unwrap_or_else(|e| {
            panic!(
                "grammar/llama3-json.pest with python-call and field-json compiles (tested): {e}"
            )
        })
    })
}

/// The program of grammar/pythonic.pest with grammar/python-call.pest and
/// grammar/reasoning.pest. (The
/// JSON rules are appended too, for the arguments reader the machine shares with
/// llama3-json; pythonic never runs them.)
pub fn pythonic() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile(&format!(
            "{PYTHONIC}\n{PYTHON_CALL}\n{FIELD_JSON}\n{REASONING}"
        ))
        .unwrap_or_else(|e| {
            panic!("grammar/pythonic.pest with python-call and field-json compiles (tested): {e}")
        })
    })
}

/// The text of grammar/reasoning.pest: the reasoning wrappers' markers, the
/// `reasoning` dialect's grammar, appended to the grammars of the families that
/// honour `reasoning_markers`.
pub const REASONING: &str = include_str!("../../grammar/reasoning.pest");

/// The program of grammar/reasoning.pest.
pub fn reasoning() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| compile(REASONING).expect("grammar/reasoning.pest compiles (tested)"))
}

/// The text of grammar/kimi-k2.pest.
pub const KIMI_K2: &str = include_str!("../../grammar/kimi-k2.pest");

/// The program of grammar/kimi-k2.pest with grammar/field-json.pest and
/// grammar/reasoning.pest.
pub fn kimi_k2() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| with_field_json(KIMI_K2, "grammar/kimi-k2.pest"))
}

/// The text of grammar/minimax-m2.pest.
pub const MINIMAX_M2: &str = include_str!("../../grammar/minimax-m2.pest");

/// The program of grammar/minimax-m2.pest with grammar/reasoning.pest.
pub fn minimax_m2() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| with_reasoning(MINIMAX_M2, "grammar/minimax-m2.pest"))
}

/// The text of grammar/glm.pest.
pub const GLM: &str = include_str!("../../grammar/glm.pest");

/// The program of grammar/glm.pest with grammar/reasoning.pest.
pub fn glm() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| with_reasoning(GLM, "grammar/glm.pest"))
}

//! The pythonic family (Llama 4, Llama 3.2 small, Liquid): a list of calls
//! `[f(a=1, b="x"), g(c=True)]` with Python literal keyword arguments, optionally
//! wrapped in `<|python_start|>…<|python_end|>`. Rules: spec/pythonic.md.
//!
//! The family is grammar/pythonic.pest and grammar/pythonic.family.json, run by the
//! engine ([`crate::field::families::family`]`("pythonic")`, the `keywords`
//! encoding with `python` literals, spec/custom-family.md CF-27); this module
//! renders it (PY-16, PY-18 says why in Rust).
//!
//! ```
//! use idiolect::field::{families, Item};
//! let pythonic = families::family("pythonic").expect("a built-in family");
//! let doc = pythonic.parse("[get_weather(city='Paris', days=3)]", &Default::default()).unwrap();
//! assert!(matches!(&doc.items[0], Item::ToolCall { arguments, .. } if arguments == "{\"city\":\"Paris\",\"days\":3}"));
//! ```

pub use crate::field::llama::render::{
    render_pythonic_calls as render_calls, render_pythonic_turn as render_turn,
};

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use crate::field::llama::render::render_pythonic as render_json;

//! The pythonic family (Llama 4, Llama 3.2 small, Liquid): a list of calls
//! `[f(a=1, b="x"), g(c=True)]` with Python literal keyword arguments, optionally
//! wrapped in `<|python_start|>…<|python_end|>`. Arguments are compact JSON built
//! from the literals. Rules: spec/pythonic.md.
//!
//! ```
//! use idiolect::field::{pythonic, Item};
//! let doc = pythonic::parse("[get_weather(city='Paris', days=3)]", &pythonic::Options::default());
//! assert!(matches!(&doc.items[0], Item::ToolCall { arguments, .. } if arguments == "{\"city\":\"Paris\",\"days\":3}"));
//! ```

use crate::field::llama::machine::{Family, LlamaMachine};
use crate::field::llama::render;
use crate::field::reasoning::spelling;
use crate::field::{Document, DocumentFolder, Event};
use crate::reentry::Machine;

pub use render::{render_pythonic_calls as render_calls, render_pythonic_turn as render_turn};

family_options!("pythonic", "`[\"think\"]`", spelling::family_default());

/// The pythonic state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct PythonicMachine(LlamaMachine);

impl PythonicMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        PythonicMachine(LlamaMachine::new(
            Family::Pythonic,
            options.start_in_reasoning,
            false,
            &options.reasoning_markers,
        ))
    }
}

impl Machine for PythonicMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    #[inline]
    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        self.0.advance(pending, base, eof, out)
    }
}

family_glue!(PythonicMachine, "pythonic");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render_pythonic as render_json;

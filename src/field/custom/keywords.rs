//! Keyword arguments whose values are literals (spec/custom-family.md CF-27): the
//! arguments of one call, written as compact JSON argument by argument, each value
//! converted by the literal syntax the description names. The grammar has matched
//! each argument; this piece only converts and remembers the keys.

use super::description::Literals;
use super::literal;

/// The keyword arguments of the open call.
#[derive(Clone, Debug)]
pub(crate) struct KeywordArguments {
    literals: Literals,
    /// The keys so far, in order.
    keys: Vec<String>,
    /// Whether a key repeats (the call is then incomplete).
    repeated: bool,
}

impl KeywordArguments {
    /// The arguments of calls whose values are written in `literals`.
    pub(crate) fn new(literals: Literals) -> KeywordArguments {
        KeywordArguments {
            literals,
            keys: Vec::new(),
            repeated: false,
        }
    }

    /// A call opens: no arguments yet.
    pub(crate) fn open(&mut self) {
        self.keys.clear();
        self.repeated = false;
    }

    /// The delta of the argument `key` whose value is the literal `value`
    /// (`{"KEY":VALUE` first, `,"KEY":VALUE` next), or `None` when the value has no
    /// JSON form (the call is then malformed).
    pub(crate) fn argument(&mut self, key: String, value: &str) -> Option<String> {
        let json = match self.literals {
            Literals::Python => literal::to_json(value)?,
        };
        let mut delta = String::with_capacity(key.len() + json.len() + 4);
        delta.push(if self.keys.is_empty() { '{' } else { ',' });
        delta.push_str(&serde_json::Value::String(key.clone()).to_string());
        delta.push(':');
        delta.push_str(&json);
        self.repeated |= self.keys.contains(&key);
        self.keys.push(key);
        Some(delta)
    }

    /// The call closes: the delta that ends its arguments, and whether it is
    /// complete (no key repeats).
    pub(crate) fn close(&self) -> (&'static str, bool) {
        let text = if self.keys.is_empty() { "{}" } else { "}" };
        (text, !self.repeated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_written_as_compact_json_in_order() {
        let mut args = KeywordArguments::new(Literals::Python);
        args.open();
        assert_eq!(
            args.argument("city".into(), "'Paris'").as_deref(),
            Some("{\"city\":\"Paris\"}").map(|s| &s[..s.len() - 1])
        );
        assert_eq!(
            args.argument("exact".into(), "True").as_deref(),
            Some(",\"exact\":true")
        );
        assert_eq!(args.close(), ("}", true));
    }

    #[test]
    fn a_repeated_key_makes_the_call_incomplete() {
        let mut args = KeywordArguments::new(Literals::Python);
        args.open();
        args.argument("a".into(), "1");
        args.argument("a".into(), "2");
        assert_eq!(args.close(), ("}", false));
        args.open();
        assert_eq!(args.close(), ("{}", true));
    }

    #[test]
    fn a_value_without_json_form_is_refused() {
        let mut args = KeywordArguments::new(Literals::Python);
        args.open();
        assert_eq!(args.argument("a".into(), "{[1]: 2}"), None);
    }
}

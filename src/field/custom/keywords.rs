//! Keyword arguments whose values are literals (spec/custom-family.md CF-27): the
//! arguments of one call, written as compact JSON argument by argument, each value
//! converted by the literal syntax the description names. The grammar has matched
//! each argument; this piece only converts and remembers the keys.

use super::description::Literals;
use super::literal;
use crate::field::typing::SchemaTypes;
use crate::field::Tool;

/// The literal syntax a family's description chose (CF-27, CF-38), with the
/// quote token of Gemma's.
#[derive(Clone, Debug)]
pub(crate) enum LiteralSyntax {
    /// Python's literals.
    Python,
    /// Gemma's literals, strings between `quote` tokens.
    Gemma {
        /// The quote token.
        quote: String,
    },
}

impl LiteralSyntax {
    /// The syntax of `literals` with the description's `quote` (checked by then:
    /// present exactly with `gemma`).
    pub(crate) fn new(literals: Literals, quote: Option<&str>) -> LiteralSyntax {
        match literals {
            Literals::Python => LiteralSyntax::Python,
            Literals::Gemma => LiteralSyntax::Gemma {
                quote: quote.unwrap_or_default().to_string(),
            },
        }
    }
}

/// The keyword arguments of the open call.
#[derive(Clone, Debug)]
pub(crate) struct KeywordArguments {
    literals: LiteralSyntax,
    /// The tools' schemas (Gemma's bare values are typed by them, G4-9).
    types: SchemaTypes,
    /// The open call's tool among them.
    tool: Option<usize>,
    /// The keys so far, in order.
    keys: Vec<String>,
    /// Whether a key repeats (the call is then incomplete).
    repeated: bool,
}

impl KeywordArguments {
    /// The arguments of calls whose values are written in `literals`.
    pub(crate) fn new(literals: LiteralSyntax, tools: &[Tool]) -> KeywordArguments {
        let types = match literals {
            LiteralSyntax::Python => SchemaTypes::new(&[]),
            LiteralSyntax::Gemma { .. } => SchemaTypes::new(tools),
        };
        KeywordArguments {
            literals,
            types,
            tool: None,
            keys: Vec::new(),
            repeated: false,
        }
    }

    /// The call to `name` opens: no arguments yet.
    pub(crate) fn open(&mut self, name: &str) {
        self.keys.clear();
        self.repeated = false;
        self.tool = self.types.tool(name);
    }

    /// The delta of the argument `key` whose value is the literal `value`
    /// (`{"KEY":VALUE` first, `,"KEY":VALUE` next), or `None` when the value has no
    /// JSON form (the call is then malformed).
    pub(crate) fn argument(&mut self, key: String, value: &str) -> Option<String> {
        let json = match &self.literals {
            LiteralSyntax::Python => literal::python::to_json(value)?,
            LiteralSyntax::Gemma { quote } => {
                let shape = self
                    .types
                    .param_at(self.tool, &key)
                    .and_then(|at| self.types.shape(self.tool, at));
                literal::gemma::to_json(value, quote, shape)?
            }
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
        let mut args = KeywordArguments::new(LiteralSyntax::Python, &[]);
        args.open("f");
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
        let mut args = KeywordArguments::new(LiteralSyntax::Python, &[]);
        args.open("f");
        args.argument("a".into(), "1");
        args.argument("a".into(), "2");
        assert_eq!(args.close(), ("}", false));
        args.open("f");
        assert_eq!(args.close(), ("{}", true));
    }

    const GRAMMAR: &str = r#"
        name = { ASCII_ALPHA+ }
        text = _{ "<" ~ name ~ "(" }
        key = { py_ident }
        val = { py_value }
        close = { ")" }
        body = _{ close | key ~ "=" ~ val }
        next = _{ py_ws ~ ("," ~ py_ws | close) }
    "#;

    const DESCRIPTION: &str = r#"{
      "name": "k",
      "entries": {"text": "text", "call_body": "body", "value_end": "next"},
      "captures": {"name": "name", "parameter": "key", "value": "val", "call_close": "close"},
      "arguments": {"encoding": "keywords", "literals": "python"}
    }"#;

    fn parse(input: &str) -> Vec<String> {
        let family = crate::field::custom::Family::new(GRAMMAR, DESCRIPTION).expect("builds");
        let doc = family.parse(input, &Default::default()).expect("parses");
        doc.items
            .iter()
            .map(|i| match i {
                crate::field::Item::Text { text, .. } => text.to_string(),
                crate::field::Item::ToolCall {
                    name,
                    arguments,
                    complete,
                    ..
                } => format!("{name}{arguments}{complete}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_family_reads_literal_keyword_arguments_through_its_grammar() {
        assert_eq!(
            parse("a <f(x=True, y=[1, 'b'])> z"),
            ["a ", "f{\"x\":true,\"y\":[1,\"b\"]}true", "> z"]
        );
        assert_eq!(parse("<g()"), ["g{}true"]);
    }

    #[test]
    fn an_argument_that_cannot_be_read_ends_the_call_where_it_begins() {
        assert_eq!(parse("<f(x=1, 2)"), ["f{\"x\":1false", "2)"]);
        assert_eq!(parse("<f(x=1, x=2)"), ["f{\"x\":1,\"x\":2}false"]);
        // Cut by the end of input: the argument is dropped.
        assert_eq!(parse("<f(x=1, y='ab"), ["f{\"x\":1false"]);
    }

    #[test]
    fn misused_keys_are_refused_in_one_line_naming_them() {
        let cases = [
            (
                DESCRIPTION.replace(r#""value": "val", "#, ""),
                "missing key `captures.value` (required with arguments encoding `keywords`)",
            ),
            (
                DESCRIPTION.replace(r#""literals": "python""#, r#""literals": "ruby""#),
                "unknown variant `ruby`",
            ),
            (
                DESCRIPTION.replace(r#""name": "k","#, r#""name": "k", "string_types": ["s"],"#),
                "keys `captures.value_type` and `string_types` go together",
            ),
            (
                DESCRIPTION.replace(
                    r#"{"encoding": "keywords", "literals": "python"}"#,
                    r#"{"encoding": "parameters"}"#,
                ),
                "key `captures.value` does not apply to arguments encoding `parameters`",
            ),
        ];
        for (description, expected) in cases {
            let message = crate::field::custom::Family::new(GRAMMAR, &description)
                .expect_err("refused")
                .to_string();
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
            assert!(!message.contains('\n'), "{message:?} is one line");
        }
    }

    #[test]
    fn a_value_without_json_form_is_refused() {
        let mut args = KeywordArguments::new(LiteralSyntax::Python, &[]);
        args.open("f");
        assert_eq!(args.argument("a".into(), "{[1]: 2}"), None);
    }
}

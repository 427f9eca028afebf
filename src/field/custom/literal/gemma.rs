//! Gemma's literals (spec/gemma4.md G4-7 to G4-9; the `gemma` literal syntax of
//! spec/custom-family.md CF-38), as grammar/gemma-call.pest's `gm_value` matched
//! them, turned into compact JSON text.
//!
//! The syntax is one piece for every family that writes it: Gemma 4 quotes strings
//! with the token `<|"|>`, FunctionGemma with `<escape>`; the description names the
//! token, and this module writes the grammar's `gemma_quote` rule from it and
//! decodes strings by it. A string is the text between two quote tokens, verbatim
//! (no escapes); a bare value (a number, `true`, text left unquoted) is read as a
//! value the markup calls JSON (CF-20), by the parameter's schema at the top of an
//! argument and without one inside lists and objects.

use super::{Reader, Syntax};
use crate::field::typing::{push_json_string, push_json_typed, Shape};

/// The text of grammar/gemma-call.pest.
const GEMMA_CALL: &str = include_str!("../../../../grammar/gemma-call.pest");

/// The grammar appended to a family's for the quote token `quote`: the rule
/// `gemma_quote` matching it, then grammar/gemma-call.pest.
pub(crate) fn grammar(quote: &str) -> String {
    let mut rule = String::from(
        "/// The quote token of strings (the description's `quote`).\ngemma_quote = _{ \"",
    );
    for c in quote.chars() {
        match c {
            '"' => rule.push_str("\\\""),
            '\\' => rule.push_str("\\\\"),
            ' '..='~' => rule.push(c),
            _ if c.is_ascii() => rule.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            _ => rule.push(c),
        }
    }
    rule.push_str("\" }\n");
    format!("{rule}{GEMMA_CALL}")
}

/// The compact JSON text of the Gemma literal `text` whose strings are quoted by
/// `quote`, a bare value at its top typed by `shape` (G4-9); `None` when it has no
/// JSON form (nesting deeper than [`super::MAX_DEPTH`], a text the grammar would not
/// match).
pub(crate) fn to_json(text: &str, quote: &str, shape: Option<&Shape>) -> Option<String> {
    super::to_json(&Gemma { quote }, text, shape)
}

struct Gemma<'q> {
    quote: &'q str,
}

impl Gemma<'_> {
    /// A quoted string's text, verbatim.
    fn string<'a>(&self, reader: &mut Reader<'a>) -> Option<&'a str> {
        let start = reader.at + self.quote.len();
        let len = reader.text[start..].find(self.quote)?;
        reader.at = start + len + self.quote.len();
        Some(&reader.text[start..start + len])
    }

    /// A bare word up to whitespace, a bracket, a comma, `<` or the quote token
    /// (G4-7); a key stops at `:` too.
    fn bare<'a>(&self, reader: &mut Reader<'a>, key: bool) -> Option<&'a str> {
        let word = reader.run(|r| match r.peek() {
            Some(b' ' | b'\t' | b'\r' | b'\n' | b',' | b'{' | b'}' | b'[' | b']' | b'<') => true,
            Some(b':') => key,
            _ => r.rest().starts_with(self.quote),
        });
        (!word.is_empty()).then_some(word)
    }
}

impl Syntax for Gemma<'_> {
    fn leaf_first(&self, reader: &Reader<'_>) -> bool {
        reader.rest().starts_with(self.quote)
    }

    fn leaf(&self, reader: &mut Reader<'_>, out: &mut String, shape: Option<&Shape>) -> Option<()> {
        if reader.rest().starts_with(self.quote) {
            push_json_string(out, self.string(reader)?);
        } else if reader.peek()? == b'"' {
            // A string in JSON's double quotes, decoded.
            let bytes = reader.text.as_bytes();
            let mut end = reader.at + 1;
            loop {
                match bytes.get(end)? {
                    b'\\' => end += 2,
                    b'"' => break,
                    _ => end += 1,
                }
            }
            let literal = reader.text.get(reader.at..=end)?;
            reader.at = end + 1;
            let s: String = serde_json::from_str(literal).ok()?;
            push_json_string(out, &s);
        } else {
            push_json_typed(out, self.bare(reader, false)?, shape);
        }
        Some(())
    }

    /// A key: between quote tokens, or bare up to the `:`.
    fn key(&self, reader: &mut Reader<'_>, out: &mut String) -> Option<()> {
        let key = if reader.rest().starts_with(self.quote) {
            self.string(reader)?
        } else {
            self.bare(reader, true)?
        };
        push_json_string(out, key);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const Q: &str = "<|\"|>";

    fn gemma(text: &str) -> Option<String> {
        to_json(&text.replace('Q', Q), Q, None)
    }

    #[test]
    fn strings_are_verbatim_and_never_keep_the_quote_token() {
        assert_eq!(gemma("QParisQ").as_deref(), Some("\"Paris\""));
        assert_eq!(
            gemma("Qa \\n \"b\" {c} <tool_call|>\nQ").as_deref(),
            Some("\"a \\\\n \\\"b\\\" {c} <tool_call|>\\n\"")
        );
        assert_eq!(gemma("QQ").as_deref(), Some("\"\""));
    }

    #[test]
    fn lists_objects_and_bare_values_become_compact_json() {
        assert_eq!(
            gemma("[QaQ, 1 ,true,null,{k:QvQ,Q3Q:[]},]").as_deref(),
            Some("[\"a\",1,true,null,{\"k\":\"v\",\"3\":[]}]")
        );
        assert_eq!(
            gemma("123456789012345678901234567890").as_deref(),
            Some("123456789012345678901234567890")
        );
        assert_eq!(gemma("None").as_deref(), Some("null"));
        assert_eq!(gemma("celsius").as_deref(), Some("\"celsius\""));
        assert_eq!(gemma("New York"), None);
        assert_eq!(gemma("\"a\\\"b\"").as_deref(), Some("\"a\\\"b\""));
        assert_eq!(gemma("{a:b:c}").as_deref(), Some("{\"a\":\"b:c\"}"));
    }

    #[test]
    fn a_bare_value_at_the_top_is_typed_by_the_schema() {
        let parameters = json!({"type": "object", "properties": {"p": {"type": "string"}}});
        let shape = Shape::of(&parameters, &parameters["properties"]["p"]).expect("a schema");
        assert_eq!(to_json("7", Q, Some(&shape)).as_deref(), Some("\"7\""));
        assert_eq!(to_json("7", Q, None).as_deref(), Some("7"));
        // Inside a list the schema is not read.
        assert_eq!(to_json("[7]", Q, Some(&shape)).as_deref(), Some("[7]"));
    }

    #[test]
    fn values_without_a_json_form_are_refused() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(gemma(&deep), None);
        assert_eq!(gemma("Qabc"), None);
        assert_eq!(gemma("{a}"), None);
    }

    #[test]
    fn the_quote_rule_is_written_from_the_token() {
        assert!(grammar(Q).starts_with(
            "/// The quote token of strings (the description's `quote`).\ngemma_quote = _{ \"<|\\\"|>\" }\n"
        ));
        assert!(grammar("<escape>").contains("gemma_quote = _{ \"<escape>\" }\n"));
        assert!(grammar("a\\\u{1}").contains("gemma_quote = _{ \"a\\\\\\u{1}\" }\n"));
    }
}

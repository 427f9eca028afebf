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

use crate::field::typing::{push_json_string, push_json_typed, Shape};

/// The deepest nesting of lists and objects a value may have.
pub const MAX_DEPTH: usize = 128;

/// The text of grammar/gemma-call.pest.
const GEMMA_CALL: &str = include_str!("../../../grammar/gemma-call.pest");

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
/// JSON form (nesting deeper than [`MAX_DEPTH`], a text the grammar would not match).
pub(crate) fn to_json(text: &str, quote: &str, shape: Option<&Shape>) -> Option<String> {
    let mut reader = Reader { text, quote, at: 0 };
    let mut out = String::with_capacity(text.len());
    reader.value(&mut out, 0, shape)?;
    reader.ws();
    (reader.at == text.len()).then_some(out)
}

struct Reader<'a> {
    text: &'a str,
    quote: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// One literal; `shape` types it when it is bare (the top of an argument).
    fn value(&mut self, out: &mut String, depth: usize, shape: Option<&Shape>) -> Option<()> {
        self.ws();
        if self.rest().starts_with(self.quote) {
            let s = self.string()?;
            push_json_string(out, s);
            return Some(());
        }
        match self.peek()? {
            b'[' => self.list(out, depth + 1),
            b'{' => self.object(out, depth + 1),
            b'"' => {
                let s = self.json_string()?;
                out.push_str(&serde_json::to_string(&s).ok()?);
                Some(())
            }
            _ => {
                let bare = self.bare()?;
                push_json_typed(out, bare, shape);
                Some(())
            }
        }
    }

    /// A quoted string's text, verbatim.
    fn string(&mut self) -> Option<&str> {
        let start = self.at + self.quote.len();
        let len = self.text[start..].find(self.quote)?;
        self.at = start + len + self.quote.len();
        Some(&self.text[start..start + len])
    }

    /// A string in JSON's double quotes, decoded.
    fn json_string(&mut self) -> Option<String> {
        let bytes = self.text.as_bytes();
        let mut end = self.at + 1;
        loop {
            match bytes.get(end)? {
                b'\\' => end += 2,
                b'"' => break,
                _ => end += 1,
            }
        }
        let literal = self.text.get(self.at..=end)?;
        self.at = end + 1;
        serde_json::from_str(literal).ok()
    }

    /// Whether `b` at the reader's position ends a bare value (G4-7).
    fn ends_bare(&self) -> bool {
        match self.peek() {
            None => true,
            Some(b' ' | b'\t' | b'\r' | b'\n' | b',' | b'{' | b'}' | b'[' | b']' | b'<') => true,
            Some(_) => self.rest().starts_with(self.quote),
        }
    }

    /// A bare value: one word.
    fn bare(&mut self) -> Option<&str> {
        let start = self.at;
        while !self.ends_bare() {
            self.at += self.rest().chars().next().map_or(1, char::len_utf8);
        }
        (self.at > start).then(|| &self.text[start..self.at])
    }

    /// A key: between quote tokens, or bare up to the `:`.
    fn key(&mut self) -> Option<&str> {
        self.ws();
        if self.rest().starts_with(self.quote) {
            return self.string();
        }
        let start = self.at;
        while let Some(b) = self.peek() {
            if matches!(
                b,
                b' ' | b'\t' | b'\r' | b'\n' | b':' | b',' | b'{' | b'}' | b'[' | b']' | b'<'
            ) {
                break;
            }
            self.at += self.rest().chars().next().map_or(1, char::len_utf8);
        }
        (self.at > start).then(|| &self.text[start..self.at])
    }

    fn list(&mut self, out: &mut String, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        out.push('[');
        let mut first = true;
        loop {
            if self.eat(b']') {
                break;
            }
            if !first {
                out.push(',');
            }
            self.value(out, depth, None)?;
            first = false;
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                break;
            }
            return None;
        }
        out.push(']');
        Some(())
    }

    fn object(&mut self, out: &mut String, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        out.push('{');
        let mut first = true;
        loop {
            if self.eat(b'}') {
                break;
            }
            if !first {
                out.push(',');
            }
            let key = self.key()?;
            push_json_string(out, key);
            if !self.eat(b':') {
                return None;
            }
            out.push(':');
            self.value(out, depth, None)?;
            first = false;
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                break;
            }
            return None;
        }
        out.push('}');
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

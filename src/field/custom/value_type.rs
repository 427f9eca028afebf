//! Value types written in the markup (spec/custom-family.md, CF-20): a captured
//! type text beside a parameter's key says whether its value is a raw string or
//! JSON. DSML writes `string="true"` or `string="false"`; Kimi-K3 writes
//! `type="string"` or another type name: one piece, a different list of texts.

use crate::field::parameter_values::ValueKind;
use crate::machine::RuleId;

/// The rule whose capture is a value's type text, and the texts that mean a raw
/// string.
#[derive(Clone, Debug)]
pub(crate) struct ValueTypes {
    /// The captured rule (`captures.value_type`).
    pub(crate) rule: RuleId,
    /// The type texts that mean a raw string (`string_types`), compared byte for
    /// byte.
    strings: Vec<String>,
}

impl ValueTypes {
    /// Value types read from `rule`'s capture, `strings` meaning a raw string.
    pub(crate) fn new(rule: RuleId, strings: Vec<String>) -> ValueTypes {
        ValueTypes { rule, strings }
    }

    /// How a value whose opener captured `text` (or no type text) is read.
    pub(crate) fn kind(&self, text: Option<&str>) -> ValueKind {
        match text {
            None => ValueKind::Schema,
            Some(text) if self.strings.iter().any(|s| s == text) => ValueKind::Raw,
            Some(_) => ValueKind::Json,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::custom::Family;

    #[test]
    fn listed_texts_are_raw_others_json_none_schema() {
        let types = ValueTypes::new(RuleId(0), vec!["true".to_string()]);
        assert_eq!(types.kind(Some("true")), ValueKind::Raw);
        assert_eq!(types.kind(Some("false")), ValueKind::Json);
        assert_eq!(types.kind(Some("True")), ValueKind::Json);
        assert_eq!(types.kind(Some("")), ValueKind::Json);
        assert_eq!(types.kind(None), ValueKind::Schema);
    }

    /// CF-20's keys go together, and only with the parameters encoding; each
    /// refusal is one line naming the keys.
    #[test]
    fn misuse_is_refused_in_one_line() {
        let grammar = include_str!("../../../grammar/deepseek-dsml.pest");
        let description = include_str!("../../../grammar/deepseek-dsml.family.json");
        assert!(Family::new(grammar, description).is_ok());
        let without_types = description.replace("\"string_types\": [\n    \"true\"\n  ],", "");
        let without_capture = description.replace("\"value_type\": \"value_type\",", "");
        assert_ne!(without_types, description);
        assert_ne!(without_capture, description);
        for text in [without_types, without_capture] {
            let message = Family::new(grammar, &text)
                .expect_err("refused")
                .to_string();
            assert_eq!(
                message,
                "family description: keys `captures.value_type` and `string_types` go together"
            );
        }
        let json_grammar = "name = { \"n\" }\nkind = { \"k\" }\ntext = _{ \"<c \" ~ name ~ kind }\nend = _{ \"e\" }\n";
        let json_family = r#"{"name": "t", "include_json_grammar": true,
            "entries": {"text": "text", "arguments_end": "end"},
            "captures": {"name": "name", "value_type": "kind"}, "string_types": ["s"],
            "arguments": {"encoding": "json", "object": "json_object"}}"#;
        let message = Family::new(json_grammar, json_family)
            .expect_err("refused")
            .to_string();
        assert_eq!(
            message,
            "family description: key `captures.value_type` does not apply to arguments encoding `json`"
        );
        let unknown =
            description.replace("\"value_type\": \"value_type\"", "\"value_type\": \"nope\"");
        let message = Family::new(grammar, &unknown)
            .expect_err("refused")
            .to_string();
        assert!(
            message.contains("key `captures.value_type` names rule `nope`"),
            "{message}"
        );
    }
}

//! The attributes of a section opener (SEC-5).

use std::borrow::Cow;

use compact_str::CompactString;
use indexmap::IndexMap;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// The attributes of a section opener: keys ASCII-lowercased, values raw, in source
/// order, each key once (of duplicates, the last value wins at the first one's
/// position). Serialized as a JSON object.
///
/// A small ordered list rather than a hash map: openers carry a handful of
/// attributes, and short keys and values are stored inline, so an opener costs one
/// allocation (none when it has no attributes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attrs(Box<[(CompactString, CompactString)]>);

impl Attrs {
    /// Builds the attributes from `(key, value)` pairs in source order: keys are
    /// lowercased, and a repeated key keeps its first position and its last value.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let pairs = pairs.into_iter();
        // Sized up front, so the boxed slice needs no reallocation (unless keys repeat).
        let mut list: Vec<(CompactString, CompactString)> = Vec::with_capacity(pairs.size_hint().0);
        for (key, value) in pairs {
            let key = CompactString::from(key).to_ascii_lowercase();
            match list.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => *v = value.into(),
                None => list.push((key, value.into())),
            }
        }
        Attrs(list.into_boxed_slice())
    }

    /// The value of `key` (give it lowercased), if the opener has it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The attributes in source order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many attributes there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Attrs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The schema of a JSON object of strings, as for a map of strings.
impl JsonSchema for Attrs {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        <IndexMap<String, String>>::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <IndexMap<String, String>>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_keep_the_first_position_and_the_last_value() {
        let attrs = Attrs::from_pairs([("B", "1"), ("a", "2"), ("b", "3")]);
        assert_eq!(attrs.iter().collect::<Vec<_>>(), [("b", "3"), ("a", "2")]);
        assert_eq!(attrs.get("b"), Some("3"));
        assert_eq!(attrs.get("c"), None);
        assert_eq!(
            serde_json::to_string(&attrs).unwrap(),
            r#"{"b":"3","a":"2"}"#
        );
    }
}

//! The attributes of a section opener (SEC-5).

use compact_str::CompactString;

use crate::attrs::{AttrList, KeyIndex};

/// The attributes of a section opener: keys ASCII-lowercased, values raw, in source
/// order, each key once (of duplicates, the last value wins at the first one's
/// position). Serialized as a JSON object.
pub type Attrs = AttrList<CompactString>;

impl AttrList<CompactString> {
    /// Builds the attributes of a section opener from `(key, value)` pairs in source
    /// order: keys are lowercased, and a repeated key keeps its first position and
    /// its last value (SEC-5).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self::from_pairs_in(&mut Vec::new(), pairs)
    }

    /// [`Attrs::from_pairs`], building in `scratch` (left empty, its capacity kept
    /// for the next opener): the list then costs one allocation.
    pub(crate) fn from_pairs_in<'a>(
        scratch: &mut Vec<(CompactString, CompactString)>,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        scratch.clear();
        let mut index = KeyIndex::default();
        for (key, value) in pairs {
            let mut key = CompactString::from(key);
            key.make_ascii_lowercase();
            match index.find(scratch, &key) {
                Some(at) => scratch[at].1 = value.into(),
                None => scratch.push((key, value.into())),
            }
        }
        AttrList::take(scratch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_keep_the_first_position_and_the_last_value() {
        let attrs = Attrs::from_pairs([("B", "1"), ("a", "2"), ("b", "3")]);
        let pairs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (k, v.as_str())).collect();
        assert_eq!(pairs, [("b", "3"), ("a", "2")]);
        assert_eq!(attrs.get("b").map(|v| v.as_str()), Some("3"));
        assert_eq!(attrs.get("c"), None);
        assert_eq!(
            serde_json::to_string(&attrs).unwrap(),
            r#"{"b":"3","a":"2"}"#
        );
    }

    #[test]
    fn many_repeated_keys_resolve_like_few() {
        // Past the linear-scan length the index takes over; the rule is the same.
        let keys: Vec<String> = (0..100).map(|i| format!("K{}", i % 40)).collect();
        let values: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let attrs = Attrs::from_pairs(
            keys.iter()
                .zip(&values)
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        assert_eq!(attrs.len(), 40);
        let first = attrs.iter().next().map(|(k, v)| (k, v.as_str()));
        assert_eq!(first, Some(("k0", "80")));
        assert_eq!(attrs.get("k39").map(|v| v.as_str()), Some("79"));
    }
}

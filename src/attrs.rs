//! Attribute lists: the attributes of one tag, in source order, each key once.
//!
//! Shared by the dialects whose tags carry attributes (sections, kindaxml). A tag
//! carries a handful of attributes, so the list is one boxed slice with short keys
//! stored inline, rather than a hash map: one allocation per tag, none for a tag
//! without attributes. (A reference-counted slice was measured too: it makes a
//! folded document's copy free, but its atomic count cost the event stream 10–20%.)

use std::borrow::Cow;
use std::collections::HashMap;

use compact_str::CompactString;
use indexmap::IndexMap;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// The most attributes' room a reused list keeps between tags.
const KEEP_CAPACITY: usize = 64;

/// The attributes of a tag: `(key, value)` in source order, each key once (how
/// duplicates were resolved is the dialect's rule). Serialized as a JSON object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrList<V>(Option<Box<[(CompactString, V)]>>);

impl<V> Default for AttrList<V> {
    fn default() -> Self {
        AttrList(None)
    }
}

impl<V> AttrList<V> {
    /// No attributes.
    pub fn new() -> Self {
        Self::default()
    }

    /// The attributes of `list`, taken in order. The list is left empty for the
    /// caller to reuse: it keeps room for a usual tag's attributes, but not the room
    /// a huge tag needed. Keys are expected to be distinct.
    pub fn take(list: &mut Vec<(CompactString, V)>) -> Self {
        if list.is_empty() {
            return AttrList(None);
        }
        let attrs = AttrList(Some(list.drain(..).collect()));
        if list.capacity() > KEEP_CAPACITY {
            *list = Vec::new();
        }
        attrs
    }

    fn entries(&self) -> &[(CompactString, V)] {
        self.0.as_deref().unwrap_or_default()
    }

    /// The value of `key`, if the tag has it.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.entries()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The attributes in source order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &V)> {
        self.entries().iter().map(|(k, v)| (k.as_str(), v))
    }

    /// How many attributes there are.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

impl<V: Serialize> Serialize for AttrList<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entries = self.entries();
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (k, v) in entries {
            map.serialize_entry(k.as_str(), v)?;
        }
        map.end()
    }
}

/// The schema of a JSON object of values, as for a map.
impl<V: JsonSchema> JsonSchema for AttrList<V> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        <IndexMap<String, V>>::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <IndexMap<String, V>>::json_schema(generator)
    }
}

/// Finds the keys already in an attribute list being built, so that a repeated key
/// can be resolved by the dialect's rule: a linear scan while the list is short, a
/// hash index once it is long. A tag with very many attributes (a large tag bound
/// allows hundreds of thousands) therefore costs linear time, not quadratic.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyIndex {
    /// Position of each of the first `map.len()` keys of the list; made only once
    /// a list grows long (making a hash map costs more than scanning a short list).
    map: Option<HashMap<CompactString, usize>>,
}

impl KeyIndex {
    /// Lists up to this long are scanned.
    const LINEAR: usize = 16;

    /// Where `key` is in `list` (whose keys are distinct), if it is there. `list`
    /// must be the list this index has seen so far, grown only by pushes.
    pub(crate) fn find<V>(&mut self, list: &[(CompactString, V)], key: &str) -> Option<usize> {
        if list.len() <= Self::LINEAR {
            return list.iter().position(|(k, _)| k == key);
        }
        let map = self.map.get_or_insert_with(HashMap::new);
        // Index the keys pushed since the last look (each key is indexed once).
        for (i, (k, _)) in list.iter().enumerate().skip(map.len()) {
            map.insert(k.clone(), i);
        }
        map.get(key).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_list_keeps_a_usual_tags_room_but_not_a_huge_ones() {
        let mut list: Vec<(CompactString, u8)> = Vec::new();
        list.extend((0..3).map(|i| (CompactString::from(format!("k{i}")), i)));
        let room = list.capacity();
        assert_eq!(AttrList::take(&mut list).len(), 3);
        assert!(list.is_empty());
        assert_eq!(list.capacity(), room);
        list.extend((0..200).map(|i| (CompactString::from(format!("k{i}")), 0)));
        assert_eq!(AttrList::take(&mut list).len(), 200);
        assert!(list.capacity() <= KEEP_CAPACITY);
    }

    #[test]
    fn key_index_finds_keys_in_short_and_long_lists() {
        let mut list: Vec<(CompactString, usize)> = Vec::new();
        let mut index = KeyIndex::default();
        for i in 0..200 {
            let key = format!("k{}", i % 150);
            match index.find(&list, &key) {
                Some(at) => {
                    assert!(i >= 150, "{key} found too early");
                    assert_eq!(list[at].0, key);
                    list[at].1 = i;
                }
                None => {
                    assert!(i < 150, "{key} missed");
                    list.push((key.into(), i));
                }
            }
        }
        assert_eq!(list.len(), 150);
        assert_eq!(list[3].1, 153);
        assert_eq!(list[149].1, 149);
    }
}

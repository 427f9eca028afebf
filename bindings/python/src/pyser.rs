//! Python objects straight from a dialect's typed document or event: a serde
//! `Serializer` whose output is a Python object, so a parse hands Python its dicts,
//! lists and strs without writing JSON text and reading it back.
//!
//! The objects are the ones `json.loads` would give for the JSON the CLI prints
//! (the same keys in the same order, `None` for `null`, `int` and `float` for
//! numbers). Two caches keep the number of new objects down, which is most of the
//! cost on the Python side: struct field names (`&'static str`, the same few in
//! every item) are made once per conversion, and short string values (`"text"`,
//! `"section"`, `"\n"`, a speaker) are kept in a direct-mapped cache, so that a
//! value repeated through a document is mostly one object: Python strings are
//! immutable, so sharing equal ones is invisible to the caller.
//!
//! The rest of the cost is CPython's garbage collector, which a tree of new
//! containers keeps busy: the collector is paused while a value converts (the GIL
//! is held throughout, so no Python code runs meanwhile), and a dict whose values
//! are all untracked (strs, numbers, `None`, such dicts) is untracked as soon as it
//! is made, as CPython would do at its next collection (it tracks the dict again
//! if a container is put in it). Dict items are set through the C API with
//! borrowed references.

use std::hash::Hasher;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use serde::ser::{self, Serialize};

/// Strings up to this many bytes are shared within one conversion.
pub(crate) const SHARED_STRING_MAX: usize = 24;
/// Slots of the short-string cache of a document's conversion: direct-mapped, a
/// string that lands on a taken slot takes it over, so memory stays bounded on
/// inputs whose short strings are all different.
const STRING_SLOTS: usize = 1024;
/// Slots of the short-string cache of one small value (an event, a delta).
const STRING_SLOTS_ONE_SHOT: usize = 16;
/// Slots of the field-name cache.
const FIELD_SLOTS: usize = 128;
/// Slots of the struct-template cache (see [`Shared::struct_dict`]).
const TEMPLATE_SLOTS: usize = 64;
/// Structs with fewer fields are built key by key, without a template: a new
/// dict has room for five keys, and inserting a few into it costs fewer
/// instructions than copying a template and replacing its values. Measured
/// with callgrind on the conversion of each bench input: kindaxml (two-field
/// segments, annotations and markers) 6% fewer instructions; of the thresholds
/// 3 to 6, 5 was the best or within 0.4% of it for every dialect; sections and
/// plurnk, whose items have more fields, took 26% and 18% more with no
/// templates at all. Such a struct's dict is made when serde starts it (its
/// `len` counts the fields it will serialize) and each field goes in as it is
/// made, without the stack: 2–5% fewer instructions on the calling thread for
/// every bench input (kindaxml 195.6 M -> 185.9 M per 4 MB parse).
const TEMPLATE_MIN_FIELDS: usize = 5;

/// A word-at-a-time multiplicative hash (FxHash's mixing step): the string
/// cache's keys are at most [`SHARED_STRING_MAX`] bytes, a few words, and a
/// byte-at-a-time hash cost more than the lookup it serves.
#[derive(Default)]
struct WordHash(u64);

impl WordHash {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for WordHash {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }
}

/// The hash the short-string cache finds `bytes` by (at most
/// [`SHARED_STRING_MAX`] of them).
#[inline]
fn short_string_hash(bytes: &[u8]) -> u64 {
    let mut hash = WordHash::default();
    hash.write(bytes);
    hash.finish()
}

/// A short string kept for sharing: its bytes, inline, and its object.
struct SharedString<'py> {
    len: u8,
    bytes: [u8; SHARED_STRING_MAX],
    string: Bound<'py, PyString>,
}

/// The objects shared during one conversion (see the module docs).
pub struct Shared<'py> {
    py: Python<'py>,
    /// Field names by address, direct-mapped: a `&'static str` names the same
    /// field every time, and a document has a few dozen of them.
    fields: Vec<Option<(usize, usize, Bound<'py, PyString>)>>,
    /// Short strings by a hash of their bytes, direct-mapped (allocated on the
    /// first short string, `string_slots` of them).
    strings: Vec<Option<SharedString<'py>>>,
    string_slots: usize,
    /// The fields of the structs being converted, innermost last: a struct's
    /// values are made before its dict ([`Shared::struct_dict`]).
    stack: Vec<(&'static str, Bound<'py, PyAny>)>,
    /// Templates of struct dicts by their field names, direct-mapped.
    templates: Vec<Option<Template<'py>>>,
    /// Whether to keep templates: not for one small value ([`to_python`]).
    use_templates: bool,
    /// Working space of [`new_string`].
    latin1: Vec<u8>,
    /// A document's text being put together from its pieces' texts while they
    /// are converted (kindaxml's segments in an overlapped parse: see
    /// [`Joined`]); `None` outside such a conversion.
    pub(crate) joined: Option<Joined>,
}

/// A dict with a struct's keys in order (values `None`), copied to make each
/// dict of that shape: `PyDict_Copy` clones the key table in one piece, and
/// setting a key that is there already only replaces its value, where building
/// the dict key by key inserts each one and grows the table on the way (a dict
/// starts with room for five). The abi3 API has no presized dict.
struct Template<'py> {
    /// The field names, by address and length, as [`Shared::field`] knows them.
    names: Vec<(usize, usize)>,
    /// Their key objects, in order.
    keys: Vec<Bound<'py, PyString>>,
    /// `None` until the shape is seen a second time (a conversion of a few
    /// values, as one event, would only pay for the template).
    dict: Option<Bound<'py, PyDict>>,
}

impl<'py> Shared<'py> {
    /// The GIL token the objects are made with.
    pub(crate) fn py(&self) -> Python<'py> {
        self.py
    }

    /// Empty caches for objects made while `py` holds the GIL.
    pub fn new(py: Python<'py>) -> Self {
        Shared {
            py,
            fields: vec![None; FIELD_SLOTS],
            strings: Vec::new(),
            string_slots: STRING_SLOTS,
            stack: Vec::new(),
            templates: Vec::new(),
            use_templates: true,
            latin1: Vec::new(),
            joined: None,
        }
    }

    /// Empty caches for one small value: struct dicts are built key by key, with
    /// no templates to record (an event, a chat delta).
    fn one_shot(py: Python<'py>) -> Self {
        Shared {
            use_templates: false,
            string_slots: STRING_SLOTS_ONE_SHOT,
            ..Shared::new(py)
        }
    }

    /// The dict of a struct whose fields are `self.stack[start..]` (the caller
    /// takes them off the stack): built key by key if it has fewer than
    /// [`TEMPLATE_MIN_FIELDS`] fields, else a copy of the template of its shape
    /// with the values set, or, the first time a shape is seen, a dict built key
    /// by key. Returns whether every value is untracked by the cyclic collector.
    fn struct_dict(&mut self, start: usize) -> Result<(Bound<'py, PyDict>, bool), Error> {
        let py = self.py;
        let mut atomic = true;
        if self.stack.len() - start < TEMPLATE_MIN_FIELDS {
            let dict = PyDict::new(py);
            for i in start..self.stack.len() {
                let key = self.field(self.stack[i].0).clone();
                let value = &self.stack[i].1;
                atomic &= !tracked(value);
                set_item(&dict, &key, value)?;
            }
            return Ok((dict, atomic));
        }
        let fields = &self.stack[start..];
        let mut hash = WordHash::default();
        for (name, _) in fields {
            hash.mix(name.as_ptr() as u64 ^ ((name.len() as u64) << 48));
        }
        let slot = (hash.finish() >> 32) as usize % TEMPLATE_SLOTS;
        if self.templates.is_empty() {
            self.templates.resize_with(TEMPLATE_SLOTS, || None);
        }
        let same = |t: &Template<'py>| {
            t.names.len() == fields.len()
                && t.names.iter().zip(fields).all(|(&(at, len), (name, _))| {
                    at == name.as_ptr() as usize && len == name.len()
                })
        };
        let dict = match &mut self.templates[slot] {
            Some(template) if same(template) => {
                let copy = match &template.dict {
                    Some(dict) => dict,
                    None => {
                        let dict = PyDict::new(py);
                        for key in &template.keys {
                            set_item(&dict, key, &py.None().into_bound(py))?;
                        }
                        template.dict.insert(dict)
                    }
                };
                // SAFETY: the GIL is held (`py`) and `copy` is a live dict;
                // `PyDict_Copy` returns a new reference or NULL with an error set.
                let dict =
                    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyDict_Copy(copy.as_ptr()))? }
                        .cast_into::<PyDict>()
                        .map_err(PyErr::from)?;
                for (key, (_, value)) in template.keys.iter().zip(&self.stack[start..]) {
                    atomic &= !tracked(value);
                    set_item(&dict, key, value)?;
                }
                dict
            }
            _ => {
                let names = fields
                    .iter()
                    .map(|(name, _)| (name.as_ptr() as usize, name.len()))
                    .collect();
                let names_of: Vec<&'static str> = fields.iter().map(|(name, _)| *name).collect();
                let dict = PyDict::new(py);
                let mut keys = Vec::with_capacity(names_of.len());
                for (i, name) in names_of.into_iter().enumerate() {
                    let key = self.field(name).clone();
                    let value = &self.stack[start + i].1;
                    atomic &= !tracked(value);
                    set_item(&dict, &key, value)?;
                    keys.push(key);
                }
                self.templates[slot] = Some(Template {
                    names,
                    keys,
                    dict: None,
                });
                dict
            }
        };
        Ok((dict, atomic))
    }

    /// The interned key object of a field name.
    #[inline]
    pub(crate) fn field(&mut self, name: &'static str) -> &Bound<'py, PyString> {
        let (at, len) = (name.as_ptr() as usize, name.len());
        let hash = ((at ^ len) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 57;
        let py = self.py;
        let entry = &mut self.fields[hash as usize % FIELD_SLOTS];
        if !matches!(entry, Some((a, l, _)) if *a == at && *l == len) {
            *entry = Some((at, len, PyString::intern(py, name)));
        }
        match entry {
            Some((_, _, key)) => key,
            None => unreachable!("the slot was just filled"),
        }
    }

    /// The `str` of `s`, shared with equal short strings of this conversion.
    pub(crate) fn string(&mut self, s: &str) -> Bound<'py, PyString> {
        if s.len() > SHARED_STRING_MAX {
            return new_string(self.py, s, &mut self.latin1);
        }
        let bytes = s.as_bytes();
        let hash = short_string_hash(bytes);
        if self.strings.is_empty() {
            self.strings.resize_with(self.string_slots, || None);
        }
        let slot = (hash >> 40) as usize % self.strings.len();
        if let Some(kept) = &self.strings[slot] {
            if usize::from(kept.len) == bytes.len() && kept.bytes[..bytes.len()] == *bytes {
                return kept.string.clone();
            }
        }
        let made = new_string(self.py, s, &mut self.latin1);
        let mut kept = [0u8; SHARED_STRING_MAX];
        kept[..bytes.len()].copy_from_slice(bytes);
        self.strings[slot] = Some(SharedString {
            len: bytes.len() as u8,
            bytes: kept,
            string: made.clone(),
        });
        made
    }

    /// The Python object of `value`.
    ///
    /// The cyclic garbage collector is paused meanwhile: a document is a tree of
    /// new containers, which the collector would otherwise traverse again and
    /// again while they are made (a third of kindaxml's conversion, callgrind).
    /// The GIL is held throughout, so no other Python code runs while it is
    /// paused, and its next run sees the new objects.
    pub fn convert<T: Serialize + ?Sized>(&mut self, value: &T) -> PyResult<Bound<'py, PyAny>> {
        let _paused = GcPause::new(self.py);
        let made = value.serialize(ToPython(self)).map_err(|e| e.0);
        if made.is_err() {
            // The fields of the structs the error interrupted.
            self.stack.clear();
        }
        made
    }
}

impl<'py> Shared<'py> {
    /// How a struct of serde's `len` fields starts: without templates, and when
    /// too small for one
    /// (`len` counts the fields it will serialize), its dict is made now and
    /// filled field by field as a map's (`Some`); otherwise its fields go on the
    /// stack from the returned index, for [`Shared::struct_dict`].
    #[inline]
    fn struct_start(&self, len: usize) -> (Option<Bound<'py, PyDict>>, usize) {
        let by_key = !self.use_templates || len < TEMPLATE_MIN_FIELDS;
        (by_key.then(|| PyDict::new(self.py)), self.stack.len())
    }
}

/// Pauses the cyclic garbage collector until dropped (if it was running).
///
/// Also for the few allocations that put converted values together (a list of
/// documents, an iterator over an array): CPython counts every container made
/// since its last collection, and the first one allocated with the collector
/// running starts a collection that traverses all of them (a tenth of
/// kindaxml's conversion, callgrind). Left paused, the count drops again as
/// the caller frees the result; a result kept is traversed once, at the
/// collector's next run, as anything the caller makes.
pub(crate) struct GcPause<'py> {
    _gil: Python<'py>,
    was_enabled: bool,
}

impl<'py> GcPause<'py> {
    /// Pauses the collector while the GIL is held (`py`).
    pub(crate) fn new(py: Python<'py>) -> Self {
        // SAFETY: the GIL is held (`py`); `PyGC_Disable` only clears the
        // collector's flag and returns its previous state.
        let was_enabled = unsafe { ffi::PyGC_Disable() } != 0;
        GcPause {
            _gil: py,
            was_enabled,
        }
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: the GIL is still held (the guard does not outlive `'py`).
            unsafe {
                ffi::PyGC_Enable();
            }
        }
    }
}

/// The Python object of one small `value` (an event, a chat delta), with
/// caches of its own and no struct templates.
pub fn to_python<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    Shared::one_shot(py).convert(value)
}

/// The Python `str` of `s`.
///
/// CPython decodes UTF-8 into a string of its narrowest kind and widens it when
/// a wider character comes, so a text with an accented letter after some ASCII
/// (`"naïve"`, most Western European text) is allocated, copied and resized
/// again. A text whose characters all lie below U+0100 is rewritten here as
/// Latin-1 (one byte each, in `scratch`) and made by `PyUnicode_DecodeLatin1`,
/// which allocates it once at its final kind and size. ASCII and wider texts go
/// to the UTF-8 decoder as before.
#[inline]
fn new_string<'py>(py: Python<'py>, s: &str, scratch: &mut Vec<u8>) -> Bound<'py, PyString> {
    let bytes = s.as_bytes();
    let ascii = ascii_prefix(bytes);
    scratch.clear();
    if ascii == bytes.len() || !to_latin1(bytes, ascii, scratch) {
        return PyString::new(py, s);
    }
    from_latin1(py, scratch).unwrap_or_else(|| PyString::new(py, s))
}

/// The `str` of Latin-1 `bytes`; `None` if Python is out of memory.
fn from_latin1<'py>(py: Python<'py>, bytes: &[u8]) -> Option<Bound<'py, PyString>> {
    decode_latin1(py, bytes).ok()
}

/// The `str` of Latin-1 `bytes`, or Python's error (out of memory).
fn decode_latin1<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    // SAFETY: the GIL is held (`py`); `bytes` is a live slice, which Latin-1
    // decodes one character per byte; the call returns a new reference or
    // NULL with an error set (no memory).
    let made = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyUnicode_DecodeLatin1(
                bytes.as_ptr().cast(),
                bytes.len() as ffi::Py_ssize_t,
                std::ptr::null(),
            ),
        )
    };
    made.and_then(|made| made.cast_into::<PyString>().map_err(PyErr::from))
}

/// A document's text put together as Latin-1 from the texts of its pieces
/// while they are converted, in order, so that the document's `str` is one copy
/// at the end: for kindaxml, whose segments' texts concatenate to its text
/// (KX-22), the parsing thread of an overlapped parse so need not rewrite the
/// whole text once the parse has ended, a serial step of about half a
/// millisecond per 4 MB. Holds nothing once a character from U+0100 on comes:
/// such a text goes to CPython's UTF-8 decoder whole, as [`new_string`] sends it.
#[derive(Default)]
pub(crate) struct Joined {
    /// The Latin-1 form of the texts so far (until one is `wide`).
    latin1: Vec<u8>,
    /// Their length in UTF-8 bytes: a check against the whole text.
    utf8_len: usize,
    /// A character from U+0100 on has come.
    wide: bool,
}

impl Joined {
    /// An empty text with room for `len` bytes of Latin-1, so that it is not
    /// copied as it grows (about 0.4 ms of a 4 MB kindaxml `parse`).
    pub(crate) fn with_capacity(len: usize) -> Joined {
        Joined {
            latin1: Vec::with_capacity(len),
            ..Joined::default()
        }
    }
    /// Appends `s`, the next piece's text, and gives its `str`.
    pub(crate) fn push<'py>(&mut self, shared: &mut Shared<'py>, s: &str) -> Bound<'py, PyString> {
        self.utf8_len += s.len();
        if self.wide {
            return shared.string(s);
        }
        let bytes = s.as_bytes();
        let start = self.latin1.len();
        if !to_latin1(bytes, ascii_prefix(bytes), &mut self.latin1) {
            self.wide = true;
            self.latin1 = Vec::new();
            return shared.string(s);
        }
        if bytes.len() <= SHARED_STRING_MAX {
            return shared.string(s);
        }
        from_latin1(shared.py, &self.latin1[start..]).unwrap_or_else(|| PyString::new(shared.py, s))
    }

    /// The `str` of `whole`, the text of every piece pushed, from the Latin-1
    /// form put together if it is whole and `whole` is what was pushed.
    pub(crate) fn finish<'py>(self, shared: &mut Shared<'py>, whole: &str) -> Bound<'py, PyString> {
        if self.wide || self.utf8_len != whole.len() {
            return shared.string(whole);
        }
        from_latin1(shared.py, &self.latin1).unwrap_or_else(|| PyString::new(shared.py, whole))
    }
}

/// How many bytes `bytes` starts with that are ASCII, eight at a time.
#[inline]
fn ascii_prefix(bytes: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let high = u64::from_le_bytes(w) & HIGH;
        if high != 0 {
            return at + (high.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + words
        .remainder()
        .iter()
        .take_while(|b| b.is_ascii())
        .count()
}

/// Appends UTF-8 `bytes`, whose first `ascii` bytes are ASCII, to `out` as
/// Latin-1; false when a character is U+0100 or above (`out` then holds a part).
fn to_latin1(bytes: &[u8], ascii: usize, out: &mut Vec<u8>) -> bool {
    out.reserve(bytes.len());
    out.extend_from_slice(&bytes[..ascii]);
    let mut rest = &bytes[ascii..];
    loop {
        match rest {
            [] => return true,
            // U+0080..U+00FF: two bytes led by 0xC2 or 0xC3 (`bytes` is UTF-8).
            [lead @ (0xc2 | 0xc3), next, tail @ ..] => {
                out.push(((lead & 0x03) << 6) | (next & 0x3f));
                rest = tail;
            }
            [b, ..] if b.is_ascii() => {
                let run = ascii_prefix(rest);
                out.extend_from_slice(&rest[..run]);
                rest = &rest[run..];
            }
            _ => return false,
        }
    }
}

/// A Python error carried through serde.
#[derive(Debug)]
pub struct Error(PyErr);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error(PyValueError::new_err(format!(
            "cannot convert a document: {msg}"
        )))
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error(e)
    }
}

/// The serializer: one value in, one Python object out.
struct ToPython<'a, 'py>(&'a mut Shared<'py>);

type Out<'py> = Result<Bound<'py, PyAny>, Error>;

/// A list being built.
struct Seq<'a, 'py> {
    shared: &'a mut Shared<'py>,
    items: Vec<Bound<'py, PyAny>>,
    /// For a tuple variant: the variant's name, the key of the one-entry dict.
    variant: Option<&'static str>,
}

/// A dict being built: a map's item by item, a struct's from its fields on
/// [`Shared::stack`] once they are all made (item by item too without
/// templates, [`Shared::one_shot`]).
struct Map<'a, 'py> {
    shared: &'a mut Shared<'py>,
    /// The dict filled item by item (`None` for a struct made from a template).
    dict: Option<Bound<'py, PyDict>>,
    /// Where a struct's fields start on the stack.
    start: usize,
    key: Option<Bound<'py, PyAny>>,
    /// For a struct variant: the variant's name, the key of the one-entry dict.
    variant: Option<&'static str>,
    /// Whether every value so far is one the cyclic collector does not track
    /// (a str, a number, `None`, or a dict of such values).
    atomic: bool,
}

/// `dict[key] = value`, through the C API with borrowed references (no
/// reference count changes, no conversions).
#[inline]
fn set_item(
    dict: &Bound<'_, PyDict>,
    key: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> Result<(), Error> {
    // SAFETY: the three objects are alive (borrowed `Bound`s, so the GIL is
    // held), `dict` is a dict, and `PyDict_SetItem` takes its own references.
    if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
        return Err(Error(PyErr::fetch(dict.py())));
    }
    Ok(())
}

/// Whether the cyclic collector tracks `value` (containers, unless untracked).
fn tracked(value: &Bound<'_, PyAny>) -> bool {
    // SAFETY: `value` is alive and the GIL is held (a borrowed `Bound`).
    unsafe { ffi::PyObject_GC_IsTracked(value.as_ptr()) != 0 }
}

/// Stops the cyclic collector tracking `dict`, whose values are all untracked:
/// no reference cycle can pass through it. CPython does the same to such dicts
/// at its next collection (after traversing them); done here, the collector
/// never has to. CPython tracks the dict again when a container is put in it.
fn untrack(dict: &Bound<'_, PyDict>) {
    // SAFETY: `dict` is alive, the GIL is held, and untracking a dict is what
    // CPython's own `_PyDict_MaybeUntrack` does.
    unsafe { ffi::PyObject_GC_UnTrack(dict.as_ptr().cast()) }
}

#[inline]
fn wrap<'py>(
    shared: &mut Shared<'py>,
    variant: Option<&'static str>,
    value: Bound<'py, PyAny>,
) -> Out<'py> {
    match variant {
        None => Ok(value),
        Some(name) => {
            let outer = PyDict::new(shared.py);
            set_item(&outer, shared.field(name), &value)?;
            if !tracked(&value) {
                untrack(&outer);
            }
            Ok(outer.into_any())
        }
    }
}

impl<'a, 'py> ser::Serializer for ToPython<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Seq<'a, 'py>;
    type SerializeTuple = Seq<'a, 'py>;
    type SerializeTupleStruct = Seq<'a, 'py>;
    type SerializeTupleVariant = Seq<'a, 'py>;
    type SerializeMap = Map<'a, 'py>;
    type SerializeStruct = Map<'a, 'py>;
    type SerializeStructVariant = Map<'a, 'py>;

    fn serialize_bool(self, v: bool) -> Out<'py> {
        Ok(PyBool::new(self.0.py, v).to_owned().into_any())
    }
    fn serialize_i8(self, v: i8) -> Out<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Out<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Out<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Out<'py> {
        Ok(PyInt::new(self.0.py, v).into_any())
    }
    fn serialize_i128(self, v: i128) -> Out<'py> {
        Ok(PyInt::new(self.0.py, v).into_any())
    }
    fn serialize_u8(self, v: u8) -> Out<'py> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Out<'py> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Out<'py> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Out<'py> {
        Ok(PyInt::new(self.0.py, v).into_any())
    }
    fn serialize_u128(self, v: u128) -> Out<'py> {
        Ok(PyInt::new(self.0.py, v).into_any())
    }
    fn serialize_f32(self, v: f32) -> Out<'py> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Out<'py> {
        // JSON has no NaN or infinity: serde_json writes them as null.
        if v.is_finite() {
            Ok(PyFloat::new(self.0.py, v).into_any())
        } else {
            Ok(self.0.py.None().into_bound(self.0.py))
        }
    }
    fn serialize_char(self, v: char) -> Out<'py> {
        let mut buf = [0u8; 4];
        Ok(self.0.string(v.encode_utf8(&mut buf)).into_any())
    }
    fn serialize_str(self, v: &str) -> Out<'py> {
        Ok(self.0.string(v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Out<'py> {
        // As serde_json: bytes are a list of numbers.
        let items: Vec<Bound<'py, PyAny>> = v
            .iter()
            .map(|&b| PyInt::new(self.0.py, b).into_any())
            .collect();
        Ok(PyList::new(self.0.py, items)?.into_any())
    }
    fn serialize_none(self) -> Out<'py> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Out<'py> {
        Ok(self.0.py.None().into_bound(self.0.py))
    }
    fn serialize_unit_struct(self, _: &'static str) -> Out<'py> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Out<'py> {
        Ok(self.0.field(variant).clone().into_any())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Out<'py> {
        let inner = value.serialize(ToPython(&mut *self.0))?;
        wrap(self.0, Some(variant), inner)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'a, 'py>, Error> {
        Ok(Seq {
            shared: self.0,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq<'a, 'py>, Error> {
        let mut seq = self.serialize_seq(Some(len))?;
        seq.variant = Some(variant);
        Ok(seq)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Map<'a, 'py>, Error> {
        let dict = PyDict::new(self.0.py);
        let start = self.0.stack.len();
        Ok(Map {
            shared: self.0,
            dict: Some(dict),
            start,
            key: None,
            variant: None,
            atomic: true,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Map<'a, 'py>, Error> {
        let (dict, start) = self.0.struct_start(len);
        Ok(Map {
            shared: self.0,
            dict,
            start,
            key: None,
            variant: None,
            atomic: true,
        })
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Map<'a, 'py>, Error> {
        let mut map = self.serialize_struct(variant, len)?;
        map.variant = Some(variant);
        Ok(map)
    }
}

impl<'py> Seq<'_, 'py> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let item = value.serialize(ToPython(&mut *self.shared))?;
        self.items.push(item);
        Ok(())
    }
    fn done(self) -> Out<'py> {
        let list = PyList::new(self.shared.py, self.items)?.into_any();
        wrap(self.shared, self.variant, list)
    }
}

impl<'py> ser::SerializeSeq for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Out<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeTuple for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Out<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeTupleStruct for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Out<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeTupleVariant for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Out<'py> {
        self.done()
    }
}

impl<'py> Map<'_, 'py> {
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        let value = value.serialize(ToPython(&mut *self.shared))?;
        match &self.dict {
            Some(dict) => {
                self.atomic &= !tracked(&value);
                set_item(dict, self.shared.field(key), &value)
            }
            None => {
                self.shared.stack.push((key, value));
                Ok(())
            }
        }
    }
    fn done(self) -> Out<'py> {
        let (dict, atomic) = match self.dict {
            Some(dict) => (dict, self.atomic),
            None => {
                let made = self.shared.struct_dict(self.start);
                self.shared.stack.truncate(self.start);
                made?
            }
        };
        if atomic {
            untrack(&dict);
        }
        wrap(self.shared, self.variant, dict.into_any())
    }
}

impl<'py> ser::SerializeMap for Map<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let key = key.serialize(ToPython(&mut *self.shared))?;
        if !key.is_instance_of::<PyString>() {
            // JSON object keys are strings; idiolect's maps all have string keys.
            return Err(ser::Error::custom("a map key that is not a string"));
        }
        self.key = Some(key);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("a map value without a key"))?;
        let value = value.serialize(ToPython(&mut *self.shared))?;
        self.atomic &= !tracked(&value);
        let dict = self
            .dict
            .as_ref()
            .ok_or_else(|| <Error as ser::Error>::custom("a map entry in a struct"))?;
        dict.set_item(key, value)?;
        Ok(())
    }
    fn end(self) -> Out<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeStruct for Map<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Out<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeStructVariant for Map<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Out<'py> {
        self.done()
    }
}

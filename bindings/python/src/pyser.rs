//! Python objects straight from a dialect's typed document or event: a serde
//! `Serializer` whose output is a Python object, so a parse hands Python its dicts,
//! lists and strs without writing JSON text and reading it back.
//!
//! The objects are the ones `json.loads` would give for the JSON the CLI prints
//! (the same keys in the same order, `None` for `null`, `int` and `float` for
//! numbers). Two caches keep the number of new objects down, which is most of the
//! cost on the Python side: struct field names (`&'static str`, the same few in
//! every item) are made once per conversion, and so are short string values
//! (`"text"`, `"section"`, `"\n"`, a speaker): Python strings are immutable, so
//! sharing equal ones is invisible to the caller.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use serde::ser::{self, Serialize};

/// Strings up to this many bytes are shared within one conversion.
const SHARED_STRING_MAX: usize = 24;
/// At most this many distinct short strings are kept (memory stays bounded on
/// inputs whose short strings are all different).
const SHARED_STRING_CAP: usize = 4096;

/// The FNV-1a hash: the caches' keys are short, and SipHash costs more than the
/// allocation it saves.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
    fn write_usize(&mut self, n: usize) {
        self.write(&n.to_le_bytes());
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// The objects shared during one conversion (see the module docs).
pub struct Shared<'py> {
    py: Python<'py>,
    /// Field names by address: a `&'static str` names the same field every time.
    fields: FastMap<(usize, usize), Bound<'py, PyString>>,
    strings: FastMap<Box<str>, Bound<'py, PyString>>,
}

impl<'py> Shared<'py> {
    /// Empty caches for objects made while `py` holds the GIL.
    pub fn new(py: Python<'py>) -> Self {
        Shared {
            py,
            fields: FastMap::default(),
            strings: FastMap::default(),
        }
    }

    fn field(&mut self, name: &'static str) -> Bound<'py, PyString> {
        let py = self.py;
        self.fields
            .entry((name.as_ptr() as usize, name.len()))
            .or_insert_with(|| PyString::intern(py, name))
            .clone()
    }

    fn string(&mut self, s: &str) -> Bound<'py, PyString> {
        if s.len() > SHARED_STRING_MAX {
            return PyString::new(self.py, s);
        }
        if let Some(shared) = self.strings.get(s) {
            return shared.clone();
        }
        let made = PyString::new(self.py, s);
        if self.strings.len() < SHARED_STRING_CAP {
            self.strings.insert(s.into(), made.clone());
        }
        made
    }

    /// The Python object of `value`.
    pub fn convert<T: Serialize + ?Sized>(&mut self, value: &T) -> PyResult<Bound<'py, PyAny>> {
        value.serialize(ToPython(self)).map_err(|e| e.0)
    }
}

/// The Python object of `value`, with caches of its own.
pub fn to_python<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    Shared::new(py).convert(value)
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

/// A dict being built.
struct Map<'a, 'py> {
    shared: &'a mut Shared<'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyAny>>,
    /// For a struct variant: the variant's name, the key of the one-entry dict.
    variant: Option<&'static str>,
}

fn wrap<'py>(
    shared: &mut Shared<'py>,
    variant: Option<&'static str>,
    value: Bound<'py, PyAny>,
) -> Out<'py> {
    match variant {
        None => Ok(value),
        Some(name) => {
            let outer = PyDict::new(shared.py);
            outer.set_item(shared.field(name), value)?;
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
        Ok(self.0.field(variant).into_any())
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
        Ok(Map {
            shared: self.0,
            dict,
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Map<'a, 'py>, Error> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Map<'a, 'py>, Error> {
        let mut map = self.serialize_map(None)?;
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
        self.dict.set_item(self.shared.field(key), value)?;
        Ok(())
    }
    fn done(self) -> Out<'py> {
        wrap(self.shared, self.variant, self.dict.into_any())
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
        self.dict.set_item(key, value)?;
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

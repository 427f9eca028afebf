//! JSON between Rust and Python: documents and events become Python objects
//! straight from the JSON bytes a session writes (no `serde_json::Value` tree on
//! the way), and options and render input become `serde_json::Value`s.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// How deep options or render input may nest: deeper data is refused with a
/// `ValueError` instead of recursing without bound (a list that contains itself).
pub const MAX_NESTING: usize = 256;

/// Builds the Python object of one JSON value as serde reads it.
#[derive(Clone, Copy)]
struct Build<'py>(Python<'py>);

/// Builds a dict key: keys repeat in every event and item, so they are interned.
#[derive(Clone, Copy)]
struct Key<'py>(Python<'py>);

impl<'de, 'py> DeserializeSeed<'de> for Build<'py> {
    type Value = Bound<'py, PyAny>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 'py> DeserializeSeed<'de> for Key<'py> {
    type Value = Bound<'py, PyString>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, 'py> Visitor<'de> for Key<'py> {
    type Value = Bound<'py, PyString>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PyString::intern(self.0, v))
    }
}

fn py_error<E: de::Error>(e: PyErr) -> E {
    E::custom(e.to_string())
}

impl<'de, 'py> Visitor<'de> for Build<'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.None().into_bound(self.0))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(PyBool::new(self.0, v).to_owned().into_any())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(PyInt::new(self.0, v).into_any())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(PyInt::new(self.0, v).into_any())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(PyFloat::new(self.0, v).into_any())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.0, v).into_any())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let list = PyList::empty(self.0);
        while let Some(item) = seq.next_element_seed(self)? {
            list.append(item).map_err(py_error)?;
        }
        Ok(list.into_any())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let dict = PyDict::new(self.0);
        while let Some(key) = map.next_key_seed(Key(self.0))? {
            let value = map.next_value_seed(self)?;
            dict.set_item(key, value).map_err(py_error)?;
        }
        Ok(dict.into_any())
    }
}

/// The Python object of the JSON text `bytes` (written by a session).
pub fn from_json<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    reader.disable_recursion_limit();
    let value = Build(py)
        .deserialize(&mut reader)
        .and_then(|v| reader.end().map(|_| v))
        .map_err(|e| PyRuntimeError::new_err(format!("idiolect wrote JSON it cannot read: {e}")))?;
    Ok(value)
}

/// The Python objects of JSON Lines text (a session's events), appended to `list`.
pub fn lines_into(py: Python<'_>, bytes: &[u8], list: &Bound<'_, PyList>) -> PyResult<()> {
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        list.append(from_json(py, line)?)?;
    }
    Ok(())
}

/// The Python type name of `obj`, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// The JSON value of Python data: `dict` with `str` keys, `list`, `tuple`, `str`,
/// `int`, `float`, `bool` and `None`. `what` names the argument in messages.
pub fn to_value(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    to_value_at(obj, what, 0)
}

fn to_value_at(obj: &Bound<'_, PyAny>, what: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_NESTING {
        return Err(PyValueError::new_err(format!(
            "{what} nests deeper than {MAX_NESTING} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        // Past 64 bits an integer becomes a double, as in a JSON options file read
        // by the CLI; the dialect then says what it expected.
        let f = obj.extract::<f64>().map_err(|_| {
            PyValueError::new_err(format!("{what} holds an integer too large for JSON"))
        })?;
        return finite(f, what);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return finite(f.value(), what);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{what} keys must be str, not {}",
                    type_name(&k)
                )));
            };
            map.insert(key.to_str()?.to_owned(), to_value_at(&v, what, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            items.push(to_value_at(&item?, what, depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be JSON data (dict, list, tuple, str, int, float, bool or None), found {}",
        type_name(obj)
    )))
}

fn finite(f: f64, what: &str) -> PyResult<Value> {
    Number::from_f64(f).map(Value::Number).ok_or_else(|| {
        PyValueError::new_err(format!("{what} holds {f}, which JSON cannot represent"))
    })
}

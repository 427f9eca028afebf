//! kindaxml's document made into Python objects by code that knows its shape,
//! not by serde's walk ([`crate::pyser`]).
//!
//! kindaxml's document has the most Python objects per byte of any dialect (a
//! dict, a str and a list per segment, two dicts per annotation), so the
//! conversion, which holds the GIL and is the serial part of `parse`, costs
//! more than the parse it overlaps. Serde's walk adds, per value, a state
//! machine, a check of whether each value is tracked by the cyclic collector,
//! and a `Vec` per list; here a list is made at its final length and filled in
//! place, and whether a dict may be untracked is known from what was put in
//! it.
//!
//! The objects are exactly those of the serde walk: the same keys in the same
//! order (the fields' declaration order; `recovery` only when there is one),
//! the same shared short strings (through [`Shared`]). The corpus replay
//! (`tests/test_corpus.py`, every kindaxml case whole) and the large-input
//! test (`tests/test_large.py`, the overlapped path) compare them with the
//! expected documents.

use idiolect::kindaxml::{Annotation, AttrValue, Attrs, Document, Marker};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};

use crate::pyser::{GcPause, Shared};

/// A new object and whether the cyclic collector tracks it.
type Made<'py> = (Bound<'py, PyAny>, bool);

/// `dict[key] = value` with borrowed references.
#[inline]
fn set(
    dict: &Bound<'_, PyDict>,
    key: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: the GIL is held (the `Bound`s are alive), `dict` is a dict, and
    // `PyDict_SetItem` takes its own references.
    if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), value.as_ptr()) } < 0 {
        return Err(PyErr::fetch(dict.py()));
    }
    Ok(())
}

/// A list of `len` items made by `item` (called with 0..len in order), made
/// at its length and filled in place.
fn list<'py>(
    py: Python<'py>,
    len: usize,
    mut item: impl FnMut(usize) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let n = ffi::Py_ssize_t::try_from(len)
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("a list too long"))?;
    // SAFETY: the GIL is held (`py`); `PyList_New` returns a new reference or
    // NULL with an error set.
    let made = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(n))? };
    for i in 0..len {
        let value = item(i)?;
        // SAFETY: `made` is a list of `n` slots and `i < n`; `PyList_SetItem`
        // steals the reference `into_ptr` gives up. Should `item` fail, the
        // slots not yet set are NULL, which a list's deallocation skips.
        if unsafe { ffi::PyList_SetItem(made.as_ptr(), i as ffi::Py_ssize_t, value.into_ptr()) } < 0
        {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(made)
}

/// Stops the collector tracking `dict` when nothing in it is tracked (see
/// [`crate::pyser`]: CPython would do the same at its next collection).
#[inline]
fn untrack_if(dict: &Bound<'_, PyDict>, tracked: bool) {
    if !tracked {
        // SAFETY: `dict` is alive, the GIL is held, and none of its values is
        // a tracked container, so no reference cycle can pass through it.
        unsafe { ffi::PyObject_GC_UnTrack(dict.as_ptr().cast()) }
    }
}

fn attr_value<'py>(shared: &mut Shared<'py>, value: &AttrValue) -> PyResult<Made<'py>> {
    let py = shared.py();
    Ok(match value {
        AttrValue::Text(text) => (shared.string(text).into_any(), false),
        AttrValue::Flag(flag) => (PyBool::new(py, *flag).to_owned().into_any(), false),
        AttrValue::List(values) => (
            list(py, values.len(), |i| Ok(attr_value(shared, &values[i])?.0))?,
            true,
        ),
    })
}

fn attrs<'py>(shared: &mut Shared<'py>, attrs: &Attrs) -> PyResult<Made<'py>> {
    let dict = PyDict::new(shared.py());
    let mut tracked = false;
    for (key, value) in attrs.iter() {
        let key = shared.string(key);
        let (value, value_tracked) = attr_value(shared, value)?;
        tracked |= value_tracked;
        set(&dict, &key, &value)?;
    }
    untrack_if(&dict, tracked);
    Ok((dict.into_any(), tracked))
}

fn annotation<'py>(shared: &mut Shared<'py>, annotation: &Annotation) -> PyResult<Made<'py>> {
    let dict = PyDict::new(shared.py());
    let tag = shared.string(&annotation.tag);
    set(&dict, shared.field("tag"), &tag)?;
    let (attrs, tracked) = attrs(shared, &annotation.attrs)?;
    set(&dict, shared.field("attrs"), &attrs)?;
    if let Some(recovery) = &annotation.recovery {
        // A unit variant: serde's walk gives its name as it spells it.
        let recovery = shared.convert(recovery)?;
        set(&dict, shared.field("recovery"), &recovery)?;
    }
    untrack_if(&dict, tracked);
    Ok((dict.into_any(), tracked))
}

/// A segment's dict (`{"text", "annotations"}`), of its text's `str`.
pub fn segment<'py>(
    shared: &mut Shared<'py>,
    text: Bound<'py, PyString>,
    annotations: &[Annotation],
) -> PyResult<Bound<'py, PyAny>> {
    let py = shared.py();
    let dict = PyDict::new(py);
    set(&dict, shared.field("text"), &text)?;
    let annotations = list(py, annotations.len(), |i| {
        Ok(annotation(shared, &annotations[i])?.0)
    })?;
    set(&dict, shared.field("annotations"), &annotations)?;
    Ok(dict.into_any())
}

/// A marker's dict (`{"pos", "annotation"}`).
pub fn marker<'py>(shared: &mut Shared<'py>, marker: &Marker) -> PyResult<Bound<'py, PyAny>> {
    let dict = PyDict::new(shared.py());
    let pos = PyInt::new(shared.py(), marker.pos).into_any();
    set(&dict, shared.field("pos"), &pos)?;
    let (annotation, tracked) = annotation(shared, &marker.annotation)?;
    set(&dict, shared.field("annotation"), &annotation)?;
    untrack_if(&dict, tracked);
    Ok(dict.into_any())
}

/// The document's dict (`{"text", "segments", "markers"}`). In an overlapped
/// parse, whose settled segments came first ([`Shared::joined`] holds their
/// texts), its text is theirs and these segments' put together.
pub fn document<'py>(shared: &mut Shared<'py>, document: &Document) -> PyResult<Bound<'py, PyAny>> {
    let py = shared.py();
    let _paused = GcPause::new(py);
    let mut joined = shared.joined.take();
    let segments = &document.segments;
    let segments = list(py, segments.len(), |i| {
        let segment_text = &segments[i].text;
        let text = match &mut joined {
            Some(joined) => joined.push(shared, segment_text),
            None => shared.string(segment_text),
        };
        segment(shared, text, &segments[i].annotations)
    })?;
    let text = match joined {
        Some(joined) => joined.finish(shared, &document.text),
        None => shared.string(&document.text),
    };
    let markers = &document.markers;
    let markers = list(py, markers.len(), |i| marker(shared, &markers[i]))?;
    let dict = PyDict::new(py);
    set(&dict, shared.field("text"), &text)?;
    set(&dict, shared.field("segments"), &segments)?;
    set(&dict, shared.field("markers"), &markers)?;
    Ok(dict.into_any())
}

//! A typed document recorded as one contiguous buffer by the thread that parsed
//! it, and replayed into the Python conversion ([`crate::pyser`]) by the calling
//! thread.
//!
//! `parse_many`'s helpers parse on one core while the calling thread converts on
//! the other. A typed document is a tree of small heap blocks; converting it
//! where it was not built reads every block from the other core's cache, one
//! pointer at a time. On the 2-core machine the benchmark runs on, that made the
//! calling thread's conversion of a helper's document up to 3 times slower
//! than of a document it had just parsed itself (kindaxml: `direct::annotation`
//! 10 times, the `str` copies 4 times the samples, `perf`), and `parse_many` on
//! two threads no faster than on one in some runs. A tape is read front to back,
//! which the hardware prefetches; the helper drops the typed document itself,
//! where it is still in its cache, so no block is freed across threads.
//!
//! The tape records the serde calls the conversion tells apart, in order: a
//! struct with its `len` and its fields' names, a string, a number, an enum
//! variant. The conversion reads it back as [`Item`]s
//! ([`crate::pyser::Shared::convert_tape`]) and builds the same objects, the same
//! templates and shared strings, as serde's walk of the typed document
//! ([`crate::pyser::Shared::convert`]) would. What serde gives only to say the
//! same value another way is recorded as that value, as the conversion treats
//! it: `Some(x)` and a newtype struct as `x`; `None`, a unit and a unit struct as
//! a unit; a tuple and a tuple struct as a sequence of known length; a `char` as
//! a string.
//!
//! The writer also does the part of making a `str` that needs no GIL: a short
//! string (one the conversion shares) is recorded with the hash the conversion's
//! cache looks it up by, and a longer one whose characters all lie below U+0100
//! as Latin-1 (see [`crate::pyser`]'s `new_string`), so the calling thread only
//! copies it.
//!
//! A struct's, field's or variant's name is a `&'static str`, kept in the
//! tape's table of names and recorded by its index there (a u32).

use std::fmt;

use serde::ser::{self, Serialize};

use crate::pyser::{ascii_prefix, short_string_hash, to_latin1, SHARED_STRING_MAX};

/// A value recorded by [`Tape::record`], read back by [`Tape::reader`].
pub struct Tape {
    bytes: Vec<u8>,
    /// The names the tape refers to by their index (u32).
    names: Vec<&'static str>,
}

/// The tape's operations, one byte each, followed by their operands.
mod op {
    pub const UNIT: u8 = 0;
    pub const FALSE: u8 = 1;
    pub const TRUE: u8 = 2;
    pub const I64: u8 = 3;
    pub const U64: u8 = 4;
    pub const I128: u8 = 5;
    pub const U128: u8 = 6;
    pub const F64: u8 = 7;
    /// A string of at most `SHARED_STRING_MAX` bytes: its hash (u64), its
    /// length (u8) and its UTF-8.
    pub const SHORT_STR: u8 = 8;
    /// A longer string with no character from U+0100 on: a length (u64) and
    /// that many bytes of Latin-1.
    pub const LATIN1_STR: u8 = 19;
    /// Any other string: a length (u64) and that many bytes of UTF-8.
    pub const UTF8_STR: u8 = 20;
    /// A length (u64) and that many bytes.
    pub const BYTES: u8 = 9;
    /// A name, a variant index (u32) and a variant name (names: u32 indexes).
    pub const UNIT_VARIANT: u8 = 10;
    /// As `UNIT_VARIANT`, then the value.
    pub const NEWTYPE_VARIANT: u8 = 11;
    /// A length (u64, `u64::MAX` for none), the elements, `END`.
    pub const SEQ: u8 = 12;
    /// As `UNIT_VARIANT`, a length (u64), the elements, `END`.
    pub const TUPLE_VARIANT: u8 = 13;
    /// A length (u64, `u64::MAX` for none), key and value after key and value, `END`.
    pub const MAP: u8 = 14;
    /// A name and a length (u64), then `FIELD`s, `END`.
    pub const STRUCT: u8 = 15;
    /// As `UNIT_VARIANT`, a length (u64), then `FIELD`s, `END`.
    pub const STRUCT_VARIANT: u8 = 16;
    /// A field's name, then its value.
    pub const FIELD: u8 = 17;
    /// The end of a sequence, map or struct.
    pub const END: u8 = 18;
}

/// An error of a value's own `Serialize` impl while it was recorded.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

impl Tape {
    /// `value` recorded into `buffer` (cleared first; pass an old tape's
    /// [`Tape::into_buffer`] to reuse its memory).
    pub fn record<T: Serialize + ?Sized>(value: &T, mut buffer: Vec<u8>) -> Result<Tape, Error> {
        buffer.clear();
        let mut writer = Writer {
            out: buffer,
            names: Vec::new(),
            slots: [None; NAME_SLOTS],
            scratch: Vec::new(),
        };
        value.serialize(&mut writer)?;
        Ok(Tape {
            bytes: writer.out,
            names: writer.names,
        })
    }

    /// The tape's memory, for [`Tape::record`] to record another value in.
    pub fn into_buffer(self) -> Vec<u8> {
        self.bytes
    }

    /// Reads the tape from its start.
    pub fn reader(&self) -> Reader<'_> {
        Reader {
            bytes: &self.bytes,
            names: &self.names,
            at: 0,
        }
    }
}

/// Slots of the writer's table of the names it has recorded.
const NAME_SLOTS: usize = 64;

/// Writes the tape (see the module docs).
struct Writer {
    out: Vec<u8>,
    names: Vec<&'static str>,
    /// Names already in `names`, with their indexes, by a hash of their address.
    slots: [Option<(&'static str, u32)>; NAME_SLOTS],
    /// Working space of the Latin-1 rewriting.
    scratch: Vec<u8>,
}

impl Writer {
    #[inline]
    fn op(&mut self, op: u8) {
        self.out.push(op);
    }
    #[inline]
    fn word(&mut self, n: u64) {
        self.out.extend_from_slice(&n.to_le_bytes());
    }
    #[inline]
    fn len(&mut self, len: Option<usize>) {
        self.word(len.map_or(u64::MAX, |n| n as u64));
    }
    #[inline]
    fn name(&mut self, name: &'static str) {
        // A document names a few dozen fields and variants, over and over:
        // each is looked up by its address in a small direct-mapped table,
        // and added to the tape's names when it is not there.
        let at = name.as_ptr() as usize;
        let slot = (at ^ (at >> 7) ^ name.len()) % NAME_SLOTS;
        let index = match self.slots[slot] {
            Some((known, index)) if std::ptr::eq(known, name) => index,
            _ => {
                let index = self.names.len() as u32;
                self.names.push(name);
                self.slots[slot] = Some((name, index));
                index
            }
        };
        self.out.extend_from_slice(&index.to_le_bytes());
    }
    #[inline]
    fn variant(&mut self, name: &'static str, index: u32, variant: &'static str) {
        self.name(name);
        self.out.extend_from_slice(&index.to_le_bytes());
        self.name(variant);
    }
    #[inline]
    fn bytes(&mut self, op: u8, bytes: &[u8]) {
        self.op(op);
        self.word(bytes.len() as u64);
        self.out.extend_from_slice(bytes);
    }
}

type Done = Result<(), Error>;

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = &'a mut Writer;
    type SerializeTuple = &'a mut Writer;
    type SerializeTupleStruct = &'a mut Writer;
    type SerializeTupleVariant = &'a mut Writer;
    type SerializeMap = &'a mut Writer;
    type SerializeStruct = &'a mut Writer;
    type SerializeStructVariant = &'a mut Writer;

    fn serialize_bool(self, v: bool) -> Done {
        self.op(if v { op::TRUE } else { op::FALSE });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Done {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Done {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Done {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Done {
        self.op(op::I64);
        self.out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Done {
        self.op(op::I128);
        self.out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Done {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Done {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Done {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Done {
        self.op(op::U64);
        self.word(v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Done {
        self.op(op::U128);
        self.out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Done {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Done {
        self.op(op::F64);
        self.word(v.to_bits());
        Ok(())
    }
    fn serialize_char(self, v: char) -> Done {
        let mut buf = [0u8; 4];
        self.serialize_str(v.encode_utf8(&mut buf))
    }
    fn serialize_str(self, v: &str) -> Done {
        let bytes = v.as_bytes();
        if bytes.len() <= SHARED_STRING_MAX {
            self.op(op::SHORT_STR);
            self.word(short_string_hash(bytes));
            self.out.push(bytes.len() as u8);
            self.out.extend_from_slice(bytes);
        } else {
            let ascii = ascii_prefix(bytes);
            if ascii == bytes.len() {
                self.bytes(op::LATIN1_STR, bytes);
            } else if to_latin1(bytes, ascii, &mut self.scratch) {
                let latin1 = std::mem::take(&mut self.scratch);
                self.bytes(op::LATIN1_STR, &latin1);
                self.scratch = latin1;
            } else {
                self.bytes(op::UTF8_STR, bytes);
            }
        }
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Done {
        self.bytes(op::BYTES, v);
        Ok(())
    }
    fn serialize_none(self) -> Done {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Done {
        self.op(op::UNIT);
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Done {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, name: &'static str, index: u32, variant: &'static str) -> Done {
        self.op(op::UNIT_VARIANT);
        self.variant(name, index, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Done {
        self.op(op::NEWTYPE_VARIANT);
        self.variant(name, index, variant);
        value.serialize(self)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self, Error> {
        self.op(op::SEQ);
        self.len(len);
        Ok(self)
    }
    fn serialize_tuple(self, len: usize) -> Result<Self, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Self, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self, Error> {
        self.op(op::TUPLE_VARIANT);
        self.variant(name, index, variant);
        self.len(Some(len));
        Ok(self)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self, Error> {
        self.op(op::MAP);
        self.len(len);
        Ok(self)
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self, Error> {
        self.op(op::STRUCT);
        self.name(name);
        self.len(Some(len));
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self, Error> {
        self.op(op::STRUCT_VARIANT);
        self.variant(name, index, variant);
        self.len(Some(len));
        Ok(self)
    }
}

/// The four sequence traits of serde: each element is recorded in turn, and
/// the end as `END`.
macro_rules! sequence {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for &mut Writer {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
                value.serialize(&mut **self)
            }
            fn end(self) -> Done {
                self.op(op::END);
                Ok(())
            }
        }
    )*};
}

sequence!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for &mut Writer {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Done {
        key.serialize(&mut **self)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        value.serialize(&mut **self)
    }
    fn end(self) -> Done {
        self.op(op::END);
        Ok(())
    }
}

/// serde's two struct traits: each field is recorded as `FIELD`, its name and
/// its value, and the end as `END`.
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for &mut Writer {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Done {
                self.op(op::FIELD);
                self.name(key);
                value.serialize(&mut **self)
            }
            fn end(self) -> Done {
                self.op(op::END);
                Ok(())
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

/// One recorded serde call, as [`Reader::item`] gives it back.
pub enum Item<'t> {
    /// `()`, `None`, a unit struct.
    Unit,
    /// A `bool`.
    Bool(bool),
    /// A signed integer.
    I64(i64),
    /// An unsigned integer.
    U64(u64),
    /// A wider signed integer.
    I128(i128),
    /// A wider unsigned integer.
    U128(u128),
    /// A float.
    F64(f64),
    /// A string of at most `SHARED_STRING_MAX` bytes, with its hash.
    Short {
        /// `short_string_hash` of its bytes.
        hash: u64,
        /// The string.
        text: &'t str,
    },
    /// A longer string with no character from U+0100 on, as Latin-1.
    Latin1(&'t [u8]),
    /// Any other string.
    Utf8(&'t str),
    /// A byte array.
    Bytes(&'t [u8]),
    /// A unit variant, by its name.
    UnitVariant(&'static str),
    /// A newtype variant, by its name; its value follows.
    NewtypeVariant(&'static str),
    /// A sequence, of the length serde gave; its elements follow, then `End`.
    Seq(Option<usize>),
    /// A tuple variant, by its name, and its length; its fields follow, then `End`.
    TupleVariant(&'static str, usize),
    /// A map; key and value follow after key and value, then `End`.
    Map,
    /// A struct and serde's `len`; its fields follow, then `End`.
    Struct(usize),
    /// A struct variant, by its name, and its `len`; its fields follow, then `End`.
    StructVariant(&'static str, usize),
    /// A struct's field, by its name; its value follows.
    Field(&'static str),
    /// The end of a sequence, map or struct.
    End,
}

/// Reads a tape front to back.
pub struct Reader<'t> {
    bytes: &'t [u8],
    names: &'t [&'static str],
    at: usize,
}

impl<'t> Reader<'t> {
    #[inline]
    fn take(&mut self, n: usize) -> &'t [u8] {
        let taken = &self.bytes[self.at..self.at + n];
        self.at += n;
        taken
    }
    #[inline]
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N));
        out
    }
    #[inline]
    fn word(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }
    #[inline]
    fn len(&mut self) -> Option<usize> {
        match self.word() {
            u64::MAX => None,
            n => Some(n as usize),
        }
    }
    #[inline]
    fn name(&mut self) -> &'static str {
        let index = u32::from_le_bytes(self.array());
        self.names[index as usize]
    }
    /// A variant's name, after the enum's name and the variant's index.
    #[inline]
    fn variant(&mut self) -> &'static str {
        self.take(4 + 4);
        self.name()
    }
    #[inline]
    fn bytes(&mut self) -> &'t [u8] {
        let len = self.word() as usize;
        self.take(len)
    }
    #[inline]
    fn text(&mut self, len: usize) -> &'t str {
        // SAFETY: `Writer` recorded these bytes from a `&str`.
        unsafe { std::str::from_utf8_unchecked(self.take(len)) }
    }

    /// Whether the next recorded call is [`Item::End`] (read if so).
    ///
    /// Written as a branch on purpose: the branch-free form (`let end = …;
    /// self.at += usize::from(end); end`) is miscompiled by rustc 1.95.0 at
    /// opt-level 2 and 3 where it is inlined into a recursive reader like
    /// `Shared::tape_value`: it returns true without moving past the `END`, so
    /// the struct around a map ends early. Debug builds and opt-level 1 are
    /// right; a 37-line reproduction in safe Rust alone (no serde, no unsafe)
    /// shows it, as the closing note of the stop that found it records.
    #[inline(always)]
    pub fn at_end(&mut self) -> bool {
        if self.bytes[self.at] == op::END {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// The next recorded call. Reading past the end, or a tape `Writer` did
    /// not write, panics (a tape is only ever read as it was written).
    #[inline(always)]
    pub fn item(&mut self) -> Item<'t> {
        let op = self.take(1)[0];
        match op {
            op::UNIT => Item::Unit,
            op::FALSE => Item::Bool(false),
            op::TRUE => Item::Bool(true),
            op::I64 => Item::I64(i64::from_le_bytes(self.array())),
            op::U64 => Item::U64(self.word()),
            op::I128 => Item::I128(i128::from_le_bytes(self.array())),
            op::U128 => Item::U128(u128::from_le_bytes(self.array())),
            op::F64 => Item::F64(f64::from_bits(self.word())),
            op::SHORT_STR => {
                let hash = self.word();
                let len = usize::from(self.take(1)[0]);
                Item::Short {
                    hash,
                    text: self.text(len),
                }
            }
            op::LATIN1_STR => Item::Latin1(self.bytes()),
            op::UTF8_STR => {
                let len = self.word() as usize;
                Item::Utf8(self.text(len))
            }
            op::BYTES => Item::Bytes(self.bytes()),
            op::UNIT_VARIANT => Item::UnitVariant(self.variant()),
            op::NEWTYPE_VARIANT => Item::NewtypeVariant(self.variant()),
            op::SEQ => Item::Seq(self.len()),
            op::TUPLE_VARIANT => {
                let variant = self.variant();
                Item::TupleVariant(variant, self.len().unwrap_or(0))
            }
            op::MAP => {
                self.len();
                Item::Map
            }
            op::STRUCT => {
                self.name();
                Item::Struct(self.len().unwrap_or(0))
            }
            op::STRUCT_VARIANT => {
                let variant = self.variant();
                Item::StructVariant(variant, self.len().unwrap_or(0))
            }
            op::FIELD => Item::Field(self.name()),
            op::END => Item::End,
            other => unreachable!("a tape operation {other} that Writer never writes"),
        }
    }
}

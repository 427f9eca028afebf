//! The fast path of `parse` and `parse_many`: each dialect's machine and fold run
//! as the library runs them (the streaming machinery fed once, [`fold_whole`]), and
//! the typed document becomes Python objects directly ([`crate::pyser`]), with no
//! JSON text in between. The result is the document `idiolect parse` prints, read
//! by `json.loads`.
//!
//! The two halves overlap where they can. A large input of a dialect whose
//! document has an array that settles in order ([`Build::SETTLED_KEY`]: the
//! leading array of sections, anthropic-xml, plurnk and transcript, kindaxml's
//! `segments`) is parsed on a thread of its own, which hands the settled elements
//! over as typed values while the calling thread converts them ([`OVERLAP_MIN`]);
//! the calling thread sends what it converted back to be freed there.
//! `parse_many` parses records on several threads, the calling one among them,
//! and each converts the documents it parsed, taking turns with the GIL
//! ([`Many`]). In both, parsing runs without the GIL, and an exception or
//! Ctrl-C on the calling thread stops the other threads at their next piece or
//! record.
//!
//! Dialects are looked up by name in [`runner`]; a mode the table does not cover
//! (transcript's render mode) takes the session path, which writes JSON and reads
//! it back.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use idiolect::field;
use idiolect::fold::{fold_whole, fold_whole_str, DialectMachine, Fold, Settle};
use idiolect::session::Dialect;
use idiolect::{anthropic_xml, kindaxml, plurnk, sections, transcript, Machine, Stream};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::convert::from_json;
use crate::direct;
use crate::pyser::{GcPause, Joined, Shared};
use crate::{OptionsError, Text};

/// How one dialect (in one mode) parses whole documents into Python objects.
pub trait Runner: Sync {
    /// The document of `text`, as Python objects.
    fn parse<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        text: Text<'_>,
    ) -> PyResult<Bound<'py, PyAny>>;

    /// The documents of `texts`, in order, parsed on `threads` threads (1: on the
    /// calling thread, between conversions).
    fn parse_many<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        texts: &[Text<'_>],
        threads: Threads,
    ) -> PyResult<Vec<Bound<'py, PyAny>>>;
}

/// How many threads `parse_many` parses on.
#[derive(Clone, Copy, Debug)]
pub enum Threads {
    /// Every core (as many threads as rayon would use).
    All,
    /// This many (at least 1).
    Exactly(usize),
}

/// A dialect's machine and fold, built from JSON options.
pub trait Build: Sync {
    /// The machine.
    type Machine: Machine;
    /// The fold of its events.
    type Folder: Fold<<Self::Machine as Machine>::Event>;
    /// The dialect's name, for messages.
    fn name(&self) -> &'static str;
    /// A machine and a fold for `options`; `len` is the input's size.
    fn build(
        &self,
        options: &Value,
        spans: bool,
        len: usize,
    ) -> Result<(Self::Machine, Self::Folder), String>;
    /// The key of the document's array whose elements settle in order and can
    /// be converted while the parse goes on: the fold's [`Fold::SETTLED_KEY`]
    /// unless the dialect hands them out another way.
    const SETTLED_KEY: Option<&'static str> =
        <Self::Folder as Fold<<Self::Machine as Machine>::Event>>::SETTLED_KEY;
    /// Hands the elements of that array that no later event can change to
    /// `out`: the fold's [`Fold::write_settled`] unless the dialect says otherwise.
    fn write_settled(folder: &mut Self::Folder, out: &mut Batch) {
        folder.write_settled(out);
    }
    /// The key of a second array whose elements [`Build::write_settled`] hands
    /// out as they become final ([`Batch`]'s second list; kindaxml's markers).
    const SECOND_SETTLED_KEY: Option<&'static str> = None;
    /// The document as Python objects: serde's walk unless the dialect has a
    /// conversion of its own ([`crate::direct`]).
    fn to_python<'py>(
        shared: &mut Shared<'py>,
        document: &DocumentOf<Self>,
    ) -> PyResult<Bound<'py, PyAny>>
    where
        DocumentOf<Self>: Serialize,
    {
        shared.convert(document)
    }
}

/// The document a [`Build`] folds.
type DocumentOf<B> =
    <<B as Build>::Folder as Fold<<<B as Build>::Machine as Machine>::Event>>::Document;

/// Options as the session layer reads them: `null` is every default.
fn options_of<T: DeserializeOwned + Default>(options: &Value) -> Result<T, String> {
    if options.is_null() {
        return Ok(T::default());
    }
    T::deserialize(options).map_err(|e| e.to_string())
}

/// A dialect whose machine implements [`DialectMachine`].
pub struct Generic<M>(PhantomData<fn() -> M>);

impl<M> Generic<M> {
    const NEW: Self = Generic(PhantomData);
}

impl<M> Build for Generic<M>
where
    M: DialectMachine,
    M::Options: DeserializeOwned,
{
    type Machine = M;
    type Folder = M::Folder;
    fn name(&self) -> &'static str {
        M::NAME
    }
    fn build(&self, options: &Value, spans: bool, len: usize) -> Result<(M, M::Folder), String> {
        let options: M::Options = options_of(options)?;
        let machine = M::with_options(&options).map_err(|e| e.to_string())?;
        Ok((machine, M::whole_folder(&options, spans, len)))
    }
}

/// A field family run by the engine (its grammar and description, `field::families`).
pub struct Engine(pub &'static field::custom::Family, pub &'static str);

impl Build for Engine {
    type Machine = field::custom::CustomMachine;
    type Folder = field::DocumentFolder;
    fn name(&self) -> &'static str {
        self.1
    }
    fn build(
        &self,
        options: &Value,
        spans: bool,
        _: usize,
    ) -> Result<(Self::Machine, Self::Folder), String> {
        let options: field::custom::Options = options_of(options)?;
        let machine = self.0.machine(&options).map_err(|e| match e {
            field::custom::FamilyError::Options(message) => message,
            other => other.to_string(),
        })?;
        Ok((machine, field::DocumentFolder::new(spans)))
    }
}

/// kindaxml: its document (`text`, `segments`, `markers`) has no leading array,
/// but its fold hands out the segments no later annotation can cut
/// ([`kindaxml::DocumentFolder::take_settled_texts`]), which the calling thread
/// converts while the parse goes on, as the other dialects' leading arrays. The
/// fold is hollow (`whole_folder`, [`kindaxml::DocumentFolder::hollow`]): its segments keep no
/// text of their own, which is copied once, as they leave, instead of as it
/// arrives and again at each cut. (The session path keeps its own way: it
/// releases those segments' text.)
pub struct Kindaxml;

impl Build for Kindaxml {
    type Machine = kindaxml::KindaxmlMachine;
    type Folder = kindaxml::DocumentFolder;
    fn name(&self) -> &'static str {
        Generic::<kindaxml::KindaxmlMachine>::NEW.name()
    }
    fn build(
        &self,
        options: &Value,
        spans: bool,
        len: usize,
    ) -> Result<(Self::Machine, Self::Folder), String> {
        Generic::<kindaxml::KindaxmlMachine>::NEW.build(options, spans, len)
    }
    const SETTLED_KEY: Option<&'static str> = Some("segments");
    const SECOND_SETTLED_KEY: Option<&'static str> = Some("markers");
    fn write_settled(folder: &mut Self::Folder, out: &mut Batch) {
        let mut settled = SettledSegments {
            input_len: out.input_len,
            ..Default::default()
        };
        folder.take_settled_texts(|text, annotations| {
            settled.text.push_str(text);
            settled.parts.push((text.len(), annotations));
        });
        if !settled.parts.is_empty() {
            out.first.push(Box::new(settled));
        }
        folder.take_markers(|marker| out.second.push(Box::new(SettledMarker(marker))));
    }
    fn to_python<'py>(
        shared: &mut Shared<'py>,
        document: &kindaxml::Document,
    ) -> PyResult<Bound<'py, PyAny>> {
        direct::document(shared, document)
    }
}

/// The kindaxml segments one piece settled: their texts, which follow one
/// another in the output text, copied into one string (one allocation a piece,
/// not one a segment), and each one's length and annotations. Converted by
/// [`direct::segment`] on the calling thread, which also puts the document's
/// text together from these texts ([`Shared::joined`]), so that the parsing
/// thread has nothing to rewrite once the parse has ended.
#[derive(Default)]
struct SettledSegments {
    /// The segments' texts, one after another.
    text: String,
    /// Each segment's text length (bytes of `text`) and annotations, in order.
    parts: Vec<(usize, Vec<kindaxml::Annotation>)>,
    /// The whole input's size: room for the document's text, which is never
    /// longer ([`Joined::with_capacity`], made for the first piece).
    input_len: usize,
}

impl Element for SettledSegments {
    /// (The caller pauses the collector for the batch, see [`receive_pieces`].)
    fn append_to<'py>(&self, shared: &mut Shared<'py>, list: &Bound<'py, PyList>) -> PyResult<()> {
        let mut joined = shared
            .joined
            .take()
            .unwrap_or_else(|| Joined::with_capacity(self.input_len));
        let mut at = 0;
        let made = self.parts.iter().try_for_each(|(len, annotations)| {
            let text = joined.push(shared, &self.text[at..at + len]);
            at += len;
            list.append(direct::segment(shared, text, annotations)?)
        });
        shared.joined = Some(joined);
        made
    }
}

/// A kindaxml marker, final once folded
/// ([`kindaxml::DocumentFolder::take_markers`]): converted while the parse goes
/// on, so the markers are not all left to the tail, after the parse.
struct SettledMarker(kindaxml::Marker);

impl Element for SettledMarker {
    /// (The caller pauses the collector for the batch, see [`receive_pieces`].)
    fn append_to<'py>(&self, shared: &mut Shared<'py>, list: &Bound<'py, PyList>) -> PyResult<()> {
        list.append(direct::marker(shared, &self.0)?)
    }
}

/// Parses `text` whole with `build`'s machine and fold.
fn document<B: Build>(
    build: &B,
    options: &Value,
    spans: bool,
    text: Text<'_>,
) -> Result<DocumentOf<B>, String> {
    let (machine, mut folder) = build.build(options, spans, text.len())?;
    match text {
        // A `str` is text already: not validated as UTF-8 again.
        Text::Str(s) => fold_whole_str(Stream::new(machine), s, &mut folder),
        Text::Bytes(b) => fold_whole(Stream::new(machine), b, &mut folder),
    }
    Ok(folder.into_document())
}

fn options_error(name: &str, message: String) -> PyErr {
    OptionsError::new_err(format!("invalid {name} options: {message}"))
}

/// Inputs at least this large are parsed on a thread of their own while the
/// calling thread converts the settled elements to Python objects; smaller ones
/// are parsed and converted in turn. On a machine with no core to spare the
/// overlap costs (a thread, a wake-up per piece): a fifth at 128 KiB, a tenth
/// from 256 KiB on (sections, anthropic-xml, plurnk, transcript, load 8 on 2
/// cores), so small inputs, the common case, do not take it.
pub const OVERLAP_MIN: usize = 512 * 1024;

/// The largest piece of an overlapped parse: after each piece, the elements it
/// settled go to the calling thread. Each piece is a message, and a calling
/// thread that converts faster than its dialect parses is asleep when it comes:
/// at 32 KiB pieces, waking it was a tenth of the parsing thread's time
/// (transcript, `perf`, 128 wake-ups per 4 MB). From 32 to 256 KiB, `parse` of
/// 4 MB went from 5.15 to 4.7 ms (transcript), 22.9 to 20.9 (anthropic-xml),
/// 17.2 to 16.6 (plurnk), 13.3 to 12.9 (kindaxml), and sections stayed at
/// about 5.0 (best of 30, alternating).
const OVERLAP_PIECE: usize = 256 * 1024;

/// The first piece of an overlapped parse; each next one is twice as large, up
/// to [`OVERLAP_PIECE`]. The calling thread has nothing to convert until the
/// first piece is parsed: a whole piece first kept it waiting about 0.35 ms
/// (kindaxml, 4 MB), a start-up the parse never made up for.
const OVERLAP_FIRST: usize = 4 * 1024;

/// `text` cut into the pieces of an overlapped parse. (Pieces that shrink again
/// towards the end, to a quarter of what is left, so that the last piece the
/// calling thread converts after the parse has ended is small, were measured
/// no faster: kindaxml 12.9 -> 13.6 ms per 4 MB, the rest within the noise.)
fn overlap_pieces(text: Text<'_>) -> impl Iterator<Item = Text<'_>> {
    let mut rest = text;
    let mut size = OVERLAP_FIRST;
    std::iter::from_fn(move || {
        let (piece, tail) = rest.split_piece(size)?;
        rest = tail;
        size = (size * 2).min(OVERLAP_PIECE);
        Some(piece)
    })
}

/// How many batches of settled elements may wait for the calling thread (the
/// parse stops ahead of the conversion by at most this many pieces).
const OVERLAP_QUEUE: usize = 8;

/// Typed values the calling thread has converted, on their way back to a
/// parsing thread to be dropped there. Freeing a document's strings and vectors
/// costs the calling thread, which holds the GIL and is the serial part of
/// `parse`, about a tenth of converting them (sections, callgrind); the parsing
/// thread frees them between pieces instead, into the allocator caches it is
/// about to allocate from again. (`parse_many`'s threads free the documents
/// they built themselves.)
type Garbage = Box<dyn Send>;

/// Drops every value waiting in `garbage` without blocking.
fn drop_waiting(garbage: &mpsc::Receiver<Garbage>) {
    while let Ok(value) = garbage.try_recv() {
        drop(value);
    }
}

/// Drops values from `garbage` until every sender is gone (the calling thread
/// drops its sender when it returns, on errors too, before the scope waits).
fn drop_until_closed(garbage: &mpsc::Receiver<Garbage>) {
    while let Ok(value) = garbage.recv() {
        drop(value);
    }
}

/// A settled element on its way to Python: any typed value a fold hands out.
trait Element: Send {
    fn append_to<'py>(&self, shared: &mut Shared<'py>, list: &Bound<'py, PyList>) -> PyResult<()>;
}

impl<T: Serialize + Send> Element for T {
    fn append_to<'py>(&self, shared: &mut Shared<'py>, list: &Bound<'py, PyList>) -> PyResult<()> {
        list.append(shared.convert(self)?)
    }
}

/// The elements one piece settled, in document order: of the array under
/// [`Build::SETTLED_KEY`], and of the one under [`Build::SECOND_SETTLED_KEY`].
#[derive(Default)]
pub struct Batch {
    first: Vec<Box<dyn Element>>,
    second: Vec<Box<dyn Element>>,
    /// The size of the whole input being parsed, for reserving room.
    input_len: usize,
}

impl Batch {
    /// An empty batch of a parse of `input_len` bytes.
    fn for_input(input_len: usize) -> Batch {
        Batch {
            input_len,
            ..Batch::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.first.is_empty() && self.second.is_empty()
    }
}

impl Settle for Batch {
    fn element<T: Serialize + Send + 'static>(&mut self, value: T) {
        self.first.push(Box::new(value));
    }
}

/// What the parsing thread of an overlapped parse sends.
enum Piece<D> {
    /// Elements of the leading array that no later event can change.
    Settled(Batch),
    /// The rest of the document, once the input has ended.
    Done(D),
    /// The options were refused.
    Failed(String),
}

/// Parses `text` on a thread of its own, sending settled elements as they settle
/// and then the rest of the document; stops as soon as the receiver is gone.
fn parse_pieces<B: Build>(
    build: &B,
    options: &Value,
    spans: bool,
    text: Text<'_>,
    out: &mpsc::SyncSender<Piece<DocumentOf<B>>>,
    garbage: &mpsc::Receiver<Garbage>,
) where
    DocumentOf<B>: Send,
{
    let (machine, mut folder) = match build.build(options, spans, text.len()) {
        Ok(built) => built,
        Err(e) => {
            let _ = out.send(Piece::Failed(e));
            return;
        }
    };
    let mut stream = Stream::new(machine);
    for piece in overlap_pieces(text) {
        let events = match piece {
            // A `str` is text already: not validated as UTF-8 again.
            Text::Str(s) => stream.feed_str(s),
            Text::Bytes(b) => stream.feed(b),
        };
        for event in events {
            folder.push(&event);
        }
        let mut batch = Batch::for_input(text.len());
        B::write_settled(&mut folder, &mut batch);
        // A closed channel means the caller stopped (an exception): stop too.
        if !batch.is_empty() && out.send(Piece::Settled(batch)).is_err() {
            return;
        }
        drop_waiting(garbage);
    }
    for event in stream.finish() {
        folder.push(&event);
    }
    let mut batch = Batch::for_input(text.len());
    B::write_settled(&mut folder, &mut batch);
    if !batch.is_empty() && out.send(Piece::Settled(batch)).is_err() {
        return;
    }
    let document = folder.into_document();
    if out.send(Piece::Done(document)).is_ok() {
        drop_until_closed(garbage);
    }
}

/// The next message of `receiver`, waiting with the GIL released when none is
/// there yet; `None` when the sender is gone.
fn next_message<T: Send>(
    py: Python<'_>,
    receiver: mpsc::Receiver<T>,
) -> (mpsc::Receiver<T>, Option<T>) {
    match receiver.try_recv() {
        Ok(message) => (receiver, Some(message)),
        Err(mpsc::TryRecvError::Disconnected) => (receiver, None),
        Err(mpsc::TryRecvError::Empty) => py.detach(move || {
            let message = receiver.recv().ok();
            (receiver, message)
        }),
    }
}

/// The calling thread's side of an overlapped parse: converts settled elements as
/// they come, then the rest of the document, and puts the elements in front of
/// the rest of the array under `key` (and those of [`Batch`]'s second list in
/// front of the array under [`Build::SECOND_SETTLED_KEY`]). Returning drops the
/// receiver, which stops the parsing thread.
fn receive_pieces<'py, B: Build>(
    py: Python<'py>,
    name: &str,
    key: &'static str,
    mut receiver: mpsc::Receiver<Piece<DocumentOf<B>>>,
    garbage: mpsc::Sender<Garbage>,
) -> PyResult<Bound<'py, PyAny>>
where
    DocumentOf<B>: Serialize + Send + 'static,
{
    let mut shared = Shared::new(py);
    let settled = PyList::empty(py);
    let second = PyList::empty(py);
    loop {
        let (back, message) = next_message(py, receiver);
        receiver = back;
        match message {
            Some(Piece::Settled(batch)) => {
                {
                    // Paused for the batch, not around each element; never while
                    // this thread waits without the GIL (other threads run then).
                    let _paused = GcPause::new(py);
                    for element in &batch.first {
                        element.append_to(&mut shared, &settled)?;
                    }
                    for element in &batch.second {
                        element.append_to(&mut shared, &second)?;
                    }
                }
                // The parsing thread frees the typed values (or nobody does
                // before it stops, when it has stopped: then they drop here).
                let _ = garbage.send(Box::new(batch));
                // Ctrl-C while a long document converts raises here.
                py.check_signals()?;
            }
            Some(Piece::Done(rest)) => {
                let document = B::to_python(&mut shared, &rest)?;
                let _ = garbage.send(Box::new(rest));
                put_in_front(&document, key, settled)?;
                if let Some(key) = B::SECOND_SETTLED_KEY {
                    put_in_front(&document, key, second)?;
                }
                return Ok(document);
            }
            Some(Piece::Failed(e)) => return Err(options_error(name, e)),
            None => return Err(PyRuntimeError::new_err("the parsing thread stopped")),
        }
    }
}

/// Puts the elements `settled` in front of the array under `key` in
/// `document`, a dict.
fn put_in_front(
    document: &Bound<'_, PyAny>,
    key: &str,
    settled: Bound<'_, PyList>,
) -> PyResult<()> {
    if settled.is_empty() {
        return Ok(());
    }
    // The iterator below is a container (see `GcPause`).
    let _paused = GcPause::new(document.py());
    let dict = document.cast::<PyDict>()?;
    let array = dict
        .get_item(key)?
        .ok_or_else(|| PyRuntimeError::new_err(format!("the document has no {key:?} array")))?;
    for element in array.try_iter()? {
        settled.append(element?)?;
    }
    dict.set_item(key, settled)
}

/// Parses `text` on a thread of its own while this one converts what settles.
fn parse_overlapped<'py, B: Build>(
    build: &B,
    py: Python<'py>,
    options: &Value,
    spans: bool,
    text: Text<'_>,
    key: &'static str,
) -> PyResult<Bound<'py, PyAny>>
where
    DocumentOf<B>: Serialize + Send + 'static,
{
    let (sender, receiver) = mpsc::sync_channel(OVERLAP_QUEUE);
    let (garbage, collector) = mpsc::channel::<Garbage>();
    std::thread::scope(|scope| {
        scope.spawn(move || parse_pieces(build, options, spans, text, &sender, &collector));
        // The receiver and the garbage sender are dropped before the scope waits
        // for the parsing thread, which then stops.
        receive_pieces::<B>(py, build.name(), key, receiver, garbage)
    })
}

/// The threads of `parse_many`: `threads` in all, the calling thread among them.
fn thread_count(threads: Threads) -> usize {
    match threads {
        Threads::Exactly(n) => n.max(1),
        Threads::All => rayon::current_num_threads(),
    }
}

impl<B> Runner for B
where
    B: Build,
    DocumentOf<B>: Serialize + Send + 'static,
{
    fn parse<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        text: Text<'_>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(key) = B::SETTLED_KEY {
            if text.len() >= OVERLAP_MIN {
                return parse_overlapped(self, py, options, spans, text, key);
            }
        }
        let doc = py
            .detach(|| document(self, options, spans, text))
            .map_err(|e| options_error(self.name(), e))?;
        B::to_python(&mut Shared::new(py), &doc)
    }

    fn parse_many<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        texts: &[Text<'_>],
        threads: Threads,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let helpers = thread_count(threads)
            .saturating_sub(1)
            .min(texts.len().saturating_sub(1));
        let many = Many::new(texts, helpers + 1);
        let mut mine = Vec::new();
        let (own, theirs) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..helpers)
                .map(|_| {
                    let many = &many;
                    scope.spawn(move || {
                        // One attachment for the helper's life: its thread
                        // state is made once, and each turn is a cheap
                        // release and re-take of the GIL (`share`).
                        Python::attach(|py| {
                            let mut made = Vec::new();
                            share(self, py, many, options, spans, &mut made)?;
                            Ok::<_, PyErr>(
                                made.into_iter()
                                    .map(|(i, document)| (i, document.unbind()))
                                    .collect::<Vec<_>>(),
                            )
                        })
                    })
                })
                .collect();
            let own = share(self, py, &many, options, spans, &mut mine);
            // The helpers need the GIL to finish: wait for them without it.
            // (No early return above: the scope's own wait would hold it.)
            let theirs: Vec<_> = py.detach(|| handles.into_iter().map(|h| h.join()).collect());
            (own, theirs)
        });
        own?;
        let mut documents: Vec<Option<Bound<'py, PyAny>>> = vec![None; texts.len()];
        for (i, document) in mine {
            documents[i] = Some(document);
        }
        for joined in theirs {
            let made =
                joined.map_err(|_| PyRuntimeError::new_err("a parsing thread stopped"))??;
            for (i, document) in made {
                documents[i] = Some(document.into_bound(py));
            }
        }
        documents
            .into_iter()
            .map(|d| d.ok_or_else(|| PyRuntimeError::new_err("a record was never parsed")))
            .collect()
    }
}

/// Input bytes `parse_many`'s threads claim at a time (whole records, at least
/// one): a thread asks for the turn to convert after each claim, so the
/// smaller the claim, the sooner the two threads fall into step. kindaxml, 4 MB
/// in records of ~4 KB, 2 / 1 on two threads: claims of 64 KiB 1.59–1.67, of
/// 16 KiB 1.70–1.80, of 4 KiB (one record) 1.85–1.93. Records of ~100 bytes
/// are claimed some 40 at a time, so the claim counter is not bounced between
/// the cores for each one.
const MANY_CLAIM: usize = 4 * 1024;

/// Most records a claim takes, whatever their size.
const MANY_CLAIM_MAX: usize = 64;

/// Most parsed records a thread of `parse_many` keeps waiting for its turn;
/// with that many it waits for the GIL instead (where converting is the slower
/// side, as on many cores, the parse stays at most this far ahead).
const MANY_PENDING: usize = 64;

/// The records of one `parse_many` call and what its threads share.
///
/// Every thread, the calling one among them, parses the records it claims
/// without the GIL and converts its own documents with the GIL, while they are
/// still in its cache: handing a document to another core to convert read it
/// from the other core's cache (a tree of heap blocks, or a contiguous tape of
/// it, the earlier designs), which on a 2-core machine cost 2 / 1 a fifth in
/// some minutes. The conversions are serial (they hold the GIL); so that a
/// thread never waits for the GIL while it could parse, the threads take turns
/// by a flag of their own ([`Many::converting`]): after each claim a thread
/// takes the turn if it is free, and otherwise parses the next claim, keeping
/// the parsed documents until its turn (at most [`MANY_PENDING`]). The GIL is
/// then rarely contended, and taking it is a few atomic operations rather
/// than a sleep and a wake-up.
struct Many<'t> {
    texts: &'t [Text<'t>],
    /// The next record to claim.
    next: AtomicUsize,
    /// Records per claim (from [`MANY_CLAIM`]).
    claim: usize,
    /// Whether a thread has the turn to convert.
    converting: AtomicBool,
    /// Set on an error or an interrupt: no more records are claimed.
    stop: AtomicBool,
}

impl<'t> Many<'t> {
    fn new(texts: &'t [Text<'t>], threads: usize) -> Self {
        let total: usize = texts.iter().map(|t| t.len()).sum();
        let average = (total / texts.len().max(1)).max(1);
        // Four claims a thread at least, so that the threads end together.
        let claim = (MANY_CLAIM / average)
            .clamp(1, MANY_CLAIM_MAX)
            .min(texts.len().div_ceil(4 * threads).max(1));
        Many {
            texts,
            next: AtomicUsize::new(0),
            claim,
            converting: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        }
    }

    /// The indices of the next records to parse, if any are left.
    fn claim(&self) -> Option<std::ops::Range<usize>> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let start = self.next.fetch_add(self.claim, Ordering::Relaxed);
        (start < self.texts.len()).then(|| start..(start + self.claim).min(self.texts.len()))
    }

    /// Without the GIL: frees `spent` (the documents converted last turn, on
    /// the thread that built them), gives the turn back if `turn`, then parses
    /// claims into `parsed` until the turn is this thread's, or
    /// [`MANY_PENDING`] records wait, or no record is left (`Ok(true)`).
    fn parse_until_turn<B: Build>(
        &self,
        build: &B,
        options: &Value,
        spans: bool,
        mut parsed: Parsed<B>,
        spent: Vec<DocumentOf<B>>,
        turn: &mut bool,
    ) -> (Parsed<B>, Result<bool, String>) {
        drop(spent);
        if std::mem::take(turn) {
            self.converting.store(false, Ordering::Release);
        }
        loop {
            let Some(claimed) = self.claim() else {
                return (parsed, Ok(true));
            };
            for i in claimed {
                match document(build, options, spans, self.texts[i]) {
                    Ok(document) => parsed.push((i, document)),
                    Err(e) => {
                        self.stop.store(true, Ordering::Relaxed);
                        return (parsed, Err(e));
                    }
                }
            }
            if parsed.len() >= MANY_PENDING {
                return (parsed, Ok(false));
            }
            if self
                .converting
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                *turn = true;
                return (parsed, Ok(false));
            }
        }
    }
}

/// Documents parsed and not yet converted, with their records' indices.
type Parsed<B> = Vec<(usize, DocumentOf<B>)>;

/// One thread's part of `parse_many` ([`Many`]): the documents it parsed,
/// converted, into `made` with their indices. Stops the others on an error.
fn share<'py, B: Build>(
    build: &B,
    py: Python<'py>,
    many: &Many<'_>,
    options: &Value,
    spans: bool,
    made: &mut Vec<(usize, Bound<'py, PyAny>)>,
) -> PyResult<()>
where
    DocumentOf<B>: Send,
{
    let mut shared = Shared::new(py);
    let mut parsed = Vec::new();
    let mut spent = Vec::new();
    let mut turn = false;
    loop {
        let (back, end) =
            py.detach(|| many.parse_until_turn(build, options, spans, parsed, spent, &mut turn));
        parsed = back;
        spent = Vec::with_capacity(parsed.len());
        let converted = end
            .map_err(|e| options_error(build.name(), e))
            .and_then(|exhausted| {
                for (i, document) in parsed.drain(..) {
                    made.push((i, B::to_python(&mut shared, &document)?));
                    spent.push(document);
                }
                py.check_signals()?;
                Ok(exhausted)
            });
        let done = !matches!(converted, Ok(false));
        if converted.is_err() {
            many.stop.store(true, Ordering::Relaxed);
        }
        if done {
            if turn {
                many.converting.store(false, Ordering::Release);
            }
            // The documents not converted and those converted are freed
            // without the GIL.
            py.detach(|| drop((parsed, spent)));
            return converted.map(|_| ());
        }
    }
}

/// The session path: the document written as compact JSON, then read into Python
/// objects (for what the typed table does not cover).
pub struct ViaJson(&'static Dialect);

impl ViaJson {
    fn whole(&self, options: &Value, spans: bool, text: Text<'_>) -> Result<Vec<u8>, String> {
        crate::whole(self.0, options, spans, text.bytes())
    }
}

impl Runner for ViaJson {
    fn parse<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        text: Text<'_>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let out = py
            .detach(|| self.whole(options, spans, text))
            .map_err(PyRuntimeError::new_err)?;
        from_json(py, &out)
    }

    fn parse_many<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        texts: &[Text<'_>],
        threads: Threads,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let outs = py.detach(|| {
            let all = || -> Result<Vec<Vec<u8>>, String> {
                texts
                    .par_iter()
                    .map(|t| self.whole(options, spans, *t))
                    .collect()
            };
            match threads {
                Threads::All => all(),
                Threads::Exactly(n) => rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| format!("cannot start {n} threads: {e}"))?
                    .install(all),
            }
        });
        let outs = outs.map_err(PyRuntimeError::new_err)?;
        outs.iter().map(|out| from_json(py, out)).collect()
    }
}

/// What the package makes of a field family: the typed runner of `parse`
/// ([`runner`]) and the event stream of `ChatDeltas`. [`field_family`] reads the
/// crate's one table of the field families, so a family added there is served by
/// both.
pub trait FieldFamily {
    /// What is made.
    type Out;
    /// For the family `family` called `name`.
    fn engine(self, family: &'static field::custom::Family, name: &'static str) -> Self::Out;
}

/// What `family` makes of field family `name`; `None` if `name` is not one. The
/// families run by the engine come from the crate's table (`field::families`).
pub fn field_family<F: FieldFamily>(name: &str, family: F) -> Option<F::Out> {
    let entry = field::families::TABLE.iter().find(|e| e.name == name)?;
    let engine = field::families::family(name)?;
    Some(family.engine(engine, entry.name))
}

/// A field family's typed runner.
struct FieldRunner;

impl FieldFamily for FieldRunner {
    type Out = Box<dyn Runner>;
    fn engine(self, family: &'static field::custom::Family, name: &'static str) -> Box<dyn Runner> {
        Box::new(Engine(family, name))
    }
}

/// The runner of `dialect` with `options` (checked already by the session layer):
/// the typed path where this table (or [`field_family`]) knows the dialect's
/// machine, the session path otherwise.
pub fn runner(dialect: &'static Dialect, options: &Value) -> Box<dyn Runner> {
    if let Some(runner) = field_family(dialect.name, FieldRunner) {
        return runner;
    }
    match dialect.name {
        "sections" => Box::new(Generic::<sections::SectionMachine>::NEW),
        "anthropic-xml" => Box::new(Generic::<anthropic_xml::AnthropicXmlMachine>::NEW),
        "kindaxml" => Box::new(Kindaxml),
        "plurnk" => Box::new(Generic::<plurnk::PlurnkMachine>::NEW),
        "transcript" => {
            // Only the mode matters here; the session layer refused bad options.
            let mode = options_of::<transcript::Options>(options)
                .map(|o| o.mode)
                .unwrap_or_default();
            match mode {
                transcript::Mode::Parse => Box::new(Generic::<transcript::PromptMachine>::NEW),
                transcript::Mode::Scan => Box::new(Generic::<transcript::ScanMachine>::NEW),
                transcript::Mode::Request => Box::new(Generic::<transcript::RequestMachine>::NEW),
                transcript::Mode::Render => Box::new(ViaJson(dialect)),
            }
        }
        _ => Box::new(ViaJson(dialect)),
    }
}

//! The fast path of `parse` and `parse_many`: each dialect's machine and fold run
//! as the library runs them (the streaming machinery fed once, [`fold_whole`]), and
//! the typed document becomes Python objects directly ([`crate::pyser`]), with no
//! JSON text in between. The result is the document `idiolect parse` prints, read
//! by `json.loads`.
//!
//! Dialects are looked up by name in [`runner`]; a mode the table does not cover
//! (transcript's render mode) takes the session path, which writes JSON and reads
//! it back.

use std::marker::PhantomData;
use std::sync::mpsc;
use std::sync::Mutex;

use idiolect::field::{self, deepseek, harmony, hermes, mistral, qwen3_coder};
use idiolect::fold::{fold_whole, DialectMachine, Fold};
use idiolect::session::Dialect;
use idiolect::{anthropic_xml, kindaxml, plurnk, sections, transcript, Machine, Stream};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::convert::from_json;
use crate::pyser::Shared;
use crate::OptionsError;

/// How one dialect (in one mode) parses whole documents into Python objects.
pub trait Runner: Sync {
    /// The document of `text`, as Python objects.
    fn parse<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        text: &[u8],
    ) -> PyResult<Bound<'py, PyAny>>;

    /// The documents of `texts`, in order, parsed on `threads` threads (1: on the
    /// calling thread, between conversions).
    fn parse_many<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        texts: &[&[u8]],
        threads: Threads,
    ) -> PyResult<Vec<Bound<'py, PyAny>>>;
}

/// How many threads `parse_many` parses on.
#[derive(Clone, Copy, Debug)]
pub enum Threads {
    /// Every core (rayon's global pool).
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
        Ok((machine, M::folder(&options, spans, len)))
    }
}

/// The DeepSeek families: one machine, two call syntaxes.
pub struct Deepseek(deepseek::Variant, &'static str);

impl Build for Deepseek {
    type Machine = deepseek::DeepseekMachine;
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
        let options: deepseek::Options = options_of(options)?;
        Ok((
            deepseek::DeepseekMachine::new(self.0, &options),
            field::DocumentFolder::new(spans),
        ))
    }
}

/// Parses `text` whole with `build`'s machine and fold.
fn document<B: Build>(
    build: &B,
    options: &Value,
    spans: bool,
    text: &[u8],
) -> Result<DocumentOf<B>, String> {
    let (machine, mut folder) = build.build(options, spans, text.len())?;
    fold_whole(Stream::new(machine), text, &mut folder);
    Ok(folder.into_document())
}

fn options_error(name: &str, message: String) -> PyErr {
    OptionsError::new_err(format!("invalid {name} options: {message}"))
}

impl<B> Runner for B
where
    B: Build,
    DocumentOf<B>: Serialize + Send,
{
    fn parse<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        text: &[u8],
    ) -> PyResult<Bound<'py, PyAny>> {
        let doc = py
            .detach(|| document(self, options, spans, text))
            .map_err(|e| options_error(self.name(), e))?;
        Shared::new(py).convert(&doc)
    }

    fn parse_many<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        texts: &[&[u8]],
        threads: Threads,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let mut shared = Shared::new(py);
        let workers = match threads {
            Threads::Exactly(n) => n,
            Threads::All => rayon::current_num_threads(),
        };
        if workers <= 1 || texts.len() <= 1 {
            // One thread: parse (without the GIL) and convert in turn.
            let mut out = Vec::with_capacity(texts.len());
            for text in texts {
                let doc = py
                    .detach(|| document(self, options, spans, text))
                    .map_err(|e| options_error(self.name(), e))?;
                out.push(shared.convert(&doc)?);
            }
            return Ok(out);
        }
        let pool = match threads {
            Threads::All => None,
            Threads::Exactly(n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| {
                        PyRuntimeError::new_err(format!("cannot start {n} threads: {e}"))
                    })?,
            ),
        };
        // Workers parse without the GIL and send each typed document as it is
        // done; this thread turns them into Python objects meanwhile (that needs
        // the GIL, so it is serial), releasing the GIL whenever it waits.
        let mut documents: Vec<Option<Bound<'py, PyAny>>> = vec![None; texts.len()];
        let (sender, receiver) = mpsc::channel::<(usize, Result<DocumentOf<B>, String>)>();
        let receiver = Mutex::new(receiver);
        let converted = std::thread::scope(|scope| -> PyResult<()> {
            scope.spawn(move || {
                let parse_all = || {
                    texts
                        .par_iter()
                        .enumerate()
                        .for_each_with(sender, |sender, (i, text)| {
                            // A closed channel means the caller stopped on an error.
                            let _ = sender.send((i, document(self, options, spans, text)));
                        })
                };
                match &pool {
                    Some(pool) => pool.install(parse_all),
                    None => parse_all(),
                }
            });
            loop {
                // Only this thread receives; the mutex makes the receiver shareable
                // with the GIL-free closure that waits.
                let next = match receiver.lock().map(|r| r.try_recv()) {
                    Ok(Ok(next)) => Some(next),
                    Ok(Err(mpsc::TryRecvError::Empty)) => {
                        py.detach(|| receiver.lock().ok().and_then(|r| r.recv().ok()))
                    }
                    _ => None,
                };
                let Some((i, doc)) = next else {
                    return Ok(());
                };
                let doc = doc.map_err(|e| options_error(self.name(), e))?;
                documents[i] = Some(shared.convert(&doc)?);
            }
        });
        // On an error the scope still waited for the workers to finish.
        converted?;
        documents
            .into_iter()
            .map(|d| d.ok_or_else(|| PyRuntimeError::new_err("a record was never parsed")))
            .collect()
    }
}

/// The session path: the document written as compact JSON, then read into Python
/// objects (for what the typed table does not cover).
pub struct ViaJson(&'static Dialect);

impl ViaJson {
    fn whole(&self, options: &Value, spans: bool, text: &[u8]) -> Result<Vec<u8>, String> {
        crate::whole(self.0, options, spans, text)
    }
}

impl Runner for ViaJson {
    fn parse<'py>(
        &self,
        py: Python<'py>,
        options: &Value,
        spans: bool,
        text: &[u8],
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
        texts: &[&[u8]],
        threads: Threads,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let outs = py.detach(|| {
            let all = || -> Result<Vec<Vec<u8>>, String> {
                texts
                    .par_iter()
                    .map(|t| self.whole(options, spans, t))
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

/// The runner of `dialect` with `options` (checked already by the session layer):
/// the typed path where this table knows the dialect's machine, the session path
/// otherwise.
pub fn runner(dialect: &'static Dialect, options: &Value) -> Box<dyn Runner> {
    match dialect.name {
        "sections" => Box::new(Generic::<sections::SectionMachine>::NEW),
        "anthropic-xml" => Box::new(Generic::<anthropic_xml::AnthropicXmlMachine>::NEW),
        "kindaxml" => Box::new(Generic::<kindaxml::KindaxmlMachine>::NEW),
        "plurnk" => Box::new(Generic::<plurnk::PlurnkMachine>::NEW),
        "hermes" => Box::new(Generic::<hermes::HermesMachine>::NEW),
        "qwen3-coder" => Box::new(Generic::<qwen3_coder::Qwen3CoderMachine>::NEW),
        "harmony" => Box::new(Generic::<harmony::HarmonyMachine>::NEW),
        "mistral" => Box::new(Generic::<mistral::MistralMachine>::NEW),
        "deepseek-v3" => Box::new(Deepseek(deepseek::Variant::V3, "deepseek-v3")),
        "deepseek-v3.1" => Box::new(Deepseek(deepseek::Variant::V31, "deepseek-v3.1")),
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

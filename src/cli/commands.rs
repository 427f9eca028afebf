//! The commands: parse, stream, batch, render, dialects.

use std::io::{BufWriter, Read, Write};

use serde_json::Value;

use std::path::PathBuf;

use super::args::{Cli, Command, Deltas, FamilyArgs, OptionArgs, Output};
use super::input::{build_options, plain, Source};
use super::CliError;
use idiolect::field::custom::{Family, FamilyError};
use idiolect::fold::{Layout, WHOLE_PARSE_PIECE};
use idiolect::session::{Dialect, Session};

/// Runs a parsed command line; returns the exit code.
pub fn run(cli: Cli) -> Result<i32, CliError> {
    match cli.command {
        Command::Dialects { model: Some(model) } => {
            let found = idiolect::field::families::for_model(&model).ok_or_else(|| {
                CliError::new(format!(
                    "no field family is known for model {model:?}; `idiolect dialects` lists the families"
                ))
            })?;
            let mut answer = serde_json::json!({
                "model": model,
                "family": found.family,
                "pattern": found.pattern,
                "options": found.options,
            });
            if let Some(note) = found.note {
                answer["note"] = note.into();
            }
            write_stdout(format!("{answer}\n").as_bytes())?;
            Ok(0)
        }
        Command::Dialects { model: None } => {
            let mut out = String::new();
            for d in idiolect::dialects() {
                out.push_str(&format!("{:<16}{}\n", d.name, d.summary));
            }
            write_stdout(out.as_bytes())?;
            Ok(0)
        }
        Command::Parse {
            dialect,
            file,
            family,
            options,
            spans,
            compact,
            output,
            server,
        } => {
            let (target, file) = target(dialect, file, &family)?;
            if output == Output::Message {
                let (family, options) = server_family(&target, &options, "--output=message")?;
                let rules = super::server::options(&server);
                return super::server::message(
                    family,
                    &options,
                    &rules,
                    Source::from_arg(file),
                    compact,
                );
            }
            if server.given() {
                return Err(CliError::new(
                    "--ids and --declared-tool need --output=message",
                ));
            }
            let session = match &target {
                Target::Dialect(name) => open(name, &options, spans)?.1,
                Target::Custom(family) => open_custom(family, &options, spans)?,
            };
            let layout = if compact {
                Layout::Compact
            } else {
                Layout::Pretty
            };
            parse(session, Source::from_arg(file), layout)
        }
        Command::Stream {
            dialect,
            file,
            family,
            options,
            chunk_size,
            deltas,
            whole_calls,
            server,
        } => {
            let (target, file) = target(dialect, file, &family)?;
            let deltas = match (deltas, whole_calls) {
                (Some(Deltas::Server), true) => {
                    return Err(CliError::new(
                        "--whole-calls is --deltas=whole-calls, not --deltas=server",
                    ))
                }
                (Some(_), true) => Some(Deltas::WholeCalls),
                (deltas, _) => deltas,
            };
            if deltas == Some(Deltas::Server) {
                let (family, options) = server_family(&target, &options, "--deltas")?;
                let rules = super::server::options(&server);
                return super::server::stream(
                    family,
                    &options,
                    rules,
                    Source::from_arg(file),
                    chunk_size as usize,
                );
            }
            if server.given() {
                return Err(CliError::new(
                    "--ids and --declared-tool need --deltas=server",
                ));
            }
            let mut session = match &target {
                Target::Dialect(dialect) => {
                    if deltas.is_some() && !idiolect::field::is_family(dialect) {
                        return Err(CliError::new(format!(
                            "--deltas needs a field family ({}), not {dialect:?}",
                            idiolect::field::families::names()
                                .collect::<Vec<_>>()
                                .join(", ")
                        )));
                    }
                    open(dialect, &options, true)?.1
                }
                Target::Custom(family) => open_custom(family, &options, true)?,
            };
            // Only the events are printed: no document, so memory stays flat.
            session.stop_folding();
            let projection = deltas.map(|deltas| {
                idiolect::field::DeltaProjection::new(if deltas == Deltas::WholeCalls {
                    idiolect::field::DeltaMode::WholeCalls
                } else {
                    idiolect::field::DeltaMode::Live
                })
            });
            stream(
                session,
                Source::from_arg(file),
                chunk_size as usize,
                projection,
            )
        }
        Command::Batch {
            dialect,
            inputs,
            files,
            field,
            id_field,
            threads,
            options,
            spans,
        } => {
            let found = find(&dialect)?;
            let options = build_options(found.name, &options)?;
            // Refuse bad options once, before any record (exit 2).
            found
                .open(&options, spans)
                .map_err(|e| CliError::new(e.to_string()))?;
            super::batch::run(super::batch::Plan {
                dialect: found,
                options,
                spans,
                inputs,
                files,
                field,
                id_field,
                threads,
            })
        }
        Command::Conformance {
            dialect,
            port,
            chunks,
            ordered,
            skip,
            root,
            threads,
        } => super::conformance::run(super::conformance::Plan {
            root,
            dialect,
            port,
            chunks,
            ordered,
            skip,
            threads,
        }),
        Command::Render {
            dialect,
            family,
            what,
            options,
        } => {
            // The renderer and its options, checked before stdin is read.
            let render: Box<Renderer> = match target(dialect, None, &family)?.0 {
                Target::Dialect(dialect) => {
                    let (found, _) = open(&dialect, &options, false)?;
                    if !found.renders() {
                        return Err(CliError::new(format!(
                            "the {} dialect has no renderer",
                            found.name
                        )));
                    }
                    let options = build_options(found.name, &options)?;
                    Box::new(move |input| found.render(what.as_deref(), input, &options))
                }
                Target::Custom(family) => {
                    if !family.renders() {
                        return Err(CliError::new(format!(
                            "the {} family has no renderer (its description has no `render`)",
                            family.description().name
                        )));
                    }
                    let options = build_options("custom", &options)?;
                    Box::new(move |input| family.render(what.as_deref(), input, &options))
                }
            };
            let input = Source::Stdin.read_all()?;
            let input: Value = serde_json::from_slice(&input).map_err(|e| {
                CliError::new(format!(
                    "stdin: invalid JSON at line {} column {}",
                    e.line(),
                    e.column()
                ))
            })?;
            // Printed exactly: a rendered prompt's last byte matters (no newline added).
            let text = render(&input).map_err(CliError::new)?;
            write_stdout(text.as_bytes())?;
            Ok(0)
        }
    }
}

/// The dialect called `name`, or a message listing the known ones.
fn find(name: &str) -> Result<&'static Dialect, CliError> {
    idiolect::dialect(name).ok_or_else(|| {
        let known: Vec<&str> = idiolect::dialects().iter().map(|d| d.name).collect();
        CliError::new(format!(
            "unknown dialect {name:?}; known dialects: {}",
            known.join(", ")
        ))
    })
}

/// The field family `target` names (or defines) and its options, for the server
/// layer; `flag` names the option that needs a field family in the message.
fn server_family<'a>(
    target: &'a Target,
    args: &OptionArgs,
    flag: &str,
) -> Result<(&'a Family, idiolect::field::custom::Options), CliError> {
    let family = match target {
        Target::Dialect(name) => {
            let found = find(name)?;
            let family = idiolect::field::families::family(found.name).ok_or_else(|| {
                CliError::new(format!(
                    "{flag} needs a field family ({}), not {name:?}",
                    idiolect::field::families::names()
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            // Refuse bad options with the dialect's message, as `parse` does.
            open(found.name, args, false)?;
            family
        }
        Target::Custom(family) => family.as_ref(),
    };
    let name = match target {
        Target::Dialect(name) => name.as_str(),
        Target::Custom(_) => "custom",
    };
    let options = family
        .options(&build_options(name, args)?)
        .map_err(|e| CliError::new(e.to_string()))?;
    Ok((family, options))
}

/// Renders the JSON read from stdin (`idiolect render`).
type Renderer = dyn Fn(&Value) -> Result<String, String>;

/// What `parse` and `stream` run: a dialect by name, or a family defined at run time.
enum Target {
    Dialect(String),
    Custom(Box<Family>),
}

/// The target and the input file: with --grammar/--family the one positional
/// argument is the input file, not a dialect.
fn target(
    dialect: Option<String>,
    file: Option<PathBuf>,
    family: &FamilyArgs,
) -> Result<(Target, Option<PathBuf>), CliError> {
    let (Some(grammar), Some(description)) = (&family.grammar, &family.family) else {
        let dialect = dialect.ok_or_else(|| CliError::new("no dialect given"))?;
        return Ok((Target::Dialect(dialect), file));
    };
    if file.is_some() {
        return Err(CliError::new(
            "with --grammar and --family, give only the input file, not a dialect",
        ));
    }
    let read = |path: &PathBuf| {
        std::fs::read_to_string(path)
            .map_err(|e| CliError::new(format!("{}: {}", path.display(), plain(&e))))
    };
    let (grammar_text, description_text) = (read(grammar)?, read(description)?);
    let built = Family::new(&grammar_text, &description_text).map_err(|e| {
        let path = match e {
            FamilyError::Grammar(_) => grammar,
            _ => description,
        };
        CliError::new(format!("{}: {e}", path.display()))
    })?;
    Ok((Target::Custom(Box::new(built)), dialect.map(PathBuf::from)))
}

/// Opens a session of a family defined at run time with the assembled options.
fn open_custom(
    family: &Family,
    args: &OptionArgs,
    spans: bool,
) -> Result<Box<dyn Session>, CliError> {
    let options = build_options("custom", args)?;
    family
        .open(&options, spans)
        .map_err(|e| CliError::new(e.to_string()))
}

/// Finds the dialect and opens a session with the assembled options.
fn open(
    name: &str,
    args: &OptionArgs,
    spans: bool,
) -> Result<(&'static Dialect, Box<dyn Session>), CliError> {
    let dialect = find(name)?;
    let options = build_options(dialect.name, args)?;
    let session = dialect
        .open(&options, spans)
        .map_err(|e| CliError::new(e.to_string()))?;
    Ok((dialect, session))
}

/// Says on stderr that invalid UTF-8 was replaced (the output itself is still valid).
fn warn_replacements(session: &dyn Session) {
    let n = session.replaced_sequences();
    if n > 0 {
        let s = if n == 1 { "" } else { "s" };
        eprintln!("idiolect: warning: {n} invalid UTF-8 sequence{s} replaced with U+FFFD");
    }
}

/// Writes to stdout; a closed stdout ends the program quietly (exit 0).
pub(super) fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|_| out.flush())
        .map_err(stdout_error)
}

/// A failed write to stdout: a closed stdout (a pipe whose reader left) ends the
/// program quietly with exit 0; anything else is an IO error.
pub fn stdout_error(e: std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    CliError::new(format!("cannot write stdout: {}", plain(&e)))
}

/// Reads bytes into `buf`; `Ok(0)` at end of input.
pub(super) fn read_some(
    reader: &mut dyn Read,
    buf: &mut [u8],
    source: &Source,
) -> Result<usize, CliError> {
    loop {
        match reader.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(source.error(&e)),
        }
    }
}

/// Parses the whole input and writes the document as it is folded: the input is
/// read in pieces and never held whole, and what of the document is settled is
/// written (and dropped) as it goes.
fn parse(mut session: Box<dyn Session>, source: Source, layout: Layout) -> Result<i32, CliError> {
    let mut reader = source.open()?;
    let mut buf = vec![0u8; WHOLE_PARSE_PIECE];
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(WHOLE_PARSE_PIECE, stdout.lock());
    loop {
        let n = read_some(&mut reader, &mut buf, &source)?;
        if n == 0 {
            break;
        }
        session
            .feed_document(&buf[..n], layout, &mut out)
            .map_err(stdout_error)?;
    }
    session
        .finish_document(layout, &mut out)
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush())
        .map_err(stdout_error)?;
    warn_replacements(session.as_ref());
    Ok(if session.is_clean() { 0 } else { 1 })
}

/// Reads the input as it arrives and prints each event as one JSON line, flushed
/// after every chunk.
fn stream(
    mut session: Box<dyn Session>,
    source: Source,
    chunk_size: usize,
    mut projection: Option<idiolect::field::DeltaProjection>,
) -> Result<i32, CliError> {
    let mut reader = source.open()?;
    let mut buf = vec![0u8; chunk_size];
    let mut lines = Vec::new();
    if let Some(projection) = projection.as_mut() {
        return stream_deltas(session, reader, &source, buf, projection);
    }
    loop {
        let n = read_some(&mut reader, &mut buf, &source)?;
        if n == 0 {
            break;
        }
        lines.clear();
        session.feed_json(&buf[..n], &mut lines);
        if !lines.is_empty() {
            write_stdout(&lines)?;
        }
    }
    lines.clear();
    session.finish_json(&mut lines);
    write_stdout(&lines)?;
    warn_replacements(session.as_ref());
    Ok(if session.is_clean() { 0 } else { 1 })
}

/// `stream --deltas`: the field family's events, projected into the deltas they
/// release, one JSON line per delta, flushed after every chunk. The session
/// projects its typed events itself ([`Session::feed_deltas`]): no JSON value is
/// made and read back per event.
fn stream_deltas(
    mut session: Box<dyn Session>,
    mut reader: Box<dyn Read>,
    source: &Source,
    mut buf: Vec<u8>,
    projection: &mut idiolect::field::DeltaProjection,
) -> Result<i32, CliError> {
    let mut lines = Vec::new();
    loop {
        let n = read_some(&mut reader, &mut buf, source)?;
        if n == 0 {
            break;
        }
        lines.clear();
        if !session.feed_deltas(&buf[..n], false, projection, &mut lines) {
            return Err(CliError::new("--deltas needs a field family"));
        }
        if !lines.is_empty() {
            write_stdout(&lines)?;
        }
    }
    lines.clear();
    session.feed_deltas(&[], true, projection, &mut lines);
    write_stdout(&lines)?;
    warn_replacements(session.as_ref());
    Ok(if session.is_clean() { 0 } else { 1 })
}

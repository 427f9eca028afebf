//! The commands: parse, stream, render, dialects.

use std::io::{Read, Write};

use serde_json::Value;

use super::args::{Cli, Command, OptionArgs};
use super::input::{build_options, plain, Source};
use super::CliError;
use idiolect::session::{Dialect, Session};

/// Runs a parsed command line; returns the exit code.
pub fn run(cli: Cli) -> Result<i32, CliError> {
    match cli.command {
        Command::Dialects => {
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
            options,
            spans,
            compact,
        } => {
            let (dialect, mut session) = open(&dialect, &options, spans)?;
            let _ = dialect;
            let input = Source::from_arg(file).read_all()?;
            let mut events = Vec::new();
            session.feed_folding(&input);
            session.finish(&mut events);
            warn_replacements(session.as_ref());
            let document = session.document();
            let mut text = if compact {
                serde_json::to_string(&document)
            } else {
                serde_json::to_string_pretty(&document)
            }
            .map_err(|e| CliError::new(format!("cannot print the document: {e}")))?;
            text.push('\n');
            write_stdout(text.as_bytes())?;
            Ok(if session.is_clean() { 0 } else { 1 })
        }
        Command::Stream {
            dialect,
            file,
            options,
            chunk_size,
            deltas,
            whole_calls,
        } => {
            if deltas && !idiolect::field::is_family(&dialect) {
                return Err(CliError::new(format!(
                    "--deltas needs a field family ({}), not {dialect:?}",
                    idiolect::field::FAMILIES.join(", ")
                )));
            }
            let (_, mut session) = open(&dialect, &options, true)?;
            // Only the events are printed: no document, so memory stays flat.
            session.stop_folding();
            let projection = deltas.then(|| {
                idiolect::field::DeltaProjection::new(if whole_calls {
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
        Command::Conformance {
            dialect,
            port,
            chunks,
            ordered,
            skip,
            root,
        } => super::conformance::run(super::conformance::Plan {
            root,
            dialect,
            port,
            chunks,
            ordered,
            skip,
        }),
        Command::Render {
            dialect,
            what,
            options,
        } => {
            let (found, _) = open(&dialect, &options, false)?;
            let Some(render) = found.render else {
                return Err(CliError::new(format!(
                    "the {} dialect has no renderer",
                    found.name
                )));
            };
            let options = build_options(found.name, &options)?;
            let input = Source::Stdin.read_all()?;
            let input: Value = serde_json::from_slice(&input).map_err(|e| {
                CliError::new(format!(
                    "stdin: invalid JSON at line {} column {}",
                    e.line(),
                    e.column()
                ))
            })?;
            // Printed exactly: a rendered prompt's last byte matters (no newline added).
            let text = render(what.as_deref(), &input, &options).map_err(CliError::new)?;
            write_stdout(text.as_bytes())?;
            Ok(0)
        }
    }
}

/// Finds the dialect and opens a session with the assembled options.
fn open(
    name: &str,
    args: &OptionArgs,
    spans: bool,
) -> Result<(&'static Dialect, Box<dyn Session>), CliError> {
    let Some(dialect) = idiolect::dialect(name) else {
        let known: Vec<&str> = idiolect::dialects().iter().map(|d| d.name).collect();
        return Err(CliError::new(format!(
            "unknown dialect {name:?}; known dialects: {}",
            known.join(", ")
        )));
    };
    let options = build_options(dialect.name, args)?;
    let session = (dialect.open)(&options, spans).map_err(|e| CliError::new(e.to_string()))?;
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
fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(CliError::new(format!("cannot write stdout: {}", plain(&e)))),
    }
}

/// Reads the input as it arrives and prints each event as one flushed JSON line.
fn stream(
    mut session: Box<dyn Session>,
    source: Source,
    chunk_size: usize,
    mut projection: Option<idiolect::field::DeltaProjection>,
) -> Result<i32, CliError> {
    let mut reader = source.open()?;
    let mut buf = vec![0u8; chunk_size];
    let mut events = Vec::new();
    let mut line = Vec::new();
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(source.error(&e)),
        };
        session.feed(&buf[..n], &mut events);
        project(projection.as_mut(), &mut events);
        print_events(&mut events, &mut line)?;
    }
    session.finish(&mut events);
    project(projection.as_mut(), &mut events);
    print_events(&mut events, &mut line)?;
    warn_replacements(session.as_ref());
    Ok(if session.is_clean() { 0 } else { 1 })
}

/// With a projection, replaces field events by the deltas they release (other
/// events, such as `invalid_utf8` diagnostics, carry no delta and are dropped).
fn project(projection: Option<&mut idiolect::field::DeltaProjection>, events: &mut Vec<Value>) {
    let Some(projection) = projection else {
        return;
    };
    let mut deltas = Vec::new();
    for event in events.drain(..) {
        if let Ok(event) = serde_json::from_value::<idiolect::field::Event>(event) {
            projection.push(&event, &mut deltas);
        }
    }
    events.extend(deltas.iter().filter_map(|d| serde_json::to_value(d).ok()));
}

fn print_events(events: &mut Vec<Value>, line: &mut Vec<u8>) -> Result<(), CliError> {
    if events.is_empty() {
        return Ok(());
    }
    line.clear();
    for event in events.drain(..) {
        serde_json::to_writer(&mut *line, &event)
            .map_err(|e| CliError::new(format!("cannot print an event: {e}")))?;
        line.push(b'\n');
    }
    write_stdout(line)
}

//! Argument definitions (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Turn what language models write into structured JSON, as it streams.
#[derive(Parser, Debug)]
#[command(name = "idiolect", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse a whole document and print it as JSON.
    Parse {
        /// The dialect (see `idiolect dialects`); left out with --grammar/--family.
        #[arg(required_unless_present = "family")]
        dialect: Option<String>,
        /// The input file; `-` or nothing reads stdin.
        file: Option<PathBuf>,
        #[command(flatten)]
        family: FamilyArgs,
        #[command(flatten)]
        options: OptionArgs,
        /// Give every item its byte span in the input.
        #[arg(long)]
        spans: bool,
        /// Print the JSON on one line.
        #[arg(long)]
        compact: bool,
        /// What to print: `document` (the lossless document), or for a field family
        /// `message`, the one-shot message an inference server returns
        /// (spec/servers.md: complete calls only, with ids, formatting left out).
        #[arg(long, value_enum, default_value_t = Output::Document)]
        output: Output,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Print events as NDJSON, one line per event, as soon as each is decided.
    Stream {
        /// The dialect (see `idiolect dialects`); left out with --grammar/--family.
        #[arg(required_unless_present = "family")]
        dialect: Option<String>,
        /// The input file; `-` or nothing reads stdin (incrementally).
        file: Option<PathBuf>,
        #[command(flatten)]
        family: FamilyArgs,
        #[command(flatten)]
        options: OptionArgs,
        /// Feed the parser at most this many bytes at a time.
        #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
        chunk_size: u64,
        /// For a field family (hermes, qwen3-coder, ...): print OpenAI chat-completion
        /// deltas instead of events. `live` (the default): every call as it streams,
        /// argument fragments as they arrive; `whole-calls`: each call in one delta
        /// when it ends complete; `server`: one delta per chunk read, as an inference
        /// server sends it (spec/servers.md: calls only with an object of arguments,
        /// at most one call a delta, formatting left out, ids).
        #[arg(
            long,
            value_enum,
            value_name = "MODE",
            num_args = 0..=1,
            require_equals = true,
            default_missing_value = "live"
        )]
        deltas: Option<Deltas>,
        /// The same as --deltas=whole-calls.
        #[arg(long, requires = "deltas")]
        whole_calls: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Parse many documents: JSON Lines records (or files), one JSON line out per
    /// record, in input order, on every core.
    Batch {
        /// The dialect (see `idiolect dialects`).
        dialect: String,
        /// JSON Lines files to read, in order; `-` or nothing reads stdin. With
        /// `--files`, the documents themselves, one per file.
        inputs: Vec<PathBuf>,
        /// Each input file is one whole document (not JSON Lines).
        #[arg(long)]
        files: bool,
        /// The record field that holds the text.
        #[arg(long, default_value = "text", value_name = "NAME")]
        field: String,
        /// The record field copied to the output line as `id`, when present.
        #[arg(long, default_value = "id", value_name = "NAME")]
        id_field: String,
        /// Worker threads (default: one per core).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: Option<u64>,
        #[command(flatten)]
        options: OptionArgs,
        /// Give every item its byte span in its document.
        #[arg(long)]
        spans: bool,
    },
    /// Render JSON read from stdin into the dialect's text.
    Render {
        /// The dialect (see `idiolect dialects`); left out with --grammar/--family.
        #[arg(required_unless_present = "family")]
        dialect: Option<String>,
        #[command(flatten)]
        family: FamilyArgs,
        /// Which rendering, for dialects with several (anthropic-xml: calls, results,
        /// tools; transcript: prompt, stop_sequences, request).
        #[arg(long)]
        what: Option<String>,
        #[command(flatten)]
        options: OptionArgs,
    },
    /// List the dialects, or say which field family reads a model's output.
    Dialects {
        /// A model's name as servers and hubs spell it (`Qwen/Qwen3-8B`): print the
        /// family that reads its output and the options its chat template implies,
        /// as one JSON object (spec/custom-family.md CF-35).
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
    },
    /// Run the conformance corpus, in-process or against another implementation.
    Conformance {
        /// Only this dialect's cases.
        #[arg(long)]
        dialect: Option<String>,
        /// Run each case through this command instead (see conformance/README.md).
        #[arg(long, value_name = "'CMD ARGS'")]
        port: Option<String>,
        /// With --port: also send each input as chunks, under the port schedule.
        #[arg(long, requires = "port")]
        chunks: bool,
        /// With --port: compare object keys in order too (the in-process runner always
        /// does), so the source-order rules are checked on the port.
        #[arg(long, requires = "port")]
        ordered: bool,
        /// Case names (`dialect::case`) a port is known to fail, one per line.
        #[arg(long, value_name = "FILE")]
        skip: Option<PathBuf>,
        /// The corpus folder.
        #[arg(long, value_name = "DIR", default_value = "conformance")]
        root: PathBuf,
        /// Worker threads, each checking one case at a time (default: one per
        /// core); the lines still come in corpus order.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: Option<u64>,
    },
}

/// A field family defined at run time (spec/custom-family.md), in place of a dialect.
#[derive(Args, Debug, Default)]
pub struct FamilyArgs {
    /// The pest grammar of a field family defined at run time (with --family).
    #[arg(long, value_name = "FILE", requires = "family")]
    pub grammar: Option<PathBuf>,
    /// The JSON description of that family (with --grammar; spec/custom-family.md).
    #[arg(long, value_name = "FILE", requires = "grammar")]
    pub family: Option<PathBuf>,
}

/// Options shared by the commands; they are merged into the dialect's JSON options.
#[derive(Args, Debug, Default)]
pub struct OptionArgs {
    /// A JSON file with the dialect's options.
    #[arg(long, value_name = "FILE")]
    pub options: Option<PathBuf>,
    /// sections: register a section, `NAME` or `NAME=ALIAS,ALIAS` (repeatable).
    #[arg(long = "section", value_name = "NAME[=ALIAS,...]")]
    pub sections: Vec<String>,
    /// transcript: the prompt format.
    #[arg(long)]
    pub format: Option<String>,
    /// transcript: scan a continuation for this stop sequence (repeatable).
    #[arg(long = "stop", value_name = "S")]
    pub stops: Vec<String>,
}

/// What `parse` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// The lossless document.
    #[default]
    Document,
    /// A field family's one-shot server message (spec/servers.md, SV-9).
    Message,
}

/// How `stream --deltas` projects a field family's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Deltas {
    /// Every event's delta, argument fragments as they arrive.
    Live,
    /// Each call in one delta when it ends complete.
    WholeCalls,
    /// One delta per chunk read, under the server rules (spec/servers.md).
    Server,
}

/// The server rules' choices, for `parse --output=message` and
/// `stream --deltas=server` (spec/servers.md).
#[derive(Args, Debug, Default)]
pub struct ServerArgs {
    /// Ids of calls whose markup writes none (the model's own always wins):
    /// `model` (none, null), `random` (call_ and 24 letters and digits), `vllm`
    /// (chatcmpl-tool- and 32 hex digits), `sequence` (call_0, call_1, ...).
    #[arg(long, value_name = "STYLE", value_parser = clap::builder::PossibleValuesParser::new(idiolect::field::server::CallIds::NAMES))]
    pub ids: Option<String>,
    /// A tool the request declares (repeatable): calls to other tools are dropped,
    /// as SGLang does. Without it every call is kept.
    #[arg(long = "declared-tool", value_name = "NAME")]
    pub declared_tools: Vec<String>,
}

impl ServerArgs {
    /// Whether any server rule was chosen.
    pub fn given(&self) -> bool {
        self.ids.is_some() || !self.declared_tools.is_empty()
    }
}

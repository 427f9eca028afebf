//! The JSON model of plurnk statements, in the published package's shape (spec PL-8 to PL-13).

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;

/// A place in the input: 1-based line, 0-based column in code points (PL-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Position {
    /// Line, from 1; only LF ends a line.
    pub line: usize,
    /// Column, from 0, in Unicode code points since the last LF.
    pub column: usize,
}

impl Default for Position {
    fn default() -> Self {
        Position { line: 1, column: 0 }
    }
}

impl Position {
    /// The position just after `text`, starting from `self`.
    pub fn after(mut self, text: &str) -> Position {
        let bytes = text.as_bytes();
        match memchr::memrchr(b'\n', bytes) {
            Some(last) => {
                self.line += memchr::memchr_iter(b'\n', bytes).count();
                self.column = code_points(&bytes[last + 1..]);
            }
            None => self.column += code_points(bytes),
        }
        self
    }
}

/// Code points in valid UTF-8: every byte that is not a continuation byte starts one.
fn code_points(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// One of the nine operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[allow(missing_docs)]
pub enum Op {
    FIND,
    READ,
    EDIT,
    COPY,
    MOVE,
    SHOW,
    HIDE,
    SEND,
    EXEC,
}

impl Op {
    /// Every OP, in the order the spec lists them.
    pub const ALL: [Op; 9] = [
        Op::FIND,
        Op::READ,
        Op::EDIT,
        Op::COPY,
        Op::MOVE,
        Op::SHOW,
        Op::HIDE,
        Op::SEND,
        Op::EXEC,
    ];

    /// The OP as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::FIND => "FIND",
            Op::READ => "READ",
            Op::EDIT => "EDIT",
            Op::COPY => "COPY",
            Op::MOVE => "MOVE",
            Op::SHOW => "SHOW",
            Op::HIDE => "HIDE",
            Op::SEND => "SEND",
            Op::EXEC => "EXEC",
        }
    }

    /// The OP spelled by exactly these four bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<Op> {
        Op::ALL
            .into_iter()
            .find(|op| op.as_str().as_bytes() == bytes)
    }
}

/// The typed signal slot (PL-10).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Signal {
    /// Tags (FIND READ EDIT COPY MOVE SHOW, and HIDE without an integer).
    Tags(Vec<String>),
    /// A status code (SEND, HIDE).
    Number(i64),
    /// A runtime tag (EXEC).
    Runtime(String),
}

/// `<N>` (`last` null) or `<N-M>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LineMarker {
    /// The first (or only) position.
    pub first: i64,
    /// The last position of a range; `None` for a single position.
    pub last: Option<i64>,
}

/// A query value: one string, or every value of a repeated key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamValue {
    /// The key appeared once.
    One(String),
    /// The key appeared several times; values in order.
    Many(Vec<String>),
}

/// A path slot or a COPY/MOVE destination (PL-11).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Path {
    /// No scheme: kept raw.
    Local {
        /// The text as written.
        raw: String,
    },
    /// A URL, decomposed the WHATWG way.
    Url(Box<UrlPath>),
}

/// A URL path slot, decomposed the WHATWG way (PL-11).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
// Inlined into `Path`'s `url` variant, so that its keys and `kind` form one closed object.
#[schemars(inline)]
pub struct UrlPath {
    /// The text as written.
    pub raw: String,
    /// Lowercased scheme without `:`.
    pub scheme: String,
    /// Percent-encoded user name, if any.
    pub username: Option<String>,
    /// Percent-encoded password, if any.
    pub password: Option<String>,
    /// Serialized host, if any.
    pub hostname: Option<String>,
    /// Port, unless absent or the scheme's default.
    pub port: Option<u16>,
    /// Serialized path.
    pub pathname: String,
    /// Decoded query values by key, in first-appearance order.
    pub params: IndexMap<String, ParamValue>,
    /// Fragment without `#`, if not empty.
    pub fragment: Option<String>,
}

/// A matcher body of FIND, READ, SHOW and HIDE (PL-13).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "dialect", rename_all = "lowercase")]
pub enum Matcher {
    /// `//...`: an XPath 1.0 expression.
    Xpath {
        /// The body.
        raw: String,
    },
    /// `/pattern/flags`: an ECMAScript regular expression.
    Regex {
        /// The body.
        raw: String,
        /// Between the slashes.
        pattern: String,
        /// After the closing slash.
        flags: String,
    },
    /// `$...`: an RFC 9535 JSONPath query.
    Jsonpath {
        /// The body.
        raw: String,
    },
    /// Anything else.
    Glob {
        /// The body.
        raw: String,
    },
}

/// The typed body (PL-12).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Body {
    /// EDIT, EXEC: verbatim.
    Raw(String),
    /// COPY, MOVE: a destination.
    Path(Path),
    /// SEND: the raw text and its JSON reading.
    Send {
        /// The body.
        raw: String,
        /// The body parsed as JSON, or null.
        json: serde_json::Value,
    },
    /// FIND, READ, SHOW, HIDE.
    Matcher(Matcher),
}

/// A valid statement (PL-9).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Statement {
    /// The operation.
    pub op: Op,
    /// The suffix glued to the OP, `""` when none.
    pub suffix: String,
    /// The signal slot, typed per OP.
    pub signal: Option<Signal>,
    /// The path slot.
    pub path: Option<Path>,
    /// The line marker slot.
    #[serde(rename = "lineMarker")]
    pub line_marker: Option<LineMarker>,
    /// The body, typed per OP; `None` when empty.
    pub body: Option<Body>,
    /// Where the opener's first `<` stands.
    pub position: Position,
}

/// Which stage found an error (PL-16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The shape of a token: a character, a slot's content.
    Lexer,
    /// The structure: slots, close tags, end of input.
    Parser,
    /// The meaning: URLs, matchers, integer ranges.
    Visitor,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Lexer => "lexer",
            Source::Parser => "parser",
            Source::Visitor => "visitor",
        }
    }
}

/// An error item's payload: `{line, column, source, message}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ParseError {
    /// Line of the offending place, from 1.
    pub line: usize,
    /// Column of the offending place, from 0, in code points.
    pub column: usize,
    /// The stage that found it.
    pub source: Source,
    /// `Plurnk <source> error at L:C — <text>`.
    pub message: String,
}

impl ParseError {
    /// An error at `at` with the protocol-vocabulary `text`.
    pub fn new(at: Position, source: Source, text: &str) -> ParseError {
        let message = format!(
            "Plurnk {} error at {}:{} \u{2014} {}",
            source.as_str(),
            at.line,
            at.column,
            text
        );
        ParseError {
            line: at.line,
            column: at.column,
            source,
            message,
        }
    }
}

/// Where parsing gave up, and why (PL-19).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnparsedTail {
    /// The position of the statement that never closed.
    pub from: Position,
    /// The slot left open and how to close it.
    pub reason: String,
}

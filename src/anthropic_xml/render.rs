//! Rendering (AX-25): tool calls, tool results and tool definitions from JSON to the
//! text a model reads or writes. Tags are assembled from [`PREFIX`] and a name, never
//! spelled out.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::options::{Options, ToolDefinition};
use super::{parse, PREFIX};

/// A call to render: `params` (raw strings, written verbatim) or `input` (typed).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// The tool name.
    pub name: String,
    /// Raw parameter values; preferred over `input` when both are given.
    #[serde(default)]
    pub params: Option<IndexMap<String, String>>,
    /// Typed parameter values: strings verbatim, anything else as compact JSON.
    #[serde(default)]
    pub input: Option<Map<String, Value>>,
    /// Accepted so that a parsed document's calls can be rendered again; ignored.
    #[serde(default)]
    pub complete: Option<bool>,
}

impl CallSpec {
    /// The parameter values as they will be written.
    pub fn raw_params(&self) -> IndexMap<String, String> {
        if let Some(params) = &self.params {
            return params.clone();
        }
        let input = self.input.iter().flatten();
        input
            .map(|(k, v)| {
                let raw = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), raw)
            })
            .collect()
    }
}

/// A result to render.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultSpec {
    /// The id of the call this answers.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// Whether to write an error element.
    #[serde(default)]
    pub is_error: bool,
    /// The content: a string, or any JSON (written compact).
    pub content: Value,
}

/// Why something cannot be rendered.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderError {
    /// What was wrong, in one line.
    pub message: String,
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RenderError {}

fn error(message: impl Into<String>) -> RenderError {
    RenderError {
        message: message.into(),
    }
}

/// Builds tags in the form the options ask for.
struct Tags<'a> {
    prefix: &'a str,
}

impl Tags<'_> {
    fn new(options: &Options) -> Tags<'static> {
        Tags {
            prefix: if options.render_prefix { PREFIX } else { "" },
        }
    }
    fn open(&self, name: &str) -> String {
        format!("<{}{name}>", self.prefix)
    }
    fn open_named(&self, name: &str, key: &str, value: &str) -> String {
        format!(
            "<{}{name} {key}=\"{}\">",
            self.prefix,
            escape_attribute(value)
        )
    }
    fn close(&self, name: &str) -> String {
        format!("</{}{name}>", self.prefix)
    }
}

/// Escapes an attribute value: `&`, `<` and `"`.
pub fn escape_attribute(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
}

/// Escapes result content: `&`, `<` and `>`.
pub fn escape_content(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders tool calls as one tool-call block; checks that parsing it gives back the
/// same names and parameter values.
pub fn render_calls(calls: &[CallSpec], options: &Options) -> Result<String, RenderError> {
    let tags = Tags::new(options);
    let mut out = tags.open("function_calls");
    out.push('\n');
    let mut expected = Vec::with_capacity(calls.len());
    for call in calls {
        let params = call.raw_params();
        out.push_str(&tags.open_named("invoke", "name", &call.name));
        out.push('\n');
        for (key, value) in &params {
            out.push_str(&tags.open_named("parameter", "name", key));
            out.push_str(value);
            out.push_str(&tags.close("parameter"));
            out.push('\n');
        }
        out.push_str(&tags.close("invoke"));
        out.push('\n');
        expected.push((call.name.clone(), params));
    }
    out.push_str(&tags.close("function_calls"));
    let document = parse(&out, options).map_err(|e| error(e.to_string()))?;
    let got: Vec<_> = document
        .calls()
        .map(|c| (c.name.clone(), c.params.clone()))
        .collect();
    if got != expected {
        let at = got
            .iter()
            .zip(&expected)
            .position(|(g, e)| g != e)
            .unwrap_or(got.len().min(expected.len()));
        let name = expected.get(at).map(|(n, _)| n.as_str()).unwrap_or("");
        return Err(error(format!(
            "call {at} ({name:?}) would not parse back as written: a parameter value holds a parameter closer followed by a structural tag, or a tag is longer than max_tag_bytes"
        )));
    }
    Ok(out)
}

/// Renders tool results as one tool-result block, content escaped.
pub fn render_results(results: &[ResultSpec], options: &Options) -> String {
    let tags = Tags::new(options);
    let mut out = tags.open("function_results");
    out.push('\n');
    for result in results {
        let element = if result.is_error { "error" } else { "result" };
        match &result.tool_use_id {
            Some(id) => out.push_str(&tags.open_named(element, "tool_use_id", id)),
            None => out.push_str(&tags.open(element)),
        }
        let content = match &result.content {
            Value::String(s) => escape_content(s),
            other => escape_content(&other.to_string()),
        };
        out.push_str(&content);
        out.push_str(&tags.close(element));
        out.push('\n');
    }
    out.push_str(&tags.close("function_results"));
    out
}

/// One entry of the functions list, keys in the order a model expects them.
#[derive(Serialize)]
struct FunctionEntry<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a Value>,
}

/// Renders tool definitions as the instructions that tell a model how to call them.
pub fn render_tools(tools: &[ToolDefinition], options: &Options) -> String {
    let tags = Tags::new(options);
    let mut out = String::from(
        "In this environment you can call tools. To call one or more, write a block like \
         the following as part of your reply:\n",
    );
    out.push_str(&tags.open("function_calls"));
    out.push('\n');
    out.push_str(&tags.open_named("invoke", "name", "$TOOL_NAME"));
    out.push('\n');
    out.push_str(&tags.open_named("parameter", "name", "$PARAMETER_NAME"));
    out.push_str("$PARAMETER_VALUE");
    out.push_str(&tags.close("parameter"));
    out.push_str("\n...\n");
    out.push_str(&tags.close("invoke"));
    out.push('\n');
    out.push_str(&tags.close("function_calls"));
    out.push_str(
        "\n\nWrite strings and numbers as they are; write lists and objects as JSON.\n\n\
         The tools, with the JSON Schema of their parameters:\n<functions>\n",
    );
    for tool in tools {
        let entry = FunctionEntry {
            description: tool.description.as_deref(),
            name: &tool.name,
            parameters: tool.input_schema.as_ref(),
        };
        out.push_str("<function>");
        out.push_str(&serde_json::to_string(&entry).unwrap_or_default());
        out.push_str("</function>\n");
    }
    out.push_str("</functions>");
    out
}

fn from_input<T: serde::de::DeserializeOwned>(input: &Value, what: &str) -> Result<T, String> {
    serde_json::from_value(input.clone()).map_err(|e| format!("{what}: {e}"))
}

/// Renders JSON for the registry (`idiolect render`): `what` is `calls` (the
/// default), `results` or `tools`; `input` the JSON array to render.
pub(crate) fn render_json(
    what: Option<&str>,
    input: &Value,
    options: &Options,
) -> Result<String, String> {
    options.validate().map_err(|e| e.to_string())?;
    match what.unwrap_or("calls") {
        "calls" => {
            let calls: Vec<CallSpec> =
                from_input(input, "calls must be an array of {name, params | input}")?;
            render_calls(&calls, options).map_err(|e| e.to_string())
        }
        "results" => {
            let results: Vec<ResultSpec> = from_input(
                input,
                "results must be an array of {tool_use_id?, is_error?, content}",
            )?;
            Ok(render_results(&results, options))
        }
        "tools" => {
            let tools: Vec<ToolDefinition> = from_input(
                input,
                "tools must be an array of {name, description?, input_schema?}",
            )?;
            Ok(render_tools(&tools, options))
        }
        other => Err(format!(
            "unknown rendering {other:?}: use calls, results or tools"
        )),
    }
}

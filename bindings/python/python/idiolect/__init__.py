"""idiolect: streaming parsers that turn the dialects language models write into JSON.

The native module does the work; this package re-exports it. See README.md.

>>> import idiolect
>>> idiolect.parse("sections", "<think>plan</think>done")["items"][0]["name"]
'think'
"""

from typing import TypedDict

from idiolect._native import (
    ChatDeltas,
    OptionsError,
    Parser,
    RenderError,
    ServerDeltas,
    UnknownDialectError,
    __version__,
    call_markers,
    call_structure,
    dialects,
    family_for_model,
    parse,
    parse_many,
    reasoning_markers,
    render,
    server_message,
)

__all__ = [
    "CallStructure",
    "ChatDeltas",
    "Delta",
    "FunctionDelta",
    "OptionsError",
    "Parser",
    "ToolCallDelta",
    "RenderError",
    "ServerDeltas",
    "UnknownDialectError",
    "__version__",
    "call_markers",
    "call_structure",
    "dialects",
    "family_for_model",
    "parse",
    "parse_many",
    "reasoning_markers",
    "render",
    "server_message",
]


class FunctionDelta(TypedDict, total=False):
    """The `function` of a tool-call delta: `name` on the call's first delta, then
    fragments of the `arguments` JSON text."""

    name: str
    arguments: str


class _ToolCallDeltaBase(TypedDict):
    index: int
    function: FunctionDelta


class ToolCallDelta(_ToolCallDeltaBase, total=False):
    """One entry of a delta's `tool_calls`: `id` (None when the family writes none)
    and `type` ("function") on the call's first delta."""

    id: str | None
    type: str


class Delta(TypedDict, total=False):
    """One OpenAI chat-completion delta (`choices[0].delta`), as `ChatDeltas` returns
    it: only the keys that have something."""

    content: str
    reasoning: str
    tool_calls: list[ToolCallDelta]


class CallStructure(TypedDict):
    """The text around one call's arguments, for constrained decoding (SV-11), as
    `call_structure` returns it."""

    begin: str
    end: str
    trigger: str

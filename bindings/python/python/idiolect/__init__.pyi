"""Type stubs of the idiolect package (checked against the module by mypy's stubtest in CI)."""

from collections.abc import Iterable
from typing import Any, Final, Literal, TypeAlias, TypedDict, final, overload

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

__version__: Final[str]

# A value of the JSON data model: dict, list, str, int, float, bool or None.
_JSON: TypeAlias = Any

class UnknownDialectError(ValueError):
    """No dialect has the given name; the message lists the known ones."""

class OptionsError(ValueError):
    """The dialect refused the options; the message says why, in one line."""

class RenderError(ValueError):
    """The dialect could not render the value (or renders nothing)."""

def dialects() -> list[str]:
    """The names of the dialects this build knows, in a stable order."""

def family_for_model(model: str) -> dict[str, _JSON] | None:
    """The field family that reads the output of the model called `model` (as
    servers and hubs spell it, `"Qwen/Qwen3-8B"`), with the options its chat
    template implies: `{"family", "pattern", "options", "note"?}`; `None` when the
    model is not known."""

def parse(
    dialect: str,
    text: str | bytes,
    options: dict[str, _JSON] | None = None,
    *,
    spans: bool = False,
) -> dict[str, _JSON]:
    """Parses one whole document and returns it (the parse runs without the GIL)."""

@overload
def parse_many(
    dialect: str,
    texts: Iterable[str | bytes],
    options: dict[str, _JSON] | None = None,
    threads: int | None = None,
    *,
    spans: bool = False,
    output: Literal["python"] = "python",
) -> list[dict[str, _JSON]]: ...
@overload
def parse_many(
    dialect: str,
    texts: Iterable[str | bytes],
    options: dict[str, _JSON] | None = None,
    threads: int | None = None,
    *,
    spans: bool = False,
    output: Literal["json"],
) -> list[str]:
    """Parses many documents on `threads` threads in all, the calling thread among
    them (default: every core), parsing without the GIL; returns the documents in the
    order of `texts`: as dicts, or with `output="json"` as compact JSON strings (one
    Arrow string column in Ray Data, Spark or Polars, whatever the documents' shapes)."""

def reasoning_markers(
    family: str,
    options: dict[str, _JSON] | None = None,
) -> list[tuple[str, str]]:
    """The reasoning markers field family `family` reads with `options`: one
    `(opener, closer)` pair per accepted spelling (`reasoning_markers` of the
    options, else the family's default)."""

def render(
    dialect: str,
    what: str | None,
    value: _JSON,
    options: dict[str, _JSON] | None = None,
) -> str:
    """Renders `value` into the dialect's text, as `idiolect render DIALECT [WHAT]`."""

@final
class Parser:
    """A streaming parse of one input: `feed` chunks, then `finish`. Usable from any
    thread, one call at a time; a call that overlaps another changing the parser
    raises `RuntimeError` (README, "Threads")."""

    def __new__(
        cls,
        dialect: str,
        options: dict[str, _JSON] | None = None,
        *,
        spans: bool = False,
    ) -> Parser: ...
    def feed(self, chunk: str | bytes) -> list[dict[str, _JSON]]:
        """Feeds a chunk; returns the events it decided (as `idiolect stream` prints them)."""
    def finish(self) -> list[dict[str, _JSON]]:
        """Ends the input; returns the events the end decided."""
    def document(self) -> dict[str, _JSON]:
        """The document folded from the events so far (complete after `finish`)."""
    def reset(self) -> None:
        """Starts over with the same dialect and options, for a new input."""
    @property
    def is_clean(self) -> bool:
        """Whether the document is free of errors so far."""
    @property
    def finished(self) -> bool:
        """Whether `finish` was called."""
    @property
    def dialect(self) -> str:
        """The dialect's name."""

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

@final
class ChatDeltas:
    """A field family's output as OpenAI chat-completion deltas, one per fed chunk.
    Usable from any thread, one call at a time; a call that overlaps another changing
    the stream raises `RuntimeError` (README, "Threads")."""

    def __new__(
        cls,
        dialect: str,
        options: dict[str, _JSON] | None = None,
        tools: list[dict[str, _JSON]] | None = None,
        whole_calls: bool = False,
    ) -> ChatDeltas: ...
    def feed(self, chunk: str | bytes) -> Delta | None:
        """Feeds a chunk of the model's output; returns the delta it decided, or None."""
    def finish(self) -> Delta | None:
        """Ends the output; returns the delta the end decided, or None."""
    def reset(self) -> None:
        """Starts over with the same family, options and mode, for a new output."""
    @property
    def finished(self) -> bool:
        """Whether `finish` was called."""
    @property
    def dialect(self) -> str:
        """The family's name."""
    @property
    def whole_calls(self) -> bool:
        """Whether calls are released whole (`whole_calls=True`)."""

@final
class ServerDeltas:
    """A field family's output as the deltas an inference server sends
    (spec/servers.md, SV-1 to SV-8): one delta per fed chunk at most, at most one
    call in each but the last, calls only with an object of arguments, whitespace
    next to calls left out. `names` drops calls to other tools; `ids` is how calls
    without the model's own id get one: "model" (None), "random", "vllm" or
    "sequence". Usable from any thread, one call at a time."""

    def __new__(
        cls,
        dialect: str,
        options: dict[str, _JSON] | None = None,
        names: list[str] | None = None,
        ids: str = "model",
    ) -> ServerDeltas: ...
    def feed(self, chunk: str | bytes) -> Delta | None:
        """Feeds a chunk (`str` or `bytes`); returns the delta it decided, or None."""
    def finish(self) -> Delta | None:
        """Ends the output; returns the last delta (everything still held), or None."""
    @property
    def calls(self) -> int:
        """How many calls were announced so far."""
    @property
    def finished(self) -> bool:
        """Whether `finish` was called."""
    @property
    def dialect(self) -> str:
        """The family's name."""

def server_message(
    dialect: str,
    text: str | bytes,
    options: dict[str, _JSON] | None = None,
    names: list[str] | None = None,
    ids: str = "model",
) -> dict[str, _JSON]:
    """The one-shot message of a whole output of field family `dialect`
    (spec/servers.md, SV-9): `content` and `reasoning` (None when empty) and
    `tool_calls` (complete calls only, each `{"id", "type": "function",
    "function": {"name", "arguments"}}`)."""

def call_markers(family: str) -> list[str]:
    """The literal texts field family `family`'s calls open with (SV-10), read from
    its rendering; empty for a family that renders no call."""

class CallStructure(TypedDict):
    """The text around one call's arguments, for constrained decoding (SV-11)."""

    begin: str
    end: str
    trigger: str

def call_structure(family: str, name: str) -> CallStructure | None:
    """The call structure of field family `family` for the tool `name` (SV-11), or
    None where the family's markup cannot hold one schema-constrained object."""

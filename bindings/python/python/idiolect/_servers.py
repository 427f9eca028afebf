"""What the vLLM and SGLang plug-ins share: a field family's turn in the servers' terms.

The servers read a turn differently from idiolect's lossless document, and these
are the rules, stated once for both plug-ins (`idiolect.vllm`, `idiolect.sglang`)
and for anyone else who serves a family. The library holds them (spec/servers.md;
`idiolect.ServerDeltas`, `idiolect.server_message`); this module adds what is
Python's: the request's tools in either shape, and ids minted by the server:

- SV-1 A call is a call only when its arguments are a JSON object. A one-shot
  message holds the complete calls only (`complete: true` in the document); a
  truncated or malformed call never appears, and its markup never shows as
  content. While streaming, a call is announced (index, id, name) only when the
  first byte of its arguments is `{`: a hermes call whose `arguments` is a string
  that is not a JSON object (`"hello"`) is no call and sends nothing. A call cut
  by the end of the output after its arguments began cannot be taken back: the
  stream has sent it, the one-shot message leaves it out.
- SV-2 Calls are numbered from 0 in the order they are sent; a call that is no
  call (SV-1) takes no number.
- SV-3 One delta carries at most one call: what follows a second call in the same
  feed waits for the next feed (the end of the output releases everything held,
  in one delta, since a server takes one delta for it).
- SV-4 Whitespace-only text next to a call (before it, after it, between two
  calls) is the template's formatting, not content: it is left out of both the
  message and the deltas. Other text is kept verbatim. "Next to" is by the
  document's items: a run of text ends where reasoning or a call begins.
- SV-5 A key that has nothing is absent: no empty `content`, `reasoning` or
  `tool_calls`; a message's `content` and `reasoning` are None when empty.
- SV-6 Ids: the family's own id where the model writes one (kimi-k2), else the
  server's (a `make_id` callable), else None.
- SV-7 A server that drops calls to tools the request did not declare (SGLang,
  by default) passes the declared `names`: a call to another tool is no call
  (SV-1), in the message and in the deltas.

Nothing here imports a server; `import idiolect` does not import this module.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from idiolect import ChatDeltas, Parser, ServerDeltas, dialects, reasoning_markers
from idiolect import server_message as _native_message

__all__ = [
    "ServerStream",
    "ReasoningSplit",
    "families",
    "server_message",
    "tools_option",
]

#: The prefix of every plug-in name (`idiolect-hermes`, ...).
PREFIX = "idiolect-"


def families() -> list[str]:
    """The field families of this build, read from the package at run time: the
    dialects that `ChatDeltas` accepts (its refusal message lists them, and it is
    the package's one list of families)."""
    found = []
    for name in dialects():
        try:
            ChatDeltas(name)
        except ValueError:
            continue
        found.append(name)
    return found


def _field(tool: Any, key: str) -> Any:
    if isinstance(tool, Mapping):
        return tool.get(key)
    return getattr(tool, key, None)


def tools_option(tools: Iterable[Any] | None) -> list[dict[str, Any]]:
    """A request's tools as idiolect's `tools` option (`{"name", "description",
    "parameters"}`): Chat Completions tools (`{"type": "function", "function":
    {...}}`), Responses function tools (`{"type": "function", "name", ...}`), as
    dicts or as the servers' pydantic objects. Tools of other types (a Responses
    web search, a custom tool) type nothing and are left out."""
    out: list[dict[str, Any]] = []
    for tool in tools or ():
        kind = _field(tool, "type")
        function = _field(tool, "function")
        source = function if function is not None else tool
        if kind not in (None, "function"):
            continue
        name = _field(source, "name")
        if not isinstance(name, str):
            continue
        entry: dict[str, Any] = {"name": name}
        description = _field(source, "description")
        if isinstance(description, str):
            entry["description"] = description
        parameters = _field(source, "parameters")
        if isinstance(parameters, Mapping):
            entry["parameters"] = dict(parameters)
        out.append(entry)
    return out


def _options(options: Mapping[str, Any] | None, tools: list[dict[str, Any]]) -> dict[str, Any]:
    merged = dict(options or {})
    if tools and "tools" not in merged:
        merged["tools"] = tools
    return merged


def _names(names: Collection[str] | None) -> list[str] | None:
    return None if names is None else list(names)


def _mint(call: dict[str, Any], make_id: Callable[[], str] | None) -> None:
    """SV-6: a call whose markup wrote no id gets the server's."""
    if call.get("id", "") is None and make_id is not None:
        call["id"] = make_id()


def server_message(
    family: str,
    text: str | bytes,
    options: Mapping[str, Any] | None = None,
    tools: Iterable[Any] | None = None,
    make_id: Callable[[], str] | None = None,
    names: Collection[str] | None = None,
) -> dict[str, Any]:
    """The one-shot message of a whole output (SV-1, SV-4 to SV-7): `content`
    (str or None), `reasoning` (str or None) and `tool_calls` (a list of `{"id",
    "type": "function", "function": {"name", "arguments"}}`, complete calls only;
    with `names`, calls to those tools only). The library's `server_message`, with
    the server's ids minted by `make_id`."""
    message = _native_message(family, text, _options(options, tools_option(tools)), _names(names))
    for call in message["tool_calls"]:
        _mint(call, make_id)
    return message


class ServerStream:
    """A field family's output, fed as it streams, as server deltas (SV-1 to SV-6):
    the library's `ServerDeltas`, with the server's ids minted by `make_id`.

    `feed(chunk)` returns one delta (a dict with `content`, `reasoning` and/or
    `tool_calls`, each only when it has something) or None; `finish()` returns the
    last one. `tool_calls` entries are `{"index", "id", "type", "function": {"name"}}`
    on a call's first delta and `{"index", "function": {"arguments"}}` after it, as
    OpenAI's chat-completion deltas. Concatenated, the deltas give the document's
    text and reasoning (less SV-4's formatting) and each sent call's arguments.
    """

    __slots__ = ("_deltas", "_make_id")

    def __init__(
        self,
        family: str,
        options: Mapping[str, Any] | None = None,
        tools: Iterable[Any] | None = None,
        make_id: Callable[[], str] | None = None,
        names: Collection[str] | None = None,
    ) -> None:
        self._deltas = ServerDeltas(family, _options(options, tools_option(tools)), _names(names))
        self._make_id = make_id

    @property
    def calls(self) -> int:
        """How many calls were announced so far."""
        return self._deltas.calls

    def _minted(self, delta: Any) -> dict[str, Any] | None:
        if delta is not None:
            for call in delta.get("tool_calls", ()):
                _mint(call, self._make_id)
        return delta

    def feed(self, chunk: str | bytes) -> dict[str, Any] | None:
        """Feeds a chunk of the output; returns the delta it decided, or None."""
        return self._minted(self._deltas.feed(chunk))

    def finish(self) -> dict[str, Any] | None:
        """Ends the output; returns the last delta (everything still held), or None."""
        return self._minted(self._deltas.finish())


class ReasoningSplit:
    """The reasoning at the start of a family's output, and the raw text after it,
    for a server that runs a reasoning parser before its tool parser.

    The reasoning ends where answer text or a call begins: after the family's
    reasoning closer, at a call that breaks out of the reasoning, or at the start
    when the output opened no reasoning. Reasoning that resumes after a marker
    that closed it without answer text in between (kimi-k2's section marker
    inside reasoning) is still the leading reasoning. From the end on, the output
    is the tool parser's, verbatim: `rest` is the raw text after the end, markers
    included.
    """

    __slots__ = ("_parser", "_fed", "ended", "_end", "_closed_at", "_reasoned_to", "_open", "_finished")

    def __init__(self, family: str, options: Mapping[str, Any] | None = None) -> None:
        self._parser = Parser(family, dict(options or {}))
        self._fed = bytearray()
        #: Whether the reasoning is over (the rest is answer text and calls).
        self.ended = False
        self._end = 0
        # Where the last closed reasoning item ended, until reasoning resumes.
        self._closed_at: int | None = None
        # Where the last reasoning event ended: markup after it (a call's opening
        # markers, decided only with the call) is the rest's.
        self._reasoned_to = 0
        self._open = False
        self._finished = False

    def feed(self, chunk: str | bytes) -> str:
        """Feeds a chunk; returns the reasoning text it decided ("" for none).
        After `ended`, chunks are only kept for `rest`."""
        data = chunk.encode() if isinstance(chunk, str) else chunk
        self._fed += data
        if self.ended:
            return ""
        return self._take(self._parser.feed(data))

    def finish(self) -> str:
        """Ends the output; returns the reasoning text the end decided."""
        if self.ended or self._finished:
            return ""
        self._finished = True
        reasoning = self._take(self._parser.finish())
        if not self.ended and self._closed_at is not None:
            self._end_at(self._closed_at)
        return reasoning

    def rest(self) -> str:
        """The raw text after the reasoning (all of it when the output opened no
        reasoning; nothing before the end is known or when the output ended
        inside reasoning)."""
        if not self.ended:
            return ""
        return self._fed[self._end :].decode("utf-8", errors="replace")

    def _take(self, events: list[dict[str, Any]]) -> str:
        out: list[str] = []
        for event in events:
            kind = event["type"]
            if kind == "reasoning_start":
                self._open = True
                self._closed_at = None
                self._reasoned_to = event["span"][1]
            elif kind == "reasoning_delta":
                out.append(event["text"])
                self._reasoned_to = event["span"][1]
            elif kind == "reasoning_end":
                self._open = False
                self._reasoned_to = event["span"][1]
                if event["closed"]:
                    self._closed_at = event["span"][1]
            elif kind in ("text", "tool_call_start") and not self._open:
                at = self._closed_at
                self._end_at(self._reasoned_to if at is None else at)
                break
        return "".join(out)

    def _end_at(self, offset: int) -> None:
        self.ended = True
        self._end = offset


def token_markers(tokenizer: Any, family: str, options: Mapping[str, Any] | None = None):
    """The token-id sequences of the family's reasoning openers and closers under
    `tokenizer` (a marker that is one token in the vocabulary is that token; any
    other is what the tokenizer encodes it to)."""
    vocab = tokenizer.get_vocab()

    def ids(marker: str) -> tuple[int, ...]:
        token = vocab.get(marker)
        if token is not None:
            return (token,)
        return tuple(tokenizer.encode(marker, add_special_tokens=False))

    pairs = reasoning_markers(family, dict(options or {}))
    return [ids(o) for o, _ in pairs], [ids(c) for _, c in pairs]


def last_at(ids: list[int] | tuple[int, ...], needles: list[tuple[int, ...]]) -> int:
    """The end offset in `ids` of the last occurrence of any of `needles`, or -1."""
    best = -1
    for needle in needles:
        n = len(needle)
        if n == 0:
            continue
        first = needle[0]
        at = len(ids) - n
        while at >= 0:
            if ids[at] == first and tuple(ids[at : at + n]) == needle:
                best = max(best, at + n)
                break
            at -= 1
    return best

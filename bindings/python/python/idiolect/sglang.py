"""idiolect's field families as SGLang tool-call and reasoning detectors.

    pip install idiolect        # beside sglang: its plug-in entry point is installed
    python -m sglang.launch_server --model-path MODEL \\
        --tool-call-parser idiolect-hermes --reasoning-parser idiolect-hermes

SGLang runs every function of the `sglang.srt.plugins` entry-point group in each of
its processes before it parses arguments; this package's entry point is
`register()`, which adds, for every field family of the package (read at run time),
a tool-call detector `idiolect-<family>` to `FunctionCallParser.ToolCallParserEnum`
and, for every family with reasoning markers, a reasoning detector to
`ReasoningParser.DetectorMap`; the `--tool-call-parser` and `--reasoning-parser`
choices then include them. SGLang is imported here, never by `import idiolect`.

The detectors follow `idiolect._servers` (SV-1 to SV-7): SGLang mints the ids and
drops calls to tools the request did not declare (unless
`SGLANG_FORWARD_UNKNOWN_TOOLS` is set), and its reasoning parser runs before its
tool parser, so the tool detector reads reasoning markers as text, as SGLang's own
detectors do.
"""

from __future__ import annotations

import importlib
import os
from types import SimpleNamespace
from typing import Any

from idiolect import call_markers, call_structure, parse, reasoning_markers
from idiolect._servers import (
    PREFIX,
    ReasoningSplit,
    ServerStream,
    families,
    server_message,
)

__all__ = [
    "IdiolectDetector",
    "IdiolectReasoningDetector",
    "detector_names",
    "load_api",
    "reasoning_detector_class",
    "register",
    "tool_detector_class",
]

# Where each name lived in the releases read (0.5.23 first).
_PATHS = {
    "BaseFormatDetector": ("sglang.srt.function_call.base_format_detector",),
    "StreamingParseResult": ("sglang.srt.function_call.core_types",),
    "ToolCallItem": ("sglang.srt.function_call.core_types",),
    "StructureInfo": ("sglang.srt.function_call.core_types",),
    "FunctionCallParser": ("sglang.srt.function_call.function_call_parser",),
    "BaseReasoningFormatDetector": (
        "sglang.srt.parser.reasoning_parser",
        "sglang.srt.reasoning_parser",
    ),
    "ReasoningResult": ("sglang.srt.parser.reasoning_parser", "sglang.srt.reasoning_parser"),
    "ReasoningParser": ("sglang.srt.parser.reasoning_parser", "sglang.srt.reasoning_parser"),
}
# The reasoning module calls its result type StreamingParseResult too.
_ALIASES = {"ReasoningResult": "StreamingParseResult"}


def load_api() -> SimpleNamespace:
    """SGLang's detector interface, each name from the first module that has it."""
    importlib.import_module("sglang")
    found: dict[str, Any] = {}
    for name, paths in _PATHS.items():
        attribute = _ALIASES.get(name, name)
        for path in paths:
            try:
                module = importlib.import_module(path)
            except ImportError:
                continue
            if hasattr(module, attribute):
                found[name] = getattr(module, attribute)
                break
        else:
            raise ImportError(f"idiolect.sglang: this SGLang has no {attribute} in {', '.join(paths)}")
    return SimpleNamespace(**found)


def detector_names() -> list[str]:
    """The tool-call detector names this module registers: `idiolect-<family>`."""
    return [PREFIX + family for family in families()]


def _tool_name(tool: Any) -> str | None:
    function = getattr(tool, "function", None)
    if function is None and isinstance(tool, dict):
        function = tool.get("function", tool)
    name = getattr(function, "name", None)
    if name is None and isinstance(function, dict):
        name = function.get("name")
    return name if isinstance(name, str) else None


def _declared(tools: Any) -> list[str] | None:
    """The names of the declared tools, or None when undeclared ones are kept."""
    if os.environ.get("SGLANG_FORWARD_UNKNOWN_TOOLS", "").lower() in ("1", "true", "yes"):
        return None
    return [name for name in map(_tool_name, tools or ()) if name is not None]


# The tool detector reads reasoning markers as text and starts outside reasoning:
# SGLang's reasoning parser has run before it.
# A family without reasoning markers has no such option and refuses it.
def _as_text(family: str) -> dict[str, Any]:
    options: dict[str, Any] = {"start_in_reasoning": False}
    if reasoning_markers(family):
        options["reasoning_markers"] = []
    return options


class IdiolectDetector:
    """The methods of every `idiolect-<family>` tool-call detector;
    `tool_detector_class` puts them before SGLang's `BaseFormatDetector` in a class
    per family."""

    family: str
    _api: SimpleNamespace

    def __init__(self) -> None:
        super().__init__()  # type: ignore[call-arg]
        self._stream: ServerStream | None = None

    def has_tool_call(self, text: str) -> bool:
        # Whether the text holds any of the family's markup: a call, whole or
        # cut, or markers that are no call. SGLang returns the text as it is
        # when this is false and no call was parsed, so markup must say true.
        # A call marker (SV-10) says so at once; otherwise the grammar decides
        # (a stray closer, a family without markers).
        if any(marker in text for marker in call_markers(self.family)):
            return True
        plain = [{"type": "text", "text": text}] if text else []
        return parse(self.family, text, _as_text(self.family))["items"] != plain

    def detect_and_parse(self, text: str, tools: Any) -> Any:
        names = _declared(tools)
        message = server_message(self.family, text, _as_text(self.family), tools, names=names)
        positions = {name: i for i, name in enumerate(map(_tool_name, tools or ()))}
        calls = [
            self._api.ToolCallItem(
                tool_index=positions.get(call["function"]["name"], -1),
                name=call["function"]["name"],
                parameters=call["function"]["arguments"],
            )
            for call in message["tool_calls"]
        ]
        return self._api.StreamingParseResult(normal_text=message["content"] or "", calls=calls)

    def _result(self, delta: dict[str, Any] | None) -> Any:
        if delta is None:
            return self._api.StreamingParseResult()
        calls = []
        for call in delta.get("tool_calls", ()):
            function = call["function"]
            if "name" in function:
                calls.append(
                    self._api.ToolCallItem(tool_index=call["index"], name=function["name"], parameters="")
                )
            if function.get("arguments"):
                calls.append(
                    self._api.ToolCallItem(tool_index=call["index"], name=None, parameters=function["arguments"])
                )
        return self._api.StreamingParseResult(normal_text=delta.get("content", ""), calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: Any) -> Any:
        stream = self._stream
        if stream is None:
            stream = self._stream = ServerStream(self.family, _as_text(self.family), tools, names=_declared(tools))
        return self._result(stream.feed(new_text))

    def finish(self, tools: Any) -> Any:
        stream, self._stream = self._stream, None
        if stream is None:
            return self._api.StreamingParseResult()
        return self._result(stream.finish())

    def supports_structural_tag(self) -> bool:
        # Only where the family's call structure exists (SV-11): JSON arguments
        # between a begin that names the tool and an end.
        return call_structure(self.family, "f") is not None

    def structure_info(self) -> Any:
        """SGLang's `_GetInfoFunc`: the tool's name -> `StructureInfo(begin, end,
        trigger)` (SV-11), for a structural tag that constrains the arguments."""
        if not self.supports_structural_tag():
            raise NotImplementedError(
                f"idiolect-{self.family} builds no structural tag (supports_structural_tag is False)"
            )
        family, make = self.family, self._api.StructureInfo

        def info(name: str) -> Any:
            structure = call_structure(family, name)
            if structure is None:  # the family has one for every name or none
                raise NotImplementedError(f"idiolect-{family} builds no structural tag")
            return make(**structure)

        return info


class IdiolectReasoningDetector:
    """The methods of every `idiolect-<family>` reasoning detector (see
    `reasoning_detector_class`), put before SGLang's `BaseReasoningFormatDetector`:
    reasoning up to the family's closer (or to the first answer text or call),
    then the rest verbatim as normal text for the tool-call detector."""

    family: str
    _api: SimpleNamespace
    force_reasoning: bool
    stream_reasoning: bool

    def __init__(
        self,
        force_reasoning: bool | None = None,
        stream_reasoning: bool = True,
        **kwargs: Any,
    ) -> None:
        # force_reasoning: SGLang's word that the template opened reasoning
        # (True) or did not (False); None (not given) keeps the family's
        # default (minimax-m2's template opens it).
        self._start_in_reasoning = force_reasoning
        opener, closer = reasoning_markers(self.family)[0]
        super().__init__(  # type: ignore[call-arg]
            opener, closer, force_reasoning=bool(force_reasoning), stream_reasoning=stream_reasoning
        )
        self._split = self._new_split()
        self._rest_sent = 0
        self._held_reasoning = ""

    def _new_split(self) -> ReasoningSplit:
        start = self._start_in_reasoning
        return ReasoningSplit(self.family, None if start is None else {"start_in_reasoning": start})

    def detect_and_parse(self, text: str) -> Any:
        split = self._new_split()
        reasoning = split.feed(text) + split.finish()
        return self._api.ReasoningResult(normal_text=split.rest(), reasoning_text=reasoning)

    def _answer(self, reasoning: str) -> Any:
        split = self._split
        rest = ""
        if split.ended:
            whole = split.rest()
            rest, self._rest_sent = whole[self._rest_sent :], len(whole)
        if not self.stream_reasoning and not split.ended:
            self._held_reasoning += reasoning
            reasoning = ""
        elif self._held_reasoning:
            reasoning, self._held_reasoning = self._held_reasoning + reasoning, ""
        return self._api.ReasoningResult(normal_text=rest, reasoning_text=reasoning)

    def parse_streaming_increment(self, new_text: str) -> Any:
        if self._split.ended:
            # Past the reasoning: the text is the tool detector's as it comes.
            return self._api.ReasoningResult(normal_text=new_text)
        return self._answer(self._split.feed(new_text))

    def finish(self) -> Any:
        reasoning = self._split.finish()
        if not self._split.ended:
            reasoning, self._held_reasoning = self._held_reasoning + reasoning, ""
        return self._answer(reasoning)


def tool_detector_class(api: SimpleNamespace, family: str) -> type:
    """The SGLang tool-call detector of `family`: `IdiolectDetector` on
    `api.BaseFormatDetector`."""
    namespace = {"family": family, "_api": api, "__module__": __name__}
    return type(_class_name(family, "Detector"), (IdiolectDetector, api.BaseFormatDetector), namespace)


def reasoning_detector_class(api: SimpleNamespace, family: str) -> type:
    """The SGLang reasoning detector of `family`: `IdiolectReasoningDetector` on
    `api.BaseReasoningFormatDetector`."""
    namespace = {"family": family, "_api": api, "__module__": __name__}
    return type(
        _class_name(family, "ReasoningDetector"),
        (IdiolectReasoningDetector, api.BaseReasoningFormatDetector),
        namespace,
    )


def _class_name(family: str, kind: str) -> str:
    words = family.replace(".", "-").split("-")
    return "Idiolect" + "".join(w[:1].upper() + w[1:] for w in words) + kind


def register(api: SimpleNamespace | None = None) -> dict[str, tuple[type, type | None]]:
    """Adds every family's detectors to SGLang's tables (the entry point of group
    `sglang.srt.plugins`); returns {name: (tool detector, reasoning detector or None)}."""
    if api is None:
        api = load_api()
    registered: dict[str, tuple[type, type | None]] = {}
    for family in families():
        name = PREFIX + family
        tool = tool_detector_class(api, family)
        api.FunctionCallParser.ToolCallParserEnum[name] = tool
        reasoning = None
        if reasoning_markers(family):
            reasoning = reasoning_detector_class(api, family)
            api.ReasoningParser.DetectorMap[name] = reasoning
        registered[name] = (tool, reasoning)
    return registered

"""idiolect's field families as vLLM tool and reasoning parsers.

    vllm serve MODEL --enable-auto-tool-choice \\
        --tool-parser-plugin idiolect.vllm --tool-call-parser idiolect-hermes \\
        --reasoning-parser-plugin idiolect.vllm --reasoning-parser idiolect-hermes

Importing this module with vLLM installed registers, for every field family of the
package (read at run time), a tool parser `idiolect-<family>` with vLLM's
`ToolParserManager` and, for every family with reasoning markers, a reasoning parser
`idiolect-<family>` with its `ReasoningParserManager`. Without vLLM it registers
nothing; `register(api)` registers into any object with vLLM's interface (the tests
pass small fakes). vLLM is imported here, never by `import idiolect`, and across the
module paths its recent releases used.

The parsers follow the rules in `idiolect._servers` (SV-1 to SV-6): complete calls
only in one-shot results, one call per streamed delta, ids from vLLM's
`make_tool_call_id` where the model writes none. gpt-oss models (harmony) are
always parsed by vLLM's own harmony parser, whatever the flags say: vLLM composes
`HarmonyParser` for them, so `idiolect-harmony` is used only for other models that
write harmony.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from idiolect._servers import (
    PREFIX,
    ReasoningSplit,
    ServerStream,
    families,
    last_at,
    server_message,
    token_markers,
    tools_option,
)
from idiolect import reasoning_markers

__all__ = [
    "IdiolectReasoningParser",
    "IdiolectToolParser",
    "load_api",
    "reasoning_parser_class",
    "reasoning_parser_names",
    "register",
    "tool_parser_class",
    "tool_parser_names",
]

# Where each name lived in the releases read (0.33 first; older paths after).
_PATHS = {
    "ToolParser": ("vllm.tool_parsers.abstract_tool_parser", "vllm.entrypoints.openai.tool_parsers"),
    "ToolParserManager": (
        "vllm.tool_parsers.abstract_tool_parser",
        "vllm.entrypoints.openai.tool_parsers",
    ),
    "ReasoningParser": ("vllm.reasoning.abs_reasoning_parsers", "vllm.reasoning"),
    "ReasoningParserManager": ("vllm.reasoning.abs_reasoning_parsers", "vllm.reasoning"),
    "DeltaMessage": (
        "vllm.entrypoints.generate.base.protocol",
        "vllm.entrypoints.openai.engine.protocol",
        "vllm.entrypoints.openai.protocol",
    ),
    "DeltaToolCall": (
        "vllm.entrypoints.generate.base.protocol",
        "vllm.entrypoints.openai.engine.protocol",
        "vllm.entrypoints.openai.protocol",
    ),
    "DeltaFunctionCall": (
        "vllm.entrypoints.generate.base.protocol",
        "vllm.entrypoints.openai.engine.protocol",
        "vllm.entrypoints.openai.protocol",
    ),
    "ExtractedToolCallInformation": (
        "vllm.entrypoints.generate.base.protocol",
        "vllm.entrypoints.openai.engine.protocol",
        "vllm.entrypoints.openai.protocol",
    ),
    "ToolCall": (
        "vllm.entrypoints.generate.base.protocol",
        "vllm.entrypoints.openai.engine.protocol",
        "vllm.entrypoints.openai.protocol",
    ),
    "FunctionCall": (
        "vllm.entrypoints.generate.base.protocol",
        "vllm.entrypoints.openai.engine.protocol",
        "vllm.entrypoints.openai.protocol",
    ),
    "make_tool_call_id": (
        "vllm.renderers.chat_utils",
        "vllm.entrypoints.chat_utils",
        "vllm.entrypoints.openai.protocol",
    ),
}


def load_api() -> SimpleNamespace:
    """vLLM's parser interface: each name of `_PATHS` from the first module that
    has it. Raises ModuleNotFoundError without vLLM, ImportError naming what is
    missing when this vLLM has moved a name elsewhere."""
    importlib.import_module("vllm")
    found: dict[str, Any] = {}
    for name, paths in _PATHS.items():
        for path in paths:
            try:
                module = importlib.import_module(path)
            except ImportError:
                continue
            if hasattr(module, name):
                found[name] = getattr(module, name)
                break
        else:
            raise ImportError(
                f"idiolect.vllm: this vLLM has no {name} in {', '.join(paths)}"
            )
    return SimpleNamespace(**found)


def _class_name(family: str, kind: str) -> str:
    words = family.replace(".", "-").split("-")
    return "Idiolect" + "".join(w[:1].upper() + w[1:] for w in words) + kind


def tool_parser_names() -> list[str]:
    """The tool parser names this module registers: `idiolect-<family>`."""
    return [PREFIX + family for family in families()]


def reasoning_parser_names() -> list[str]:
    """The reasoning parser names: the families that have reasoning markers."""
    return [PREFIX + family for family in families() if reasoning_markers(family)]


def _build(cls: Any, **fields: Any) -> Any:
    """An instance of one of vLLM's pydantic types from fields this module made
    (valid by construction): `model_construct`, which skips validation (a few
    microseconds a delta, which is most of a token's cost), where the type has it."""
    return getattr(cls, "model_construct", cls)(**fields)


def _delta_message(api: SimpleNamespace, delta: dict[str, Any] | None) -> Any:
    """A server delta (`idiolect._servers.ServerStream`) as vLLM's DeltaMessage."""
    if delta is None:
        return None
    calls = [
        _build(
            api.DeltaToolCall,
            index=call["index"],
            id=call.get("id"),
            type=call.get("type"),
            function=_build(
                api.DeltaFunctionCall,
                name=call["function"].get("name"),
                arguments=call["function"].get("arguments"),
            ),
        )
        for call in delta.get("tool_calls", ())
    ]
    return _build(
        api.DeltaMessage,
        content=delta.get("content"),
        reasoning=delta.get("reasoning"),
        tool_calls=calls,
    )


class IdiolectToolParser:
    """The methods of every `idiolect-<family>` tool parser; `tool_parser_class`
    puts them before vLLM's `ToolParser` in a class per family."""

    family: str
    _api: SimpleNamespace

    # The JSON that vLLM's constrained decoding writes for tool_choice
    # "required" or a named tool is parsed by vLLM itself.
    supports_required_and_named = True
    # Fed each step's new text; finish_streaming() at the end.
    engine_based_streaming = True
    # vLLM sets this when no reasoning parser runs: reasoning markup is then
    # plain content, as with vLLM's own parsers.
    skip_reasoning_parsing = False

    def __init__(self, tokenizer: Any, tools: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools)  # type: ignore[call-arg]
        self._tools = tools_option(tools)
        self._stream: ServerStream | None = None

    def _request_tools(self, request: Any) -> list[dict[str, Any]]:
        return self._tools or tools_option(getattr(request, "tools", None))

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)  # type: ignore[misc]
        # A family whose markers are special tokens would read nothing if
        # vLLM deleted them from the text.
        if getattr(request, "tools", None) and getattr(request, "tool_choice", None) != "none":
            if hasattr(request, "skip_special_tokens"):
                request.skip_special_tokens = False
        return request

    def _options(self) -> dict[str, Any]:
        # The tool phase begins after any reasoning the reasoning parser took.
        options: dict[str, Any] = {"start_in_reasoning": False}
        # A family without reasoning markers has no such option and refuses it.
        if self.skip_reasoning_parsing and reasoning_markers(self.family):
            options["reasoning_markers"] = []
        return options

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        message = server_message(
            self.family,
            model_output,
            self._options(),
            self._request_tools(request),
            self._api.make_tool_call_id,
        )
        calls = [
            self._api.ToolCall(
                id=call["id"],
                type="function",
                function=self._api.FunctionCall(
                    name=call["function"]["name"], arguments=call["function"]["arguments"]
                ),
            )
            for call in message["tool_calls"]
        ]
        return self._api.ExtractedToolCallInformation(
            tools_called=bool(calls), tool_calls=calls, content=message["content"]
        )

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> Any:
        stream = self._stream
        if stream is None:
            stream = self._stream = ServerStream(
                self.family, self._options(), self._request_tools(request), self._api.make_tool_call_id
            )
        return _delta_message(self._api, stream.feed(delta_text))

    def finish_streaming(self) -> Any:
        stream, self._stream = self._stream, None
        if stream is None:
            return None
        return _delta_message(self._api, stream.finish())


class IdiolectReasoningParser:
    """The methods of every `idiolect-<family>` reasoning parser (see
    `reasoning_parser_class`), put before vLLM's `ReasoningParser`.

    Reasoning ends at the family's closer, or where answer text or a call begins
    when the output opened none; the text after it goes to the tool parser
    verbatim. The token-id methods read the family's markers through the
    tokenizer's vocabulary (one token each, or what the tokenizer encodes them to).
    """

    family: str
    _api: SimpleNamespace

    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)  # type: ignore[call-arg]
        self._openers, self._closers = token_markers(tokenizer, self.family)
        # Whether the prompt ended inside reasoning; None until a prompt is seen
        # (then the family's default holds).
        self._start_in_reasoning: bool | None = None
        self._split: ReasoningSplit | None = None
        self._rest_sent = False

    @property
    def reasoning_start_str(self) -> str | None:
        return reasoning_markers(self.family)[0][0]

    @property
    def reasoning_end_str(self) -> str | None:
        return reasoning_markers(self.family)[0][1]

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        ids = list(input_ids)
        end = last_at(ids, self._closers)
        return end >= 0 and end > last_at(ids, self._openers)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        end = last_at(list(input_ids), self._closers)
        return list(input_ids[end:]) if end >= 0 else []

    def _prompt(self, prompt_token_ids: Sequence[int]) -> None:
        # The template ended the prompt inside reasoning (an opener after the
        # last closer): the output starts in it.
        ids = list(prompt_token_ids)
        opener = last_at(ids, self._openers)
        self._start_in_reasoning = opener >= 0 and opener > last_at(ids, self._closers)

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._prompt(prompt_token_ids)

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        self._prompt(prompt_token_ids)

    def _new_split(self) -> ReasoningSplit:
        start = self._start_in_reasoning
        return ReasoningSplit(self.family, None if start is None else {"start_in_reasoning": start})

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        split = self._new_split()
        reasoning = split.feed(model_output) + split.finish()
        return reasoning or None, split.rest() or None

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> Any:
        split = self._split
        if split is None:
            split = self._split = self._new_split()
        reasoning = split.feed(delta_text)
        return _build(self._api.DeltaMessage, reasoning=reasoning) if reasoning else None

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._split is not None and self._split.ended

    def finish_streaming(self) -> Any:
        # Called when the reasoning ended (the rest is handed to the tool
        # phase as content) or when the output ended inside it.
        split = self._split
        if split is None or self._rest_sent:
            return None
        reasoning = split.finish()
        content = None
        if split.ended:
            self._rest_sent = True
            content = split.rest() or None
        if not reasoning and content is None:
            return None
        return _build(self._api.DeltaMessage, reasoning=reasoning or None, content=content)


def tool_parser_class(api: SimpleNamespace, family: str) -> type:
    """The vLLM tool parser of `family`: `IdiolectToolParser` on `api.ToolParser`."""
    namespace = {"family": family, "_api": api, "__module__": __name__}
    return type(_class_name(family, "ToolParser"), (IdiolectToolParser, api.ToolParser), namespace)


def reasoning_parser_class(api: SimpleNamespace, family: str) -> type:
    """The vLLM reasoning parser of `family`: `IdiolectReasoningParser` on
    `api.ReasoningParser`."""
    namespace = {"family": family, "_api": api, "__module__": __name__}
    return type(
        _class_name(family, "ReasoningParser"), (IdiolectReasoningParser, api.ReasoningParser), namespace
    )


def register(api: SimpleNamespace | None = None) -> dict[str, tuple[type, type | None]]:
    """Registers every family's parsers with `api`'s managers (vLLM's when None);
    returns {name: (tool parser class, reasoning parser class or None)}."""
    if api is None:
        api = load_api()
    registered: dict[str, tuple[type, type | None]] = {}
    for family in families():
        name = PREFIX + family
        tool = tool_parser_class(api, family)
        api.ToolParserManager.register_module(name=name, module=tool)
        reasoning = None
        if reasoning_markers(family):
            reasoning = reasoning_parser_class(api, family)
            api.ReasoningParserManager.register_module(name=name, module=reasoning)
        registered[name] = (tool, reasoning)
    return registered


def _register_if_vllm() -> dict[str, tuple[type, type | None]]:
    try:
        api = load_api()
    except ModuleNotFoundError as missing:
        if missing.name == "vllm":
            return {}
        raise
    return register(api)


#: What importing this module registered (empty without vLLM).
REGISTERED = _register_if_vllm()

"""Small stand-ins for the parts of vLLM (0.33) and SGLang (0.5.23) that the plug-ins
touch, with the same names, signatures and defaults, so that the adapters' logic is
tested where the servers are not installed (CI). `test_real_vllm.py` and
`test_real_sglang.py` run the same adapters inside the real servers."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from types import SimpleNamespace
from typing import Any


class _Registry:
    """`register_module(name=..., force=True, module=...)` as both servers' managers."""

    def __init__(self) -> None:
        self.modules: dict[str, type] = {}

    def register_module(self, name: Any = None, force: bool = True, module: type | None = None) -> Any:
        assert module is not None
        for one in [name] if isinstance(name, str) else name:
            self.modules[one] = module
        return module


# --- vLLM ---------------------------------------------------------------------------


class VllmToolParser:
    def __init__(self, tokenizer: Any, tools: Any = None) -> None:
        self.model_tokenizer = tokenizer
        self.tools = list(tools or [])
        self.prev_tool_call_arr: list[dict] = []
        self.streamed_args_for_tool: list[str] = []

    def adjust_request(self, request: Any) -> Any:
        return request


class VllmReasoningParser:
    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        self.model_tokenizer = tokenizer


@dataclass
class DeltaFunctionCall:
    name: str | None = None
    arguments: str | None = None


@dataclass
class DeltaToolCall:
    index: int
    id: str | None = None
    type: str | None = None
    function: DeltaFunctionCall | None = None


@dataclass
class DeltaMessage:
    role: str | None = None
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[DeltaToolCall] = field(default_factory=list)


@dataclass
class FunctionCall:
    name: str
    arguments: str
    id: str | None = None


@dataclass
class ToolCall:
    function: FunctionCall
    id: str = ""
    type: str = "function"


@dataclass
class ExtractedToolCallInformation:
    tools_called: bool
    tool_calls: list[ToolCall]
    content: str | None = None


def vllm_api() -> SimpleNamespace:
    ids = count()
    return SimpleNamespace(
        ToolParser=VllmToolParser,
        ReasoningParser=VllmReasoningParser,
        ToolParserManager=_Registry(),
        ReasoningParserManager=_Registry(),
        DeltaMessage=DeltaMessage,
        DeltaToolCall=DeltaToolCall,
        DeltaFunctionCall=DeltaFunctionCall,
        ExtractedToolCallInformation=ExtractedToolCallInformation,
        ToolCall=ToolCall,
        FunctionCall=FunctionCall,
        make_tool_call_id=lambda: f"chatcmpl-tool-{next(ids)}",
    )


@dataclass
class ChatRequest:
    """The fields of vLLM's ChatCompletionRequest that the parsers read."""

    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = "auto"
    skip_special_tokens: bool | None = None


class CharTokenizer:
    """One token per character, plus whole-marker tokens in `vocab`: `get_vocab`
    and `encode` as a Hugging Face tokenizer has them."""

    def __init__(self, markers: list[str] = ()) -> None:
        self.vocab = {m: 100_000 + n for n, m in enumerate(markers)}

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        ids, at = [], 0
        while at < len(text):
            for marker, token in self.vocab.items():
                if text.startswith(marker, at):
                    ids.append(token)
                    at += len(marker)
                    break
            else:
                ids.append(ord(text[at]))
                at += 1
        return ids

    def decode(self, ids: list[int]) -> str:
        back = {v: k for k, v in self.vocab.items()}
        return "".join(back.get(i) or chr(i) for i in ids)


# --- SGLang --------------------------------------------------------------------------


@dataclass
class ToolCallItem:
    tool_index: int
    parameters: str
    name: str | None = None


@dataclass
class SglangToolResult:
    normal_text: str = ""
    calls: list[ToolCallItem] = field(default_factory=list)


class BaseFormatDetector:
    def __init__(self) -> None:
        self._buffer = ""
        self.prev_tool_call_arr: list[dict] = []
        self.current_tool_id = -1
        self.current_tool_name_sent = False
        self.streamed_args_for_tool: list[str] = []
        self.bot_token = ""
        self.eot_token = ""


class SglangReasoningResult:
    def __init__(self, normal_text: str | None = None, reasoning_text: str | None = None) -> None:
        self.normal_text = normal_text or ""
        self.reasoning_text = reasoning_text or ""


class BaseReasoningFormatDetector:
    def __init__(
        self,
        think_start_token: str,
        think_end_token: str,
        force_reasoning: bool = False,
        stream_reasoning: bool = True,
        **kwargs: Any,
    ) -> None:
        self.think_start_token = think_start_token
        self.think_end_token = think_end_token
        self.force_reasoning = force_reasoning
        self.stream_reasoning = stream_reasoning


@dataclass
class SglangFunction:
    name: str
    parameters: Any = None


@dataclass
class SglangTool:
    function: SglangFunction
    type: str = "function"


def sglang_api() -> SimpleNamespace:
    return SimpleNamespace(
        BaseFormatDetector=BaseFormatDetector,
        StreamingParseResult=SglangToolResult,
        ToolCallItem=ToolCallItem,
        FunctionCallParser=SimpleNamespace(ToolCallParserEnum={}),
        BaseReasoningFormatDetector=BaseReasoningFormatDetector,
        ReasoningResult=SglangReasoningResult,
        ReasoningParser=SimpleNamespace(DetectorMap={}),
    )

"""Type stubs of the idiolect package (checked against the module by mypy's stubtest in CI)."""

from collections.abc import Iterable
from typing import Any, Final, TypeAlias, final

__all__ = [
    "OptionsError",
    "Parser",
    "RenderError",
    "UnknownDialectError",
    "__version__",
    "dialects",
    "parse",
    "parse_many",
    "render",
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

def parse(
    dialect: str,
    text: str | bytes,
    options: dict[str, _JSON] | None = None,
    *,
    spans: bool = False,
) -> dict[str, _JSON]:
    """Parses one whole document and returns it (the GIL is released meanwhile)."""

def parse_many(
    dialect: str,
    texts: Iterable[str | bytes],
    options: dict[str, _JSON] | None = None,
    threads: int | None = None,
    *,
    spans: bool = False,
) -> list[dict[str, _JSON]]:
    """Parses many documents on `threads` threads (default: every core), GIL released;
    returns the documents in the order of `texts`."""

def render(
    dialect: str,
    what: str | None,
    value: _JSON,
    options: dict[str, _JSON] | None = None,
) -> str:
    """Renders `value` into the dialect's text, as `idiolect render DIALECT [WHAT]`."""

@final
class Parser:
    """A streaming parse of one input: `feed` chunks, then `finish`."""

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

"""idiolect: streaming parsers that turn the dialects language models write into JSON.

The native module does the work; this package re-exports it. See README.md.

>>> import idiolect
>>> idiolect.parse("sections", "<think>plan</think>done")["items"][0]["name"]
'think'
"""

from idiolect._native import (
    OptionsError,
    Parser,
    RenderError,
    UnknownDialectError,
    __version__,
    dialects,
    parse,
    parse_many,
    render,
)

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

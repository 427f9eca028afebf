"""The arena allocator the module installs (src/arenas.rs): CPython's emptied
arenas of small objects are kept for reuse, up to a bound, instead of being
unmapped at once; `IDIOLECT_KEEP_ARENAS=0` installs nothing.

The rest of the suite runs with it installed: every document it compares is made
of objects in arenas that may have been used before.
"""

import gc
import os
import subprocess
import sys

from idiolect import _native

import idiolect

MiB = 1 << 20


def make_and_drop(count: int) -> None:
    """Makes `count` small dicts (about 200 bytes each with their keys), then
    frees them all, which empties the arenas they filled."""
    made = [{"index": i, "text": "x"} for i in range(count)]
    del made
    gc.collect()


def test_emptied_arenas_are_kept_for_reuse():
    assert _native._kept_arenas() is not None, "the allocator is installed"
    make_and_drop(200_000)
    count, size = _native._kept_arenas()
    assert count > 0 and size > 0, (count, size)
    # A new burst of objects takes the kept arenas first.
    made = [{"index": i, "text": "x"} for i in range(200_000)]
    _, size_while_used = _native._kept_arenas()
    assert size_while_used < size
    del made
    gc.collect()


def test_kept_arenas_never_exceed_the_bound():
    # Several times the bound's worth of objects, all freed at once.
    make_and_drop(700_000)
    count, size = _native._kept_arenas()
    assert 0 < size <= _native.KEEP_ARENA_BYTES
    # Filled up to the bound but for less than one arena (arenas are 1 MiB on
    # 64-bit CPython 3.10 and later, 256 KiB before).
    assert size > _native.KEEP_ARENA_BYTES - MiB, (count, size)


def test_a_document_parsed_in_reused_arenas_is_the_same():
    text = "We shipped <cite id=1>the fix</cite> on Friday. " * 20_000
    first = idiolect.parse("kindaxml", text)
    expected = repr(first)
    del first
    gc.collect()
    assert _native._kept_arenas()[1] > 0
    assert repr(idiolect.parse("kindaxml", text)) == expected


def test_keep_arenas_0_installs_nothing():
    code = (
        "from idiolect import _native; import idiolect;"
        "assert _native._kept_arenas() is None;"
        "d = idiolect.parse('kindaxml', 'We shipped <cite id=1>it</cite>.');"
        "print(d['segments'][1]['annotations'][0]['tag'])"
    )
    env = dict(os.environ, IDIOLECT_KEEP_ARENAS="0")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "cite"

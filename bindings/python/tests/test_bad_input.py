"""Bad input gives a clear exception, never a crash: wrong types, unknown dialects,
invalid options (the CLI's one-line messages), huge values, use after finish."""

import pytest

import idiolect


def test_unknown_dialect_is_a_value_error_with_the_cli_message():
    with pytest.raises(idiolect.UnknownDialectError) as raised:
        idiolect.parse("yaml", "x")
    assert isinstance(raised.value, ValueError)
    known = ", ".join(idiolect.dialects())
    assert str(raised.value) == f'unknown dialect "yaml"; known dialects: {known}'
    for call in (
        lambda: idiolect.Parser("yaml"),
        lambda: idiolect.parse_many("yaml", ["x"]),
        lambda: idiolect.render("yaml", None, []),
    ):
        with pytest.raises(idiolect.UnknownDialectError):
            call()


def test_invalid_options_are_a_value_error_naming_the_dialect():
    with pytest.raises(idiolect.OptionsError) as raised:
        idiolect.parse("sections", "x", {"no_such_option": 1})
    assert isinstance(raised.value, ValueError)
    message = str(raised.value)
    assert message.startswith("invalid sections options: ") and "no_such_option" in message
    assert "\n" not in message
    with pytest.raises(idiolect.OptionsError):
        idiolect.Parser("sections", {"no_such_option": 1})
    with pytest.raises(idiolect.OptionsError):
        idiolect.parse_many("sections", [], {"no_such_option": 1})


def test_a_huge_options_value_is_refused_not_wrapped():
    with pytest.raises(idiolect.OptionsError) as raised:
        idiolect.parse("sections", "x", {"max_tag_bytes": 10**40})
    assert "invalid sections options" in str(raised.value)
    with pytest.raises(idiolect.OptionsError):
        idiolect.parse("sections", "x", {"max_tag_bytes": -1})
    with pytest.raises(ValueError):
        idiolect.parse("sections", "x", {"max_tag_bytes": float("inf")})


def test_options_that_are_not_json_data_are_type_errors():
    with pytest.raises(TypeError, match="options must be a dict"):
        idiolect.parse("sections", "x", ["not", "a", "dict"])
    with pytest.raises(TypeError, match="keys must be str"):
        idiolect.parse("sections", "x", {1: 2})
    with pytest.raises(TypeError, match="JSON data"):
        idiolect.parse("sections", "x", {"sections": object()})


def test_self_containing_options_are_refused_without_recursing_forever():
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="nests deeper"):
        idiolect.parse("sections", "x", {"sections": loop})


def test_text_of_the_wrong_type_is_a_type_error():
    for bad in (None, 3, ["x"], bytearray(b"x")):
        with pytest.raises(TypeError, match="text must be str or bytes"):
            idiolect.parse("sections", bad)
    parser = idiolect.Parser("sections")
    with pytest.raises(TypeError, match="chunk must be str or bytes"):
        parser.feed(3)
    with pytest.raises(TypeError, match="texts must be an iterable"):
        idiolect.parse_many("sections", "a single string")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str or bytes"):
        idiolect.parse_many("sections", ["ok", 5])
    with pytest.raises(TypeError):
        idiolect.parse_many("sections", 5)
    with pytest.raises(ValueError, match="threads"):
        idiolect.parse_many("sections", ["x"], threads=0)
    with pytest.raises((TypeError, OverflowError)):
        idiolect.parse_many("sections", ["x"], threads=-1)


def test_a_str_with_a_lone_surrogate_is_a_unicode_error():
    with pytest.raises(UnicodeEncodeError):
        idiolect.parse("sections", "bad \ud800 text")


def test_invalid_utf8_bytes_never_raise():
    for data in (b"\xff", b"\xc3", b"<think>\xe2\x82</think>", bytes(range(256))):
        document = idiolect.parse("sections", data)
        assert isinstance(document, dict)
        parser = idiolect.Parser("sections")
        for byte in data:
            parser.feed(bytes([byte]))
        parser.finish()
        assert parser.document() == document


def test_use_after_finish_raises_until_reset():
    parser = idiolect.Parser("sections")
    parser.feed("a")
    parser.finish()
    with pytest.raises(RuntimeError, match=r"feed\(\) after finish\(\)"):
        parser.feed("b")
    with pytest.raises(RuntimeError, match=r"finish\(\) after finish\(\)"):
        parser.finish()
    assert parser.document() == idiolect.parse("sections", "a")
    parser.reset()
    parser.feed("b")


def test_render_errors_are_value_errors():
    with pytest.raises(idiolect.RenderError, match="has no renderer"):
        idiolect.render("sections", None, [])
    with pytest.raises(idiolect.RenderError):
        idiolect.render("anthropic-xml", "calls", {"not": "a list"})
    with pytest.raises(idiolect.RenderError):
        idiolect.render("transcript", "nothing-such", {"messages": []})


def test_huge_input_parses():
    text = "<think>" + "x" * (8 << 20) + "</think>"
    document = idiolect.parse("sections", text)
    assert len(document["items"][0]["content"]) == 8 << 20

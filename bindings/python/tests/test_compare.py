"""The comparison rules themselves: a check that cannot fail proves nothing."""

from corpus import same


def test_key_order_matters():
    assert same({"a": 1, "b": 2}, {"a": 1, "b": 2})
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_numbers_compare_by_value_but_not_with_bools_or_strings():
    assert same(1000, 1000.0)
    assert same([1e3], [1000])
    assert not same(1000.5, 1000)
    assert not same(1, True)
    assert not same(0, False)
    assert not same(1, "1")


def test_missing_extra_and_reordered_items_differ():
    assert not same({"a": 1}, {"a": 1, "b": 2})
    assert not same({"a": 1}, {"b": 1})
    assert not same([1, 2], [2, 1])
    assert not same([1], [1, 1])
    assert not same(None, {})

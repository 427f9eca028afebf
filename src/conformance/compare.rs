//! How a produced document is compared with a case's expected JSON.
//!
//! `serde_json::Value` equality is the wrong tool for the corpus on two counts: its
//! objects compare as unordered maps even with `preserve_order` (so the specs'
//! source-order rules could never fail), and its numbers compare by representation
//! (`1000` differs from `1000.0`, which a port in another language may well print).
//! [`same`] compares arrays in order, strings exactly, numbers by value, and objects
//! either in key order (the in-process runner) or as unordered maps (ports, unless
//! they opt in).

use serde_json::{Number, Value};

/// Whether object keys must appear in the same order on both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    /// Keys in the same order: source-order rules (attributes, typed input keys,
    /// a repeated key at its first position) are checked.
    Ordered,
    /// Objects compare as unordered maps (the default for ports).
    Unordered,
}

/// Whether `got` equals `expected` under the corpus's comparison rules.
pub fn same(expected: &Value, got: &Value, order: KeyOrder) -> bool {
    match (expected, got) {
        (Value::Number(a), Value::Number(b)) => same_number(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, order))
        }
        (Value::Object(a), Value::Object(b)) => {
            if a.len() != b.len() {
                return false;
            }
            match order {
                KeyOrder::Ordered => a
                    .iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb, order)),
                KeyOrder::Unordered => a
                    .iter()
                    .all(|(k, va)| b.get(k).is_some_and(|vb| same(va, vb, order))),
            }
        }
        (a, b) => a == b,
    }
}

/// Numbers by value: integers exactly (whatever their sign representation), and
/// anything involving a fraction or exponent as a double.
fn same_number(a: &Number, b: &Number) -> bool {
    if let (Some(x), Some(y)) = (as_integer(a), as_integer(b)) {
        return x == y;
    }
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The exact integer value of `n`, when it is an integer or a double with an
/// integral value inside the range where doubles are exact.
fn as_integer(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i as i128);
    }
    if let Some(u) = n.as_u64() {
        return Some(u as i128);
    }
    let f = n.as_f64()?;
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    (f.fract() == 0.0 && f.abs() <= EXACT).then_some(f as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn swapped_keys_differ_in_order_but_not_unordered() {
        let expected = parse(r#"{"attrs":{"a":"1","b":"2"}}"#);
        let swapped = parse(r#"{"attrs":{"b":"2","a":"1"}}"#);
        assert!(!same(&expected, &swapped, KeyOrder::Ordered));
        assert!(same(&expected, &swapped, KeyOrder::Unordered));
        assert!(same(&expected, &expected.clone(), KeyOrder::Ordered));
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(same(&parse("1000.0"), &parse("1000"), KeyOrder::Ordered));
        assert!(same(&parse("[1e3]"), &parse("[1000]"), KeyOrder::Ordered));
        assert!(same(&parse("-0.5"), &parse("-5e-1"), KeyOrder::Unordered));
        assert!(!same(&parse("1000.5"), &parse("1000"), KeyOrder::Ordered));
        assert!(!same(&parse("1"), &parse("\"1\""), KeyOrder::Ordered));
    }

    #[test]
    fn large_integers_stay_exact() {
        let big = json!(u64::MAX);
        let almost = json!(u64::MAX - 1);
        assert!(same(&big, &big.clone(), KeyOrder::Ordered));
        assert!(!same(&big, &almost, KeyOrder::Ordered));
        assert!(same(&json!(-3), &parse("-3.0"), KeyOrder::Ordered));
    }

    #[test]
    fn missing_or_extra_keys_differ() {
        let a = parse(r#"{"a":1}"#);
        let b = parse(r#"{"a":1,"b":2}"#);
        assert!(!same(&a, &b, KeyOrder::Unordered));
        assert!(!same(&b, &a, KeyOrder::Unordered));
        assert!(!same(
            &parse(r#"{"a":1}"#),
            &parse(r#"{"b":1}"#),
            KeyOrder::Unordered
        ));
    }
}

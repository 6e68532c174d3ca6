//! Numbers and error paths from JSON text, as every Kineto reader reads them.
//!
//! A time is read from the number's **text**, digit by digit ([`scaled_decimal`]): µs with
//! three decimals become integer ns exactly, never through `f64`; digits below 1 ns are
//! refused (`inexact-value`) or, with `--round-sub-ns`, rounded to the nearest and counted
//! ([`exact_number_at`]). [`parse_with_path`] parses one piece of text with
//! `serde_path_to_error`, to name the field of an error (`traceEvents[12].args.correlation`):
//! only on the error path, or for the lenient whole-text reader.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::trace::scan::{exact_scaled, Time};
use crate::{error::InputError as ImportError, trace::ReadOptions as ImportOptions};

type Result<T> = std::result::Result<T, ImportError>;

/// The exact value of a JSON number scaled by 10^`scale` (3: µs → ns), as an integer.
/// `Ok(None)` when the value is not a number (a string, `null`, an object).
///
/// # Errors
/// `inexact-value` when digits remain below 1 (unless rounding is on; then `rounded` counts
/// it), `overflow` past `i64`; `path` names the field.
pub(crate) fn exact_number_at(
    raw: &RawValue,
    scale: i32,
    path: &dyn Fn() -> String,
    options: &ImportOptions,
    rounded: &mut u64,
) -> Result<Option<i64>> {
    let text = raw.get();
    if !text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return Ok(None);
    }
    match scaled_decimal(text, scale) {
        Some(Scaled::Exact(v)) => Ok(Some(v)),
        Some(Scaled::Rounded(v)) if options.round_sub_ns => {
            *rounded += 1;
            Ok(Some(v))
        }
        Some(Scaled::Rounded(_)) => Err(ImportError::new(
            path(),
            "inexact-value",
            format!(
                "`{text}` has digits below one nanosecond; pass --round-sub-ns to round such values to the nearest ns"
            ),
        )),
        None => Err(ImportError::new(
            path(),
            "overflow",
            format!("`{text}` does not fit in 64-bit nanoseconds"),
        )),
    }
}

/// A time an event must have, in ns (`scale` 3: µs text), with the importer's errors:
/// `missing-field` (worded by `missing`) when it is absent or null, `wrong-type` when it is not
/// a number, and [`exact_number_at`]'s `inexact-value` or `overflow`. The importer's kept
/// events and the audit's reading of the same events both read their `ts` and `dur` here, so
/// the two refuse a trace with the same code, path and words.
pub(crate) fn required_time(
    raw: Option<&RawValue>,
    path: &dyn Fn() -> String,
    options: &ImportOptions,
    rounded: &mut u64,
    missing: impl FnOnce() -> String,
) -> Result<i64> {
    let Some(raw) = raw else {
        return Err(ImportError::new(path(), "missing-field", missing()));
    };
    exact_number_at(raw, 3, path, options, rounded)?
        .ok_or_else(|| ImportError::new(path(), "wrong-type", "expected a number of microseconds"))
}

/// Deserializes `text` as `T`, with the JSON path of any error under `prefix`.
pub(crate) fn parse_with_path<'a, T: Deserialize<'a>>(text: &'a str, prefix: &str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let inner = err.path().to_string();
        let path = join_path(prefix, &inner);
        let e = err.inner();
        let code = classify(e);
        // Positions help in a whole file; inside one event they would mislead.
        let message = if prefix.is_empty() && e.line() > 0 {
            e.to_string()
        } else {
            crate::error::without_position(&e.to_string())
        };
        ImportError::new(path, code, message)
    })?;
    de.end().map_err(|e| {
        ImportError::new(
            if prefix.is_empty() { "$" } else { prefix },
            "bad-syntax",
            format!("text after the JSON value: {e}"),
        )
    })?;
    Ok(value)
}

fn join_path(prefix: &str, inner: &str) -> String {
    match (prefix.is_empty(), inner == "." || inner.is_empty()) {
        (true, true) => "$".to_owned(),
        (true, false) => inner.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) if inner.starts_with('[') => format!("{prefix}{inner}"),
        (false, false) => format!("{prefix}.{inner}"),
    }
}

pub(crate) fn classify(err: &serde_json::Error) -> &'static str {
    use serde_json::error::Category;
    match err.classify() {
        Category::Io => "io",
        Category::Syntax | Category::Eof => "bad-syntax",
        Category::Data => crate::error::serde_data_code(&err.to_string()),
    }
}

/// A decimal scaled to an integer: exact, or rounded to the nearest (halves away from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scaled {
    Exact(i64),
    Rounded(i64),
}

/// `text` (a JSON number: sign, digits, optional fraction and exponent) × 10^`scale`, read
/// digit by digit. `None` when it is not such a number or the result overflows `i64`.
///
/// The one µs → ns rule of the crate: the fast path's scanner's [`exact_scaled`], whose
/// results this only renames (exact, rounded to the nearest with halves away from zero,
/// or past `i64`).
pub(crate) fn scaled_decimal(text: &str, scale: i32) -> Option<Scaled> {
    match exact_scaled(text.as_bytes(), u32::try_from(scale).ok()?) {
        Ok(Time::Exact(v)) => Some(Scaled::Exact(v)),
        Ok(Time::Rounded(v)) => Some(Scaled::Rounded(v)),
        Ok(Time::Overflow | Time::NotANumber) | Err(_) => None,
    }
}

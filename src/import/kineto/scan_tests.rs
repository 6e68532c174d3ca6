//! The fast scanner ([`crate::trace::scan`]) against the careful reader: the same events with
//! the same fields and the same ns on every real trace, the same numbers as the careful
//! reader's former rule (kept here as an oracle) on any JSON number, the same events on
//! generated traces, and, for the per-event scanner of the fast path ([`scan_event`]), the
//! visitors' reading of every generated event it is sure of.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read as _;

use proptest::prelude::*;
use serde_json::value::RawValue;

use crate::import::ImportOptions;
use crate::trace::kineto::number::{scaled_decimal, Scaled};
use crate::trace::kineto::read::stream_of_tid;
use crate::trace::scan::{exact_scaled, scan, scan_event, ScannedEvent, Time};

/// One event's six fields as `serde` reads them (the careful reader's `Head`).
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

/// An event's `pid` and `tid` as raw text (other fields skipped).
#[derive(serde::Deserialize)]
struct Ids<'a> {
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
}

#[derive(serde::Deserialize)]
struct Top<'a> {
    #[serde(rename = "traceEvents", borrow)]
    trace_events: Vec<&'a RawValue>,
    #[serde(rename = "baseTimeNanoseconds", borrow, default)]
    base_time: Option<&'a RawValue>,
}

/// A time as the careful reader reads it: `exact_number`'s rules on the raw text.
fn careful_time(raw: &RawValue, scale: i32) -> Time {
    let text = raw.get();
    if !text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return Time::NotANumber;
    }
    match scaled_decimal(text, scale) {
        Some(Scaled::Exact(v)) => Time::Exact(v),
        Some(Scaled::Rounded(v)) => Time::Rounded(v),
        None => Time::Overflow,
    }
}

/// The fields of one event, owned, for comparing the two readers.
type Fields = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<Time>,
    Option<Time>,
    Option<String>,
);

fn careful_events(text: &str) -> (Vec<Fields>, Option<Time>) {
    let (events, base) = if text.trim_start().starts_with('[') {
        (serde_json::from_str::<Vec<&RawValue>>(text).unwrap(), None)
    } else {
        let top: Top = serde_json::from_str(text).unwrap();
        (top.trace_events, top.base_time)
    };
    let fields = events
        .iter()
        .map(|raw| {
            let head: Head = serde_json::from_str(raw.get()).unwrap();
            (
                head.ph.map(Cow::into_owned),
                head.cat.map(Cow::into_owned),
                head.name.map(Cow::into_owned),
                head.ts.map(|t| careful_time(t, 3)),
                head.dur.map(|t| careful_time(t, 3)),
                head.args.map(|a| a.get().to_owned()),
            )
        })
        .collect();
    (fields, base.map(|b| careful_time(b, 0)))
}

fn scanned_fields(e: &ScannedEvent) -> Fields {
    let text = |t: Option<crate::trace::scan::Text>| t.map(|t| t.decoded().into_owned());
    (
        text(e.ph),
        text(e.cat),
        text(e.name),
        e.ts,
        e.dur,
        e.args.map(|a| String::from_utf8(a.to_vec()).unwrap()),
    )
}

fn fast_events(text: &str) -> (Vec<Fields>, Option<Time>) {
    let mut out = Vec::new();
    let found = scan(text.as_bytes(), |e| {
        assert_eq!(e.index, out.len());
        out.push(scanned_fields(&e));
    })
    .unwrap();
    assert_eq!(found.events, out.len());
    (out, found.base_time)
}

fn real_traces() -> Vec<(String, String)> {
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/traces");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "gz") {
            let mut text = String::new();
            flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap())
                .read_to_string(&mut text)
                .unwrap();
            out.push((path.display().to_string(), text));
        }
    }
    assert!(out.len() >= 8, "the real traces are there");
    out
}

/// Every real trace: each event's six fields, `ts` and `dur` in ns, equal to the careful
/// reading; and every GPU activity the audit's reader files is a scanned event at the same ns.
#[test]
fn every_real_trace_scans_to_the_careful_readers_events_and_ns() {
    for (file, text) in real_traces() {
        let (careful, careful_base) = careful_events(&text);
        let (fast, fast_base) = fast_events(&text);
        assert_eq!(fast.len(), careful.len(), "{file}");
        for (i, (f, c)) in fast.iter().zip(&careful).enumerate() {
            assert_eq!(f, c, "{file}: traceEvents[{i}]");
        }
        assert_eq!(fast_base, careful_base, "{file}");

        let base = match fast_base {
            Some(Time::Exact(b)) => b,
            _ => 0,
        };
        let mut spans: BTreeMap<(String, i64, i64), usize> = BTreeMap::new();
        for (_, cat, name, ts, dur, _) in &fast {
            if let (Some(cat), Some(name), Some(Time::Exact(ts)), Some(Time::Exact(dur))) =
                (cat, name, ts, dur)
            {
                if super::WorkKind::of_category(cat).is_some() {
                    *spans
                        .entry((name.clone(), base + ts, base + ts + dur))
                        .or_default() += 1;
                }
            }
        }
        let trace =
            crate::trace::kineto::lenient::read_trace(&text, &ImportOptions::default()).unwrap();
        for a in &trace.activities {
            let slot = spans
                .get_mut(&(a.name.to_string(), a.start, a.end))
                .filter(|n| **n > 0);
            let Some(n) = slot else {
                panic!(
                    "{file}: activity {} [{}, {}) is no scanned event",
                    a.name, a.start, a.end
                );
            };
            *n -= 1;
        }
        assert!(!trace.activities.is_empty() || file.contains("sampled") || fast.len() < 10);
    }
}

/// A JSON number's text: sign, integer part, fraction, exponent (sometimes too long).
fn json_number() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop_oneof![Just("0".to_owned()), "[1-9][0-9]{0,21}"],
        prop::option::of("[0-9]{1,9}"),
        prop::option::of((
            prop_oneof!["e", "E"],
            prop_oneof!["", "\\+", "-"],
            prop_oneof!["[0-9]{1,3}", "[0-9]{6,7}"],
        )),
    )
        .prop_map(|(negative, int, frac, exp)| {
            let mut text = String::new();
            if negative {
                text.push('-');
            }
            text.push_str(&int);
            if let Some(frac) = frac {
                text.push('.');
                text.push_str(&frac);
            }
            if let Some((e, sign, digits)) = exp {
                text.push_str(&e);
                text.push_str(&sign);
                text.push_str(&digits);
            }
            text
        })
}

/// One event's value for a field.
fn field_value(key: &'static str) -> BoxedStrategy<String> {
    let string = any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap());
    match key {
        "ph" | "cat" | "name" => prop_oneof![4 => string, 1 => Just("null".to_owned())].boxed(),
        "ts" | "dur" => prop_oneof![
            6 => json_number(),
            1 => Just("null".to_owned()),
            1 => string,
            1 => Just("[1, {\"a\": \"]\"}]".to_owned()),
        ]
        .boxed(),
        _ => prop_oneof![
            Just("null".to_owned()),
            json_number(),
            string,
            prop::collection::btree_map("[a-z\\\\\"}{]{0,4}", json_number(), 0..4)
                .prop_map(|m| serde_json::to_string(&m).unwrap()),
            Just("{\"nested\": [[], {}, [\"}\", 1e5, true, false]]}".to_owned()),
        ]
        .boxed(),
    }
}

/// A key as written: plain, or with one letter as a `\u` escape (the same key to a reader).
fn spelled(key: &str, escape: bool) -> String {
    if escape {
        let (first, rest) = key.split_at(1);
        format!(
            "\"\\u{:04x}{rest}\"",
            u32::from(first.chars().next().unwrap())
        )
    } else {
        format!("\"{key}\"")
    }
}

/// An event object's text: each key at most once, in any order, some spelled with escapes.
fn event_text() -> impl Strategy<Value = String> {
    const KEYS: [&str; 9] = ["ph", "cat", "name", "ts", "dur", "args", "pid", "tid", "id"];
    let fields: Vec<_> = KEYS
        .iter()
        .map(|&k| prop::option::of((field_value(k), any::<bool>())).prop_map(move |v| (k, v)))
        .collect();
    (fields, any::<u64>(), prop_oneof![" ", "", "\n\t"]).prop_map(|(fields, order, space)| {
        let mut present: Vec<(u64, String)> = fields
            .into_iter()
            .enumerate()
            .filter_map(|(i, (k, v))| {
                v.map(|(value, escape)| {
                    let rank = order.rotate_left(7 * i as u32) % 1009;
                    (
                        rank,
                        format!("{}{space}:{space}{value}", spelled(k, escape)),
                    )
                })
            })
            .collect();
        present.sort();
        let body: Vec<String> = present.into_iter().map(|(_, f)| f).collect();
        format!("{{{space}{}{space}}}", body.join(&format!(",{space}")))
    })
}

proptest! {
    /// Any JSON number: the scanner's ns are the careful reader's, exact, rounded or overflow.
    #[test]
    fn any_json_number_reads_as_the_careful_reader_reads_it(text in json_number()) {
        for scale in [0, 3] {
            let careful = match reference_scaled(&text, scale as i32) {
                Some(Scaled::Exact(v)) => Time::Exact(v),
                Some(Scaled::Rounded(v)) => Time::Rounded(v),
                None => Time::Overflow,
            };
            prop_assert_eq!(exact_scaled(text.as_bytes(), scale), Ok(careful), "{}", text);
        }
    }

    /// Generated events (fields in any order, escaped keys, nested args, odd values): where
    /// the per-event scanner of the fast path is sure, it reads what the visitors read.
    #[test]
    fn a_sure_event_scan_is_the_visitors_reading(text in event_text()) {
        if let Some(head) = scan_event(text.as_bytes()) {
            let careful: Ids = serde_json::from_str(&text).expect("a sure event is JSON");
            let head6: Head = serde_json::from_str(&text).expect("a sure event is JSON");
            let int = |raw: Option<&RawValue>| {
                raw.and_then(|r| serde_json::from_str::<serde_json::Value>(r.get()).ok())
                    .and_then(|v| v.as_i64())
            };
            prop_assert_eq!(head.ph, head6.ph.as_deref());
            prop_assert_eq!(head.cat, head6.cat.as_deref());
            prop_assert_eq!(head.name, head6.name.as_deref());
            prop_assert_eq!(head.pid, int(careful.pid));
            prop_assert_eq!(head.thread, int(careful.tid));
            prop_assert_eq!(head.tid, careful.tid.and_then(stream_of_tid));
            let time = |t: Option<&RawValue>| t.map(|t| careful_time(t, 3));
            prop_assert_eq!(head.ts.map(|t| t.scaled(3)), time(head6.ts));
            prop_assert_eq!(head.dur.map(|t| t.scaled(3)), time(head6.dur));
            prop_assert_eq!(head.args, head6.args.map(|a| a.get().as_bytes()));
        }
    }

    /// Generated traces (fields in any order, escaped keys, nested args, odd values): the
    /// scanner gives the careful reading of every event.
    #[test]
    fn generated_traces_scan_to_the_careful_reading(
        events in prop::collection::vec(event_text(), 0..12),
        base in prop::option::of(json_number()),
        bare in any::<bool>(),
    ) {
        let array = format!("[{}]", events.join(","));
        let text = match (&base, bare) {
            (_, true) => array,
            (Some(b), false) => format!("{{\"x\": [1], \"traceEvents\": {array}, \"baseTimeNanoseconds\": {b}}}"),
            (None, false) => format!("{{\"traceEvents\": {array}, \"deviceProperties\": [{{}}]}}"),
        };
        prop_assert_eq!(fast_events(&text), careful_events(&text));
    }
}

/// The careful reader's former µs → ns rule (a vector of digits, `checked_*` arithmetic),
/// kept here as an independent oracle for [`exact_scaled`], which is now the crate's one
/// rule ([`scaled_decimal`] calls it).
fn reference_scaled(text: &str, scale: i32) -> Option<Scaled> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => {
            let e = rest[i + 1..].strip_prefix('+').unwrap_or(&rest[i + 1..]);
            if e.is_empty() || e.len() > 6 {
                return None;
            }
            (&rest[..i], e.parse::<i32>().ok()?)
        }
        None => (rest, 0),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((a, b)) => (a, b),
        None => (mantissa, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() || !all_digits(int_part) || !all_digits(frac_part) {
        return None;
    }
    if mantissa.contains('.') && frac_part.is_empty() {
        return None;
    }
    // digits × 10^shift, with digits = int_part ++ frac_part.
    let shift = i64::from(exponent) + i64::from(scale) - frac_part.len() as i64;
    let digits: Vec<u8> = int_part
        .bytes()
        .chain(frac_part.bytes())
        .skip_while(|&b| b == b'0')
        .map(|b| b - b'0')
        .collect();
    let keep = if shift >= 0 {
        digits.len()
    } else {
        digits.len().saturating_sub(shift.unsigned_abs() as usize)
    };
    let mut value: i128 = 0;
    for &d in &digits[..keep] {
        value = value.checked_mul(10)?.checked_add(i128::from(d))?;
        if value > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    let dropped = &digits[keep..];
    let mut exact = true;
    if shift > 0 {
        for _ in 0..shift {
            value = value.checked_mul(10)?;
            if value > i128::from(i64::MAX) + 1 {
                return None;
            }
        }
    } else if dropped.iter().any(|&d| d != 0) {
        exact = false;
        // Below-the-point digits: when fewer digits are kept than dropped positions, the
        // first dropped position may lie before the first digit (a value below 0.1).
        let positions = shift.unsigned_abs() as usize;
        let first_dropped = if positions > digits.len() {
            0
        } else {
            dropped[0]
        };
        if first_dropped >= 5 {
            value += 1;
        }
    }
    let value = if negative { -value } else { value };
    let value = i64::try_from(value).ok()?;
    Some(if exact {
        Scaled::Exact(value)
    } else {
        Scaled::Rounded(value)
    })
}

//! Memory-copy bandwidth by kind (`HtoD`, `DtoH`, `DtoD`, ..., and sets): bytes over exact
//! time, where the trace records the bytes.
//!
//! Per device and kind: how many copies, the bytes they moved (Kineto `args.bytes`), their
//! summed durations and the union of their intervals (ns), and two rates, both exact integer
//! arithmetic, rounded half up to whole MB/s (1 byte/ns = 1 GB/s = 1000 MB/s, decimal units):
//!
//! - `mb_per_s`: Σ bytes / Σ durations, the time-weighted mean rate of one copy of this kind;
//! - `peak_copy_mb_per_s`: the fastest single copy, bytes / its duration.
//!
//! ```text
//! HtoD:  [c1: 4 MB in 1 ms)      [c2: 2 MB in 1 ms)     mean 6 MB / 2 ms = 3,000 MB/s; peak 4,000
//! ```
//!
//! Where a copy of a kind has no byte count (a trace without Kineto's `args.bytes` or the
//! export's `bytes` column, or a case file), the kind's bytes and rates are unknown, with that
//! reason; zero-length copies move bytes in no time and are left out of the rates, counted.
//!
//! HTA 0.5.0 (`get_memory_bw_summary`) reads the profiler's own `memory bandwidth (GB/s)`
//! float per copy instead, adds the rates of copies of one kind that overlap, and summarises
//! the resulting step function's change points (count, mean, min, max), not time-weighted; a
//! zero-length copy gets 1 µs there. Its per-kind maximum is the peak single copy where the
//! copies of a kind do not overlap (`tests/hta_views.rs` checks it to the profiler's float).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::trace::model::{Activity, ActivityKind, Trace};

/// One device's copies (or sets) of one kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BandwidthRow {
    /// `gpu0`.
    pub device: String,
    /// `HtoD`, `DtoH`, `DtoD`, `HtoH`, `PtoP`, ..., `Memset`, or `unknown`.
    pub kind: String,
    /// How many.
    pub count: u64,
    /// Σ bytes; `None` when some copy of the kind records no byte count.
    pub bytes: Option<u128>,
    /// Σ durations, ns.
    pub total_ns: i128,
    /// The union of their intervals, ns (≤ `total_ns`; less where copies overlap).
    pub busy_ns: i128,
    /// Σ bytes / Σ durations of the copies with bytes and a duration, MB/s, rounded half up;
    /// `None` when unknown (see `unknown_why`).
    pub mb_per_s: Option<u128>,
    /// The fastest copy's bytes / duration, MB/s, rounded half up.
    pub peak_copy_mb_per_s: Option<u128>,
    /// Copies of zero duration (left out of the rates).
    pub zero_length: u64,
    /// Why the rates are unknown, when they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_why: Option<String>,
}

/// The kind of a copy or set from its name: Kineto's `Memcpy HtoD (Pinned -> Device)`, the
/// Nsight Systems reader's `memcpy kind 1` (CUPTI's copy kinds), `Memset ...`.
pub fn kind_of(a: &Activity) -> String {
    if a.kind == ActivityKind::Memset {
        return "Memset".to_owned();
    }
    if let Some(rest) = a.name.strip_prefix("Memcpy ") {
        let word: String = rest
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        if !word.is_empty() {
            return word;
        }
    }
    if let Some(n) = a.name.strip_prefix("memcpy kind ") {
        let cupti = [
            "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH",
            "PtoP",
        ];
        if let Some(k) = n.parse::<usize>().ok().and_then(|i| cupti.get(i)) {
            return (*k).to_owned();
        }
    }
    "unknown".to_owned()
}

/// `bytes / ns` in MB/s (`bytes × 1000 / ns`), rounded half up; `None` for no time.
fn mb_per_s(bytes: u128, ns: i128) -> Option<u128> {
    let ns = u128::try_from(ns).ok().filter(|&n| n > 0)?;
    Some((bytes * 2000 + ns) / (2 * ns))
}

/// The bandwidth of every kind of copy and set, by device then kind.
pub fn bandwidth_rows(trace: &Trace) -> Vec<BandwidthRow> {
    let mut groups: BTreeMap<(i64, String), Vec<&Activity>> = BTreeMap::new();
    for a in &trace.activities {
        if a.kind != ActivityKind::Kernel {
            groups.entry((a.device, kind_of(a))).or_default().push(a);
        }
    }
    groups
        .into_iter()
        .map(|((device, kind), list)| row(device, kind, &list))
        .collect()
}

fn row(device: i64, kind: String, list: &[&Activity]) -> BandwidthRow {
    let len = |a: &Activity| i128::from(a.end) - i128::from(a.start);
    let missing = list.iter().filter(|a| a.bytes.is_none()).count();
    let zero_length = list.iter().filter(|a| a.end == a.start).count() as u64;
    let timed: Vec<(u128, i128)> = list
        .iter()
        .filter(|a| a.end > a.start)
        .filter_map(|a| Some((u128::from(a.bytes?), len(a))))
        .collect();
    let bytes: u128 = list.iter().filter_map(|a| a.bytes).map(u128::from).sum();
    let unknown_why = if missing > 0 {
        Some(format!(
            "{missing} of {} record no byte count (Kineto `args.bytes`, Nsight Systems `bytes`)",
            list.len()
        ))
    } else if timed.is_empty() {
        Some("every one has zero duration: bytes in no time".to_owned())
    } else {
        None
    };
    let known = unknown_why.is_none();
    let peak = timed
        .iter()
        .max_by(|x, y| (x.0 * y.1 as u128).cmp(&(y.0 * x.1 as u128)))
        .and_then(|&(b, ns)| mb_per_s(b, ns));
    BandwidthRow {
        device: format!("gpu{device}"),
        kind,
        count: list.len() as u64,
        bytes: (missing == 0).then_some(bytes),
        total_ns: list.iter().map(|a| len(a)).sum(),
        busy_ns: crate::interval_set::IntervalSet::from_pairs(
            list.iter().map(|a| (a.start, a.end)),
        )
        .measure_ns(),
        mb_per_s: known
            .then(|| {
                mb_per_s(
                    timed.iter().map(|t| t.0).sum(),
                    timed.iter().map(|t| t.1).sum(),
                )
            })
            .flatten(),
        peak_copy_mb_per_s: known.then_some(peak).flatten(),
        zero_length,
        unknown_why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(name: &str, kind: ActivityKind, start: i64, end: i64, bytes: Option<u64>) -> Activity {
        Activity {
            kind,
            name: name.into(),
            device: 0,
            stream: 7,
            start,
            end,
            correlation: None,
            external: None,
            copy: None,
            collective: None,
            bytes,
        }
    }

    /// The module's drawing: 4 MB and 2 MB in 1 ms each; a zero-length set; a nsys copy.
    #[test]
    fn mean_and_peak_rates_by_kind() {
        let ms = 1_000_000;
        let trace = Trace {
            activities: vec![
                copy(
                    "Memcpy HtoD (Pinned -> Device)",
                    ActivityKind::Memcpy,
                    0,
                    ms,
                    Some(4_000_000),
                ),
                copy(
                    "Memcpy HtoD (Pinned -> Device)",
                    ActivityKind::Memcpy,
                    2 * ms,
                    3 * ms,
                    Some(2_000_000),
                ),
                copy("Memset (Device)", ActivityKind::Memset, 5, 5, Some(64)),
                copy("Memset (Device)", ActivityKind::Memset, 10, 13, Some(1)),
                copy("memcpy kind 2", ActivityKind::Memcpy, 0, 10, None),
            ],
            ..Trace::default()
        };
        let rows = bandwidth_rows(&trace);
        let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["DtoH", "HtoD", "Memset"]);
        let htod = &rows[1];
        assert_eq!(
            (htod.count, htod.bytes, htod.total_ns, htod.busy_ns),
            (2, Some(6_000_000), 2 * ms as i128, 2 * ms as i128)
        );
        assert_eq!(
            (htod.mb_per_s, htod.peak_copy_mb_per_s),
            (Some(3_000), Some(4_000))
        );
        // 1 byte in 3 ns = 333.33 MB/s → 333; the zero-length set is left out, counted.
        let set = &rows[2];
        assert_eq!(
            (set.mb_per_s, set.zero_length, set.bytes),
            (Some(333), 1, Some(65))
        );
        let dtoh = &rows[0];
        assert_eq!((dtoh.mb_per_s, dtoh.bytes), (None, None));
        assert!(dtoh
            .unknown_why
            .as_deref()
            .unwrap()
            .starts_with("1 of 1 record no byte count"));
    }

    #[test]
    fn rates_round_half_up() {
        // 1 byte in 2,000 ns = 0.5 MB/s → 1; 3 bytes in 2,000 ns = 1.5 → 2.
        assert_eq!(mb_per_s(1, 2_000), Some(1));
        assert_eq!(mb_per_s(3, 2_000), Some(2));
        assert_eq!(mb_per_s(1, 0), None);
    }
}

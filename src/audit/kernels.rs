//! The kernel breakdown: per device, stream and name, how often an activity ran and for how
//! long — the table a performance engineer reads first (HTA's `get_gpu_kernel_breakdown`,
//! nsys's `cuda_gpu_kern_sum`), exact in integer ns.
//!
//! Every GPU activity of the trace (kernels, copies, sets) is in exactly one row, so the
//! counts add up to the trace's activities and the totals to their summed durations. A
//! row's `total_ns` is a **sum** of durations: activities of one row that overlap (concurrent
//! launches of one kernel on one stream are rare, but real) count once each, as in every
//! peer's table. `share_of_busy` is the row's total over the device's **busy time** (the
//! union of all its activities, SPEC §3) in tenths of a percent; since kernels on different
//! streams overlap, the shares of one device can add up to more than 100 %, and the table's
//! footer says when they do.
//!
//! A total or busy time past 64-bit ns is **unknown** (`overflow`), as the engine's verdicts
//! say: `total_ns` keeps the exact sum, but the mean and the share computed from an unknown
//! total, and the share of every row of a device whose busy time is unknown, are `null` with
//! the reason in `unknown_why` (review D10: a 100.0 % share of an unknown busy time is no
//! claim).
//!
//! ```text
//! gpu0-s7:  [gemm===)[relu=)[gemm===)      gemm: count 2, total 2 × 30 = 60, min 30, max 30
//! gpu0-s20:      [nccl:all_reduce=======)  busy(gpu0) = |∪| ; shares over that union
//! ```
//!
//! Rows are sorted by total, largest first (ties: device, stream, name). Cost: O(n log n).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::trace::model::{Trace, WorkClass};

/// One row: the activities of one name on one stream of one device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelRow {
    /// The activity's name, as the trace records it.
    pub name: String,
    /// Compute, communication or memory.
    pub class: WorkClass,
    /// `gpu0`.
    pub device: String,
    /// `gpu0-s7`.
    pub stream: String,
    /// How many activities.
    pub count: u64,
    /// Σ durations, ns (`i128`: the sum of 64-bit durations, or one duration spanning the whole
    /// 64-bit range, need not fit in 64 bits).
    pub total_ns: i128,
    /// `total_ns / count`, rounded to the nearest ns (halves up): the one rounded figure;
    /// `None` when `total_ns` is unknown (past 64-bit ns).
    pub mean_ns: Option<i128>,
    /// The shortest, ns.
    pub min_ns: i128,
    /// The longest, ns.
    pub max_ns: i128,
    /// `total_ns` over the device's busy time (union of its activities), in tenths of a
    /// percent, rounded half up; `None` when the device was never busy, or when `total_ns` or
    /// the device's busy time is unknown (past 64-bit ns: `unknown_why` says which).
    pub share_of_busy_permille: Option<i64>,
    /// Why the mean or the share is unknown, when one is (the verdict reason `overflow` and
    /// the total it comes from); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_why: Option<String>,
}

/// Whether a total is known: the engine answers `unknown (overflow)` for a duration that does
/// not fit in `i64` nanoseconds, and so does every figure computed from one.
pub(crate) fn known(ns: i128) -> bool {
    i64::try_from(ns).is_ok()
}

/// A row's mean and share of busy time, each only when every total it is computed from is
/// known (review D10), and why not otherwise: the one rule of the kernel and op tables.
pub(crate) struct MeanAndShare {
    /// `total / count`, rounded to the nearest ns (halves up).
    pub(crate) mean_ns: Option<i128>,
    /// `total` over the busy time, in tenths of a percent, rounded half up.
    pub(crate) share_of_busy_permille: Option<i64>,
    /// Why the mean or the share is unknown, when one is.
    pub(crate) unknown_why: Option<String>,
}

/// [`MeanAndShare`] of a row of `count` items summing to `total` ns, on a device whose busy
/// time (named `busy_name` in the reason, e.g. "gpu0's busy time") is `busy`.
pub(crate) fn mean_and_share(
    total: i128,
    count: u64,
    busy: Option<i128>,
    busy_name: &str,
) -> MeanAndShare {
    let count = i128::from(count.max(1));
    let overflow = crate::verdict::Reason::Overflow;
    let unknown_why = if !known(total) {
        Some(format!(
            "{overflow}: the row's total ({total} ns) does not fit in 64-bit ns, so neither does what is computed from it"
        ))
    } else if busy.is_some_and(|b| !known(b)) {
        Some(format!(
            "{overflow}: {busy_name} ({} ns) does not fit in 64-bit ns, so no share of it is known",
            busy.unwrap_or_default()
        ))
    } else {
        None
    };
    MeanAndShare {
        mean_ns: known(total).then(|| (2 * total + count) / (2 * count)),
        share_of_busy_permille: busy
            .filter(|&b| b > 0 && known(b) && known(total))
            .and_then(|b| i64::try_from((total * 2000 + b) / (2 * b)).ok()),
        unknown_why,
    }
}

/// Fills `row`'s mean and share from its total and its device's `busy` time
/// ([`mean_and_share`]).
fn derive_mean_and_share(row: &mut KernelRow, busy: Option<i128>) {
    let derived = mean_and_share(
        row.total_ns,
        row.count,
        busy,
        &format!("{}'s busy time", row.device),
    );
    row.mean_ns = derived.mean_ns;
    row.share_of_busy_permille = derived.share_of_busy_permille;
    row.unknown_why = derived.unknown_why;
}

/// The kernel table of `trace`, every activity in one row, largest total first.
pub fn kernel_rows(trace: &Trace) -> Vec<KernelRow> {
    let mut busy: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    let mut rows: BTreeMap<(i64, i64, &str), KernelRow> = BTreeMap::new();
    for a in &trace.activities {
        busy.entry(a.device).or_default().push((a.start, a.end));
        let len = i128::from(a.end) - i128::from(a.start);
        let row = rows
            .entry((a.device, a.stream, &*a.name))
            .or_insert_with(|| KernelRow {
                name: a.name.to_string(),
                class: a.class(),
                device: format!("gpu{}", a.device),
                stream: format!("gpu{}-s{}", a.device, a.stream),
                count: 0,
                total_ns: 0,
                mean_ns: None,
                min_ns: len,
                max_ns: len,
                share_of_busy_permille: None,
                unknown_why: None,
            });
        row.count += 1;
        row.total_ns += len;
        row.min_ns = row.min_ns.min(len);
        row.max_ns = row.max_ns.max(len);
    }
    let busy: BTreeMap<i64, i128> = busy
        .into_iter()
        .map(|(d, pieces)| {
            let union = crate::interval_set::IntervalSet::from_pairs(pieces).measure_ns();
            (d, union)
        })
        .collect();
    let mut out: Vec<KernelRow> = rows
        .into_iter()
        .map(|((device, _, _), mut row)| {
            derive_mean_and_share(&mut row, busy.get(&device).copied());
            row
        })
        .collect();
    out.sort_by(|x, y| {
        y.total_ns
            .cmp(&x.total_ns)
            .then_with(|| (&x.device, &x.stream, &x.name).cmp(&(&y.device, &y.stream, &y.name)))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::{Activity, ActivityKind};

    fn act(name: &str, stream: i64, start: i64, end: i64) -> Activity {
        Activity {
            kind: ActivityKind::Kernel,
            name: name.into(),
            device: 0,
            stream,
            start,
            end,
            correlation: None,
            external: None,
            copy: None,
            collective: None,
            bytes: None,
        }
    }

    #[test]
    fn rows_count_every_activity_once_and_share_the_busy_union() {
        // The drawing in the module doc: gemm twice and relu on s7, one all-reduce on s20.
        let trace = Trace {
            activities: vec![
                act("gemm", 7, 0, 30),
                act("relu", 7, 30, 40),
                act("gemm", 7, 40, 70),
                act("ncclAllReduce", 20, 10, 60),
            ],
            ..Trace::default()
        };
        let rows = kernel_rows(&trace);
        let names: Vec<(&str, u64, i128)> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.count, r.total_ns))
            .collect();
        assert_eq!(
            names,
            vec![("gemm", 2, 60), ("ncclAllReduce", 1, 50), ("relu", 1, 10)]
        );
        // Busy is the union [0, 70): 70 ns. gemm 60/70 = 857.1‰ → 857; nccl 50/70 → 714.
        assert_eq!(rows[0].share_of_busy_permille, Some(857));
        assert_eq!(rows[1].share_of_busy_permille, Some(714));
        assert_eq!(rows[1].class, WorkClass::Communication);
        assert_eq!(
            (rows[0].min_ns, rows[0].max_ns, rows[0].mean_ns),
            (30, 30, Some(30))
        );
        assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), 4);
    }

    #[test]
    fn the_mean_is_rounded_half_up_and_said_to_be() {
        let trace = Trace {
            activities: vec![act("k", 7, 0, 1), act("k", 7, 5, 7)],
            ..Trace::default()
        };
        assert_eq!(kernel_rows(&trace)[0].mean_ns, Some(2)); // 3 / 2 = 1.5 → 2
    }

    #[test]
    fn a_total_or_busy_time_past_64_bits_gives_no_mean_and_no_share() {
        // review D10: a kernel over i64::MIN..i64::MAX printed mean 2049638230.412184821 s and
        // share 100.0 % of an unknown busy time, the other rows 0.0 %
        let trace = Trace {
            activities: vec![
                act("wide", 7, i64::MIN, i64::MAX),
                act("wide", 7, 0, 10),
                act("small", 7, 10, 40),
                act("other", 8, 0, 5),
            ],
            ..Trace::default()
        };
        let rows = kernel_rows(&trace);
        let whole = i128::from(i64::MAX) - i128::from(i64::MIN);
        let cells: Vec<(&str, i128, Option<i128>, Option<i64>)> = rows
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.total_ns,
                    r.mean_ns,
                    r.share_of_busy_permille,
                )
            })
            .collect();
        assert_eq!(
            cells,
            vec![
                ("wide", whole + 10, None, None),
                ("small", 30, Some(30), None),
                ("other", 5, Some(5), None),
            ]
        );
        assert_eq!(
            rows[0].unknown_why.as_deref(),
            Some("overflow: the row's total (18446744073709551625 ns) does not fit in 64-bit ns, so neither does what is computed from it")
        );
        assert_eq!(
            rows[1].unknown_why.as_deref(),
            Some("overflow: gpu0's busy time (18446744073709551615 ns) does not fit in 64-bit ns, so no share of it is known")
        );
        // One nanosecond inside the edge, every figure is known again.
        let trace = Trace {
            activities: vec![act("edge", 7, 0, i64::MAX), act("tiny", 8, 0, 1)],
            ..Trace::default()
        };
        let rows = kernel_rows(&trace);
        assert_eq!(rows[0].mean_ns, Some(i128::from(i64::MAX)));
        assert_eq!(rows[0].share_of_busy_permille, Some(1000));
        assert_eq!(rows[1].share_of_busy_permille, Some(0));
        assert!(rows.iter().all(|r| r.unknown_why.is_none()));
    }

    use proptest::prelude::*;

    /// A time near zero or near either edge of `i64`.
    fn time() -> impl Strategy<Value = i64> {
        prop_oneof![
            -1_000i64..1_000,
            (0i64..1_000).prop_map(|d| i64::MIN + d),
            (0i64..1_000).prop_map(|d| i64::MAX - d),
        ]
    }

    proptest! {
        /// As the import summary's cells (`summary_cells_agree_with_the_verdicts_of_their_operands`):
        /// a row's mean is a number only when its total is known, its share only when its total
        /// and its device's busy time are, and `unknown_why` is there exactly when either is not.
        #[test]
        fn kernel_figures_agree_with_the_verdicts_of_their_operands(
            spans in proptest::collection::vec((time(), time(), 0i64..3, 0i64..2), 1..6),
        ) {
            let activities: Vec<Activity> = spans
                .iter()
                .map(|&(a, b, name, stream)| {
                    let mut x = act(["a", "b", "c"][name as usize], stream, a.min(b), a.max(b));
                    x.device = stream % 2;
                    x
                })
                .collect();
            let trace = Trace { activities, ..Trace::default() };
            for row in kernel_rows(&trace) {
                let device: i64 = row.device[3..].parse().unwrap();
                let busy = crate::interval_set::IntervalSet::from_pairs(
                    trace.activities.iter().filter(|x| x.device == device).map(|x| (x.start, x.end)),
                )
                .measure_ns();
                let total_known = known(row.total_ns);
                prop_assert_eq!(row.mean_ns.is_some(), total_known, "{:?}", row);
                prop_assert_eq!(
                    row.share_of_busy_permille.is_some(),
                    busy > 0 && total_known && known(busy),
                    "{:?} busy {}", row, busy
                );
                prop_assert_eq!(row.unknown_why.is_some(), !total_known || !known(busy), "{:?}", row);
            }
        }
    }
}

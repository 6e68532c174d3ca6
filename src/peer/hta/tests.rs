//! The synthetic traces below were also run through HTA 0.5.0 itself
//! (`/work/shared/tools/hta_temporal.py`, and `get_temporal_breakdown()` with
//! `Trace._filter_irrelevant_gpu_kernels` or the `cuda_sync` rows patched out, on
//! 2026-11-30): each test quotes HTA's numbers in µs.
use super::text::{micros, signed_micros};
use super::*;
use crate::trace::kineto::tap::EventTap as _;

fn trace(events: &[String]) -> HtaTrace {
    let text = format!("{{\"traceEvents\": [{}]}}", events.join(","));
    both_ways(&text)
}

/// HTA's view of `text` as the command's own pass gathers it ([`HtaTap`] on the fast path),
/// checked equal to the whole-text reader's.
fn both_ways(text: &str) -> HtaTrace {
    let options = ImportOptions::default();
    let whole = HtaTrace::from_text(text, &options).unwrap();
    let mut tap = HtaTap::new(&options);
    let read = crate::trace::kineto::audit_split(text.as_bytes(), &options, None, &mut tap);
    assert!(matches!(read, Some(Ok(_))), "the fast path reads {text}");
    let tapped = tap.finish().expect("not abandoned").unwrap();
    assert_eq!(format!("{tapped:?}"), format!("{whole:?}"));
    whole
}

#[test]
fn the_tap_reads_a_bare_array_and_the_rank_as_the_whole_text_does() {
    let events = [kernel("a", "0.5", "10", 1), launch("0", 1)].join(",");
    let t = both_ways(&format!("[{events}]"));
    assert_eq!((t.rank, t.rows.len(), t.rounds()), (None, 2, true));
    let t = both_ways(&format!(
        r#"{{"distributedInfo": {{"rank": 3}}, "traceEvents": [{events}]}}"#
    ));
    assert_eq!((t.rank, t.rows.len()), (Some(3), 2));
}

#[test]
fn a_tap_the_pass_abandoned_says_so_and_one_without_events_is_refused() {
    let options = ImportOptions::default();
    let mut tap = HtaTap::new(&options);
    tap.event(0, kernel("a", "0", "10", 1).as_bytes());
    tap.abandon();
    assert!(tap.finish().is_none());
    let err = HtaTap::new(&options).finish().unwrap().unwrap_err();
    assert_eq!(
        (err.path.as_str(), err.code),
        ("traceEvents", "missing-field")
    );
}

fn kernel(name: &str, ts: &str, dur: &str, corr: i64) -> String {
    format!(
        r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#
    )
}

fn launch(ts: &str, corr: i64) -> String {
    format!(
        r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{ts},"dur":1,"args":{{"correlation":{corr}}}}}"#
    )
}

fn step(n: u32, ts: &str, dur: &str, cat: &str) -> String {
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"ProfilerStep#{n}","pid":1,"tid":1,"ts":{ts},"dur":{dur},"args":{{}}}}"#
    )
}

fn nums(b: Breakdown) -> (i64, i64, i64, i64) {
    (b.kernel_time_ns, b.idle_ns, b.compute_ns, b.non_compute_ns)
}

/// ```text
/// 0    10   20   30   40
/// [a==)     [n==)
///   [b====)
/// ```
/// merged busy 0..15 and 20..25 = 20 µs; span 25; compute a ∪ b = 15; nccl 5.
/// HTA: kernel time 25, idle 5, compute 15, non-compute 5.
#[test]
fn overlapping_rows_merge_and_nccl_is_not_compute() {
    let t = trace(&[
        kernel("a", "0", "10", 1),
        kernel("b", "5", "10", 2),
        kernel("ncclKernel_AllReduce", "20", "5", 3),
        launch("0", 1),
        launch("0", 2),
        launch("0", 3),
    ]);
    let b = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
    assert_eq!(nums(b), (25_000, 5_000, 15_000, 5_000));
    assert!(!t.rounds() && !t.filters());
}

/// Steps at 0 and 100 (the GPU-side annotation of step 2 at 150 is the largest ts, so
/// it is the cut): the kernel launched at 120 stays, the one launched at 160 goes.
/// HTA: 120, 100, 20, 0; with its filter patched out: 160, 130, 30, 0.
#[test]
fn the_cut_is_the_largest_profiler_step_ts_gpu_annotations_included() {
    let t = trace(&[
        step(1, "0", "100", "user_annotation"),
        step(2, "100", "100", "user_annotation"),
        step(2, "150", "60", "gpu_user_annotation"),
        launch("10", 1),
        launch("120", 2),
        launch("160", 3),
        kernel("a", "20", "10", 1),
        kernel("b", "130", "10", 2),
        kernel("c", "170", "10", 3),
    ]);
    assert!(t.filters());
    assert_eq!(t.last_step_start(&HtaOptions::HTA_DEFAULTS), Some(150_000));
    let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
    assert_eq!(nums(hta), (120_000, 100_000, 20_000, 0));
    let exact = t.breakdown(&HtaOptions::EXACT).unwrap();
    assert_eq!(nums(exact), (160_000, 130_000, 30_000, 0));
    let c = t.compare(HtaOptions::HTA_DEFAULTS);
    let filter = &c.assumptions[0];
    assert!(filter.applies);
    assert_eq!(filter.delta.unwrap().kernel_time_ns, -40_000);
    assert!(filter.why.contains("150 µs; 1 rows"), "{}", filter.why);
}

/// A kernel whose correlation no host row carries is dropped only when HTA filters.
/// HTA: without steps 30, 10, 20, 0; with two steps 10, 0, 10, 0.
#[test]
fn uncorrelated_rows_go_only_with_the_filter() {
    let mut events = vec![
        launch("10", 1),
        kernel("a", "20", "10", 1),
        kernel("orphan", "40", "10", 99),
    ];
    let one_step = trace(&events).breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
    assert_eq!(one_step.rows, 2, "no steps: nothing dropped");
    assert_eq!(nums(one_step), (30_000, 10_000, 20_000, 0));
    events.push(step(1, "0", "100", "cpu_op"));
    events.push(step(2, "100", "100", "cpu_op"));
    let t = trace(&events);
    let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
    assert_eq!((hta.rows, nums(hta)), (1, (10_000, 0, 10_000, 0)));
    let kept = t
        .breakdown(&HtaOptions::HTA_DEFAULTS.without(Assumption::UncorrelatedDropped))
        .unwrap();
    assert_eq!((kept.rows, kept.kernel_time_ns), (2, 30_000));
}

/// ```text
/// µs        10   11        15        30   31
/// a   10.4 [=====|=========)15.9            → [11, 15): 4
/// b                               30.2 [) 30.7 → [31, 30): reversed, −1
/// ```
/// HTA 0.5.0 on these events: kernel time 19, idle 16, compute 3; with
/// `HTA_DISABLE_NS_ROUNDING=1`: 20.3, 14.3 (float noise aside), 6.
#[test]
fn rounding_ceils_starts_and_floors_ends_and_can_reverse() {
    let t = trace(&[
        kernel("a", "10.4", "5.5", 1),
        kernel("b", "30.2", "0.5", 2),
        launch("0", 1),
        launch("0", 2),
    ]);
    assert!(t.rounds());
    let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
    assert_eq!(nums(hta), (19_000, 16_000, 3_000, 0));
    assert_eq!(hta.reversed_rows, 1);
    assert!(!hta.hta_fails());
    let exact = t.breakdown(&HtaOptions::EXACT).unwrap();
    assert_eq!(nums(exact), (20_300, 14_300, 6_000, 0));
}

/// a → [11, 11), b → [31, 30): busy 0 − 1 < 0, so idle > kernel time and HTA 0.5.0
/// stops with `AssertionError` (`assert idle_time <= kernel_time`); we say so.
#[test]
fn a_negative_busy_time_is_where_hta_fails_its_assertion() {
    let t = trace(&[
        kernel("a", "10.4", "1.5", 1),
        kernel("b", "30.2", "0.5", 2),
        launch("0", 1),
        launch("0", 2),
    ]);
    let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
    assert_eq!((hta.kernel_time_ns, hta.idle_ns), (19_000, 20_000));
    assert!(hta.hta_fails());
    assert!(t
        .compare(HtaOptions::HTA_DEFAULTS)
        .to_text()
        .contains("AssertionError"));
}

/// `Stream Wait Event` (stream 7) at 20 and `Context Sync` (stream 4294967295) at 30 are
/// busy; `Event Sync` on stream −1 is not. HTA: 35, 15, 15, 5; without the `cuda_sync`
/// rows: 10, 0, 10, 0.
#[test]
fn sync_rows_with_a_stream_are_busy_and_wait_event_is_compute() {
    let sync = |name: &str, stream: i64, ts: &str| {
        format!(
            r#"{{"ph":"X","cat":"cuda_sync","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":5,"args":{{"stream":{stream},"correlation":5}}}}"#
        )
    };
    let t = trace(&[
        launch("0", 1),
        launch("0", 5),
        kernel("a", "0", "10", 1),
        sync("Stream Wait Event", 7, "20"),
        sync("Context Sync", 4294967295, "30"),
        sync("Event Sync", -1, "50"),
    ]);
    let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
    assert_eq!(nums(hta), (35_000, 15_000, 15_000, 5_000));
    let exact = t.breakdown(&HtaOptions::EXACT).unwrap();
    assert_eq!(nums(exact), (10_000, 0, 10_000, 0));
}

#[test]
fn hta_compute_classes_follow_its_regexes() {
    assert!(is_hta_compute("void cudnn::bn_fw"));
    assert!(!is_hta_compute("ncclKernel_AllReduce_RING_LL_Sum_float"));
    assert!(!is_hta_compute("ncclDevKernel_SendRecv"));
    assert!(is_hta_compute("nccl_helper")); // no `Kernel` after `nccl`
    assert!(!is_hta_compute("Memcpy DtoH (Device -> Pinned)"));
    assert!(!is_hta_compute("void at::native::xMemcpy"));
    assert!(!is_hta_compute("Memset (Device)"));
    assert!(is_hta_compute("void fooMemset")); // Memset only at the start
    assert!(!is_hta_compute("Stream Sync"));
    assert!(is_hta_compute("Stream Wait Event"));
    assert!(is_hta_compute("line\nSync")); // `.` stops at a newline
}

#[test]
fn micros_are_exact_and_grouped() {
    assert_eq!(micros(338_781_000), "338,781");
    assert_eq!(micros(336_419_714), "336,419.714");
    assert_eq!(micros(-1_500), "-1.5");
    assert_eq!(signed_micros(2_000), "+2");
    assert_eq!(micros(0), "0");
}

#[test]
fn an_empty_trace_has_no_breakdown() {
    let c = trace(&[]).compare(HtaOptions::HTA_DEFAULTS);
    assert!(c.hta_defaults.is_none() && c.exact.is_none() && c.interaction.is_none());
    assert!(c.to_text().contains("no rows"));
}

/// Times at both ends of the i64 range: clamped numbers, no overflow panic.
#[test]
fn extreme_times_saturate_instead_of_panicking() {
    let t = trace(&[
        kernel("a", "-9223372036854775", "1", 1),
        kernel("b", "9223372036854774", "1.5", 2),
        launch("0", 1),
        launch("0", 2),
    ]);
    let c = t.compare(HtaOptions::HTA_DEFAULTS);
    let b = c.hta_defaults.unwrap();
    assert_eq!(b.kernel_time_ns, i64::MAX);
    assert!(c.to_text().contains("HTA defaults"));
}

mod merge_against_the_algebra {
    use super::super::merge;
    use crate::interval::{analyze, Interval};
    use crate::units::Nanos;
    use proptest::prelude::*;

    proptest! {
        /// Without reversed rows HTA's merge is a union: its busy time and span are the
        /// interval algebra's union and extent, whatever the order of the rows.
        #[test]
        fn hta_merge_is_the_union_of_forward_rows(
            rows in prop::collection::vec((-50i64..50, 0i64..30), 1..40)
        ) {
            let mut hta: Vec<(i64, i64, usize)> = rows
                .iter()
                .enumerate()
                .map(|(i, &(s, d))| (s, s + d, i))
                .collect();
            let intervals: Vec<Interval> = rows
                .iter()
                .map(|&(s, d)| Interval::new(Nanos::new(s), Nanos::new(s + d)).unwrap())
                .collect();
            let algebra = analyze(&intervals);
            let (span, busy) = merge(&mut hta).unwrap();
            let extent = algebra.extent.unwrap();
            prop_assert_eq!(i128::from(busy), algebra.union_ns);
            prop_assert_eq!(span, extent.end().as_i64() - extent.start().as_i64());
        }
    }
}

//! `worksheet import --compat hta` against HTA itself, on every real Kineto trace in
//! `tests/data/traces/` (the six of `/work/shared/traces/hta` and the two 2021 traces).
//!
//! Provenance of every HTA number below: `holistictraceanalysis==0.5.0` (pip, in a venv,
//! Python 3.11, pandas 3.1.1, numpy 2.4.6), run on 2026-11-30 as
//! `python /work/shared/tools/hta_temporal.py TRACE RANK` (HTA's defaults), with
//! `HTA_DISABLE_NS_ROUNDING=1` (rounding off), and through a driver that patches one
//! default out before calling `get_temporal_breakdown()`: `Trace._filter_irrelevant_gpu_kernels`
//! replaced by a no-op (the last-step filter and the uncorrelated drop off), or the
//! `cat == "cuda_sync"` rows removed from the rank's frame (sync rows off). HTA prints µs;
//! with rounding on they are whole µs, with it off they carry float noise (quoted as printed).
//! Here everything is integer ns: HTA's µs × 1000.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use worksheet::import::ImportOptions;
use worksheet::peer::hta::{compat_path, Assumption, Breakdown, HtaCompat, HtaOptions};

fn trace(name: &str) -> PathBuf {
    Path::new("tests/data/traces").join(name)
}

fn compat(name: &str) -> HtaCompat {
    compat_path(
        &trace(name),
        &ImportOptions::default(),
        HtaOptions::HTA_DEFAULTS,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `(kernel time, idle, compute, non-compute)` in µs, as HTA prints them.
fn us(b: &Breakdown) -> (i64, i64, i64, i64) {
    let whole = |ns: i64| {
        assert_eq!(ns % 1000, 0, "{ns} ns is not whole µs");
        ns / 1000
    };
    (
        whole(b.kernel_time_ns),
        whole(b.idle_ns),
        whole(b.compute_ns),
        whole(b.non_compute_ns),
    )
}

fn defaults(c: &HtaCompat) -> (i64, i64, i64, i64) {
    us(c.hta_defaults.as_ref().expect("HTA has rows"))
}

/// HTA's defaults with `a` off, from our defaults and the reported delta.
fn without(c: &HtaCompat, a: Assumption) -> (i64, i64, i64, i64) {
    let d = c.hta_defaults.expect("rows");
    let e = c
        .assumptions
        .iter()
        .find(|e| e.assumption == a)
        .and_then(|e| e.delta)
        .expect("a delta");
    (
        d.kernel_time_ns - e.kernel_time_ns,
        d.idle_ns - e.idle_ns,
        d.compute_ns - e.compute_ns,
        d.non_compute_ns - e.non_compute_ns,
    )
}

fn as_ns((a, b, c, d): (i64, i64, i64, i64)) -> (i64, i64, i64, i64) {
    (a * 1000, b * 1000, c * 1000, d * 1000)
}

/// The anchor. HTA defaults: idle 338781, compute 75169, non-compute 21636, kernel
/// time 435586 µs. `HTA_DISABLE_NS_ROUNDING=1`: kernel time 435587.5616796875, idle
/// 336419.7146875525, compute 76935.82800000906, non-compute 22232.018992125988. Filter
/// patched out: 660550, 506512, 113012, 41026. Both off (rounding off, last step kept):
/// 660551.0056328125, 503050.9914063759, 115655.84700000286, 41844.167226433754.
#[test]
fn nccl_data_matches_hta_defaults_and_each_assumption() {
    let c = compat("nccl_data.json.gz");
    assert_eq!(c.rank, Some(0));
    assert_eq!(defaults(&c), (435_586, 338_781, 75_169, 21_636));
    assert_eq!(
        without(&c, Assumption::UsRounding),
        (435_587_561, 336_419_714, 76_935_828, 22_232_019)
    );
    let nofilter = c.hta_defaults.unwrap().kernel_time_ns
        - c.assumptions[0].delta.unwrap().kernel_time_ns
        - c.assumptions[1].delta.unwrap().kernel_time_ns;
    assert_eq!(
        nofilter, 660_550_000,
        "no uncorrelated rows: the filter is all of it"
    );
    assert_eq!(
        without(&c, Assumption::LastStepFilter),
        as_ns((660_550, 506_512, 113_012, 41_026))
    );
    let exact = c.exact.unwrap();
    assert_eq!(
        (
            exact.kernel_time_ns,
            exact.idle_ns,
            exact.compute_ns,
            exact.non_compute_ns
        ),
        (660_551_005, 503_050_991, 115_655_847, 41_844_167)
    );
    assert_eq!(c.assumptions[0].delta.unwrap().rows, -1258);
    assert!(c.assumptions[2].applies, "ts has decimals");
    assert!(!c.assumptions[3].applies, "no cuda_sync rows");
    // The assumptions interact: rounding shifts the cut and the rows it keeps.
    let i = c.interaction.unwrap();
    assert_eq!((i.kernel_time_ns, i.idle_ns), (556, 1_099_723));
}

/// HTA defaults: 600058, 321378, 106252, 172428. Filter off: 1222847, 675191, 210320,
/// 337336 (integer ts: HTA does not round, so that is also exact).
#[test]
fn sampled_rank_0_matches_hta() {
    let c = compat("sampled_rank-0.json.gz");
    assert_eq!(defaults(&c), (600_058, 321_378, 106_252, 172_428));
    assert_eq!(
        us(&c.exact.unwrap()),
        (1_222_847, 675_191, 210_320, 337_336)
    );
    assert!(!c.assumptions[2].applies, "integer ts: no rounding");
}

/// HTA defaults: 600674, 328671, 135548, 136455. Last step kept (HTA's
/// `include_last_profiler_step=True`): 1231186, 651136, 271973, 308077.
#[test]
fn sampled_rank_1_matches_hta() {
    let c = compat("sampled_rank-1.json.gz");
    assert_eq!(c.rank, Some(1));
    assert_eq!(defaults(&c), (600_674, 328_671, 135_548, 136_455));
    assert_eq!(
        us(&c.exact.unwrap()),
        (1_231_186, 651_136, 271_973, 308_077)
    );
}

/// No ProfilerStep: HTA filters nothing. HTA defaults: 12996011, 12929684, 10637, 55690.
/// Without the 41 cuda_sync rows: 12920244, 12854103, 10630, 55511 — the final `Context
/// Sync` alone stretches HTA's span by 75.8 ms.
#[test]
fn alexnet_benchmark_counts_sync_rows_as_busy_like_hta() {
    let c = compat("benchmark_result_2869224_1695835535_trace.json.gz");
    assert_eq!(defaults(&c), (12_996_011, 12_929_684, 10_637, 55_690));
    assert!(!c.assumptions[0].applies && !c.assumptions[1].applies);
    assert_eq!(
        without(&c, Assumption::SyncRowsBusy),
        as_ns((12_920_244, 12_854_103, 10_630, 55_511))
    );
    assert_eq!(c.assumptions[3].delta.unwrap().rows, 41);
}

/// HTA defaults: 19506, 19132, 371, 3. Without cuda_sync rows: 19506, 19134, 369, 3: the
/// `Stream Wait Event` row on stream 24 counts as 2 µs of *compute* in HTA.
#[test]
fn event_sync_trace_stream_wait_event_is_hta_compute() {
    let c = compat("event_sync_trace.json.gz");
    assert_eq!(defaults(&c), (19_506, 19_132, 371, 3));
    assert_eq!(
        without(&c, Assumption::SyncRowsBusy),
        as_ns((19_506, 19_134, 369, 3))
    );
}

/// HTA defaults: 1396669, 643612, 496485, 256572. Last step kept: 1732965, 732352, 620516,
/// 380097 (integer ts, no sync rows: also exact).
#[test]
fn df_index_resolver_matches_hta() {
    let c = compat("df_index_resolver.json.gz");
    assert_eq!(c.rank, Some(1));
    assert_eq!(defaults(&c), (1_396_669, 643_612, 496_485, 256_572));
    assert_eq!(
        us(&c.exact.unwrap()),
        (1_732_965, 732_352, 620_516, 380_097)
    );
}

/// The 2021 traces (`tid: "stream 7"`, but `args.stream` is there, so HTA reads them).
/// HTA defaults: 830494, 327463, 492891, 10140 and 677173, 164699, 495912, 16562. Filter
/// patched out (integer ts, no sync rows: exact): 996477, 392919, 591532, 12026 and 801550,
/// 187137, 594868, 19545.
#[test]
fn traces_of_2021_match_hta() {
    let a = compat("worker0.1623143089861.pt.trace.json.gz");
    assert_eq!(defaults(&a), (830_494, 327_463, 492_891, 10_140));
    assert_eq!(us(&a.exact.unwrap()), (996_477, 392_919, 591_532, 12_026));
    let b = compat("worker0.1623212756351.pt.trace.json.gz");
    assert_eq!(defaults(&b), (677_173, 164_699, 495_912, 16_562));
    assert_eq!(us(&b.exact.unwrap()), (801_550, 187_137, 594_868, 19_545));
}

#[test]
fn import_compat_hta_prints_the_table_and_json() {
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .args([
            "import",
            "tests/data/traces/nccl_data.json.gz",
            "--compat",
            "hta",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("| HTA defaults           | 435,586            | 338,781     | 75,169      | 21,636      | 2516  |"),
        "{text}"
    );
    assert!(text.contains("Δ last-step-filter"), "{text}");
    // The section as users see it, from its title to its last line.
    let start = text.find("--compat hta:").expect("the section");
    let end = text[start..]
        .find("  Δ = HTA")
        .map(|i| start + i + text[start + i..].find('\n').unwrap_or(0))
        .expect("the closing line");
    insta::assert_snapshot!("compat_hta_nccl_data", &text[start..end]);
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .args([
            "import",
            "tests/data/traces/event_sync_trace.json.gz",
            "--compat",
            "hta",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hta = &json["compat_hta"];
    assert_eq!(hta["hta_version"], "0.5.0");
    assert_eq!(hta["hta_defaults"]["kernel_time_ns"], 19_506_000);
    assert_eq!(hta["assumptions"][3]["assumption"], "sync-rows-busy");
    assert!(json["sets"].is_array(), "the summary is still there");
}

/// HTA's own switch: `HTA_DISABLE_NS_ROUNDING=1 hta_temporal.py nccl_data.json.gz 0` prints
/// kernel time 435587.5616796875, idle 336419.7146875525, compute 76935.82800000906,
/// non-compute 22232.018992125988 µs.
#[test]
fn hta_disable_ns_rounding_is_honoured_like_hta() {
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .env("HTA_DISABLE_NS_ROUNDING", "1")
        .args([
            "import",
            "tests/data/traces/nccl_data.json.gz",
            "--compat",
            "hta",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hta = &json["compat_hta"]["hta_defaults"];
    let ns = |k: &str| hta[k].as_i64().unwrap();
    assert_eq!(
        (
            ns("kernel_time_ns"),
            ns("idle_ns"),
            ns("compute_ns"),
            ns("non_compute_ns")
        ),
        (435_587_561, 336_419_714, 76_935_828, 22_232_019)
    );
    assert_eq!(json["compat_hta"]["hta_options"]["us_rounding"], false);
    assert_eq!(json["compat_hta"]["assumptions"][2]["applies"], false);
}

#[test]
fn compat_hta_refuses_nsys_exports() {
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .args([
            "import",
            "tests/data/nsys/fuser_report1.sqlite",
            "--compat",
            "hta",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unsupported-format"), "{err}");
    assert!(err.contains("--compat hta"), "{err}");
}

/// `--compat hta` reads a real trace in the command's one pass (the tap is not abandoned),
/// and gives what HTA's own whole-text reader gives.
#[test]
fn real_traces_are_read_in_one_pass_as_the_whole_text_reader_reads_them() {
    use worksheet::peer::hta::{compat_path_whole, HtaTap};
    let options = ImportOptions::default();
    for name in [
        "nccl_data.json.gz",
        "sampled_rank-1.json.gz",
        "event_sync_trace.json.gz",
        "worker0.1623143089861.pt.trace.json.gz",
    ] {
        let mut tap = HtaTap::new(&options);
        worksheet::trace::open::read_audit_trace_tapped(&trace(name), &options, &mut tap)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let one_pass = tap
            .finish()
            .unwrap_or_else(|| panic!("{name}: the fast path gave up"))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .compare(HtaOptions::HTA_DEFAULTS);
        let whole = compat_path_whole(&trace(name), &options, HtaOptions::HTA_DEFAULTS).unwrap();
        assert_eq!(
            serde_json::to_string(&one_pass).unwrap(),
            serde_json::to_string(&whole).unwrap(),
            "{name}"
        );
        assert!(one_pass.hta_defaults.is_some(), "{name}");
    }
}

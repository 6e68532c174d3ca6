//! Checks the fuzz targets share: beyond "no panic", every error has a documented code
//! (never `internal`), accepted input survives its writer, and the interval identities of
//! SPEC §3 hold for every answer.

use worksheet::engine::{Outcome, Report};
use worksheet::error::InputError;
use worksheet::form::{format, RawForm};
use worksheet::interval::SetAnalysis;

/// Panics unless `err.code` is one of `codes` (so a new code is documented, and an importer
/// bug never hides behind an input error).
pub fn documented(err: &InputError, codes: &[&str]) {
    assert!(
        codes.contains(&err.code),
        "undocumented error code `{}`: {err}",
        err.code
    );
}

/// `sum = union + overlap` (the sweep's weighted overlap) and `span = union + gaps`.
pub fn identities(a: &SetAnalysis) {
    assert_eq!(a.sum_ns, a.union_ns + a.weighted_overlap_ns, "{a:?}");
    match a.span_ns() {
        Some(span) => assert_eq!(span, a.union_ns + a.gap_total_ns(), "{a:?}"),
        None => assert_eq!((a.count, a.sum_ns, a.union_ns), (0, 0, 0), "{a:?}"),
    }
}

/// The identities for every interval answer of `report`.
pub fn report_identities(report: &Report) {
    for answer in &report.answers {
        if let Outcome::Intervals(set) = &answer.outcome {
            for group in &set.per_clock {
                identities(&group.analysis);
            }
        }
    }
}

/// A form accepted from either reader is written as JSON and as CSV, and both read back
/// to a form that writes the same text again (the readers agree on everything a writer can
/// produce). Compared through the writers, because an empty section and an absent one are
/// the same form ("not answered").
pub fn form_round_trip(raw: &RawForm) {
    let json = format::to_json(raw, true);
    let csv = format::to_csv(raw);
    let from_json = format::parse_json(&json)
        .unwrap_or_else(|e| panic!("its JSON does not read back: {e}\n{json}"));
    let from_csv = format::parse_csv(&csv)
        .unwrap_or_else(|e| panic!("its CSV does not read back: {e}\n{csv}"));
    assert_eq!(format::to_json(&from_json, true), json, "JSON round trip");
    assert_eq!(format::to_csv(&from_json), csv, "JSON reader vs CSV writer");
    assert_eq!(format::to_csv(&from_csv), csv, "CSV round trip");
    assert_eq!(
        format::to_json(&from_csv, true),
        json,
        "CSV reader vs JSON writer"
    );
    worksheet::form::validate(from_json, "f").expect("the JSON read back validates");
    worksheet::form::validate(from_csv, "f").expect("the CSV read back validates");
}

/// Codes an import may fail with: Kineto's and Nsight Systems'.
pub fn import_codes() -> Vec<&'static str> {
    let mut codes = worksheet::import::IMPORT_ERROR_CODES.to_vec();
    codes.extend(worksheet::import::nsys::NSYS_ERROR_CODES);
    codes
}

/// After an import: the summary exists (an `Err` is an importer bug), its case loads, and
/// the identities hold for every answer.
pub fn imported(imported: &worksheet::import::Imported) {
    let summary = worksheet::import::summarize(imported, true)
        .unwrap_or_else(|e| panic!("internal: the imported case does not validate: {e}"));
    let _ = summary.to_text();
    let case = worksheet::case::load_case_str(&summary.case_json, "imported.json")
        .unwrap_or_else(|e| panic!("the written case does not load: {e}"));
    report_identities(&worksheet::engine::evaluate(&case));
}

/// Writes `bytes` to `name` in a scratch folder kept for the whole run (one folder per
/// process: a new one per input costs more than most inputs), removing what an earlier
/// input left beside it.
pub fn scratch_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let path = DIR
        .get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .join(name);
    // A new file, not the old one cut to nothing: ext4 writes a file truncated to zero back
    // to disk when it is closed (`auto_da_alloc`), which cost about a tenth of `ranks`' time
    // on a disk-backed TMPDIR (campaigns put TMPDIR on /dev/shm, where neither costs).
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `data` cut at its first NUL byte: the two inputs of a two-input target. Without a NUL,
/// the second is `None`.
pub fn split_two(data: &[u8]) -> (&[u8], Option<&[u8]>) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    }
}

/// The earliest and latest instant any record of `trace` names (activities, calls, host
/// ranges, steps, the window): every time an audit states lies within it.
pub fn trace_span(trace: &worksheet::trace::model::Trace) -> Option<i128> {
    let mut lo = i128::MAX;
    let mut hi = i128::MIN;
    let mut see = |s: i64, e: i64| {
        lo = lo.min(i128::from(s.min(e)));
        hi = hi.max(i128::from(s.max(e)));
    };
    trace.activities.iter().for_each(|a| see(a.start, a.end));
    trace.calls.iter().for_each(|c| see(c.start, c.end));
    trace.ranges.iter().for_each(|r| see(r.start, r.end));
    trace.steps.iter().for_each(|s| see(s.start, s.end));
    trace.gpu_steps.iter().for_each(|s| see(s.start, s.end));
    if let Some((s, e)) = trace.window {
        see(s, e);
    }
    (lo <= hi).then(|| hi - lo)
}

/// What must hold of an audit of `trace`: known codes; every figure within the trace's span
/// and not negative; each device's breakdown parts add up to its span; each step row's busy
/// time within the step and its classes within the busy time; every kernel's share of busy
/// time at most 100 % when no activity overlaps another on its stream or runs backwards
/// (the reports print exactly these numbers). The three renderings never fail.
pub fn audit_holds(trace: &worksheet::trace::model::Trace, audit: &worksheet::audit::Audit) {
    use worksheet::audit::CODES;
    let span = trace_span(trace).unwrap_or(0);
    for f in &audit.findings {
        assert!(CODES.contains(&f.code), "unknown finding code {}", f.code);
        for fig in &f.figures {
            assert!(fig.value_ns >= 0, "{}: negative figure {fig:?}", f.code);
            // A threshold is a rule's value (median + 5 × MAD), not a time of the trace.
            assert!(
                fig.name.starts_with("threshold_") || i128::from(fig.value_ns) <= span,
                "{}: figure {} = {} ns is past the trace's span {span} ns",
                f.code,
                fig.name,
                fig.value_ns
            );
        }
    }
    for b in &audit.breakdown {
        assert_eq!(b.total_ns(), b.span_ns, "{b:?}");
        for part in [
            b.exclusive_compute_ns,
            b.exposed_communication_ns,
            b.exposed_memory_ns,
            b.idle_ns,
        ] {
            assert!(part >= 0 && part <= b.span_ns, "{b:?}");
        }
    }
    for r in &audit.steps {
        if r.host_ns >= 0 {
            assert!(r.busy_ns >= 0 && r.busy_ns <= r.host_ns, "{r:?}");
            assert_eq!(r.idle_ns, r.host_ns - r.busy_ns, "{r:?}");
            for class in [r.compute_ns, r.communication_ns, r.memory_ns] {
                assert!(class >= 0 && class <= r.busy_ns, "{r:?}");
            }
        }
    }
    let untidy = audit.finding("same-stream-overlap").is_some()
        || audit.finding("negative-duration").is_some()
        || trace.activities.iter().any(|a| a.end < a.start);
    if !untidy {
        for k in &audit.kernels {
            if let Some(share) = k.share_of_busy_permille {
                assert!((0..=1000).contains(&share), "share above 100 %: {k:?}");
            }
        }
    }
    let _ = worksheet::audit::render::to_text(audit);
    let _ = worksheet::audit::render::to_markdown(audit);
    let json = worksheet::audit::render::to_json(audit);
    serde_json::from_str::<serde_json::Value>(&json).expect("the audit's JSON parses");
}

/// `worksheet check` on `text` (written to the scratch file `name`) passes: every
/// expectation the case carries is what the engine answers. Returns the engine's report.
pub fn checks_clean(name: &str, text: &str) -> Report {
    let path = scratch_file(name, text.as_bytes());
    let checked = worksheet::check::check_file(&path)
        .unwrap_or_else(|e| panic!("the written case does not load for check: {e}"));
    let failed: Vec<_> = checked.checks.iter().filter(|c| !c.passed).collect();
    assert!(failed.is_empty(), "its expectations fail: {failed:?}");
    checked
        .report
        .unwrap_or_else(|| panic!("the written case declares an expected error"))
}

/// Rayon's pool (multi-rank import) with one thread, the fuzzing thread itself: a campaign
/// runs one fuzzing process per core already, and a pool thread of its own made every
/// `par_iter` a hand-over to it and back (about a tenth of `ranks`' time in `perf`).
pub fn one_rayon_thread() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build_global();
    });
}

/// Codes `compare` may refuse a file with: a case's, and the run readers' own.
pub fn compare_codes() -> Vec<&'static str> {
    let mut codes = worksheet::case::CASE_ERROR_CODES.to_vec();
    codes.extend(["bad-syntax", "wrong-kind", "missing-field"]);
    codes
}

/// Codes a lesson may be refused with: the lesson reader's (`parse_lesson`), a fixture's,
/// and a case's (its `extend` makes the measured case invalid).
pub fn lesson_codes() -> Vec<&'static str> {
    let mut codes = worksheet::case::CASE_ERROR_CODES.to_vec();
    codes.extend([
        "bad-syntax",
        "missing-field",
        "unknown-field",
        "duplicate-field",
        "wrong-type",
        "unknown-variant",
        "bad-format",
        "unsupported-version",
        "duplicate-id",
        "empty",
        "bad-value",
        "unknown-fixture",
        "unknown-reference",
        "wrong-kind",
    ]);
    codes
}

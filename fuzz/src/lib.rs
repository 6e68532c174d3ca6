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

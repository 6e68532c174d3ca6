//! The lenient reader streamed ([`super::lenient::read_trace_pieces`], what `audit` reads a trace the
//! importer refuses with) against the same reader on the whole text ([`super::lenient::read_trace`]):
//! on every trace the project keeps, on the malformed ones, and on edge cases of the
//! document's shape, the streamed pass gives the very same model or the very same error, or
//! hands the text to the whole-text reader ([`PiecesRead::Whole`]); it never answers on its own.

use std::io::Read;

use super::lenient::{read_trace, read_trace_pieces, PiecesRead};
use crate::trace::source as text;
use crate::trace::{ReadOptions as ImportOptions, MAX_TRACE_BYTES};

/// The lenient reading of `bytes` streamed, as the audit does it (a second pass when the
/// base time follows the events); `None` when it hands the text to the whole-text reader.
fn streamed(bytes: &[u8], options: &ImportOptions) -> Option<String> {
    let mut base = None;
    loop {
        let text = text::open(
            Vec::new(),
            std::io::Cursor::new(bytes.to_vec()),
            MAX_TRACE_BYTES,
        );
        let read = std::thread::scope(|scope| {
            let pieces = super::split::in_thread(scope, text);
            read_trace_pieces(&pieces, options, base)
        });
        match read {
            PiecesRead::Done(r) => return Some(format!("{r:?}")),
            PiecesRead::Again(b) if base.is_none() => base = Some(b),
            _ => return None,
        }
    }
}

/// The whole-text reading, as debug text (`None`: not UTF-8, which the text reader refuses).
fn whole(bytes: &[u8], options: &ImportOptions) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    Some(format!("{:?}", read_trace(text, options)))
}

/// Every `.json` / `.json.gz` file of `dir`, gunzipped.
fn files(dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.ends_with(".json") || name.ends_with(".json.gz")) {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let mut text = Vec::new();
        if crate::case::is_gzip(&bytes) {
            if flate2::read::MultiGzDecoder::new(bytes.as_slice())
                .read_to_end(&mut text)
                .is_err()
            {
                continue;
            }
        } else {
            text = bytes;
        }
        out.push((name, text));
    }
    out.sort();
    out
}

/// Checks one text: returns whether the streamed pass answered (rather than handing over).
fn agrees(name: &str, bytes: &[u8]) -> bool {
    let options = ImportOptions::default();
    let Some(want) = whole(bytes, &options) else {
        return false;
    };
    match streamed(bytes, &options) {
        Some(got) => {
            assert_eq!(got, want, "{name}");
            true
        }
        None => false,
    }
}

#[test]
fn every_kept_trace_reads_the_same_streamed() {
    let mut answered = 0;
    let mut all = files("tests/data/traces");
    all.extend(files("tests/data/truth"));
    assert!(all.len() >= 15, "{} traces", all.len());
    for (name, text) in &all {
        // The largest (54 MB) is slow in a debug build; the others cover every shape.
        if text.len() > 10 << 20 {
            continue;
        }
        assert!(
            agrees(name, text),
            "{name}: a well-formed trace is read streamed"
        );
        answered += 1;
    }
    assert!(answered >= 14, "{answered}");
}

#[test]
fn malformed_traces_read_the_same_or_are_handed_over() {
    let all = files("tests/data/traces/malformed");
    let answered: Vec<&str> = all
        .iter()
        .filter(|(name, text)| agrees(name, text))
        .map(|(name, _)| name.as_str())
        .collect();
    // What the streamed pass answers itself: each well-formed JSON with a content problem.
    assert_eq!(
        answered,
        [
            "base-not-integer.json",
            "correlation-as-string.json",
            "event-not-an-object.json",
            "missing-dur.json",
            "missing-stream.json",
            "missing-trace-events.json",
            "negative-dur.json",
            "sub-ns-ts.json",
            "ts-as-string.json",
            "ts-overflow.json",
        ]
    );
}

/// Shapes of the document: the base time after the events (read twice), `null` as the base,
/// a bare array, repeated keys, `traceEvents` of another type, a syntax error after an
/// event's error (the whole-text reader's syntax error wins).
#[test]
fn document_shapes_read_the_same_streamed() {
    let events = r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 1}}, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0.5, "dur": -1, "args": {"correlation": 1}}]"#;
    let bad_ts = r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0.0001, "dur": 2, "args": {"device": 0, "stream": 7}}]"#;
    let cases = [
        (
            "base before",
            format!(r#"{{"baseTimeNanoseconds": 1000, "traceEvents": {events}}}"#),
            true,
        ),
        (
            "base after",
            format!(r#"{{"traceEvents": {events}, "baseTimeNanoseconds": 1000, "x": 1}}"#),
            true,
        ),
        (
            "base null",
            format!(r#"{{"baseTimeNanoseconds": null, "traceEvents": {events}}}"#),
            true,
        ),
        (
            "base not a number after",
            format!(r#"{{"traceEvents": {events}, "baseTimeNanoseconds": "x"}}"#),
            true,
        ),
        (
            "base overflows",
            format!(r#"{{"baseTimeNanoseconds": 9223372036854775807, "traceEvents": {events}}}"#),
            true,
        ),
        ("bare array", events.to_owned(), true),
        (
            "devices",
            format!(
                r#"{{"deviceProperties": [{{"id": 0, "computeMajor": 9, "computeMinor": 0}}], "traceEvents": {events}}}"#
            ),
            true,
        ),
        ("no events", r#"{"schemaVersion": 1}"#.to_owned(), true),
        (
            "event error",
            format!(r#"{{"traceEvents": {bad_ts}}}"#),
            true,
        ),
        (
            "event error, then bad JSON",
            format!(r#"{{"traceEvents": {bad_ts}, "x": [1,]}}"#),
            false,
        ),
        (
            "repeated events",
            format!(r#"{{"traceEvents": {events}, "traceEvents": []}}"#),
            false,
        ),
        (
            "repeated base",
            format!(
                r#"{{"baseTimeNanoseconds": 1, "baseTimeNanoseconds": 2, "traceEvents": {events}}}"#
            ),
            false,
        ),
        (
            "events not an array",
            r#"{"traceEvents": 5}"#.to_owned(),
            false,
        ),
        (
            "an event not JSON",
            r#"{"traceEvents": [{"ph": }]}"#.to_owned(),
            false,
        ),
        (
            "an event not an object",
            r#"{"traceEvents": [1]}"#.to_owned(),
            true,
        ),
    ];
    for (name, text, answered) in cases {
        assert_eq!(agrees(name, text.as_bytes()), answered, "{name}");
    }
}

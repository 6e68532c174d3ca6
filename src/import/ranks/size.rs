//! The size in bytes of the merged multi-rank case's pretty JSON, without building it.
//!
//! A multi-rank import drops each rank's case once the rank is summarised (memory bounded by
//! the traces in flight, not by the ranks), yet the summary states how many bytes `-o` would
//! write. The merged case's sections are the ranks' sections one after another, so its length
//! follows from each element's own pretty text: `serde_json`'s pretty printer indents by two
//! spaces a level, and an element of a top-level section sits two levels deep, so inside the
//! merged text every line break of the element is followed by 4 more spaces than when the
//! element is printed on its own:
//!
//! ```text
//! {                                   element alone      element in the case
//!   "phases": [                       {                  ⏎····{
//!     {                               ⏎··"id": "k#1"     ⏎······"id": "k#1"
//!       "id": "k#1"                   ⏎}                 ⏎····}
//!     },                             (bytes b, n ⏎)     (b + 4n, plus ",⏎····" before it)
//! ```
//!
//! A section of `N > 0` elements is `[` + `,` × (N − 1) + (`⏎····` + element) × N + `⏎··]`;
//! an empty section is left out of the case (with its `"key": ` line). Tests compare the
//! total with the length of the text `-o` writes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::case::raw::RawCase;

/// Elements of one section: how many, and their bytes as printed inside the case (without
/// the separators).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Elements {
    /// Number of elements.
    pub count: usize,
    /// Σ (pretty bytes alone + 4 × line breaks).
    pub bytes: usize,
}

/// The sizes of a rank's sections that the merged case concatenates (its clocks are in the
/// cross-rank case itself, so they are not counted here).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SectionSizes(pub BTreeMap<&'static str, Elements>);

/// A writer that counts bytes and line breaks.
struct Count {
    bytes: usize,
    breaks: usize,
}

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes += buf.len();
        self.breaks += buf.iter().filter(|&&b| b == b'\n').count();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn elements<T: Serialize>(items: &[T]) -> Elements {
    let mut out = Elements {
        count: items.len(),
        bytes: 0,
    };
    for item in items {
        let mut c = Count {
            bytes: 0,
            breaks: 0,
        };
        serde_json::to_writer_pretty(&mut c, item).expect("a raw case always serializes");
        out.bytes += c.bytes + 4 * c.breaks;
    }
    out
}

/// The sizes of `raw`'s rank sections (streams, events, phases, marks, program, series,
/// questions), as they print inside the merged case.
pub fn of_rank(raw: &RawCase) -> SectionSizes {
    SectionSizes(BTreeMap::from([
        ("streams", elements(&raw.streams)),
        ("events", elements(&raw.events)),
        ("phases", elements(&raw.phases)),
        ("marks", elements(&raw.marks)),
        ("program", elements(&raw.program)),
        ("series", elements(&raw.series)),
        ("questions", elements(&raw.questions)),
    ]))
}

/// How many elements the section `key` of `case` holds.
fn len_of(case: &RawCase, key: &str) -> usize {
    match key {
        "streams" => case.streams.len(),
        "events" => case.events.len(),
        "phases" => case.phases.len(),
        "marks" => case.marks.len(),
        "program" => case.program.len(),
        "series" => case.series.len(),
        "questions" => case.questions.len(),
        _ => 0,
    }
}

/// The bytes of the pretty JSON text (with its final line break) of the case made of
/// `small` (the cross-rank case, whose sections come last) with the ranks' sections before
/// its own, given `small_bytes`, the length of `small`'s own text.
pub fn merged_bytes<'a>(
    small: &RawCase,
    small_bytes: usize,
    ranks: impl IntoIterator<Item = &'a SectionSizes>,
) -> usize {
    let mut added: BTreeMap<&'static str, Elements> = BTreeMap::new();
    for r in ranks {
        for (key, e) in &r.0 {
            let a = added.entry(key).or_default();
            a.count += e.count;
            a.bytes += e.bytes;
        }
    }
    let mut total = small_bytes;
    for (key, e) in added {
        if e.count == 0 {
            continue;
        }
        // Each element: `,` (or nothing for the first) + `⏎····` + its text.
        total += 6 * e.count + e.bytes;
        if len_of(small, key) == 0 {
            // The section appears: `,⏎··"key": ` + `[` … `⏎··]`, less the first comma.
            total += 4 + key.len() + 2 + 2 + 1 + 4 - 1;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::raw::{RawMark, RawTime};
    use crate::units::Nanos;

    fn mark(id: &str, at: i64) -> RawMark {
        RawMark {
            id: id.to_owned(),
            clock: "c".to_owned(),
            at: RawTime::from(Nanos::new(at)),
        }
    }

    /// The counted size equals the printed size, whether the cross-rank case already has the
    /// section (marks) or not (phases, streams absent from it).
    #[test]
    fn merged_size_is_the_printed_size() {
        let base = crate::case::parse_raw(
            r#"{"format": "worksheet-case", "version": 1, "clocks": [{"id": "c", "domain": "host"}],
                "streams": [{"id": "s", "clock": "c", "device": "gpu0"}],
                "phases": [{"id": "p", "clock": "c", "stream": "s", "start": "1 ns", "end": "5 ns"},
                           {"id": "q\n\"", "clock": "c", "start": "2 ns", "end": "3 ns", "label": "é"}],
                "marks": [{"id": "m0", "clock": "c", "at": "7 ns"}]}"#,
        )
        .expect("a case");
        let mut small = RawCase::new("ranks");
        small.clocks.clone_from(&base.clocks);
        small.marks.push(mark("x", 1));
        let ranks = [of_rank(&base), of_rank(&base)];
        let mut merged = small.clone();
        for _ in 0..2 {
            merged.streams.extend(base.streams.clone());
            merged.phases.extend(base.phases.clone());
            merged.marks.splice(0..0, base.marks.clone());
        }
        let small_bytes = small.to_json_pretty().len();
        assert_eq!(
            merged_bytes(&small, small_bytes, &ranks),
            merged.to_json_pretty().len()
        );
        // No rank sections at all: the small case alone.
        assert_eq!(merged_bytes(&small, small_bytes, &[]), small_bytes);
    }
}

//! `worksheet compare`: two run files (cases, or lab executor reports) cut at the input's
//! first NUL byte, written to scratch files and read by `compare::compare_files` both ways
//! round; without a NUL, the input is compared with itself.
//! Beyond "no panic": documented error codes; the mirror law (`compare(A, B)` row by row is
//! `compare(B, A)` mirrored: faster ⇄ slower, new ⇄ gone, with the same noise); a file
//! against itself is all `same` (change 0, or no ratio for a base that is not positive) or
//! unknown for a reason of its own (never `incomparable`); the
//! text, JSON and Markdown reports write.
#![no_main]
use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use worksheet::compare::render::{write, CompareFormat};
use worksheet::compare::{compare_files, Comparison, Options, RowVerdict};
use worksheet::verdict::Reason;

fn rows(c: &Comparison) -> BTreeMap<(String, String), Vec<&worksheet::compare::Row>> {
    let mut by: BTreeMap<(String, String), Vec<_>> = BTreeMap::new();
    for r in &c.rows {
        by.entry((r.group.clone(), r.name.clone()))
            .or_default()
            .push(r);
    }
    by
}

fn written(c: &Comparison) {
    for format in [
        CompareFormat::Text,
        CompareFormat::Json,
        CompareFormat::Markdown,
    ] {
        let mut out = Vec::new();
        write(c, format, &mut out).expect("writing to a Vec");
    }
}

fuzz_target!(|data: &[u8]| {
    let (a, b) = worksheet_fuzz::split_two(data);
    let codes = worksheet_fuzz::compare_codes();
    let base = worksheet_fuzz::scratch_file("base.json", a);
    let Some(b) = b else {
        let c = match compare_files(&base, &base, Options::default()) {
            Ok(c) => c,
            Err(e) => return worksheet_fuzz::documented(&e, &codes),
        };
        for r in &c.rows {
            if r.verdict == RowVerdict::Unknown {
                // Unknown because of the run itself (its answer is unknown, a series has no
                // samples), never because a file is incomparable with itself.
                assert_ne!(r.reason, Some(Reason::Incomparable), "{r:?}");
            } else {
                assert_eq!(r.verdict, RowVerdict::Same, "{r:?}");
                // No change; no ratio at all when the base is not positive (a negative
                // elapsed time is a known answer too).
                let base = r.base.as_ref().and_then(|b| b.median_ns);
                assert!(
                    r.change_ppm == Some(0)
                        || (r.change_ppm.is_none() && base.is_some_and(|m| m <= 0)),
                    "{r:?}"
                );
            }
        }
        return written(&c);
    };
    let new = worksheet_fuzz::scratch_file("new.json", b);
    let options = Options::default();
    let ab = match compare_files(&base, &new, options) {
        Ok(c) => c,
        Err(e) => return worksheet_fuzz::documented(&e, &codes),
    };
    let ba = compare_files(&new, &base, options).expect("both files read the first time");
    let (x, y) = (rows(&ab), rows(&ba));
    assert_eq!(
        x.keys().collect::<Vec<_>>(),
        y.keys().collect::<Vec<_>>(),
        "the two directions have different rows"
    );
    for (key, xs) in &x {
        let ys = &y[key];
        assert_eq!(xs.len(), ys.len(), "{key:?}");
        if xs.len() == 1 {
            assert_eq!(
                xs[0].verdict.mirror(),
                ys[0].verdict,
                "{:?} vs {:?}",
                xs[0],
                ys[0]
            );
            assert_eq!(
                xs[0].noise_ppm, ys[0].noise_ppm,
                "{:?} vs {:?}",
                xs[0], ys[0]
            );
        }
    }
    written(&ab);
});

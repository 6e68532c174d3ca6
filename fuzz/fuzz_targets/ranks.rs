//! Multi-rank import of two Kineto traces: the input cut at its first NUL byte gives two
//! fuzzed traces; without a NUL, the input is rank 0's trace and a fixed slice of a real
//! rank 1 trace (`fuzz/data/rank1-slice.json`) is the other. Both are written to scratch
//! files and read by `import::ranks::import_ranks_with` (cases kept, expectations written),
//! then summarised with the merged case (`ranks::merged::summarize_all`). Rayon runs on the
//! fuzzing thread (`one_rayon_thread`).
//! Beyond "no panic": documented error codes; every rank's own case validated (an `Err`
//! is an importer bug); the summary builds (its `Err` is an importer bug); the merged case
//! as written loads, answers with the interval identities, and answers as its expectations
//! say (`check`'s contract: an import with `--expect` checks clean).
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::import::ranks::merged::summarize_all;
use worksheet::import::ranks::{import_ranks_with, RankOptions};
use worksheet::import::ImportOptions;

const RANK1: &[u8] = include_bytes!("../data/rank1-slice.json");

fuzz_target!(|data: &[u8]| {
    worksheet_fuzz::one_rayon_thread();
    let (a, b) = worksheet_fuzz::split_two(data);
    let b = b.unwrap_or(RANK1);
    let ext = |t: &[u8]| {
        if t.starts_with(&[0x1f, 0x8b]) {
            ".json.gz"
        } else {
            ".json"
        }
    };
    let files = vec![
        worksheet_fuzz::scratch_file(&format!("rank-a{}", ext(a)), a),
        worksheet_fuzz::scratch_file(&format!("rank-b{}", ext(b)), b),
    ];
    let how = RankOptions {
        expect: true,
        keep_cases: true,
        progress: false,
        audits: false,
    };
    let mut multi = match import_ranks_with(&files, &ImportOptions::default(), how) {
        Ok(m) => m,
        Err(e) => return worksheet_fuzz::documented(&e, &worksheet_fuzz::import_codes()),
    };
    for r in &multi.ranks {
        if let Err(e) = &r.rows {
            panic!("internal: rank {}'s case does not validate: {e}", r.rank);
        }
    }
    let summaries = summarize_all(&mut multi, true, true)
        .unwrap_or_else(|e| panic!("internal: the cross-rank case does not validate: {e}"));
    let _ = summaries.case.to_text();
    let _ = summaries.ranks.to_text();
    let merged = summaries.merged.expect("the ranks' cases were kept");
    let text = merged.to_json_pretty();
    // `check` loads the case as written and evaluates it once: the identities are checked on
    // that report (loading and evaluating it a second time checked nothing more).
    let report = worksheet_fuzz::checks_clean("merged.json", &text);
    worksheet_fuzz::report_identities(&report);
});

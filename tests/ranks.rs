//! Multi-rank imports (issue 13, SPEC §10) on real traces: the H200 ×2 trace (one host clock,
//! so the true offset is about 0; rank 1 a straggler by construction in two steps), a copy
//! with rank 1's clock shifted by a known +250 µs, and two ranks of a 128-rank job whose
//! kernels carry no process group.

use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use worksheet::import::ranks::summary::Split;
use worksheet::import::ranks::{import_ranks, summarize_ranks, MultiRank};
use worksheet::import::ImportOptions;

const RANK0: &str = "tests/data/ranks/rank0.json.gz";
const RANK1: &str = "tests/data/ranks/rank1.json.gz";

fn import(files: &[&Path]) -> MultiRank {
    let files: Vec<PathBuf> = files.iter().map(|p| p.to_path_buf()).collect();
    import_ranks(&files, &ImportOptions::default()).expect("imports")
}

/// The bound on offset(r1) − offset(r0) that the collectives give, in ns.
fn bound(m: &MultiRank) -> (i64, i64) {
    let rel = m
        .case
        .clock_relations
        .iter()
        .find(|r| r.a == "r0.kineto" && r.b == "r1.kineto")
        .expect("a relation between rank 0 and rank 1");
    let ns = |t: &worksheet::case::raw::RawTime| match t {
        worksheet::case::raw::RawTime::Text(s) => {
            worksheet::units::parse_value(s).unwrap().as_i64()
        }
        worksheet::case::raw::RawTime::Exact(v) => v.as_i64(),
        worksheet::case::raw::RawTime::Number(_) => panic!("times are text"),
    };
    (ns(&rel.lo), ns(&rel.hi))
}

/// A copy of rank 1's trace with its clock moved by `shift_ns`: `baseTimeNanoseconds` is the
/// origin every `ts` counts from, so every timestamp moves by exactly that much.
fn shifted_rank1(dir: &Path, shift_ns: i64) -> PathBuf {
    shifted_copy(RANK1, dir, shift_ns)
}

/// A copy of the rank trace at `source` with its clock moved by `shift_ns`.
fn shifted_copy(source: &str, dir: &Path, shift_ns: i64) -> PathBuf {
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(source).unwrap()),
        &mut text,
    )
    .unwrap();
    let key = "\"baseTimeNanoseconds\": ";
    let at = text.find(key).expect("the trace has a base time") + key.len();
    let end = at + text[at..].find(|c: char| !c.is_ascii_digit()).unwrap();
    let base: i64 = text[at..end].parse().unwrap();
    let shifted = format!("{}{}{}", &text[..at], base + shift_ns, &text[end..]);
    let path = dir.join("rank1-shifted.json");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(shifted.as_bytes())
        .unwrap();
    path
}

#[test]
fn h200_two_ranks_bound_contains_the_true_offset_zero() {
    let m = import(&[Path::new(RANK0), Path::new(RANK1)]);
    let (lo, hi) = bound(&m);
    // Exact, from the kernels: lo = start_1(#2) − end_0(#2), hi = end_1(#0) − start_0(#0).
    assert_eq!((lo, hi), (-223_562, 227_827));
    assert!(lo <= 0 && 0 <= hi, "one host clock: the true offset is ~0");
    // The width is the sum of the shortest all-reduce kernels on both sides (~225 us each):
    // the SPEC §10 rule cannot give less on this trace (see the closing note).
    assert_eq!(hi - lo, 451_389);
    let p = &m.pairs[0];
    let e = p.evidence.overall.as_ref().unwrap();
    assert_eq!(e.count, 8);
    assert_eq!(e.lo_from.label, "0/allreduce#2");
    assert_eq!(e.hi_from.label, "0/allreduce#0");
    assert_eq!(p.evidence.windows.len(), 4);
    assert!(p
        .evidence
        .windows
        .iter()
        .all(|w| w.bound.contains(worksheet::units::Nanos::ZERO)));
}

#[test]
fn a_shift_of_250_us_moves_the_bound_by_exactly_250_us() {
    let dir = tempfile::tempdir().unwrap();
    let shifted = shifted_rank1(dir.path(), 250_000);
    let m = import(&[Path::new(RANK0), &shifted]);
    let (lo, hi) = bound(&m);
    assert_eq!((lo, hi), (-223_562 + 250_000, 227_827 + 250_000));
    assert!(lo <= 250_000 && 250_000 <= hi);
    // Skew, transfer and stragglers do not move: they are true-time answers.
    let a = summarize_ranks(&import(&[Path::new(RANK0), Path::new(RANK1)])).unwrap();
    let b = summarize_ranks(&m).unwrap();
    for (x, y) in a.collectives.iter().zip(&b.collectives) {
        assert_eq!(x.skew, y.skew, "{}", x.instance);
        assert_eq!(x.transfer, y.transfer, "{}", x.instance);
        assert_eq!(x.last, y.last, "{}", x.instance);
    }
}

#[test]
fn rank1_is_the_straggler_of_steps_3_and_6() {
    let s = summarize_ranks(&import(&[Path::new(RANK0), Path::new(RANK1)])).unwrap();
    assert_eq!(s.collectives.len(), 8);
    let late: Vec<(&str, Option<u32>)> = s
        .collectives
        .iter()
        .map(|c| (c.instance.as_str(), c.last))
        .collect();
    // Profiled steps 2..9: steps 3 and 6 are the all-reduces #1 and #4.
    for (k, (name, last)) in late.iter().enumerate() {
        assert_eq!(*last, [1, 4].contains(&k).then_some(1), "{name}");
    }
    // On the shared host clock rank 1 arrived 1.444495 ms after rank 0 at #1: inside the bound.
    let Some(Split::Bounded { lo_ns, hi_ns }) = &s.collectives[1].lateness else {
        panic!("bounded lateness")
    };
    assert!(
        *lo_ns <= 1_444_495 && 1_444_495 <= *hi_ns,
        "[{lo_ns}, {hi_ns}]"
    );
    assert_eq!((*lo_ns, *hi_ns), (1_216_668, 1_668_057));
    let r1 = s.stragglers.iter().find(|r| r.rank == 1).unwrap();
    assert_eq!(r1.last, 2);
    assert_eq!(s.ambiguous_last, 6);
    // Where the arrival bound is as wide as the kernel, it is still the bound (audit A5), and
    // the note quotes that bound's own width.
    assert_eq!(
        s.collectives[2].skew,
        Split::Bounded {
            lo_ns: 0,
            hi_ns: 368_414
        }
    );
    let wide = s.collectives[2].wide.as_deref().unwrap();
    assert!(wide.contains("only known within 368.414 us"), "{wide}");
    // Where it is split, skew and transfer are bounded and the transfer fits in the kernel.
    let c = &s.collectives[1];
    assert_eq!(
        c.transfer,
        Split::Bounded {
            lo_ns: 3_200,
            hi_ns: 454_589
        }
    );
    // On the shared clock: end_0(#1) − start_1(#1) = 226.762 us, and rank 1 came 1.444495 ms late.
    assert!(
        matches!(c.transfer, Split::Bounded { lo_ns, hi_ns } if lo_ns <= 226_762 && 226_762 <= hi_ns)
    );
    assert!(
        matches!(c.skew, Split::Bounded { lo_ns, hi_ns } if lo_ns <= 1_444_495 && 1_444_495 <= hi_ns)
    );
}

#[test]
fn cross_rank_answers_are_bounded_or_unknown_never_a_bare_number() {
    let m = import(&[Path::new(RANK0), Path::new(RANK1)]);
    let case = worksheet::case::validate(m.case.clone(), "ranks").unwrap();
    let report = worksheet::engine::evaluate(&case);
    let mut cross = 0;
    for a in &report.answers {
        if a.id.starts_with("arrival:") || a.id.starts_with("offset:") {
            cross += 1;
            let v = a.outcome.verdict().unwrap();
            assert!(
                matches!(
                    v,
                    worksheet::verdict::Verdict::Bounded { .. }
                        | worksheet::verdict::Verdict::Unknown { .. }
                ),
                "{}: {v}",
                a.id
            );
        }
        if let worksheet::engine::Outcome::Intervals(set) = &a.outcome {
            assert!(
                set.per_clock.len() <= 1,
                "{}: a rank's set stays on its clock",
                a.id
            );
        }
    }
    assert_eq!(cross, 8 + 1);
}

#[test]
fn sampled_ranks_of_a_128_rank_job_say_why_they_give_no_bound() {
    let m = import(&[
        Path::new("tests/data/traces/sampled_rank-0.json.gz"),
        Path::new("tests/data/traces/sampled_rank-1.json.gz"),
    ]);
    assert!(m.case.clock_relations.is_empty());
    let s = summarize_ranks(&m).unwrap();
    assert_eq!(
        s.offsets,
        vec![(
            "offset:r0:r1".to_owned(),
            "unknown (cross-instance)".to_owned()
        )]
    );
    assert_eq!(s.unusable.len(), 2);
    assert!(s.unusable[0].contains("10 NCCL kernel(s) (ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t) carry no \"Process Group Name\""), "{}", s.unusable[0]);
    assert!(s.collectives.is_empty());
}

#[test]
fn the_same_rank_twice_or_one_file_is_refused() {
    let one = import_ranks(&[PathBuf::from(RANK0)], &ImportOptions::default()).unwrap_err();
    assert_eq!(one.code, "bad-value");
    let twice = import_ranks(
        &[PathBuf::from(RANK0), PathBuf::from(RANK0)],
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert_eq!(twice.code, "bad-value");
    assert!(
        twice.to_string().contains("rank 0 is also the rank of"),
        "{twice}"
    );
}

#[test]
fn a_folder_imports_as_one_case_that_check_replays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ranks.json.gz");
    let assert = Command::cargo_bin("worksheet")
        .unwrap()
        .args(["import", "tests/data/ranks", "--expect", "-o"])
        .arg(&out)
        .assert()
        .success();
    let text = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("| 0 → 1 | bounded [-223.562 us, 227.827 us] | 451.389 us | 8"),
        "{text}"
    );
    assert!(
        text.contains("stragglers (6 instance(s) with no certain last rank)"),
        "{text}"
    );
    let check = Command::cargo_bin("worksheet")
        .unwrap()
        .arg("check")
        .arg(&out)
        .assert()
        .success();
    let report = String::from_utf8(check.get_output().stdout.clone()).unwrap();
    assert!(
        report.contains("bounded [-223.562 us, 227.827 us]"),
        "{report}"
    );
    let json = Command::cargo_bin("worksheet")
        .unwrap()
        .args(
            [RANK0, RANK1, "--format", "json"]
                .map(|a| a.to_owned())
                .iter()
                .fold(vec!["import".to_owned()], |mut v, a| {
                    v.push(a.clone());
                    v
                }),
        )
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    assert_eq!(v["ranks"]["relations"][0]["bound"]["lo_ns"], -223_562);
    assert_eq!(v["ranks"]["relations"][0]["bound"]["hi_ns"], 227_827);
}

/// Rank 1's trace with every timestamp from `from_us` on moved by `jump_us` (a clock that
/// jumps mid-trace): the integer part of each `"ts"` is edited as text, so it stays exact.
fn jumping_rank1(dir: &Path, from_us: u64, jump_us: u64) -> PathBuf {
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(RANK1).unwrap()),
        &mut text,
    )
    .unwrap();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    let key = "\"ts\": ";
    while let Some(i) = rest.find(key) {
        let at = i + key.len();
        out.push_str(&rest[..at]);
        let digits = rest[at..].find(|c: char| !c.is_ascii_digit()).unwrap();
        let ts: u64 = rest[at..at + digits].parse().unwrap();
        let moved = if ts >= from_us { ts + jump_us } else { ts };
        out.push_str(&moved.to_string());
        rest = &rest[at + digits..];
    }
    out.push_str(rest);
    let path = dir.join("rank1-jumping.json");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn a_clock_that_jumps_mid_trace_gives_no_relation_and_windows_that_disagree() {
    let dir = tempfile::tempdir().unwrap();
    // Between all-reduce #3 (ends ~5195546171755 us) and #4 (starts ~5195546174170 us).
    let jumping = jumping_rank1(dir.path(), 5_195_546_173_000, 1_000);
    let m = import(&[Path::new(RANK0), &jumping]);
    assert!(
        m.case.clock_relations.is_empty(),
        "conflicting evidence gives no relation"
    );
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("the collectives conflict")),
        "{:?}",
        m.notes
    );
    let windows = &m.pairs[0].evidence.windows;
    assert_eq!(windows.len(), 4);
    // Before the jump the windows contain 0; after it, +1 ms and not 0.
    let ms = worksheet::units::Nanos::new(1_000_000);
    assert!(windows[0].bound.contains(worksheet::units::Nanos::ZERO));
    assert!(
        windows[3].bound.contains(ms) && !windows[3].bound.contains(worksheet::units::Nanos::ZERO)
    );
    let s = summarize_ranks(&m).unwrap();
    assert!(
        matches!(&s.relations[0].bound, Split::Unknown { why } if why.starts_with("inconsistent-relation"))
    );
    assert_eq!(s.offsets[0].1, "unknown (cross-instance)");
}

const SYNC_RANK0: &str = "tests/data/ranks-sync/rank0.json.gz";
const SYNC_RANK1: &str = "tests/data/ranks-sync/rank1.json.gz";

/// The same job with four one-float all-reduces after each step's host sync: short
/// collectives entered nearly together bound the offset to a few µs, and the true offset 0
/// (one host clock) lies inside. The bound is narrower than 10 µs, as issue 13 asks.
#[test]
fn h200_short_all_reduces_bound_the_offset_within_10_us() {
    let m = import(&[Path::new(SYNC_RANK0), Path::new(SYNC_RANK1)]);
    let (lo, hi) = bound(&m);
    assert_eq!((lo, hi), (-3_967, 4_525));
    assert!(lo <= 0 && 0 <= hi, "one host clock: the true offset is ~0");
    assert!(hi - lo < 10_000, "width {} ns", hi - lo);
    let e = m.pairs[0].evidence.overall.as_ref().unwrap();
    assert_eq!(e.count, 40);
    assert_eq!(e.lo_from.label, "0/allreduce#33");
    assert_eq!(e.hi_from.label, "0/allreduce#18");
    // Shifting rank 1's clock moves the tight bound by exactly the shift, too.
    let dir = tempfile::tempdir().unwrap();
    let shifted = shifted_copy(SYNC_RANK1, dir.path(), 250_000);
    let (slo, shi) = bound(&import(&[Path::new(SYNC_RANK0), &shifted]));
    assert_eq!((slo, shi), (-3_967 + 250_000, 4_525 + 250_000));
}

/// Memory bounded by the traces in flight: a multi-rank import keeps no rank's case (no
/// phase, no program op, no rank question), only the cross-rank case and each rank's rows.
#[test]
fn a_multi_rank_import_keeps_no_rank_case() {
    let m = import(&[Path::new(SYNC_RANK0), Path::new(SYNC_RANK1)]);
    assert!(m.ranks.iter().all(|r| r.case.is_none()));
    assert!(m.case.phases.is_empty() && m.case.program.is_empty());
    assert!(m.case.streams.is_empty() && m.case.events.is_empty());
    // Only the cross-rank questions: 40 arrivals of rank 1 and one clock offset.
    assert_eq!(m.case.questions.len(), 40 + 1);
    for q in &m.case.questions {
        let id = serde_json::to_value(q).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            id.starts_with("arrival:") || id.starts_with("offset:"),
            "{id}"
        );
    }
    // Two marks (start, end) per rank per matched all-reduce.
    assert_eq!(m.case.marks.len(), 2 * 2 * 40);
}

/// The summary built rank by rank states exactly what the engine says on the whole merged
/// case (the case `-o` writes), evaluated at once; and the JSON size it states without `-o`
/// is the length of that case's text, with and without expectations.
#[test]
fn per_rank_summaries_equal_the_merged_case_summary() {
    use worksheet::import::ranks::{import_ranks_with, summarize_all, RankOptions};
    let files = [PathBuf::from(SYNC_RANK0), PathBuf::from(SYNC_RANK1)];
    for expect in [false, true] {
        let how = RankOptions {
            expect,
            keep_cases: true,
            progress: false,
            audits: false,
        };
        let mut m = import_ranks_with(&files, &ImportOptions::default(), how).unwrap();
        let all = summarize_all(&mut m, expect, true).unwrap();
        let merged = all.merged.expect("kept cases give the merged case");
        let text = merged.to_json_pretty();
        assert_eq!(all.case.size.json_bytes, text.len(), "expect {expect}");
        // The whole merged case, summarised as one case (the engine answers every question).
        let whole = worksheet::import::summarize(
            &worksheet::import::Imported::from_case(merged.clone(), "ranks"),
            false,
        )
        .unwrap();
        fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
            serde_json::to_value(v).unwrap()
        }
        assert_eq!(json(&all.case.sets), json(&whole.sets));
        assert_eq!(json(&all.case.overlaps), json(&whole.overlaps));
        assert_eq!(json(&all.case.hta), json(&whole.hta));
        assert_eq!(json(&all.case.completion), json(&whole.completion));
        assert_eq!(all.case.clock, whole.clock);
        assert_eq!(
            (
                all.case.size.phases,
                all.case.size.program_ops,
                all.case.size.questions
            ),
            (
                whole.size.phases,
                whole.size.program_ops,
                whole.size.questions
            )
        );
        assert!(all.case.sets.len() > 4, "{} rows", all.case.sets.len());
        // The ranks' part: the engine's answers on the merged case are the same.
        let case = worksheet::case::validate(merged, "ranks").unwrap();
        let report = worksheet::engine::evaluate(&case);
        let from_whole = worksheet::import::ranks::summary::from_report(&m, &report);
        assert_eq!(
            serde_json::to_value(&from_whole).unwrap(),
            serde_json::to_value(&all.ranks).unwrap()
        );
    }
}

/// Per rank, the summary states `worksheet audit`'s exposed-time breakdown of the rank's file
/// (computed rank by rank from the importer's classes of work; the audit reads the trace with
/// its own reader), on the three real pairs of ranks.
#[test]
fn per_rank_breakdown_is_the_audit_breakdown_of_each_rank_file() {
    let pairs = [
        [RANK0, RANK1],
        [SYNC_RANK0, SYNC_RANK1],
        [
            "tests/data/traces/sampled_rank-0.json.gz",
            "tests/data/traces/sampled_rank-1.json.gz",
        ],
    ];
    for files in pairs {
        let out = Command::cargo_bin("worksheet")
            .unwrap()
            .args(["import", files[0], files[1], "--format", "json"])
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let rows = v["ranks"]["breakdown"].as_array().unwrap();
        assert_eq!(rows.len(), 2, "{files:?}: one device per rank");
        for (rank, file) in files.iter().enumerate() {
            let audit = Command::cargo_bin("worksheet")
                .unwrap()
                .args(["audit", file, "--format", "json"])
                .assert()
                .success();
            let a: serde_json::Value = serde_json::from_slice(&audit.get_output().stdout).unwrap();
            let want = &a["breakdown"].as_array().unwrap()[0];
            let row = &rows[rank];
            assert_eq!(row["rank"], rank as u64);
            assert_eq!(
                row["device"].as_str().unwrap(),
                format!("r{rank}.{}", want["device"].as_str().unwrap())
            );
            for k in [
                "span_ns",
                "exclusive_compute_ns",
                "exposed_communication_ns",
                "exposed_memory_ns",
                "idle_ns",
            ] {
                assert_eq!(row[k], want[k], "{file}: {k}");
            }
            let parts: i64 = [
                "exclusive_compute_ns",
                "exposed_communication_ns",
                "exposed_memory_ns",
                "idle_ns",
            ]
            .iter()
            .map(|k| row[*k].as_i64().unwrap())
            .sum();
            assert_eq!(parts, row["span_ns"].as_i64().unwrap());
        }
    }
}

/// The trace sets under `tests/data/ranks*`, each a folder of rank files.
fn rank_sets() -> Vec<PathBuf> {
    let mut sets: Vec<PathBuf> = std::fs::read_dir("tests/data")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("ranks"))
        })
        .collect();
    sets.sort();
    assert!(sets.len() >= 2, "{sets:?}");
    sets
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .args(args)
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn lo_hi(v: &serde_json::Value) -> (i64, i64) {
    assert_eq!(v["verdict"], "bounded", "{v}");
    (v["lo_ns"].as_i64().unwrap(), v["hi_ns"].as_i64().unwrap())
}

/// Audit A5: for every instance of every real trace set, the summary's figures are the
/// answers `worksheet eval` gives on the imported case (intersected with the clock-free bound,
/// which the test recomputes from the kernel durations), and the skew, the last rank and its
/// delay follow from those answers by the rules of `arrivals.rs`, recomputed here.
#[test]
fn summary_figures_are_evals_answers_on_every_rank_set() {
    // And three ranks: the real pair plus a copy of rank 1 as rank 2, its clock 50 us later
    // (every pair of ranks is asked; the last rank needs every pair to agree).
    let three = tempfile::tempdir().unwrap();
    std::fs::copy(RANK0, three.path().join("rank0.json.gz")).unwrap();
    std::fs::copy(RANK1, three.path().join("rank1.json.gz")).unwrap();
    let copy = shifted_copy(RANK1, three.path(), 50_000);
    let text = std::fs::read_to_string(&copy)
        .unwrap()
        .replacen("\"rank\": 1,", "\"rank\": 2,", 1)
        .replacen("\"world_size\": 2", "\"world_size\": 3", 1);
    assert!(text.contains("\"rank\": 2,"));
    std::fs::write(three.path().join("rank2.json"), text).unwrap();
    std::fs::remove_file(copy).unwrap();
    let mut sets = rank_sets();
    sets.push(three.path().to_path_buf());
    for (set, declared) in sets
        .into_iter()
        .flat_map(|s| [(s.clone(), None), (s, Some("0"))])
    {
        let dir = tempfile::tempdir().unwrap();
        let case = dir.path().join("case.json");
        let set_s = set.to_string_lossy().into_owned();
        let case_s = case.to_string_lossy().into_owned();
        let mut args = vec!["import", &set_s, "--format", "json", "-o", &case_s];
        if let Some(d) = declared {
            args.extend(["--clocks-within", d]);
        }
        let summary = json_of(&args);
        let eval = json_of(&["eval", &case_s, "--format", "json"]);
        let answers: std::collections::HashMap<String, serde_json::Value> = eval["answers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a["id"].as_str().unwrap().to_owned(), a.clone()))
            .collect();
        let rows = summary["ranks"]["collectives"].as_array().unwrap();
        assert!(!rows.is_empty(), "{set_s}");
        for row in rows {
            let name = row["instance"].as_str().unwrap();
            let arr = &row["arrivals"];
            let dur: std::collections::HashMap<u64, i64> = arr["ranks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r["rank"].as_u64().unwrap(),
                        r["duration_ns"].as_i64().unwrap(),
                    )
                })
                .collect();
            let mut skew = (0_i64, 0_i64);
            let mut delay: std::collections::HashMap<u64, (i64, i64)> =
                dur.keys().map(|r| (*r, (0, 0))).collect();
            // gap[(a, b)] ∋ start_b − start_a, for both orders.
            let mut gap: std::collections::HashMap<(u64, u64), (i64, i64)> = Default::default();
            for p in arr["pairs"].as_array().unwrap() {
                let (a, b) = (p["a"].as_u64().unwrap(), p["b"].as_u64().unwrap());
                let id = p["question"].as_str().expect("every pair is asked");
                let eval_says = lo_hi(&answers[id]);
                assert_eq!(lo_hi(&p["offset_based"]), eval_says, "{set_s} {name} {id}");
                assert_eq!(lo_hi(&p["clock_free"]), (-dur[&b], dur[&a]), "{name}");
                let both = (eval_says.0.max(-dur[&b]), eval_says.1.min(dur[&a]));
                assert_eq!(lo_hi(&p["bound"]), both, "{set_s} {name}");
                // On these traces every instance gave its pair's relation, so causality adds
                // nothing: the bound is eval's answer itself.
                assert_eq!(both, eval_says, "{set_s} {name}");
                gap.insert((a, b), both);
                gap.insert((b, a), (-both.1, -both.0));
                // start_b − start_a ∈ both: b's delay over a, and a's over b.
                let db = delay.get_mut(&b).unwrap();
                *db = (db.0.max(both.0), db.1.max(both.1));
                let da = delay.get_mut(&a).unwrap();
                *da = (da.0.max(-both.1), da.1.max(-both.0));
            }
            for r in arr["ranks"].as_array().unwrap() {
                let d = delay[&r["rank"].as_u64().unwrap()];
                assert_eq!(lo_hi(&r["delay"]), d, "{set_s} {name}");
                skew = (skew.0.max(d.0), skew.1.max(d.1));
            }
            assert_eq!(lo_hi(&row["skew"]), skew, "{set_s} {name}");
            if let Some(wide) = row["wide"].as_str() {
                let width = worksheet::engine::wide(i128::from(skew.1 - skew.0));
                assert!(
                    wide.contains(&format!("only known within {width} ")),
                    "{wide}"
                );
            }
            let certainly_last: Vec<u64> = dur
                .keys()
                .copied()
                .filter(|r| dur.keys().filter(|q| *q != r).all(|q| gap[&(*q, *r)].0 > 0))
                .collect();
            assert!(certainly_last.len() <= 1);
            assert_eq!(
                row["last"].as_u64(),
                certainly_last.first().copied(),
                "{set_s} {name}"
            );
            if let Some(last) = row["last"].as_u64() {
                assert_eq!(lo_hi(&row["lateness"]), delay[&last], "{name}");
            }
        }
    }
}

fn import_text(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .arg("import")
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap(), text)
}

/// `--clocks-within 0` (one host clock, which is true of these ranks) is a declared relation:
/// rank 1's arrival at the all-reduce of step 3 is then exactly the 1.444495 ms the shared host
/// clock reads, and every answer that uses the declaration says so, in the summary and in eval.
#[test]
fn clocks_within_0_pins_the_arrivals_and_every_answer_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("case.json");
    let case_s = case.to_string_lossy().into_owned();
    let v = json_of(&[
        "import",
        "tests/data/ranks",
        "--clocks-within",
        "0",
        "--format",
        "json",
        "-o",
        &case_s,
    ]);
    let rows = v["ranks"]["collectives"].as_array().unwrap();
    assert_eq!(lo_hi(&rows[1]["lateness"]), (1_444_495, 1_444_495));
    assert_eq!(rows[1]["last"], 1);
    // Rank 0 arrived last at #0, 189.388 us after rank 1 (docs/ranks.md's worked example).
    assert_eq!(rows[0]["last"], 0);
    assert_eq!(lo_hi(&rows[0]["lateness"]), (189_388, 189_388));
    for r in rows {
        assert_eq!(
            r["arrivals"]["assumes"],
            serde_json::json!(["clocks-within 0 ns (declared)"])
        );
    }
    assert!(v["ranks"]["suggestions"].as_array().unwrap().is_empty());
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&case).unwrap()).unwrap();
    let declared: Vec<&serde_json::Value> = written["clock_relations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["source"] == "declared")
        .collect();
    assert_eq!(declared.len(), 1);
    assert_eq!(declared[0]["lo"], "0 ns");
    let eval = json_of(&["eval", &case_s, "--format", "json"]);
    let mut cross = 0;
    for a in eval["answers"].as_array().unwrap() {
        let id = a["id"].as_str().unwrap();
        if id.starts_with("arrival:") || id.starts_with("offset:") {
            cross += 1;
            let notes = a["notes"].to_string();
            assert!(
                notes.contains("assumes clocks-within 0 ns (declared)"),
                "{id}: {notes}"
            );
        }
    }
    assert_eq!(cross, 9);
    // A group naming both ranks is the same declaration.
    let g = json_of(&[
        "import",
        "tests/data/ranks",
        "--clocks-within",
        "0-1=0",
        "--format",
        "json",
    ]);
    assert_eq!(g["ranks"]["collectives"], v["ranks"]["collectives"]);
    // The text names the assumption.
    let (code, text) = import_text(&["tests/data/ranks", "--clocks-within", "0"]);
    assert_eq!(code, 0);
    assert!(
        text.contains("  assumes clocks-within 0 ns (declared)"),
        "{text}"
    );
    assert!(
        text.contains("offset:r0:r1: bounded [0 ns, 0 ns]; assumes clocks-within 0 ns (declared)"),
        "{text}"
    );
}

/// A declaration the collectives contradict is refused (exit 2), naming the instance; a loose
/// enough one is intersected with them; a bad duration names the accepted forms.
#[test]
fn a_declaration_the_collectives_contradict_is_refused_naming_the_collective() {
    let dir = tempfile::tempdir().unwrap();
    let shifted = shifted_rank1(dir.path(), 1_000_000);
    let (r0, r1) = (RANK0.to_owned(), shifted.to_string_lossy().into_owned());
    let (code, text) = import_text(&[&r0, &r1, "--clocks-within", "0"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("contradicts collective 0/allreduce#0: that instance alone puts offset(r1) − offset(r0) in [563.86 us, 1.227827 ms]"),
        "{text}"
    );
    // ±1.1 ms admits the shifted clock and cuts the collectives' [776.438 us, 1.227827 ms]:
    // the answer uses it and says so.
    let (code, text) = import_text(&[&r0, &r1, "--clocks-within", "1.1ms"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(
            "offset:r0:r1: bounded [776.438 us, 1.1 ms]; assumes clocks-within 1.1 ms (declared)\n"
        ),
        "{text}"
    );
    // ±1.5 ms is looser than the collectives on both sides: no answer uses it, none names it.
    let (code, text) = import_text(&[&r0, &r1, "--clocks-within", "1.5ms"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("offset:r0:r1: bounded [776.438 us, 1.227827 ms]\n"),
        "{text}"
    );
    for bad in ["1", "-1ms", "soon", "2-1=0", "0-1=fast"] {
        let (code, text) = import_text(&["tests/data/ranks", &format!("--clocks-within={bad}")]);
        assert_eq!(code, 2, "{bad}: {text}");
        assert!(
            text.contains("command line: --clocks-within: error[bad-value]"),
            "{text}"
        );
        assert!(
            text.contains("accepted forms: DURATION or RANKS=DURATION"),
            "{text}"
        );
    }
    let (code, text) = import_text(&[RANK0, "--clocks-within", "0"]);
    assert_eq!(code, 2);
    assert!(
        text.contains("relates the clocks of several ranks"),
        "{text}"
    );
}

/// Two ranks of one host: the traces' shared base time and distinct GPUs give a suggestion,
/// never an assumption (no declared relation appears without the option).
#[test]
fn ranks_of_one_host_get_a_suggestion_not_an_assumption() {
    let v = json_of(&["import", "tests/data/ranks", "--format", "json"]);
    let s = v["ranks"]["suggestions"].as_array().unwrap();
    assert_eq!(s.len(), 1);
    let s = s[0].as_str().unwrap();
    assert!(s.starts_with("suggestion (not assumed)"), "{s}");
    assert!(
        s.contains("baseTimeNanoseconds 1790857026000000000") && s.contains("gpu0, gpu1"),
        "{s}"
    );
    for r in v["ranks"]["collectives"].as_array().unwrap() {
        assert_eq!(r["arrivals"]["assumes"], serde_json::json!([]));
    }
    // Shifted by 1 ms, rank 1's base time differs: no suggestion.
    let dir = tempfile::tempdir().unwrap();
    let shifted = shifted_rank1(dir.path(), 1_000_000);
    let v = json_of(&[
        "import",
        RANK0,
        &shifted.to_string_lossy(),
        "--format",
        "json",
    ]);
    assert!(v["ranks"]["suggestions"].as_array().unwrap().is_empty());
}

/// The straggler finding on the real pair (one host clock; rank 1 does 12 matmuls instead of 4
/// in steps 3 and 6, PROVENANCE.md). Without a declaration the evidence decides the order at
/// those two instances only: no finding, and the summary says which declaration would decide
/// the rest. With `--clocks-within 0` (true here) rank 1 is last at 7 of 8, at #1 by exactly
/// the 1.444495 ms the host clock reads, and the finding names the assumption.
#[test]
fn the_straggler_finding_is_stated_only_where_the_evidence_or_a_declaration_decides_it() {
    let plain = json_of(&["import", "tests/data/ranks", "--format", "json"]);
    assert_eq!(plain["ranks"]["findings"], serde_json::json!([]));
    let undecided = plain["ranks"]["undecided"][0].as_str().unwrap();
    assert!(
        undecided.starts_with("undecided: rank 1 reads last at 7 of 8 collectives on the clocks as recorded, but the evidence decides only 2"),
        "{undecided}"
    );
    assert!(undecided.contains("W below 119.062 us"), "{undecided}");
    let r1 = &plain["ranks"]["stragglers"][1];
    assert_eq!((r1["last"].as_u64(), r1["of"].as_u64()), (Some(2), Some(8)));
    // Median of [1.216668, 1.338686] ms and [1.668057, 1.790075] ms: the lower ones.
    assert_eq!(lo_hi(&r1["median_delay"]), (1_216_668, 1_668_057));

    let declared = json_of(&[
        "import",
        "tests/data/ranks",
        "--clocks-within",
        "0",
        "--format",
        "json",
    ]);
    let f = &declared["ranks"]["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1);
    let f = &f[0];
    assert_eq!(f["code"], "straggler");
    assert_eq!(f["severity"], "warning");
    assert_eq!(
        (f["rank"].as_u64(), f["late_in"].as_u64(), f["of"].as_u64()),
        (Some(1), Some(7), Some(8))
    );
    // Delays 1.444495 ms, 144.852, 91.157, 1.566513 ms, 150.806, 119.062, 111.831 us: median 144.852 us.
    assert_eq!(
        f["delay_ns"],
        serde_json::json!({"lo": 144_852, "hi": 144_852})
    );
    assert_eq!(
        f["assumes"],
        serde_json::json!(["clocks-within 0 ns (declared)"])
    );
    assert!(f["step_from"]
        .as_str()
        .unwrap()
        .starts_with("median of 8 ProfilerStep ranges on rank 1"));
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("assumes clocks-within 0 ns (declared)"),
        "{msg}"
    );
    assert!(f["evidence"]["items"][0]
        .as_str()
        .unwrap()
        .starts_with("0/allreduce#1: rank 1 last, 1.444495 ms after the first arrival"));
    // The text prints it.
    let (_, text) = import_text(&["tests/data/ranks", "--clocks-within", "0"]);
    assert!(text.contains("warning straggler: rank 1 arrived last at 7 of 8 collectives, a median 144.852 us after the first rank"), "{text}");

    // The short all-reduces decide the order without a declaration: rank 1 is last at 30 of 40,
    // by a median of [49.275, 57.767] us, too little against the step to be a finding.
    let sync = json_of(&["import", "tests/data/ranks-sync", "--format", "json"]);
    assert_eq!(sync["ranks"]["findings"], serde_json::json!([]));
    let why = sync["ranks"]["undecided"][0].as_str().unwrap();
    assert!(
        why.starts_with("not a straggler finding: rank 1 arrived last at 30 of 40 collectives"),
        "{why}"
    );
}

/// Transfer against wait: per rank, the collective kernel time is split into waiting for the
/// last arrival and transferring. With `--clocks-within 0` (true for these ranks) the split is
/// exact: rank 0 waits at every instance rank 1 arrives last, rank 1 only at #0. Without the
/// declaration the bounds contain those true values.
#[test]
fn kernel_time_splits_into_wait_and_transfer_and_the_bounds_contain_the_truth() {
    let exact = json_of(&[
        "import",
        "tests/data/ranks",
        "--clocks-within",
        "0",
        "--format",
        "json",
    ]);
    let loose = json_of(&["import", "tests/data/ranks", "--format", "json"]);
    let mut true_wait = [0_i64; 2];
    for row in exact["ranks"]["collectives"].as_array().unwrap() {
        let gap = lo_hi(&row["arrivals"]["pairs"][0]["bound"]);
        assert_eq!(gap.0, gap.1, "exact on one clock");
        true_wait[0] += gap.0.max(0);
        true_wait[1] += (-gap.0).max(0);
    }
    // 1.444495 + 0.144852 + 0.091157 + 1.566513 + 0.150806 + 0.119062 + 0.111831 ms.
    assert_eq!(true_wait, [3_628_716, 189_388]);
    for (rank, want) in true_wait.iter().enumerate() {
        let e = &exact["ranks"]["comm_split"][rank];
        let kernel = e["kernel_ns"].as_i64().unwrap();
        assert_eq!(lo_hi(&e["wait"]), (*want, *want));
        assert_eq!(lo_hi(&e["transfer"]), (kernel - want, kernel - want));
        let l = &loose["ranks"]["comm_split"][rank];
        assert_eq!(l["kernel_ns"], e["kernel_ns"]);
        let (lo, hi) = lo_hi(&l["wait"]);
        assert!(
            lo <= *want && *want <= hi,
            "rank {rank}: [{lo}, {hi}] misses {want}"
        );
        let (lo, hi) = lo_hi(&l["transfer"]);
        assert!(lo <= kernel - want && kernel - want <= hi);
    }
    // The loose bounds as printed (sums of per-instance bounds).
    assert_eq!(
        lo_hi(&loose["ranks"]["comm_split"][0]["wait"]),
        (2_555_354, 5_227_824)
    );
}

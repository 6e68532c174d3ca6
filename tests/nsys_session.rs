//! The processes of one Nsight Systems export share the session clock (issue 25 §7, review
//! N15; docs/ranks.md, "Processes of one nsys session"): their readings compare exactly, a
//! picture draws them on one axis, and a process's waits answer only for its own work.
//!
//! The expected values were computed independently with Python's `sqlite3` from
//! `tests/data/nsys/mfu_2gpu_before.sqlite` (two processes, pid 144 on device 0 and pid 145
//! on device 1): the GPU rows (kernel, memcpy, memset; none with start = end = 0) of both
//! devices run from 60 111 513 113 ns to 60 411 390 119 ns, their naive sort-and-merge union
//! is 287 341 472 ns, and the `cudaStreamSynchronize` rows are 16 in process 144 and 17 in
//! process 145.

use std::path::Path;

use worksheet::case::raw::RawQuestion;
use worksheet::case::{load_case_str, Case};
use worksheet::engine::{evaluate, Outcome, Report};
use worksheet::import::nsys::import_nsys;
use worksheet::render::layout::{layout, LayoutOptions};
use worksheet::verdict::Verdict;

/// The export imported, with a question over the GPU work of both processes added.
fn mfu_with_both_devices() -> (Case, Report) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nsys/mfu_2gpu_before.sqlite");
    let mut raw = import_nsys(&path, "mfu").unwrap().case;
    let mut both = Vec::new();
    for q in &raw.questions {
        if let RawQuestion::Intervals {
            id,
            phases: Some(p),
            ..
        } = q
        {
            if id == "device:gpu0" || id == "device:gpu1" {
                both.extend(p.iter().cloned());
            }
        }
    }
    raw.questions.push(RawQuestion::Intervals {
        id: "both-processes".into(),
        phases: Some(both),
        expect: None,
    });
    let case = load_case_str(&raw.to_json_pretty(), "mfu").unwrap();
    let report = evaluate(&case);
    (case, report)
}

#[test]
fn the_processes_are_two_ids_of_one_clock() {
    let (case, _) = mfu_with_both_devices();
    let ids: Vec<&str> = case.clocks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["pid144", "pid145"]);
    assert_eq!(case.clocks[0].clock, case.clocks[1].clock);
    assert_eq!(case.clocks[0].clock.domain, "nsys-session");
    assert_eq!(
        case.clocks[0].clock.instance,
        "nsys session started at utcEpochNs 1779782330176752435"
    );
}

#[test]
fn work_of_both_processes_is_one_set_on_one_axis() {
    let (_, report) = mfu_with_both_devices();
    let answer = report.answer("both-processes").unwrap();
    let Outcome::Intervals(ia) = &answer.outcome else {
        panic!("{answer:?}")
    };
    assert!(ia.combined_unknown.is_none(), "{ia:?}");
    let set = ia.single().unwrap();
    assert_eq!(set.count, 5299);
    let extent = set.extent.unwrap();
    assert_eq!(
        (extent.start().as_i64(), extent.end().as_i64()),
        (60_111_513_113, 60_411_390_119)
    );
    assert_eq!(set.union_ns, 287_341_472);
}

#[test]
fn a_process_s_waits_answer_only_for_its_own_work() {
    let (_, report) = mfu_with_both_devices();
    for (id, own, count, other) in [
        ("completion:all-work-pid144", "gpu0-s7", 16, "gpu1-s15"),
        ("completion:all-work-pid145", "gpu1-s15", 17, "gpu0-s7"),
    ] {
        let answer = report.answer(id).unwrap();
        match answer.outcome.verdict() {
            Some(Verdict::Unknown { detail, .. }) => {
                assert!(detail.contains(&format!("({count} in all)")), "{detail}");
                assert!(detail.contains(&format!("on stream `{own}`")), "{detail}");
                assert!(
                    !detail.contains(other),
                    "{id} lists another process's wait: {detail}"
                );
            }
            other => panic!("{id}: {other:?}"),
        }
    }
}

#[test]
fn the_picture_draws_both_processes_on_one_axis() {
    let (case, _) = mfu_with_both_devices();
    let timeline = layout(&case, &LayoutOptions::default()).unwrap();
    let panels: Vec<&str> = timeline
        .panels
        .iter()
        .map(|p| p.clock_id.as_str())
        .collect();
    assert_eq!(panels, ["pid144 = pid145"]);
    let lanes: Vec<&str> = timeline.panels[0]
        .lanes
        .iter()
        .map(|l| l.title.as_str())
        .collect();
    assert!(lanes.iter().any(|l| l.contains("gpu0-s7")), "{lanes:?}");
    assert!(lanes.iter().any(|l| l.contains("gpu1-s15")), "{lanes:?}");
    let text = worksheet::render::text::render(
        &timeline,
        &worksheet::render::text::TextOptions::default(),
    );
    assert!(!text.contains("not comparable"), "{text}");
}

#[test]
fn the_perfetto_export_gives_both_processes_the_session_origin() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.json");
    assert_cmd::Command::cargo_bin("worksheet")
        .unwrap()
        .args([
            "export",
            "tests/data/nsys/mfu_2gpu_before.sqlite",
            "--perfetto",
        ])
        .arg(&out)
        .assert()
        .success();
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let origins = &trace["otherData"]["clock_origins_ns"];
    // One origin for both: the earliest GPU row of either process (process 145's, at
    // 60 111 513 113 ns; process 144's first is at 60 111 541 307 ns, by Python's sqlite3).
    assert_eq!(
        origins["pid144"].as_i64(),
        Some(60_111_513_113),
        "{origins}"
    );
    assert_eq!(
        origins["pid145"].as_i64(),
        Some(60_111_513_113),
        "{origins}"
    );
}

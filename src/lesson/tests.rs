//! Every built-in lesson end to end on a scripted clock and the simulator: its key passes
//! `check`, one wrong answer per question fails with its feedback, a bad run is sent back to
//! be re-run, a class of 30 synthetic students gives the expected summary, and malformed
//! lessons and answer sheets are refused naming the field.

use std::path::{Path, PathBuf};

use super::grade::{Expected, Graded, Mark};
use super::measure::ScriptedBench;
use super::model::Part;
use super::*;
use crate::lab::clock::{FakeClock, RunScript};
use crate::lab::work::{Digest, ScriptedWork};
use crate::units::Nanos;
use crate::verdict::Reason;

/// Runs of 20 us submission, work 35 us … 50.035 ms, result at 50.06 ms + `extra_us`.
fn bench(extra_us: i64) -> ScriptedBench {
    ScriptedBench {
        clock: FakeClock::new(
            Nanos::new(5_000_000_000),
            Nanos::new(100_000_000),
            RunScript::micros([20, 21, 35, 50_035, 50_060 + extra_us, 50_061 + extra_us]),
        ),
        work: ScriptedWork {
            digest: Digest(0xfeed),
            wrong: vec![],
        },
    }
}

fn started(lesson: &str, dir: &Path, bench: &mut ScriptedBench) -> String {
    let mut out = Vec::new();
    let outcome = start(lesson, dir, false, bench, &mut out).unwrap();
    assert_eq!(outcome, LessonOutcome::Ok);
    String::from_utf8(out).unwrap()
}

fn key_of(dir: &Path) -> Vec<KeyItem> {
    Folder::load(dir).unwrap().key().unwrap()
}

fn write_answers(dir: &Path, answers: &[(String, String)]) -> PathBuf {
    let text: String = answers
        .iter()
        .map(|(id, a)| format!("{id}: {a}\n"))
        .collect();
    let path = dir.join("answers.txt");
    std::fs::write(&path, text).unwrap();
    path
}

/// The key item of sheet line `id`.
fn item<'a>(key: &'a [KeyItem], id: &str) -> &'a KeyItem {
    key.iter().find(|k| k.id == id).unwrap()
}

/// The graded answer of sheet line `id`.
fn graded<'a>(r: &'a CheckResult, id: &str) -> &'a Graded {
    r.graded.iter().find(|g| g.id == id).unwrap()
}

fn right_answers(key: &[KeyItem]) -> Vec<(String, String)> {
    key.iter()
        .map(|k| (k.id.clone(), k.expected.to_string()))
        .collect()
}

/// A wrong answer of the right form: off by more than the tolerance, or the other verdict.
fn wrong_answer(k: &KeyItem) -> String {
    let off = |v: Nanos| Nanos::new(v.as_i64() + k.tolerance.as_i64() + 1_000);
    match &k.expected {
        Expected::Known(v) => format!("known {}", off(*v)),
        Expected::Unknown(_) => "known 140 us".to_owned(),
        Expected::Duration(v) => off(*v).to_string(),
        Expected::Count(n) => (n + 1).to_string(),
    }
}

fn run_lesson_end_to_end(lesson: &str) -> Vec<KeyItem> {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("student");
    started(lesson, &folder, &mut bench(0));
    for file in folder_files(&resolve(lesson).unwrap().0) {
        assert!(folder.join(file).is_file(), "{lesson}: {file} written");
    }
    // The blank sheet: everything missing, exit 1.
    let blank = check(&folder, None).unwrap();
    assert!(blank.graded.iter().all(|g| g.mark == Mark::Missing));
    assert_eq!(blank.outcome(), LessonOutcome::NotAllRight);
    // The key passes.
    let key = key_of(&folder);
    write_answers(&folder, &right_answers(&key));
    let right = check(&folder, None).unwrap();
    assert!(right.rerun.is_empty(), "{lesson}: {:?}", right.rerun);
    assert_eq!(
        right.outcome(),
        LessonOutcome::Ok,
        "{lesson}: {:?}",
        right.graded
    );
    // One wrong answer per question fails, with feedback quoting the evidence.
    for (i, k) in key.iter().enumerate() {
        let mut answers = right_answers(&key);
        answers[i].1 = wrong_answer(k);
        write_answers(&folder, &answers);
        let r = check(&folder, None).unwrap();
        assert_eq!(r.outcome(), LessonOutcome::NotAllRight);
        for (j, g) in r.graded.iter().enumerate() {
            if j == i {
                assert_eq!(g.mark, Mark::Wrong, "{lesson} {}", g.id);
                let l = resolve(lesson).unwrap().0;
                let q = l.questions.iter().find(|q| q.raw.id == k.question).unwrap();
                let verb = match k.part {
                    Part::Predict => "predicted",
                    Part::Measure => "answered",
                };
                assert!(
                    g.feedback
                        .starts_with(&format!("you {verb} `{}`, but {}", answers[i].1, q.raw.why)),
                    "{}",
                    g.feedback
                );
                assert!(
                    g.feedback
                        .contains(&format!("so the answer is {}", k.expected)),
                    "{}",
                    g.feedback
                );
                assert!(g.feedback.contains(&k.evidence), "{}", g.feedback);
            } else {
                assert_eq!(g.mark, Mark::Right, "{lesson} {}", g.id);
            }
        }
    }
    // The handout has every part, and the predictions come before any command.
    let handout = std::fs::read_to_string(folder.join("handout.md")).unwrap();
    for part in [
        "## Goals",
        "## The setup",
        "timeline: ",
        "## Part 1: predict",
        "## Part 2: measure",
        "worksheet lesson check",
    ] {
        assert!(handout.contains(part), "{lesson}: {part}");
    }
    let part2 = handout.find("## Part 2: measure").unwrap();
    assert!(handout.find("## Part 1: predict").unwrap() < part2);
    assert!(!handout[..part2].contains("worksheet eval"), "{lesson}");
    assert!(!handout[..part2].contains("cat "), "{lesson}");
    // The handout never prints an answer: no answers lane, no covered-time caption, no
    // statistics table, and no `question: value` label for any expected value.
    for line in handout.lines() {
        assert!(!line.starts_with("answers "), "{lesson}: {line}");
        assert!(!line.contains(": union "), "{lesson}: {line}");
        assert!(!line.contains("| caller total"), "{lesson}: {line}");
    }
    for k in &key {
        let value = match &k.expected {
            Expected::Known(v) | Expected::Duration(v) => v.to_string(),
            other => other.to_string(),
        };
        assert!(
            !handout.contains(&format!("{}: {value}", k.question)),
            "{lesson}: the handout prints the answer of {}",
            k.id
        );
        if let Expected::Unknown(_) = k.expected {
            assert!(
                !handout.contains(&k.expected.to_string()),
                "{lesson}: the handout prints the verdict of {}",
                k.id
            );
        }
    }
    // Every prediction expects its question's answer.
    for p in key.iter().filter(|k| k.part == Part::Predict) {
        assert_eq!(p.id, format!("predict.{}", p.question));
        assert_eq!(p.expected, item(&key, &p.question).expected);
    }
    assert!(
        key.iter().any(|k| k.part == Part::Predict),
        "{lesson} has a predict part"
    );
    key
}

/// The measure part of the key, in question order.
fn expected(key: &[KeyItem]) -> Vec<(&str, String)> {
    key.iter()
        .filter(|k| k.part == Part::Measure)
        .map(|k| (k.id.as_str(), k.expected.to_string()))
        .collect()
}

#[test]
fn three_boundaries_end_to_end() {
    let key = run_lesson_end_to_end("three-boundaries");
    assert_eq!(
        expected(&key),
        [
            ("submission", "known 40 us".to_owned()),
            ("completion-from-submission", "unknown (no-wait)".to_owned()),
            ("host-completion", "known 140 us".to_owned()),
            ("device-interval", "known 100 us".to_owned()),
            ("phases-union", "100 us".to_owned()),
        ]
    );
}

#[test]
fn overlap_arithmetic_end_to_end() {
    let key = run_lesson_end_to_end("overlap-arithmetic");
    assert_eq!(
        expected(&key),
        [
            ("sum", "140 us".to_owned()),
            ("union", "100 us".to_owned()),
            ("overlap", "40 us".to_owned()),
            ("max-depth", "2".to_owned()),
            ("phase-1-length", "80 us".to_owned()),
        ]
    );
}

#[test]
fn clocks_and_boots_end_to_end() {
    let key = run_lesson_end_to_end("clocks-and-boots");
    assert_eq!(
        expected(&key),
        [
            ("timer-across-reboot", "unknown (cross-instance)".to_owned()),
            ("marks-across-reboot", "unknown (cross-instance)".to_owned()),
            ("same-boot", "known 90 us".to_owned()),
            ("host-to-device", "unknown (cross-domain)".to_owned()),
        ]
    );
}

#[test]
fn executor_lab_end_to_end_on_a_fake_clock() {
    let key = run_lesson_end_to_end("executor-lab");
    assert_eq!(
        expected(&key),
        [
            ("submission-median", "20 us".to_owned()),
            ("total-median", "50.06 ms".to_owned()),
            ("completion-from-submission", "unknown (no-wait)".to_owned()),
            ("completion-1", "known 50.06 ms".to_owned()),
            ("jobs", "13".to_owned()),
            ("jobs-depth", "1".to_owned()),
        ]
    );
}

#[test]
fn warmup_statistics_end_to_end_on_a_fake_clock() {
    let key = run_lesson_end_to_end("warmup-statistics");
    assert_eq!(
        expected(&key),
        [
            ("warmups", "1".to_owned()),
            ("median", "50.06 ms".to_owned()),
            ("p90", "50.06 ms".to_owned()),
            ("max", "50.06 ms".to_owned()),
            ("steady-state", "unknown (single-warmup)".to_owned()),
        ]
    );
}

#[test]
fn warmup_statistics_reads_median_p90_and_max_by_nearest_rank() {
    // Run k (k = 1..=20 measured, after one warm-up at index 0) returns 10·k us later.
    let mut b = bench(0);
    for k in 1..=20 {
        b.clock = b.clock.with_run(
            k,
            RunScript::micros([
                20,
                21,
                35,
                50_035,
                50_060 + 10 * k as i64,
                50_061 + 10 * k as i64,
            ]),
        );
    }
    // The warm-up (index 0) is slow: 52 ms.
    b.clock = b
        .clock
        .with_run(0, RunScript::micros([20, 21, 35, 51_975, 52_000, 52_001]));
    let dir = tempfile::tempdir().unwrap();
    started("warmup-statistics", dir.path(), &mut b);
    let key = key_of(dir.path());
    // Ranks ceil(0.5·20) = 10, ceil(0.9·20) = 18, 20.
    let of = |id: &str| item(&key, id).expected.clone();
    assert_eq!(of("median"), Expected::Duration(Nanos::new(50_160_000)));
    assert_eq!(of("p90"), Expected::Duration(Nanos::new(50_240_000)));
    assert_eq!(of("max"), Expected::Duration(Nanos::new(50_260_000)));
    // "To the us": 50.1604 ms is within 1 us, 50.1611 ms is not.
    let mut answers = right_answers(&key);
    let median = answers.iter().position(|(k, _)| k == "median").unwrap();
    answers[median].1 = "50.1604 ms".into();
    write_answers(dir.path(), &answers);
    assert_eq!(
        check(dir.path(), None).unwrap().outcome(),
        LessonOutcome::Ok
    );
    answers[median].1 = "50.1611 ms".into();
    write_answers(dir.path(), &answers);
    let r = check(dir.path(), None).unwrap();
    assert_eq!(graded(&r, "median").mark, Mark::Wrong);
    // Counting the slow warm-up as a 21st run moves the median to rank 11, 50.17 ms: that
    // answer is named as the `warm-up-counted` misconception.
    answers[median].1 = "50.17 ms".into();
    write_answers(dir.path(), &answers);
    let r = check(dir.path(), None).unwrap();
    let g = graded(&r, "median");
    assert_eq!(
        g.misconception,
        Some(super::model::Misconception::WarmupCounted)
    );
    assert!(
        g.feedback
            .contains("That is the misconception *warm-up counted*"),
        "{}",
        g.feedback
    );
}

#[test]
fn cuda_streams_end_to_end_on_the_simulator() {
    let key = run_lesson_end_to_end("cuda-streams");
    assert_eq!(
        item(&key, "join-s1-to-join-s2").expected,
        Expected::Unknown(Reason::CrossStream)
    );
    // The engine's sum, union and overlap are the numbers the lab's own report prints.
    let dir = tempfile::tempdir().unwrap();
    let out = started("cuda-streams", dir.path(), &mut bench(0));
    assert!(out.contains("(SIMULATED)"), "{out}");
    let handout = std::fs::read_to_string(dir.path().join("handout.md")).unwrap();
    assert!(handout.contains("**SIMULATED.**"), "{handout}");
    assert!(handout.contains("--simulate"), "{handout}");
    let report = std::fs::read_to_string(dir.path().join("report.txt")).unwrap();
    for id in [
        "concurrent-busy",
        "concurrent-covered",
        "concurrent-overlap",
    ] {
        let k = item(&key, id);
        assert!(report.contains(&k.expected.to_string()), "{}", k.expected);
    }
}

#[test]
fn without_cuda_the_streams_lesson_asks_for_simulate() {
    #[cfg(not(feature = "cuda"))]
    {
        let dir = tempfile::tempdir().unwrap();
        let mut host = super::measure::HostBench { simulate: false };
        let e = start(
            "cuda-streams",
            dir.path(),
            false,
            &mut host,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(matches!(e, LessonError::NoCuda(_)), "{e:?}");
        assert!(e.to_string().contains("--simulate"), "{e}");
        assert!(!dir.path().join("case.json").exists());
    }
}

#[test]
fn the_feedback_of_a_wrong_answer_quotes_the_evidence() {
    let dir = tempfile::tempdir().unwrap();
    started("three-boundaries", dir.path(), &mut bench(0));
    std::fs::write(
        dir.path().join("answers.txt"),
        "submission: 40us\ncompletion-from-submission: 140 us\nhost-completion: known 140 µs\n\
         device-interval: unknown\nphases-union: 140 us\n",
    )
    .unwrap();
    let r = check(dir.path(), None).unwrap();
    let marks: Vec<Mark> = r
        .graded
        .iter()
        .filter(|g| g.part == Part::Measure)
        .map(|g| g.mark)
        .collect();
    assert_eq!(
        marks,
        [
            Mark::Right,
            Mark::Wrong,
            Mark::Right,
            Mark::Wrong,
            Mark::Wrong
        ]
    );
    let g = graded(&r, "completion-from-submission");
    assert_eq!(
        g.misconception,
        Some(super::model::Misconception::SubmissionReadAsCompletion)
    );
    assert_eq!(
        g.feedback,
        "you answered `140 us`, but the stopwatch stops before the wait, and a timestamp alone is \
         not a completion marker, so the answer is unknown (no-wait). That is the misconception \
         *submission read as completion* (`submission-read-as-completion`): a launch or submit \
         call returns when the work is queued, not when it is done; only a wait that covers the \
         work, before the stop, proves completion. Evidence: the engine answers \
         `completion-from-submission` (host-completion): unknown (no-wait), because timer \
         `submission` stops with no host wait between its start and stop: a timestamp alone is not \
         a completion marker. See the three-boundaries picture (the `v submission returned` mark \
         comes before the wait `*`)."
    );
    // The union answered with the sum: adding overlapping phases.
    let g = graded(&r, "phases-union");
    assert_eq!(
        g.misconception,
        Some(super::model::Misconception::AddingOverlappingPhases)
    );
    assert!(
        graded(&r, "device-interval")
            .feedback
            .starts_with("you answered `unknown`, but both events are timing-enabled")
            && graded(&r, "device-interval")
                .feedback
                .contains("so the answer is known 100 us. Evidence:"),
        "{}",
        graded(&r, "device-interval").feedback
    );
    let mut out = Vec::new();
    write_check(&r, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    println!("{text}");
    assert!(
        text.contains("WRONG    completion-from-submission: you answered `140 us`"),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "predicted 0 of 5 right, measured 2 of 5 right (lesson three-boundaries, answers from {})\n",
            dir.path().join("answers.txt").display()
        )),
        "{text}"
    );
}

#[test]
fn an_unknown_without_its_reason_is_wrong_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    started("three-boundaries", dir.path(), &mut bench(0));
    std::fs::write(
        dir.path().join("answers.txt"),
        "completion-from-submission: unknown\n",
    )
    .unwrap();
    let r = check(dir.path(), None).unwrap();
    let g = graded(&r, "completion-from-submission");
    assert_eq!(g.mark, Mark::Wrong);
    assert!(
        g.feedback
            .contains("so the answer is unknown (no-wait) (an unknown answer names its reason code, e.g. `unknown (no-wait)`)"),
        "{}",
        g.feedback
    );
    assert_eq!(g.misconception, None, "a bare unknown is not a number");
    assert_eq!(graded(&r, "submission").mark, Mark::Missing);
    assert!(graded(&r, "submission")
        .feedback
        .starts_with("no answer; the question asks: How long did submission take"));
    // A prediction left blank is asked with its own wording.
    assert!(graded(&r, "predict.submission")
        .feedback
        .starts_with("no answer; the question asks: From the host program's"));
}

#[test]
fn a_csv_sheet_is_read_like_the_text_sheet() {
    let dir = tempfile::tempdir().unwrap();
    started("overlap-arithmetic", dir.path(), &mut bench(0));
    std::fs::write(
        dir.path().join("answers.csv"),
        "question,answer\npredict.sum,140 us\npredict.union,100 us\npredict.overlap,40 us\n\
         predict.max-depth,2\npredict.phase-1-length,80 us\n\
         sum,140 us\nunion,100 us\nmeasure.overlap,40 us\nmax-depth,2\nphase-1-length,80us\n",
    )
    .unwrap();
    let r = check(dir.path(), None).unwrap();
    assert_eq!(r.outcome(), LessonOutcome::Ok);
    assert!(r.sheet.ends_with("answers.csv"));
}

#[test]
fn a_failed_digest_or_a_noisy_run_is_re_run_never_graded() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = bench(0);
    b.work.wrong = vec![5];
    started("executor-lab", dir.path(), &mut b);
    let key = key_of(dir.path());
    write_answers(dir.path(), &right_answers(&key));
    let r = check(dir.path(), None).unwrap();
    assert!(r.graded.is_empty());
    assert_eq!(r.outcome(), LessonOutcome::NotAllRight);
    assert_eq!(r.rerun.len(), 1, "{:?}", r.rerun);
    assert!(
        r.rerun[0]
            .contains("in series `total` (1 of 13), `submission` (1 of 13), `wait` (1 of 13)"),
        "{:?}",
        r.rerun
    );
    let mut out = Vec::new();
    write_check(&r, &mut out).unwrap();
    assert!(String::from_utf8(out)
        .unwrap()
        .starts_with("RE-RUN lesson executor-lab: nothing was graded"));

    // Noise: measured runs of 10, 100 and 200 ms (median 100 ms, MAD 90 ms > 50 %).
    let shape =
        |total_us: i64| RunScript::micros([20, 21, 35, total_us - 25, total_us, total_us + 1]);
    let mut clock = FakeClock::new(
        Nanos::new(5_000_000_000),
        Nanos::new(1_000_000_000),
        shape(100_000),
    );
    for (runs, total_us) in [([3, 4, 5], 10_000), ([10, 11, 12], 200_000)] {
        for k in runs {
            clock = clock.with_run(k, shape(total_us));
        }
    }
    let mut b = ScriptedBench {
        clock,
        work: bench(0).work,
    };
    let dir = tempfile::tempdir().unwrap();
    started("executor-lab", dir.path(), &mut b);
    write_answers(dir.path(), &right_answers(&key_of(dir.path())));
    let r = check(dir.path(), None).unwrap();
    assert!(r.graded.is_empty());
    assert_eq!(r.rerun.len(), 1, "{:?}", r.rerun);
    assert!(
        r.rerun[0].contains("series `total` is too noisy"),
        "{:?}",
        r.rerun
    );
}

#[test]
fn start_refuses_to_overwrite_without_force() {
    let dir = tempfile::tempdir().unwrap();
    started("three-boundaries", dir.path(), &mut bench(0));
    std::fs::write(dir.path().join("answers.txt"), "submission: 40 us\n").unwrap();
    let e = start(
        "three-boundaries",
        dir.path(),
        false,
        &mut bench(0),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(matches!(e, LessonError::Output(_)), "{e:?}");
    assert!(e.to_string().contains("lesson.json: error[exists]"), "{e}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("answers.txt")).unwrap(),
        "submission: 40 us\n"
    );
    start(
        "three-boundaries",
        dir.path(),
        true,
        &mut bench(0),
        &mut Vec::new(),
    )
    .unwrap();
}

#[test]
fn malformed_lessons_and_sheets_exit_2_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    // A lesson file with a misspelt field.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, BUILT_IN[0].1.replace("\"goals\"", "\"goal\"")).unwrap();
    let e = start(
        bad.to_str().unwrap(),
        &dir.path().join("x"),
        false,
        &mut bench(0),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(matches!(e, LessonError::Input(_)), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("bad.json") && text.contains("error[unknown-field]") && text.contains("goal"),
        "{text}"
    );
    // A lesson that names a case question that does not exist, found at check time.
    let folder = dir.path().join("f");
    started("three-boundaries", &folder, &mut bench(0));
    let lesson = std::fs::read_to_string(folder.join("lesson.json")).unwrap();
    std::fs::write(
        folder.join("lesson.json"),
        lesson.replace(
            "\"question\": \"device-interval\"",
            "\"question\": \"device-intervals\"",
        ),
    )
    .unwrap();
    let e = check(&folder, None).unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.code),
        ("questions[3].answer.question", "unknown-reference")
    );
    assert!(e.file.ends_with("lesson.json"), "{e}");
    std::fs::write(folder.join("lesson.json"), &lesson).unwrap();
    // Answer sheets: a line without `:`, an unknown question, a question twice, a bad CSV header.
    for (name, text, path, code, line) in [
        (
            "answers.txt",
            "# c\nsubmission 40 us\n",
            "line 2",
            "bad-syntax",
            2,
        ),
        (
            "answers.txt",
            "submission: 40 us\nsubmision: 40 us\n",
            "submision",
            "unknown-question",
            2,
        ),
        (
            "answers.txt",
            "submission: 40 us\nsubmission: 41 us\n",
            "submission",
            "duplicate-id",
            2,
        ),
        (
            "answers.csv",
            "id,answer\nsubmission,40 us\n",
            "header",
            "bad-header",
            1,
        ),
    ] {
        let sheet = folder.join(name);
        std::fs::write(&sheet, text).unwrap();
        let e = check(&folder, Some(&sheet)).unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.code, e.line),
            (path, code, Some(line)),
            "{e}"
        );
        assert!(e.file.ends_with(name));
    }
    // No sheet at all.
    std::fs::remove_file(folder.join("answers.txt")).unwrap();
    std::fs::remove_file(folder.join("answers.csv")).unwrap();
    assert_eq!(check(&folder, None).unwrap_err().code, "io");
    // A folder with no lesson in it.
    let e = check(dir.path(), None).unwrap_err();
    assert_eq!(e.code, "io");
    assert!(e.file.ends_with("lesson.json"));
}

#[test]
fn a_class_of_30_gives_the_expected_summary() {
    let root = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for s in 0..30_i64 {
        let dir = root.path().join(format!("student-{s:02}"));
        // Every student's machine is a little slower than the last: s us more per run.
        started("executor-lab", &dir, &mut bench(s));
        let key = key_of(&dir);
        let mut answers = right_answers(&key);
        let mut set = |id: &str, v: &str| {
            answers.iter_mut().find(|(k, _)| k == id).unwrap().1 = v.into();
        };
        if (20..25).contains(&s) {
            set("total-median", "50 ms"); // the target, not the measurement
        }
        if s >= 25 {
            set("completion-from-submission", "known 20 us"); // submission taken as completion
            set("predict.completion-from-submission", "known 20 us");
        }
        if s == 24 {
            set("completion-from-submission", "Unknown  (NO-WAIT)"); // right, however written
        }
        if (10..13).contains(&s) {
            set("predict.jobs", "10"); // the warm-ups forgotten
        }
        if s == 29 {
            set("completion-from-submission", "known 50.06 ms");
        }
        if s >= 28 {
            answers.retain(|(id, _)| id != "jobs"); // left out
        }
        write_answers(&dir, &answers);
        dirs.push(dir);
    }
    let summary = class_summary(&dirs).unwrap();
    type Part<'a> = (
        usize,
        usize,
        usize,
        Option<(&'a str, usize)>,
        Vec<(&'a str, usize)>,
    );
    fn part(p: &class::PartSummary) -> Part<'_> {
        (
            p.right,
            p.wrong,
            p.missing,
            p.most_common_wrong.as_ref().map(|(a, n)| (a.as_str(), *n)),
            p.misconceptions.clone(),
        )
    }
    let rows: Vec<(&str, Option<Part>, Part)> = summary
        .questions
        .iter()
        .map(|q| {
            (
                q.id.as_str(),
                q.predicted.as_ref().map(part),
                part(&q.measured),
            )
        })
        .collect();
    let src = "submission-read-as-completion";
    assert_eq!(
        rows,
        [
            ("submission-median", None, (30, 0, 0, None, vec![])),
            ("total-median", None, (25, 5, 0, Some(("50 ms", 5)), vec![])),
            (
                "completion-from-submission",
                Some((25, 5, 0, Some(("known 20 us", 5)), vec![(src, 5)])),
                (25, 5, 0, Some(("known 20 us", 4)), vec![(src, 5)])
            ),
            ("completion-1", None, (30, 0, 0, None, vec![])),
            (
                "jobs",
                Some((27, 3, 0, Some(("10", 3)), vec![])),
                (28, 0, 2, None, vec![])
            ),
            (
                "jobs-depth",
                Some((30, 0, 0, None, vec![])),
                (30, 0, 0, None, vec![])
            ),
        ]
    );
    // Every student's own numbers: the median (= P90, all runs alike) is 50.06 ms + s us.
    for (s, st) in summary.students.iter().enumerate() {
        let own = Some(Nanos::new(50_060_000 + 1_000 * s as i64));
        assert_eq!((st.median, st.p90), (own, own), "{}", st.name);
        assert_eq!(st.name, format!("student-{s:02}"));
    }
    assert_eq!(summary.students[0].right(), 9);
    assert_eq!(
        (
            summary.students[29].right_in(super::model::Part::Predict),
            summary.students[29].right_in(super::model::Part::Measure)
        ),
        (2, 4)
    );
    let mut out = Vec::new();
    class::write_text(&summary, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("lesson executor-lab: 30 student folder(s), 30 graded, 0 to re-run"),
        "{text}"
    );
    assert!(
        text.contains("| completion-from-submission | 25/30           | 25/30          | `known 20 us` (5×); submission-read-as-completion (5×)"),
        "{text}"
    );
    // N11: the series is named in the headers.
    assert!(
        text.contains("| student    | predicted | measured  | `total` median | `total` P90 |"),
        "{text}"
    );
    assert!(
        text.contains("| student-07 | 3/3 right | 6/6 right | 50.067 ms      | 50.067 ms   |"),
        "{text}"
    );
    let csv = String::from_utf8(class::csv(&summary).unwrap()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 31);
    assert!(lines[0].starts_with("student,status,right,questions,median,median_ns,p90,p90_ns,predict.completion-from-submission_answer,predict.completion-from-submission_mark"), "{}", lines[0]);
    assert!(
        lines[21].starts_with(
            "student-20,graded,8,9,50.08 ms,50080000,50.08 ms,50080000,unknown (no-wait),right,13,right,1,right,20 us,right,50 ms,wrong,"
        ),
        "{}",
        lines[21]
    );
    // One lesson at a time.
    let other = root.path().join("other");
    started("three-boundaries", &other, &mut bench(0));
    dirs.push(other);
    assert_eq!(class_summary(&dirs).unwrap_err().code, "mixed-lessons");
}

#[test]
fn every_file_in_lessons_is_built_in_and_valid() {
    let mut files: Vec<String> = std::fs::read_dir("lessons")
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    let mut built: Vec<String> = BUILT_IN
        .iter()
        .map(|(id, _)| format!("{id}.json"))
        .collect();
    built.sort();
    assert_eq!(files, built);
    let readme = std::fs::read_to_string("lessons/README.md").unwrap();
    for (id, text) in BUILT_IN {
        let l = parse_lesson(text, id).unwrap();
        assert_eq!(l.id(), id);
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "lessons/README.md lacks {id}"
        );
    }
    for code in [
        "bad-format",
        "unsupported-version",
        "unknown-fixture",
        "unknown-reference",
        "wrong-kind",
        "bad-header",
        "unknown-question",
        "mixed-lessons",
    ] {
        assert!(
            readme.contains(&format!("`{code}`")),
            "lessons/README.md lacks {code}"
        );
    }
    let mut out = Vec::new();
    write_list(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("| cuda-streams       | 20      | lab streams (CUDA, or --simulate)"),
        "{text}"
    );
}

#[test]
fn answers_given_at_prompts_are_saved_after_each_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    started("overlap-arithmetic", dir.path(), &mut bench(0));
    // An unreadable answer is asked again; an empty line skips; the input ends early.
    let mut out = Vec::new();
    let end = answer_folder(
        dir.path(),
        None,
        &mut &b"about 140\n140 us\n\n40us\n"[..],
        &mut out,
        true,
    )
    .unwrap();
    assert_eq!(end, fill::AnswerEnd::Interrupted);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("`about 140` cannot be read"), "{text}");
    let sheet = std::fs::read_to_string(dir.path().join("answers.txt")).unwrap();
    assert!(
        sheet.contains(
            "predict.sum: 140 us\npredict.union: \npredict.overlap: 40us\npredict.max-depth: \n"
        ),
        "{sheet}"
    );
    assert!(
        text.contains("Part 1, predict: from the handout's setup alone"),
        "{text}"
    );
    // Resumed: only the open lines are asked, the predictions first.
    let mut out = Vec::new();
    let end = answer_folder(
        dir.path(),
        None,
        &mut &b"100 us\n2\n80 us\n140 us\n100 us\n40 us\n2\n80 us\n"[..],
        &mut out,
        true,
    )
    .unwrap();
    assert_eq!(end, fill::AnswerEnd::Complete);
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("8 of 10 questions to answer"), "{text}");
    assert!(
        text.find("`predict.phase-1-length`").unwrap() < text.find("`sum`").unwrap(),
        "{text}"
    );
    assert_eq!(
        check(dir.path(), None).unwrap().outcome(),
        LessonOutcome::Ok
    );
}

/// Endless lines of `y` (what `yes |` gives).
struct Yes;

impl std::io::Read for Yes {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = if i % 2 == 0 { b'y' } else { b'\n' };
        }
        Ok(buf.len() - buf.len() % 2)
    }
}

/// Reliability review D1/D2 for `lesson answer`: from a pipe, endless input ends at the first
/// refused answer (exit 2, naming the sheet, the question and why), an endless line is refused
/// at the cap without being read whole, and what was answered before is saved.
#[test]
fn answers_from_a_pipe_end_at_the_first_refused_one() {
    let dir = tempfile::tempdir().unwrap();
    started("overlap-arithmetic", dir.path(), &mut bench(0));
    let sheet = dir.path().join("answers.txt");
    let mut input = std::io::BufReader::new(std::io::Read::chain(&b"140 us\n"[..], Yes));
    let mut out = Vec::new();
    let e = answer_folder(dir.path(), None, &mut input, &mut out, false).unwrap_err();
    let LessonError::Input(e) = e else {
        panic!("{e}")
    };
    assert_eq!(
        (e.file.as_str(), e.path.as_str(), e.code),
        (sheet.to_str().unwrap(), "predict.union", "bad-value")
    );
    assert!(
        e.message.starts_with("`y` cannot be read: write `known <duration>`")
            && e.message.ends_with("standard input is not a terminal, so the question is not asked again (answers before it are saved)"),
        "{}",
        e.message
    );
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.matches("cannot be read").count(), 1, "{text}");
    let saved = std::fs::read_to_string(&sheet).unwrap();
    assert!(
        saved.contains("predict.sum: 140 us\npredict.union: \n"),
        "{saved}"
    );
    // An endless line (`< /dev/zero`): refused at 1 KiB, having read 1 KiB and a byte.
    let mut zeros = std::io::BufReader::new(std::io::Read::take(std::io::repeat(b'0'), 1 << 30));
    let e = answer_folder(dir.path(), None, &mut zeros, &mut Vec::new(), false).unwrap_err();
    let LessonError::Input(e) = e else {
        panic!("{e}")
    };
    assert_eq!((e.path.as_str(), e.code), ("predict.union", "too-large"));
    assert!(
        e.message
            .starts_with("the answer is longer than 1024 bytes"),
        "{}",
        e.message
    );
    let left = std::io::Read::bytes(std::io::Read::take(&mut zeros, 1 << 21)).count();
    assert_eq!(left, (1 << 21), "the rest of the line is left unread");
    // Not UTF-8.
    let e = answer_folder(
        dir.path(),
        None,
        &mut &b"\xff\n"[..],
        &mut Vec::new(),
        false,
    )
    .unwrap_err();
    let LessonError::Input(e) = e else {
        panic!("{e}")
    };
    assert_eq!((e.path.as_str(), e.code), ("predict.union", "bad-syntax"));
    assert_eq!(
        std::fs::read_to_string(&sheet).unwrap(),
        saved,
        "nothing more saved"
    );
}

/// Lesson files and sheets are read through the one capped source: a sheet past 1 MiB is
/// `too-large` unread, a FIFO is refused without blocking.
#[test]
fn lesson_files_are_read_capped() {
    let dir = tempfile::tempdir().unwrap();
    started("overlap-arithmetic", dir.path(), &mut bench(0));
    let sheet = dir.path().join("answers.txt");
    std::fs::File::create(&sheet)
        .unwrap()
        .set_len(MAX_LESSON_FILE_BYTES + 1)
        .unwrap();
    let e = check(dir.path(), None).unwrap_err();
    assert_eq!(e.code, "too-large");
    assert_eq!(e.file, sheet.display().to_string());
    assert_eq!(
        e.message,
        "the file is larger than 1048576 bytes; a lesson file or answer sheet is expected"
    );
    #[cfg(unix)]
    {
        std::fs::remove_file(&sheet).unwrap();
        let c = std::ffi::CString::new(sheet.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = check(dir.path(), Some(&sheet)).unwrap_err();
        assert_eq!(e.code, "not-a-file");
    }
}

#[test]
fn a_class_counts_a_re_run_apart_and_grades_nobody_on_it() {
    let root = tempfile::tempdir().unwrap();
    let good = root.path().join("good");
    started("executor-lab", &good, &mut bench(0));
    write_answers(&good, &right_answers(&key_of(&good)));
    let bad = root.path().join("bad");
    let mut b = bench(0);
    b.work.wrong = vec![4];
    started("executor-lab", &bad, &mut b);
    write_answers(&bad, &right_answers(&key_of(&bad)));
    let summary = class_summary(&[good, bad]).unwrap();
    assert!(summary.questions.iter().all(|q| (
        q.measured.right,
        q.measured.wrong,
        q.measured.missing
    ) == (1, 0, 0)
        && q.predicted
            .as_ref()
            .is_none_or(|p| (p.right, p.wrong) == (1, 0))));
    assert_eq!(summary.students[1].rerun.len(), 1);
    let mut out = Vec::new();
    class::write_text(&summary, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("lesson executor-lab: 2 student folder(s), 1 graded, 1 to re-run"),
        "{text}"
    );
    assert!(
        text.contains("| bad     | re-run (not graded) | -         |"),
        "{text}"
    );
    let csv = String::from_utf8(class::csv(&summary).unwrap()).unwrap();
    assert!(
        csv.lines().nth(2).unwrap().starts_with("bad,re-run,0,9,"),
        "{csv}"
    );
}

#[test]
fn a_title_with_a_line_break_stays_on_the_sheets_comment_line() {
    // Found by the lesson fuzz target: "Clocks \nd boots" made a line `d boots: …` that the
    // sheet's reader took for an answer to an unknown question.
    let text = std::fs::read_to_string("lessons/clocks-and-boots.json").unwrap();
    let text = text.replacen(
        "\"title\": \"Clocks and boots",
        "\"title\": \"Clocks \\nand boots",
        1,
    );
    let lesson = crate::lesson::model::parse_lesson(&text, "l.json").unwrap();
    assert!(lesson.raw.title.contains('\n'), "{}", lesson.raw.title);
    let blank = crate::lesson::sheet::blank_sheet(&lesson);
    assert!(
        blank
            .lines()
            .next()
            .unwrap()
            .ends_with("Clocks  and boots: no number across two clocks"),
        "{blank}"
    );
    let answers = crate::lesson::sheet::read_sheet(&blank, false, &lesson, "answers.txt").unwrap();
    // Every line the blank sheet has is a question's (predict and measure), all unanswered.
    assert!(answers.len() >= lesson.questions.len(), "{answers:?}");
    assert!(answers.iter().all(|(_, a)| a.is_empty()), "{answers:?}");
}

#[test]
fn an_id_with_a_line_break_stays_on_the_sheets_comment_line() {
    // Found by the lesson fuzz target (crash 53ec26c9, campaign at d9bd0a0): an id with a line
    // break put a line `boot-…: …` on the blank sheet that its reader took for an answer.
    let text = std::fs::read_to_string("lessons/clocks-and-boots.json").unwrap();
    let text = text.replacen(
        "\"id\": \"clocks-and-boots\"",
        "\"id\": \"clocks\\nboots: and\"",
        1,
    );
    let lesson = crate::lesson::model::parse_lesson(&text, "l.json").unwrap();
    assert!(lesson.id().contains('\n'), "{}", lesson.id());
    let blank = crate::lesson::sheet::blank_sheet(&lesson);
    assert!(
        blank
            .lines()
            .next()
            .unwrap()
            .contains("`clocks boots: and`"),
        "{blank}"
    );
    let answers = crate::lesson::sheet::read_sheet(&blank, false, &lesson, "answers.txt").unwrap();
    assert!(answers.len() >= lesson.questions.len(), "{answers:?}");
    assert!(answers.iter().all(|(_, a)| a.is_empty()), "{answers:?}");
}

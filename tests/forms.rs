//! Boundary-declaration forms, end to end: `worksheet form new | fill | check [--capture]`
//! through the real binary, the fill walk through the library, the worksheets/ folder, the
//! malformed forms, and snapshots of what people see.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use worksheet::form::check::{check, contradictions, Problem};
use worksheet::form::fields::FIELDS;
use worksheet::form::fill::{fill, FillEnd, Session};
use worksheet::form::format::{load_form_str, parse_csv, parse_json, to_csv, to_json, FileFormat};
use worksheet::form::{check_form, read_form, RawForm};

const SEED_CASE: &str = "fixtures/cases/three-boundaries.json";

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// Answers to every prompt of a host-completion form, one line each, in asking order
/// (the question itself is chosen by `form new --question`). Empty lines take the
/// offered default.
const HOST_COMPLETION_ANSWERS: &[&str] = &[
    "seed run, typed in by hand",            // description
    "host clock read before record(start)",  // start.marker
    "host",                                  // start.clock.domain
    "boot-a",                                // start.clock.instance
    "host clock read after the wait on end", // stop.marker
    "",                                      // stop.clock.domain (default: host)
    "",                                      // stop.clock.instance (default: boot-a)
    "A, B",                                  // work_streams
    "A waits-on B",                          // dependencies
    "event",                                 // wait.scope
    "end",                                   // wait.event
    "",                                      // wait.stream (default: A)
    "start, measured-work, wait, stop",      // order
    "measured-work, wait",                   // included
    "-",                                     // excluded
    "0",                                     // warmup_runs
    "1",                                     // samples
    "",                                      // statistics (default: median, p90, max)
    "",                                      // steady_state (default: no)
    "",                                      // keep_all_samples (default: yes)
    "",                                      // keep_failures (default: yes)
    "question=host-completion",              // binding
];

fn lines(answers: &[&str]) -> String {
    answers.iter().map(|a| format!("{a}\n")).collect()
}

// ---------------------------------------------------------------------------------------
// form new

#[test]
fn blank_forms_are_snapshotted_per_question() {
    for q in [
        "submission",
        "device-interval",
        "host-completion",
        "end-to-end",
    ] {
        let out = worksheet()
            .args(["form", "new", "--question", q])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = stdout_of(&out);
        insta::assert_snapshot!(format!("blank-{q}"), text);
        // A blank is well-formed and has nothing but unanswered fields.
        let form = load_form_str(&text, FileFormat::Json, "blank.json").unwrap();
        let findings = check(&form);
        assert!(findings.iter().all(|f| f.problem == Problem::Unanswered));
    }
    let out = worksheet()
        .args([
            "form",
            "new",
            "--format",
            "csv",
            "--question",
            "host-completion",
        ])
        .output()
        .unwrap();
    insta::assert_snapshot!("blank-host-completion-csv", stdout_of(&out));
}

#[test]
fn a_blank_form_carries_an_explanation_for_every_field_it_shows() {
    let out = worksheet().args(["form", "new"]).output().unwrap();
    let text = stdout_of(&out);
    for f in FIELDS {
        assert!(text.contains(f.help), "no explanation for {}", f.path);
    }
}

#[test]
fn form_new_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("my.json");
    std::fs::write(&file, "keep me").unwrap();
    let out = worksheet()
        .args(["form", "new", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("error[exists]"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");

    let out = worksheet()
        .args(["form", "new", "--force", "--question", "submission", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(read_form(&file).is_ok());
    // Written through a temporary file that does not stay behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["my.json"]);
}

// ---------------------------------------------------------------------------------------
// form fill, through the binary

#[test]
fn a_newcomer_fills_a_form_by_answering_prompts_and_the_seed_capture_answers_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str], stdin: &str| {
        worksheet()
            .current_dir(dir.path())
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap()
    };
    let out = run(
        &[
            "form",
            "new",
            "--question",
            "host-completion",
            "-o",
            "my.json",
        ],
        "",
    );
    assert!(out.status.success());
    let out = run(
        &["form", "fill", "my.json"],
        &lines(HOST_COMPLETION_ANSWERS),
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let transcript = stdout_of(&out);
    assert!(transcript.contains("All fields answered"), "{transcript}");
    insta::assert_snapshot!("fill-host-completion-transcript", transcript);

    let out = run(&["form", "check", "my.json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));

    let case = root().join(SEED_CASE);
    let out = worksheet()
        .current_dir(dir.path())
        .args(["form", "check", "my.json", "--capture"])
        .arg(&case)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert!(stdout_of(&out).contains("answer:   known 140 us"));
}

#[test]
fn an_interrupted_fill_keeps_every_answer_and_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("my.json");
    worksheet()
        .args(["form", "new", "--question", "host-completion", "-o"])
        .arg(&file)
        .assert()
        .success();
    // First session: 7 answers, then the input ends (Ctrl-D, a closed pipe).
    let (first, rest) = HOST_COMPLETION_ANSWERS.split_at(7);
    let out = worksheet()
        .args(["form", "fill"])
        .arg(&file)
        .write_stdin(lines(first))
        .output()
        .unwrap();
    // review D1-D3: the end of input is exit 2, naming the field still to answer
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(
        text.contains("interrupted: 8 of 21 fields answered"),
        "{text}"
    );
    let err = stderr_of(&out);
    assert!(
        err.contains(": work_streams: error[end-of-input]: standard input ended")
            && err.contains("8 of 21 fields answered are saved"),
        "{err}"
    );
    let saved = read_form(&file).unwrap();
    let raw = saved.raw();
    assert_eq!(
        raw.stop
            .as_ref()
            .unwrap()
            .clock
            .as_ref()
            .unwrap()
            .instance
            .as_deref(),
        Some("boot-a")
    );
    assert!(raw.work_streams.is_none());
    // Second session: it starts at the first unanswered field.
    let out = worksheet()
        .args(["form", "fill"])
        .arg(&file)
        .write_stdin(lines(rest))
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(
        text.contains("[9/21, more may follow] work_streams"),
        "{text}"
    );
    assert!(!text.contains("start.marker"), "{text}");
    assert!(text.contains("All fields answered"), "{text}");
    worksheet()
        .args(["form", "check"])
        .arg(&file)
        .assert()
        .code(0);
    // The same answers in one session give the same form.
    let whole = dir.path().join("whole.json");
    worksheet()
        .args(["form", "new", "--question", "host-completion", "-o"])
        .arg(&whole)
        .assert()
        .success();
    worksheet()
        .args(["form", "fill"])
        .arg(&whole)
        .write_stdin(lines(HOST_COMPLETION_ANSWERS))
        .assert()
        .success();
    let a = read_form(&file).unwrap().into_raw();
    let mut b = read_form(&whole).unwrap().into_raw();
    b.name = a.name.clone();
    assert_eq!(a, b);
}

#[test]
fn fill_refuses_a_clock_without_an_instance_and_asks_again() {
    // At a terminal (retry) a refused answer is asked again.
    let blank =
        worksheet::form::format::blank(Some(worksheet::form::QuestionKind::Submission), None);
    let mut input = std::io::Cursor::new("-\nclock read before launch\nhost\n\n   \nboot-a\n");
    let mut out = Vec::new();
    let outcome = fill(
        blank,
        "new.json",
        Session {
            echo: true,
            retry: true,
        },
        &mut input,
        &mut out,
        &mut |_| Ok(()),
    )
    .unwrap();
    assert_eq!(outcome.end, FillEnd::Interrupted);
    let text = String::from_utf8(out).unwrap();
    insta::assert_snapshot!("fill-refuses-clock-without-instance", text);
    let refusals = text.matches("refused: a clock without an instance").count();
    assert_eq!(refusals, 2, "{text}");
    assert_eq!(
        outcome
            .form
            .start
            .as_ref()
            .unwrap()
            .clock
            .as_ref()
            .unwrap()
            .instance
            .as_deref(),
        Some("boot-a")
    );
}

/// Runs `form fill FILE` (a host-completion form, created here) with `stdin`, under a
/// 30 s watchdog: the review's hangs (D1, D2) must end by themselves.
fn fill_with_stdin(dir: &Path, stdin: Vec<u8>) -> std::process::Output {
    let file = dir.join("z.json");
    if !file.exists() {
        worksheet()
            .args(["form", "new", "--question", "host-completion", "-o"])
            .arg(&file)
            .assert()
            .success();
    }
    worksheet()
        .args(["form", "fill"])
        .arg(&file)
        .timeout(std::time::Duration::from_secs(30))
        .write_stdin(stdin)
        .output()
        .unwrap()
}

#[test]
fn endless_or_refused_stdin_ends_at_once_with_exit_2_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    // review D1: `/dev/zero` (an endless line): refused at the cap, read no further
    let out = fill_with_stdin(dir.path(), vec![0u8; 8 << 20]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("z.json: description: error[too-large]: the answer on standard input is refused: the answer is longer than 16384 bytes"),
        "{err}"
    );
    // review D2: `yes |` and `yes '' |` re-prompted forever; now the first refusal ends it
    let mut yes = Vec::new();
    for _ in 0..200_000 {
        yes.extend_from_slice(b"y\n");
    }
    let mut answers = lines(&HOST_COMPLETION_ANSWERS[..8]).into_bytes();
    answers.extend_from_slice(&yes);
    let out = fill_with_stdin(dir.path(), answers);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.contains("z.json: dependencies: error[bad-value]: the answer on standard input is refused: `y` is not a dependency")
            && err.contains("not asked again (9 of 21 fields answered are saved)"),
        "{err}"
    );
    assert_eq!(stdout_of(&out).matches("refused:").count(), 1);
    let empty = fill_with_stdin(dir.path(), vec![b'\n'; 400_000]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(
        stderr_of(&empty).contains(
            "wait.scope: error[bad-value]: the answer on standard input is refused: an answer is needed"
        ),
        "{}",
        stderr_of(&empty)
    );
    // review unclear message 3: invalid UTF-8 names the file, the field and stdin
    let out = fill_with_stdin(dir.path(), b"\xff\xfe\n".to_vec());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains(": error[bad-syntax]: the answer on standard input is refused: the answer is not UTF-8 text"),
        "{}",
        stderr_of(&out)
    );
    // what was answered before is kept, and the form still reads
    let form = read_form(&dir.path().join("z.json")).unwrap();
    assert_eq!(form.raw().work_streams, Some(vec!["A".into(), "B".into()]));
}

#[test]
fn an_answer_the_form_cannot_hold_is_refused_and_the_form_stays_readable() {
    // review D3: a 200 MB answer was saved into a form nothing could read back
    let dir = tempfile::tempdir().unwrap();
    let mut big = vec![b'x'; 200 * 1024];
    big.push(b'\n');
    let out = fill_with_stdin(dir.path(), big);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("error[too-large]"),
        "{}",
        stderr_of(&out)
    );
    worksheet()
        .args(["form", "check"])
        .arg(dir.path().join("z.json"))
        .assert()
        .code(1);
    // --set too
    let value = format!("description={}", "x".repeat(16 * 1024 + 1));
    let out = worksheet()
        .args(["form", "fill", "--no-prompt", "--set", &value])
        .arg(dir.path().join("z.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("description: error[too-large]"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn prompts_take_numbered_choices_and_refuse_escapes_and_instances_as_domains() {
    // review ux N7: `1` refused for a domain; an End key's escape stored; `boot-a` a domain
    let dir = tempfile::tempdir().unwrap();
    let out = fill_with_stdin(dir.path(), b"-\nmarker\n1\nboot-a\n".to_vec());
    assert_eq!(out.status.code(), Some(2));
    let form = read_form(&dir.path().join("z.json")).unwrap();
    let clock = form.raw().start.as_ref().unwrap().clock.clone().unwrap();
    assert_eq!(clock.domain.as_deref(), Some("host"));
    assert_eq!(clock.instance.as_deref(), Some("boot-a"));
    assert!(stderr_of(&out).contains("stop.marker: error[end-of-input]"));
    let out = fill_with_stdin(dir.path(), b"\x1b[4~\n".to_vec());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("stop.marker: error[bad-value]: the answer on standard input is refused: the answer holds a control character at byte 0: ESC"),
        "{}",
        stderr_of(&out)
    );
    let out = fill_with_stdin(dir.path(), b"after the wait\nboot-a\n".to_vec());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("stop.clock.domain: error[bad-value]: the answer on standard input is refused: `boot-a` is not a clock domain"),
        "{}",
        stderr_of(&out)
    );
    // and through --set
    let out = worksheet()
        .args([
            "form",
            "fill",
            "--no-prompt",
            "--set",
            "stop.clock.domain=boot-a",
        ])
        .arg(dir.path().join("z.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("is not a clock domain"));
}

#[cfg(unix)]
#[test]
fn fill_names_a_symlink_loop_not_an_existing_file() {
    // review unclear message 1: `loop.json -> loop.json` gave `error[exists] ... --force`
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("loop.json");
    std::os::unix::fs::symlink("loop.json", &link).unwrap();
    let out = worksheet()
        .args(["form", "fill", "--no-prompt"])
        .arg(&link)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        !err.contains("--force") && !err.contains("error[exists]"),
        "{err}"
    );
    assert!(
        err.contains("symbolic links") || err.contains("symlink-loop"),
        "{err}"
    );
}

#[test]
fn fill_set_works_without_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = worksheet();
    cmd.current_dir(dir.path()).args([
        "form",
        "fill",
        "lab.json",
        "--question",
        "device-interval",
        "--no-prompt",
    ]);
    for set in [
        "description=a lab's event pair, set from a script",
        "start.marker=record(start) in stream s0",
        "start.clock.domain=device",
        "start.clock.instance=gpu0-ctx1",
        "start.stream=A",
        "stop.marker=record(end) in stream s0",
        "stop.clock.domain=device",
        "stop.clock.instance=gpu0-ctx1",
        "stop.stream=A",
        "dependencies=A waits-on B",
        "wait.scope=event",
        "wait.event=end",
        "wait.stream=A",
        "order=start, measured-work, stop, wait",
        "included=measured-work",
        "excluded=wait",
        "warmup_runs=3",
        "samples=30",
        "statistics=median, p90, max",
        "steady_state=yes",
        "keep_all_samples=yes",
        "keep_failures=yes",
        "binding=start_event=start, end_event=end",
    ] {
        cmd.arg("--set").arg(set);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).contains("24 of 24 fields answered"),
        "{}",
        stdout_of(&out)
    );
    let out = worksheet()
        .current_dir(dir.path())
        .args(["form", "check", "lab.json", "--capture"])
        .arg(root().join(SEED_CASE))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert!(stdout_of(&out).contains("answer:   known 100 us"));
}

#[test]
fn a_refused_set_value_exits_2_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    for (set, field) in [
        ("samples=lots", "samples"),
        ("wait.scope=sometimes", "wait.scope"),
        ("start.clock.instance=", "start.clock.instance"),
        ("sampels=3", "sampels"),
        ("included=warmup", "included"),
    ] {
        let out = worksheet()
            .current_dir(dir.path())
            .args([
                "form",
                "fill",
                "x.json",
                "--question",
                "host-completion",
                "--no-prompt",
            ])
            .args(["--set", "order=start, measured-work, stop", "--set", set])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{set}");
        assert!(
            stderr_of(&out).contains(&format!(": {field}")),
            "{set}: {}",
            stderr_of(&out)
        );
    }
}

#[test]
fn a_csv_form_fills_and_checks_like_json() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str], stdin: &str| {
        worksheet()
            .current_dir(dir.path())
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap()
    };
    assert!(run(
        &[
            "form",
            "new",
            "--question",
            "host-completion",
            "-o",
            "my.csv"
        ],
        ""
    )
    .status
    .success());
    let out = run(&["form", "fill", "my.csv"], &lines(HOST_COMPLETION_ANSWERS));
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(dir.path().join("my.csv")).unwrap();
    assert!(text.starts_with("field,value,explanation\n"), "{text}");
    assert!(text.contains("work_streams,\"A, B\","), "{text}");
    assert_eq!(run(&["form", "check", "my.csv"], "").status.code(), Some(0));
}

// ---------------------------------------------------------------------------------------
// form fill, through the library

#[test]
fn the_library_walk_saves_after_every_answer() {
    let blank = load_form_str(
        &to_json(
            &worksheet::form::format::blank(
                Some(worksheet::form::QuestionKind::HostCompletion),
                None,
            ),
            true,
        ),
        FileFormat::Json,
        "my.json",
    )
    .unwrap()
    .into_raw();
    let mut saves: Vec<RawForm> = Vec::new();
    let mut input = std::io::Cursor::new(lines(&HOST_COMPLETION_ANSWERS[..5]));
    let mut out = Vec::new();
    let outcome = fill(
        blank,
        "my.json",
        Session {
            echo: true,
            retry: false,
        },
        &mut input,
        &mut out,
        &mut |f| {
            saves.push(f.clone());
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(outcome.end, FillEnd::Interrupted);
    assert_eq!(outcome.accepted, 5);
    assert_eq!(saves.len(), 5);
    assert_eq!(saves.last().unwrap(), &outcome.form);

    // Resume from what was saved.
    let mut input = std::io::Cursor::new(lines(&HOST_COMPLETION_ANSWERS[5..]));
    let mut out = Vec::new();
    let outcome = fill(
        saves.last().unwrap().clone(),
        "my.json",
        Session::default(),
        &mut input,
        &mut out,
        &mut |_| Ok(()),
    )
    .unwrap();
    assert_eq!(outcome.end, FillEnd::Complete);
    let form = worksheet::form::validate(outcome.form, "my").unwrap();
    assert_eq!(check(&form), Vec::new());
}

#[test]
fn the_library_walk_shows_a_contradiction_as_soon_as_an_answer_creates_it() {
    let mut answers = HOST_COMPLETION_ANSWERS.to_vec();
    answers[8] = "-"; // no dependencies: the wait on `end` in A cannot cover B
    let mut input = std::io::Cursor::new(lines(&answers));
    let mut out = Vec::new();
    let blank =
        worksheet::form::format::blank(Some(worksheet::form::QuestionKind::HostCompletion), None);
    let outcome = fill(
        blank,
        "my.json",
        Session::default(),
        &mut input,
        &mut out,
        &mut |_| Ok(()),
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let at = text
        .find("contradiction[wait-scope-misses-work]")
        .expect(&text);
    // It is shown right after the wait's stream is answered, before `order` is asked.
    assert!(at < text.find("] order").unwrap(), "{text}");
    assert_eq!(outcome.end, FillEnd::Complete);
    assert!(text.contains("1 contradiction(s):"), "{text}");
}

// ---------------------------------------------------------------------------------------
// form check

#[test]
fn check_output_is_snapshotted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("contradictory.json"),
        r#"{
  "format": "worksheet-form", "version": 1,
  "question": "host-completion",
  "start": {"marker": "before launch", "clock": {"domain": "host", "instance": "boot-a"}},
  "stop": {"marker": "after the last call", "clock": {"domain": "host"}},
  "work_streams": ["A", "B"],
  "wait": {"scope": "none"},
  "order": ["warm-up", "start", "measured-work", "stop", "result-copy"],
  "included": ["warm-up", "measured-work", "result-copy"],
  "excluded": [],
  "warmup_runs": 1, "samples": 10, "statistics": ["median", "p90", "max"],
  "steady_state": true, "keep_all_samples": true
}
"#,
    )
    .unwrap();
    let out = worksheet()
        .current_dir(dir.path())
        .args(["form", "check", "contradictory.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout_of(&out);
    insta::assert_snapshot!("check-contradictory", text);
    for code in [
        "completion-without-wait",
        "clock-without-instance",
        "stop-before-included-work",
        "warmup-in-samples",
        "steady-state-single-warmup",
    ] {
        assert!(
            text.contains(&format!("contradiction[{code}]")),
            "{code}: {text}"
        );
    }
    let out = worksheet()
        .current_dir(dir.path())
        .args(["form", "check", "contradictory.json", "--format", "json"])
        .output()
        .unwrap();
    insta::assert_snapshot!("check-contradictory-json", stdout_of(&out));
}

#[test]
fn check_with_capture_prints_the_seed_answers_beside_the_questions() {
    for (form, value) in [
        ("seed-submission", "known 40 us"),
        ("seed-device-interval", "known 100 us"),
        ("seed-host-completion", "known 140 us"),
    ] {
        let out = worksheet()
            .args([
                "form",
                "check",
                &format!("worksheets/{form}.json"),
                "--capture",
                SEED_CASE,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
        let text = stdout_of(&out);
        assert!(text.contains(&format!("answer:   {value}")), "{text}");
        insta::assert_snapshot!(format!("check-capture-{form}"), text);
    }
}

#[test]
fn check_with_capture_reports_unknown_with_its_reason_and_exits_1() {
    // The seed completion form against the case where the wait targets an earlier event.
    let out = worksheet()
        .args([
            "form",
            "check",
            "worksheets/seed-host-completion.json",
            "--capture",
            "fixtures/cases/wait-on-other-event.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout_of(&out);
    insta::assert_snapshot!("check-capture-unknown", text);
    assert!(text.contains("unknown (wait-misses-work)"), "{text}");
}

#[test]
fn check_with_capture_binds_by_timer_and_by_events() {
    let dir = tempfile::tempdir().unwrap();
    let seed =
        std::fs::read_to_string(root().join("worksheets/seed-host-completion.json")).unwrap();
    let by_timer = seed.replace(
        r#""question": "host-completion"}"#,
        r#""timer": "completion"}"#,
    );
    assert_ne!(seed, by_timer);
    std::fs::write(dir.path().join("timer.json"), by_timer).unwrap();
    let out = worksheet()
        .args(["form", "check"])
        .arg(dir.path().join("timer.json"))
        .args(["--capture", SEED_CASE])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert!(stdout_of(&out).contains("bound by timer `completion`"));
    assert!(stdout_of(&out).contains("known 140 us"));
}

#[test]
fn check_with_capture_reports_where_the_capture_disagrees() {
    let dir = tempfile::tempdir().unwrap();
    let seed =
        std::fs::read_to_string(root().join("worksheets/seed-device-interval.json")).unwrap();
    let other = seed
        .replace(
            r#""stream": "A"
  },
  "dependencies""#,
            r#""stream": "B"
  },
  "dependencies""#,
        )
        .replace(r#""waits_on": "B""#, r#""waits_on": "C""#);
    let other = other.replacen(r#""domain": "device""#, r#""domain": "host""#, 1);
    std::fs::write(dir.path().join("other.json"), other).unwrap();
    let out = worksheet()
        .current_dir(dir.path())
        .args(["form", "check", "other.json", "--capture"])
        .arg(root().join(SEED_CASE))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout_of(&out);
    assert!(
        text.contains("contradiction[capture-clock-mismatch]"),
        "{text}"
    );
    assert!(
        text.contains("contradiction[capture-stream-mismatch]"),
        "{text}"
    );
}

#[test]
fn check_with_a_binding_the_capture_lacks_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let seed =
        std::fs::read_to_string(root().join("worksheets/seed-host-completion.json")).unwrap();
    std::fs::write(
        dir.path().join("x.json"),
        seed.replace(
            r#""question": "host-completion"}"#,
            r#""question": "nope"}"#,
        ),
    )
    .unwrap();
    let out = worksheet()
        .args(["form", "check"])
        .arg(dir.path().join("x.json"))
        .args(["--capture", SEED_CASE])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("binding.question: error[unknown-reference]"));
}

// ---------------------------------------------------------------------------------------
// worksheets/

fn forms_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("json" | "csv")))
        .collect();
    files.sort();
    files
}

#[test]
fn every_form_in_worksheets_checks() {
    let files = forms_in(&root().join("worksheets"));
    assert!(files.len() >= 7, "{files:?}");
    for path in files {
        let label = path.display().to_string();
        let form = read_form(&path).unwrap_or_else(|e| panic!("{e}"));
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let result = check_form(&form, &label, None).unwrap();
        if stem == "blank" {
            assert!(
                result
                    .findings
                    .iter()
                    .all(|f| f.problem == Problem::Unanswered),
                "{label}: {:?}",
                result.findings
            );
            continue;
        }
        assert!(result.passed(), "{label}: {:#?}", result.findings);
        // A form bound to a capture that exists is checked against it.
        let capture = form.raw().binding.as_ref().and_then(|b| b.capture.clone());
        let Some(capture) = capture.map(|c| root().join(c)).filter(|c| c.exists()) else {
            continue;
        };
        let case = worksheet::case::load_case_file(&capture).unwrap();
        let result = check_form(&form, &label, Some((&case, &capture.display().to_string())))
            .unwrap_or_else(|e| panic!("{e}"));
        let answer = result.capture.as_ref().unwrap();
        if stem.starts_with("seed-") {
            assert!(result.passed(), "{label}: {answer:#?}");
        } else {
            assert!(answer.answer.is_some(), "{label}: {answer:#?}");
            for f in &answer.findings {
                eprintln!("{label}: {f}");
            }
        }
    }
}

#[test]
fn worksheets_blank_files_are_what_form_new_prints() {
    let out = worksheet()
        .args(["form", "new", "--name", "blank"])
        .output()
        .unwrap();
    assert_eq!(
        stdout_of(&out),
        std::fs::read_to_string(root().join("worksheets/blank.json")).unwrap()
    );
    let out = worksheet()
        .args(["form", "new", "--name", "blank", "--format", "csv"])
        .output()
        .unwrap();
    assert_eq!(
        stdout_of(&out),
        std::fs::read_to_string(root().join("worksheets/blank.csv")).unwrap()
    );
}

#[test]
fn the_worksheets_readme_documents_every_field_and_code() {
    let readme = std::fs::read_to_string(root().join("worksheets/README.md")).unwrap();
    for f in FIELDS {
        assert!(
            readme.contains(f.help),
            "README lacks the explanation of {}",
            f.path
        );
    }
    for p in Problem::ALL {
        assert!(
            readme.contains(&format!("`{}`", p.code())),
            "README lacks {}",
            p.code()
        );
    }
    for code in worksheet::form::FORM_ERROR_CODES {
        assert!(
            readme.contains(&format!("`{code}`")),
            "README lacks error {code}"
        );
    }
    for file in forms_in(&root().join("worksheets")) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            readme.contains(&format!("`{name}`")),
            "README does not describe {name}"
        );
    }
}

#[test]
fn forms_round_trip_through_json_and_csv() {
    for file in forms_in(&root().join("worksheets")) {
        let form = read_form(&file).unwrap().into_raw();
        assert_eq!(
            parse_json(&to_json(&form, true)).unwrap(),
            form,
            "{}",
            file.display()
        );
        assert_eq!(
            parse_json(&to_json(&form, false)).unwrap(),
            form,
            "{}",
            file.display()
        );
        assert_eq!(
            parse_csv(&to_csv(&form)).unwrap(),
            form,
            "{}",
            file.display()
        );
    }
}

// ---------------------------------------------------------------------------------------
// malformed forms

/// Every file in tests/data/malformed-forms/, with the field and code its error names.
const MALFORMED: &[(&str, &str, &str)] = &[
    ("bad-value.csv", "samples", "bad-value"),
    (
        "binding-half-event-pair.json",
        "binding.end_event",
        "missing-field",
    ),
    (
        "binding-timer-for-device-interval.json",
        "binding.timer",
        "bad-binding",
    ),
    (
        "binding-two-targets.json",
        "binding.question",
        "bad-binding",
    ),
    ("clock-as-text.json", "start.clock", "wrong-type"),
    ("duplicate-field.json", "question", "duplicate-field"),
    ("duplicate-step.json", "order[2]", "duplicate-step"),
    ("empty-step.json", "order[1]", "empty-step"),
    ("empty.json", "$", "bad-syntax"),
    ("missing-version.json", "version", "missing-field"),
    ("misspelled-field.json", "questoin", "unknown-field"),
    (
        "misspelled-nested-field.json",
        "start.clock.instanse",
        "unknown-field",
    ),
    ("negative-warmup.json", "warmup_runs", "bad-value"),
    ("no-header.csv", "$", "bad-syntax"),
    ("not-an-object.json", "$", "not-an-object"),
    ("reserved-step.json", "included[0]", "reserved-step"),
    ("samples-not-a-number.json", "samples", "wrong-type"),
    ("self-dependency.json", "dependencies[0]", "bad-value"),
    ("truncated.json", "$", "bad-syntax"),
    ("unknown-field.csv", "sampels", "unknown-field"),
    ("unknown-question.json", "question", "unknown-variant"),
    ("unknown-statistic.json", "statistics[1]", "unknown-variant"),
    ("unknown-step.json", "included[0]", "unknown-step"),
    ("unknown-wait-scope.json", "wait.scope", "unknown-variant"),
    (
        "wait-event-with-device-scope.json",
        "wait.event",
        "bad-value",
    ),
    ("wrong-format.json", "format", "unsupported-format"),
    ("wrong-version.json", "version", "unsupported-version"),
    ("zero-samples.json", "samples", "bad-value"),
];

#[test]
fn malformed_forms_exit_2_naming_the_field_never_panicking() {
    let dir = root().join("tests/data/malformed-forms");
    let files: Vec<String> = forms_in(&dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let listed: Vec<String> = MALFORMED.iter().map(|(f, _, _)| f.to_string()).collect();
    assert_eq!(files, listed, "every malformed form is listed once");
    let mut messages = String::new();
    for (file, field, code) in MALFORMED {
        let path = dir.join(file);
        let err = read_form(&path).unwrap_err();
        assert_eq!(
            (err.path.as_str(), err.code),
            (*field, *code),
            "{file}: {err}"
        );
        for (i, command) in [&["form", "check"][..], &["form", "fill", "--no-prompt"][..]]
            .into_iter()
            .enumerate()
        {
            let out = worksheet()
                .current_dir(&dir)
                .args(command)
                .arg(file)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{file}");
            let stderr = stderr_of(&out);
            assert!(!stderr.contains("panicked"), "{file}: {stderr}");
            if i == 0 {
                messages.push_str(&stderr);
            }
            assert!(
                stderr.contains(&format!(": {field}: error[{code}]")),
                "{file}: {stderr}"
            );
        }
    }
    insta::assert_snapshot!("malformed-form-messages", messages);
}

#[test]
fn contradictions_exit_1_and_clean_forms_exit_0() {
    worksheet()
        .args(["form", "check", "worksheets/seed-host-completion.json"])
        .assert()
        .code(0);
    let dir = tempfile::tempdir().unwrap();
    let seed =
        std::fs::read_to_string(root().join("worksheets/seed-host-completion.json")).unwrap();
    let no_wait = seed.replace(
        r#""wait": {"scope": "event", "event": "end", "stream": "A"}"#,
        r#""wait": {"scope": "none"}"#,
    );
    std::fs::write(dir.path().join("no-wait.json"), no_wait).unwrap();
    let out = worksheet()
        .args(["form", "check"])
        .arg(dir.path().join("no-wait.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let form = read_form(&dir.path().join("no-wait.json")).unwrap();
    let findings = check(&form);
    let codes: Vec<&str> = contradictions(&findings)
        .map(|f| f.problem.code())
        .collect();
    assert_eq!(codes, ["completion-without-wait"]);
}

#[test]
fn form_help_is_snapshotted() {
    for sub in ["new", "fill", "check"] {
        let out = worksheet().args(["form", sub, "--help"]).output().unwrap();
        assert!(out.status.success());
        insta::assert_snapshot!(format!("help-form-{sub}"), stdout_of(&out));
    }
}

//! One time origin and one input rule (issue 26 §5 and §6; review N3, N6, N14), end to end
//! with the built binary: `--window` counts from the origin the picture's axis names, and
//! `eval`, `check --expect` and `compare` read a raw trace or a folder as `render` does.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").expect("the binary is built for integration tests")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = worksheet().args(args).output().expect("runs");
    (
        out.status.code().expect("exited normally"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

const NCCL: &str = "tests/data/traces/nccl_data.json.gz";
const RANK0: &str = "tests/data/ranks/rank0.json.gz";
const RANK1: &str = "tests/data/ranks/rank1.json.gz";
const WORKER_A: &str = "tests/data/traces/worker0.1623143089861.pt.trace.json.gz";
const WORKER_B: &str = "tests/data/traces/worker0.1623212756351.pt.trace.json.gz";

/// The axis line of a text picture: the tick labels under the last panel.
fn axis_labels(picture: &str) -> Vec<String> {
    let line = picture
        .lines()
        .find(|l| l.starts_with("ms ") || l.starts_with("us ") || l.starts_with("ns "))
        .unwrap_or_else(|| panic!("no axis line in\n{picture}"));
    line.split_whitespace().skip(1).map(str::to_owned).collect()
}

#[test]
fn a_window_counts_from_the_origin_the_full_pictures_axis_names() {
    let (code, full, _) = run(&["render", NCCL, "--format", "text", "--width", "100"]);
    assert_eq!(code, 0);
    assert!(full.contains("axis in ms after\n1716423322.4 s"), "{full}");
    // The numbers on that axis select the same stretch in the zoom.
    let (code, zoom, stderr) = run(&[
        "render",
        NCCL,
        "--window",
        "+100ms..+110ms",
        "--format",
        "text",
        "--width",
        "100",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(zoom.contains("axis in ms after\n1716423322.4 s"), "{zoom}");
    assert_eq!(axis_labels(&zoom), ["100", "102", "104", "106", "108"]);
    // The bare form is the same window; `@` gives the clock's own readings.
    let (_, bare, _) = run(&[
        "render",
        NCCL,
        "--window",
        "100ms..110ms",
        "--format",
        "text",
        "--width",
        "100",
    ]);
    let (_, absolute, _) = run(&[
        "render",
        NCCL,
        "--window",
        "@1716423322.5 s..@1716423322.51 s",
        "--format",
        "text",
        "--width",
        "100",
    ]);
    assert_eq!(bare, zoom);
    assert_eq!(absolute, zoom);
}

#[test]
fn a_window_that_selects_nothing_is_exit_2_with_the_clocks_range() {
    let (code, stdout, stderr) = run(&[
        "render",
        NCCL,
        "--window",
        "+1.2ms..+1.5ms",
        "--format",
        "text",
    ]);
    assert_eq!(code, 2, "{stdout}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("error[bad-window]: the window +1.2 ms (@1716423322.4012 s) .. +1.5 ms (@1716423322.4015 s) selects nothing on clock `kineto`: what it draws lies from +16.788066 ms (@1716423322.416788066 s) to +684.232698 ms (@1716423323.084232698 s) (origin 1716423322.4 s)"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["render", NCCL, "--window", "@1 s..+2 s"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("mixes a clock reading"), "{stderr}");
}

#[test]
fn the_reports_timeline_counts_from_the_same_origin() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("nccl.html");
    let (code, _, stderr) = run(&["report", NCCL, "-o", page.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("origin: 1716423322.4 s on this clock"));
    assert!(
        html.contains("\"base\":\"1716423322400000000\""),
        "the origin"
    );
    // The view starts at the first item, +16.788066 ms, less a margin of 1/40 of the
    // span (667.444632 ms / 40 = 16.686115 ms): +101.951 us.
    assert!(html.contains("\"from\":101951,"), "the view's start");
}

#[test]
fn eval_reads_a_raw_trace() {
    let (code, stdout, stderr) = run(&["eval", NCCL]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("| stream:gpu0-s7               | intervals       | count 3753, sum 118.309345 ms, union 118.309345 ms, span 660.551005 ms, gaps 3752, overlap 0 ns, max depth 1"), "{stdout}");
}

#[test]
fn check_expect_checks_a_trace_against_another_cases_expectations() {
    let dir = tempfile::tempdir().unwrap();
    let expect = dir.path().join("r0.json");
    let e = expect.to_str().unwrap();
    assert_eq!(run(&["import", RANK0, "-o", e, "--expect"]).0, 0);
    let (code, stdout, stderr) = run(&["check", RANK0, "--expect", e]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("1 passed, 0 failed\n(1 cases, 88 checks, 0 input errors)"),
        "{stdout}"
    );
    // Another rank's trace: its own streams answer differently, and rank 0's are not asked.
    let (code, stdout, _) = run(&["check", RANK1, "--expect", e]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("question `stream:gpu0-s7` question: expected asked, actual not asked"),
        "{stdout}"
    );
    assert!(
        stdout.contains("0 passed, 1 failed\n(1 cases, 63 checks, 0 input errors)"),
        "{stdout}"
    );
    // A case without expectations is no --expect.
    let bare = dir.path().join("bare.json");
    assert_eq!(run(&["import", RANK0, "-o", bare.to_str().unwrap()]).0, 0);
    let (code, _, stderr) = run(&["check", RANK0, "--expect", bare.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("this case states no expectation"),
        "{stderr}"
    );
}

#[test]
fn compare_reads_raw_traces() {
    let (code, stdout, stderr) = run(&["compare", RANK0, RANK1, "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "stream:gpu0-s7")
        .expect("rank 0's stream");
    assert_eq!(row["verdict"], "gone");
    assert_eq!(row["base"]["total_ns"], 11_486_832);
}

fn copy(from: &str, to_dir: &Path) -> PathBuf {
    std::fs::create_dir_all(to_dir).unwrap();
    let to = to_dir.join(Path::new(from).file_name().unwrap());
    std::fs::copy(from, &to).unwrap();
    to
}

#[test]
fn a_folder_of_one_trace_is_that_trace_tensorboard_layout_included() {
    let dir = tempfile::tempdir().unwrap();
    let tb = dir.path().join("tb");
    copy(WORKER_A, &tb.join("run1/plugins/profile/2021_06_08"));
    let (_, direct, _) = run(&["import", WORKER_A]);
    for folder in [
        tb.clone(),
        tb.join("run1"),
        tb.join("run1/plugins/profile/2021_06_08"),
    ] {
        let (code, stdout, stderr) = run(&["import", folder.to_str().unwrap()]);
        assert_eq!(code, 0, "{}: {stderr}", folder.display());
        assert!(
            stdout.starts_with("case worker0.1623143089861 — kineto 2021"),
            "{stdout}"
        );
        assert_eq!(stdout, direct);
    }
    let (code, stdout, _) = run(&["eval", tb.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("case worker0.1623143089861\n"),
        "{stdout}"
    );
}

#[test]
fn several_runs_of_one_rank_in_a_folder_are_refused_listed() {
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two");
    copy(WORKER_A, &two);
    copy(WORKER_B, &two);
    for command in ["import", "eval", "render"] {
        let (code, stdout, stderr) = run(&[command, two.to_str().unwrap()]);
        assert_eq!(code, 2, "{command}: {stdout}");
        assert!(
            stderr.contains("error[bad-value]: the folder holds 2 traces, and 2 of them say(s) no rank (no distributedInfo.rank, or one that is not a whole number from 0 below 2^32): several runs of one rank are not a job"),
            "{command}: {stderr}"
        );
        assert!(stderr.contains("worker0.1623143089861.pt.trace.json.gz` (no rank)"));
        assert!(stderr.contains("worker0.1623212756351.pt.trace.json.gz` (no rank)"));
    }
    // Ranks that say so are one job.
    let (code, stdout, _) = run(&["eval", "tests/data/ranks"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("case ranks\n"), "{stdout}");
}

/// A folder of no trace, given to any command that reads a folder, is an input error (exit 2)
/// that names the folder (no `$` field path: no file's field is at fault) and says what was
/// expected in it.
#[test]
fn an_empty_folder_is_named_with_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let page = dir.path().join("page.html");
    let commands: [&[&str]; 6] = [
        &["import", e],
        &["eval", e],
        &["render", e, "--format", "text"],
        &["report", e, "-o", page.to_str().unwrap()],
        &["audit", e],
        &["export", e, "--perfetto", "-"],
    ];
    for args in commands {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!(
                "{e}: (folder): error[bad-value]: the folder `{e}` holds no trace: expected a trace file in it (a Kineto trace `*.json` or `*.json.gz`), or a TensorBoard log dir (`plugins/profile/*/*.pt.trace.json[.gz]` in it or in one of its run folders); an Nsight Systems `.sqlite` is read when named itself; the folder is empty"
            ),
            "{args:?}"
        );
    }
    assert!(!page.exists());
}

#[test]
fn the_reports_window_is_renders_window() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("zoom.html");
    let p = page.to_str().unwrap();
    let (code, _, stderr) = run(&["report", NCCL, "--window", "+100ms..+110ms", "-o", p]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("\"from\":100000000,"),
        "the view starts at +100 ms"
    );
    assert!(html.contains("\"span\":10000000"), "the view is 10 ms wide");
    let (code, _, stderr) = run(&[
        "report",
        NCCL,
        "--window",
        "+1.2ms..+1.5ms",
        "-o",
        p,
        "--force",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("selects nothing on clock `kineto`"),
        "{stderr}"
    );
}

/// `check TRACE` without `--expect`: a trace states no expected values, so check says what
/// it needs for one (`--expect CASE`), names the file, and exits 2; Kineto and Nsight
/// Systems alike, and a good case beside it is still checked.
#[test]
fn check_of_a_trace_without_expect_says_what_it_needs() {
    let sqlite = "tests/data/nsys/fuser_report1.sqlite";
    for (trace, format, field) in [
        (NCCL, "a Kineto trace", "format"),
        (sqlite, "an Nsight Systems export", "$"),
    ] {
        let (code, stdout, stderr) = run(&["check", trace, "fixtures/cases/three-boundaries.json"]);
        assert_eq!(code, 2, "{stderr}");
        let expected = format!(
            "{trace}: {field}: error[wrong-kind]: this is {format}, which states no expected values, so there is nothing to check it against: give the expectations with `worksheet check {trace} --expect CASE`"
        );
        assert!(stderr.starts_with(&expected), "{stderr}");
        assert!(
            stderr.contains(&format!("`worksheet eval {trace}`")),
            "{stderr}"
        );
        assert!(!stderr.contains("raw trace"), "{stderr}");
        // The case beside it is checked: its passing rows are counted.
        assert!(stdout.contains("(1 cases,"), "{stdout}");
    }
    // A file that is neither a case nor a trace keeps the case reader's error.
    let (code, _, stderr) = run(&["check", "tests/data/traces/malformed/not-json.json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("error[bad-syntax]"), "{stderr}");
}

/// `check` of a folder that holds no case file is an input error naming the folder and what
/// was expected (exit 2), not a pass of "0 cases"; next to a folder of cases it is reported
/// and the cases are still checked.
#[test]
fn check_of_a_folder_without_cases_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let (code, stdout, stderr) = run(&["check", e]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stdout.contains("(0 cases, 0 checks, 1 input errors)"),
        "{stdout}"
    );
    assert_eq!(
        stderr.trim_end(),
        format!("{e}: (folder): error[bad-value]: the folder `{e}` holds no file to read: expected a case file (`*.json` or `*.json.gz`) in it or in a folder below it; the folder is empty")
    );
    std::fs::write(empty.join("notes.txt"), "not a case").unwrap();
    let (_, alone, _) = run(&["check", "fixtures"]);
    let (code, stdout, stderr) = run(&["check", "fixtures", e]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(
        stdout.replace(" 1 input errors)", " 0 input errors)"),
        alone,
        "the fixtures are still checked"
    );
    assert!(
        stderr.ends_with("in it or in a folder below it; it holds 1 other entry\n"),
        "{stderr}"
    );
}

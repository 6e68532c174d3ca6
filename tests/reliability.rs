//! Reliability under hostile input and faults, through the real binary: nothing blocks on a
//! FIFO or loops on symbolic links (every run is guarded: a run that does not end is killed
//! and the test fails), unreadable folders are errors, and `form fill` loses no
//! acknowledged answer when killed or when run twice at once.

#![cfg(unix)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Generous: a run that is meant to end at once and takes this long is a hang.
const GUARD: Duration = Duration::from_secs(20);

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_worksheet"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Waits for `child` up to [`GUARD`]; kills it and panics when it does not end.
fn wait_guarded(mut child: Child, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > GUARD {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("`{what}` did not end within {GUARD:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs the binary with `args` (stdin closed), guarded.
fn run(args: &[&str], dir: &Path) -> Output {
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_guarded(child, &args.join(" "))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

#[test]
fn a_fifo_is_refused_at_once_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in ["case.json", "trace.json", "trace.sqlite", "form.json"] {
        mkfifo(&d.join(name));
    }
    std::fs::create_dir(d.join("tree")).unwrap();
    std::fs::copy(
        root().join("fixtures/cases/three-boundaries.json"),
        d.join("tree/a.json"),
    )
    .unwrap();
    mkfifo(&d.join("tree/x.json"));
    let runs: [&[&str]; 7] = [
        &["eval", "case.json"],
        &["import", "trace.json"],
        &["import", "trace.sqlite"],
        &["form", "check", "form.json"],
        &["form", "fill", "form.json"],
        &["check", "tree"],
        &["render", "case.json"],
    ];
    for args in runs {
        let out = run(args, d);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("error[not-a-file]") && err.contains("FIFO"),
            "{args:?}: {err}"
        );
    }
    // `check` still checked the regular file beside the FIFO.
    let out = run(&["check", "tree"], d);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn devices_are_refused_without_reading_them() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        ["eval", "/dev/zero"],
        ["import", "/dev/zero"],
        ["import", "/dev/urandom"],
    ] {
        let out = run(&args, dir.path());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("error[not-a-file]") && err.contains("character device"),
            "{args:?}: {err}"
        );
    }
}

/// A folder with one case and symbolic links back up: `self -> .`, `again -> .`, and
/// `sub/up -> ..`.
fn looping_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(
        root().join("fixtures/cases/three-boundaries.json"),
        d.join("a.json"),
    )
    .unwrap();
    std::fs::copy(
        root().join("worksheets/seed-host-completion.json"),
        d.join("form.json"),
    )
    .unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink(".", d.join("self")).unwrap();
    std::os::unix::fs::symlink(".", d.join("again")).unwrap();
    std::os::unix::fs::symlink("..", d.join("sub/up")).unwrap();
    dir
}

#[test]
fn symlink_loops_end_and_count_each_file_once() {
    let dir = looping_tree();
    let d = dir.path();
    std::fs::remove_file(d.join("form.json")).unwrap();
    let out = run(&["check", "."], d);
    let err = stderr(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{err}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert_eq!(err.matches("error[symlink-loop]").count(), 3, "{err}");
    for link in ["./self", "./again", "./sub/up"] {
        assert!(
            err.contains(&format!("{link}: $: error[symlink-loop]")),
            "{err}"
        );
    }
}

#[test]
fn form_check_ends_on_symlink_loops() {
    let dir = looping_tree();
    let d = dir.path();
    std::fs::remove_file(d.join("a.json")).unwrap();
    let out = run(&["form", "check", "."], d);
    let err = stderr(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{err}");
    assert_eq!(stdout.matches("form.json").count(), 1, "{stdout}");
    assert_eq!(err.matches("error[symlink-loop]").count(), 3, "{err}");
}

/// `check` and `form check` treat a folder they cannot list the same way: an `io` error
/// naming it (exit 2), and the rest is still checked. Run as an unprivileged user when the
/// tests run as root (root can list any folder).
#[test]
fn an_unreadable_folder_is_an_error_for_both_walks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::copy(
        root().join("fixtures/cases/three-boundaries.json"),
        d.join("a.json"),
    )
    .unwrap();
    std::fs::copy(
        root().join("worksheets/seed-host-completion.json"),
        d.join("form.json"),
    )
    .unwrap();
    std::fs::create_dir(d.join("locked")).unwrap();
    std::fs::write(d.join("locked/b.json"), "{}").unwrap();
    std::fs::set_permissions(d.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    // SAFETY: geteuid has no preconditions.
    let as_root = unsafe { libc::geteuid() } == 0;
    for (args, passed) in [
        (vec!["check", "."], "1 passed"),
        (vec!["form", "check", "."], "form.json"),
    ] {
        let mut cmd = if as_root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(bin());
            c
        } else {
            Command::new(bin())
        };
        let child = cmd
            .args(&args)
            .current_dir(d)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_guarded(child, &args.join(" "));
        let err = stderr(&out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stdout}\n{err}");
        assert!(
            err.contains("./locked: $: error[io]: cannot list this folder"),
            "{args:?}: {err}"
        );
        assert!(stdout.contains(passed), "{args:?}: {stdout}");
    }
    std::fs::set_permissions(d.join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Answers to a blank host-completion form, in asking order (see tests/forms.rs).
const ANSWERS: &[&str] = &[
    "seed run",
    "host clock read before record(start)",
    "host",
    "boot-a",
    "host clock read after the wait on end",
    "host",
    "boot-a",
    "A, B",
    "A waits-on B",
    "event",
    "end",
    "A",
    "start, measured-work, wait, stop",
    "measured-work, wait",
    "-",
    "0",
    "1",
    "median",
    "no",
    "yes",
    "yes",
    "question=host-completion",
];

fn new_form(path: &Path) {
    let out = run(
        &[
            "form",
            "new",
            "--question",
            "host-completion",
            "-o",
            path.to_str().unwrap(),
        ],
        path.parent().unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

fn answered_count(path: &Path) -> usize {
    let form = worksheet::form::read_form(path).unwrap();
    worksheet::form::fill::progress(form.raw()).0
}

fn spawn_fill(path: &Path) -> Child {
    Command::new(bin())
        .args(["form", "fill", path.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads `child`'s stdout until `needle` has appeared `times` times in total.
fn read_until(out: &mut impl Read, seen: &mut String, needle: &str, times: usize) -> bool {
    let mut buf = [0u8; 4096];
    while seen.matches(needle).count() < times {
        match out.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    true
}

/// Answers acknowledged so far: the last prompt shown reads `[N/TOTAL]` with N = answered + 1.
fn acknowledged(seen: &str) -> usize {
    let at = seen.rfind("\n[").expect("a prompt") + 2;
    let n: String = seen[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    n.parse::<usize>().unwrap() - 1
}

/// A simple LCG so the kill points vary but the test is reproducible.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// SIGKILL `form fill` at 100 random points: after the k-th acknowledged answer (the next
/// prompt was shown, so the answer was saved), plus 0–2 ms. Every time the form reads,
/// holds at least the k acknowledged answers, and no temporary file outlives the next save.
#[test]
fn sigkill_during_fill_loses_no_acknowledged_answer() {
    let dir = tempfile::tempdir().unwrap();
    let form = dir.path().join("f.json");
    let mut rng = Lcg(12);
    for trial in 0..100 {
        if form.exists() {
            std::fs::remove_file(&form).unwrap();
        }
        new_form(&form);
        let k = 1 + rng.next(ANSWERS.len() as u64 - 1) as usize;
        let mut child = spawn_fill(&form);
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut seen = String::new();
        // The prompt of the first field ends with "> ".
        assert!(read_until(&mut stdout, &mut seen, "\n> ", 1), "{seen}");
        for (i, answer) in ANSWERS.iter().take(k).enumerate() {
            writeln!(stdin, "{answer}").unwrap();
            stdin.flush().unwrap();
            assert!(
                read_until(&mut stdout, &mut seen, "\n> ", i + 2),
                "trial {trial}: {seen}"
            );
        }
        let acked = acknowledged(&seen);
        std::thread::sleep(Duration::from_micros(rng.next(2000)));
        // One more answer in flight when the kill lands.
        let _ = writeln!(stdin, "{}", ANSWERS[k.min(ANSWERS.len() - 1)]);
        child.kill().unwrap();
        child.wait().unwrap();
        let answered = answered_count(&form);
        assert!(
            answered >= acked && acked > 0,
            "trial {trial}: {acked} answers acknowledged, {answered} in the file"
        );
    }
    // A later save cleans what the killed processes left behind.
    let out = run(
        &[
            "form",
            "fill",
            "f.json",
            "--set",
            "samples=2",
            "--no-prompt",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Two fills at once: the second is refused (exit 2, naming the first's pid) while the
/// first holds the form, and every answer the first acknowledged is in the file.
#[test]
fn a_second_fill_is_refused_while_the_first_runs() {
    let dir = tempfile::tempdir().unwrap();
    let form = dir.path().join("f.json");
    new_form(&form);
    let mut first = spawn_fill(&form);
    let mut stdin = first.stdin.take().unwrap();
    let mut stdout = first.stdout.take().unwrap();
    let mut seen = String::new();
    assert!(read_until(&mut stdout, &mut seen, "\n> ", 1), "{seen}");
    for (i, answer) in ANSWERS.iter().take(8).enumerate() {
        writeln!(stdin, "{answer}").unwrap();
        assert!(read_until(&mut stdout, &mut seen, "\n> ", i + 2), "{seen}");
        if i == 3 {
            // The second filler, with answers of its own, in the middle of the first's run.
            let mut second = spawn_fill(&form);
            let mut s_in = second.stdin.take().unwrap();
            for a in ANSWERS.iter().rev() {
                let _ = writeln!(s_in, "{a}");
            }
            drop(s_in);
            let out = wait_guarded(second, "second form fill");
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(err.contains("error[locked]"), "{err}");
            assert!(err.contains(&format!("pid {}", first.id())), "{err}");
            let out = run(
                &[
                    "form",
                    "fill",
                    "f.json",
                    "--set",
                    "samples=9",
                    "--no-prompt",
                ],
                dir.path(),
            );
            assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        }
    }
    let acked = acknowledged(&seen);
    drop(stdin);
    let out = wait_guarded(first, "first form fill");
    // The input ended before the last field: exit 2, every acknowledged answer saved.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("error[end-of-input]"),
        "{}",
        stderr(&out)
    );
    assert!(acked >= 6, "{seen}");
    assert_eq!(answered_count(&form), acked, "{seen}");
    // The lock is gone with its holder: a new fill goes on.
    let out = run(
        &[
            "form",
            "fill",
            "f.json",
            "--set",
            "samples=9",
            "--no-prompt",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Every file listed in `tests/data/malformed-inputs/EXPECTED.csv` exits 2 with its code at
/// its path, and a message that names the problem; every file there is listed or explained.
#[test]
fn every_malformed_input_exits_2_naming_what_and_where() {
    let dir = root().join("tests/data/malformed-inputs");
    let mut reader = csv::Reader::from_path(dir.join("EXPECTED.csv")).unwrap();
    let mut listed = vec![
        "EXPECTED.csv".to_owned(),
        "README.md".to_owned(),
        "duplicate-copy-rows-one-call.json".to_owned(),
        "duplicate-stream-sync-wait-id.json".to_owned(),
        "nsys-full-range-kernel.sqlite".to_owned(),
    ];
    for record in reader.records() {
        let r = record.unwrap();
        let (file, command, code, path, mentions) = (&r[0], &r[1], &r[2], &r[3], &r[4]);
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push(file);
        let out = run(&args, &dir);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let first = err.lines().next().unwrap_or_default();
        assert!(first.starts_with(file), "{file}: {first}");
        assert!(
            first.contains(&format!(": {path}: error[{code}]: ")),
            "{file}: expected {path} error[{code}]: {first}"
        );
        assert!(first.contains(mentions), "{file}: `{mentions}` in {first}");
        assert!(!err.contains("internal"), "{file}: {err}");
        let documented: Vec<&str> = match command {
            "eval" => worksheet::case::CASE_ERROR_CODES.to_vec(),
            "import" => worksheet::import::IMPORT_ERROR_CODES
                .iter()
                .chain(worksheet::import::nsys::NSYS_ERROR_CODES.iter())
                .copied()
                .collect(),
            _ => worksheet::form::FORM_ERROR_CODES.to_vec(),
        };
        assert!(
            documented.contains(&code),
            "{file}: `{code}` is not documented"
        );
        listed.push(file.to_owned());
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    listed.sort();
    assert_eq!(
        files, listed,
        "every file is listed in EXPECTED.csv or README.md"
    );
}

#[test]
fn a_repeated_stream_sync_row_is_one_wait() {
    let dir = root().join("tests/data/malformed-inputs");
    let out = run(&["import", "duplicate-stream-sync-wait-id.json"], &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let line = |label: &str| {
        text.lines()
            .find(|l| l.contains(label))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        line("| host waits").contains("1 on a stream (Stream Sync)"),
        "{text}"
    );
    assert!(
        line("not mapped").contains(
            "1 Stream Sync: a second cuda_sync row for the same call (same correlation): counted once"
        ),
        "{text}"
    );
}

/// Found by the `ranks` fuzz target in stop 41: one synchronous `cudaMemcpy` call with two
/// `gpu_memcpy` rows (streams 7 and 8) gave two host waits with the id `copy-c42`, and the
/// import exited with `internal`. Each copy of the call is its own wait, `copy-c42` and
/// `copy-c42.2`, for one rank and for two.
#[test]
fn two_copy_rows_of_one_call_are_two_waits_with_their_own_ids() {
    let trace = root().join("tests/data/malformed-inputs/duplicate-copy-rows-one-call.json");
    let trace_arg = trace.to_string_lossy();
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &["import", &trace_arg, "-o", "one.json", "--expect"],
        dir.path(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let waits = text
        .lines()
        .find(|l| l.contains("| host waits"))
        .unwrap_or_default();
    assert!(
        waits.contains("2 on a stream (implicit: sync-copy-dtoh copy)"),
        "{text}"
    );
    let case = std::fs::read_to_string(dir.path().join("one.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&case).unwrap();
    let mut ids: Vec<(String, String)> = value["program"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["op"] == "host-wait")
        .map(|op| {
            (
                op["id"].as_str().unwrap().to_owned(),
                op["stream"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            ("copy-c42".to_owned(), "gpu0-s7".to_owned()),
            ("copy-c42.2".to_owned(), "gpu0-s8".to_owned()),
        ]
    );
    let checked = run(&["check", "one.json"], dir.path());
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));

    // The same trace as rank 1 beside it: the merged case validates and checks clean.
    let mut rank1: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    rank1["distributedInfo"]["rank"] = 1.into();
    std::fs::write(dir.path().join("rank1.json"), rank1.to_string()).unwrap();
    let out = run(
        &[
            "import",
            &trace_arg,
            "rank1.json",
            "-o",
            "two.json",
            "--expect",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = std::fs::read_to_string(dir.path().join("two.json")).unwrap();
    for id in [
        "r0.copy-c42\"",
        "r0.copy-c42.2\"",
        "r1.copy-c42\"",
        "r1.copy-c42.2\"",
    ] {
        assert_eq!(merged.matches(id).count(), 1, "{id} in {merged}");
    }
    let checked = run(&["check", "two.json"], dir.path());
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
}

#[test]
fn a_kernel_spanning_the_full_64_bit_range_is_unknown_overflow() {
    let dir = root().join("tests/data/malformed-inputs");
    let out = run(&["import", "nsys-full-range-kernel.sqlite"], &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let row = text
        .lines()
        .find(|l| l.starts_with("| device:gpu0 "))
        .unwrap();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // question, count, busy, sum, gaps, gap total, max depth, span
    assert_eq!(
        cells[1..9],
        [
            "device:gpu0",
            "1",
            "unknown (overflow)",
            "unknown (overflow)",
            "0",
            "0 ns",
            "1",
            "unknown (overflow)"
        ],
        "{text}"
    );
    assert!(!text.contains("18446744073709551615"), "{text}");
}

#[test]
fn eval_escapes_control_characters_in_ids() {
    let dir = tempfile::tempdir().unwrap();
    let case = std::fs::read_to_string(root().join("fixtures/cases/three-boundaries.json"))
        .unwrap()
        .replacen(
            "\"id\": \"host-completion\"",
            "\"id\": \"host\\u001b[2J\\u0000completion\"",
            1,
        );
    assert!(
        case.contains("\\u001b"),
        "the fixture has a host-completion question"
    );
    std::fs::write(dir.path().join("c.json"), case).unwrap();
    let out = run(&["eval", "c.json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !out.stdout.contains(&0x1b) && !out.stdout.contains(&0),
        "raw control bytes"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("host\\u{1b}[2J\\u{0}completion"), "{text}");
}

#[test]
fn force_never_replaces_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("out.svg"));
    let case = root().join("fixtures/cases/three-boundaries.json");
    let out = run(
        &["render", case.to_str().unwrap(), "-o", "out.svg", "--force"],
        d,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // A FIFO is written into (never replaced); nobody reads this one, so that is an error
    // at once rather than a hang.
    assert!(
        err.contains("error[io]") && err.contains("nobody reads this FIFO"),
        "{err}"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(d.join("out.svg"))
        .unwrap()
        .file_type()
        .is_fifo());
}

/// Fuzz finding (form_json): a JSON form with a padded value (`" submission"`) read
/// differently from its CSV, whose reader trims. Now every reader trims, in `validate`.
#[test]
fn json_and_csv_forms_read_padded_values_alike() {
    use worksheet::form::format::{load_form_str, to_csv, to_json, FileFormat};
    let text = std::fs::read_to_string(root().join("worksheets/seed-host-completion.json"))
        .unwrap()
        .replacen(
            "\"question\": \"host-completion\"}",
            "\"question\": \" host-completion\"}",
            1,
        )
        .replacen("\"instance\": \"boot-a\"", "\"instance\": \"  boot-a \"", 1)
        .replacen("\"measured-work\", \"join", "\" measured-work\", \"join", 1);
    assert_eq!(text.matches(" host-completion\"").count(), 1);
    let from_json = load_form_str(&text, FileFormat::Json, "f.json").unwrap();
    let csv = to_csv(from_json.raw());
    let from_csv = load_form_str(&csv, FileFormat::Csv, "f.csv").unwrap();
    assert_eq!(from_json.raw(), from_csv.raw());
    assert_eq!(
        to_json(from_csv.raw(), false),
        to_json(from_json.raw(), false)
    );
    let get = |p: &str| worksheet::form::fields::get(from_json.raw(), p);
    assert_eq!(get("start.clock.instance").as_deref(), Some("boot-a"));
    assert_eq!(get("binding.question").as_deref(), Some("host-completion"));
    let order = from_json.raw().order.clone().unwrap();
    assert_eq!(order[2], "measured-work");
    // A dependency's stream with a separator (third finding) is refused by both readers.
    let bad = text.replacen("\"waits_on\": \"B\"", "\"waits_on\": \"A;end\"", 1);
    assert_ne!(bad, text);
    let err = load_form_str(&bad, FileFormat::Json, "f.json").unwrap_err();
    assert_eq!(
        (err.path.as_str(), err.code),
        ("dependencies[0]", "bad-value"),
        "{err}"
    );
    // And an empty description (second finding): answered as empty in both.
    for empty in ["\"\"", "\" - \""] {
        let text = text
            .replacen(
                "\"description\": \"The seed",
                &format!("\"description\": {empty}, \"x\": \"The seed"),
                1,
            )
            .replacen(", \"x\": \"The seed", ", \"// x\": \"The seed", 1);
        let from_json = load_form_str(&text, FileFormat::Json, "f.json").unwrap();
        let from_csv = load_form_str(&to_csv(from_json.raw()), FileFormat::Csv, "f.csv").unwrap();
        assert_eq!(from_json.raw().description.as_deref(), Some(""), "{empty}");
        assert_eq!(from_json.raw(), from_csv.raw(), "{empty}");
    }
}

/// Fuzz crash 7 (`form_json`): a form whose binding holds no ids wrote `"binding": {}` as
/// JSON but nothing as CSV, so the two writers disagreed on one form. An empty binding is no
/// binding in both now.
#[test]
fn an_empty_binding_writes_as_no_binding() {
    use worksheet::form::format::{parse_csv, parse_json, to_csv, to_json};
    let raw = parse_json(r#"{"format": "worksheet-form", "version": 1, "binding": {}}"#).unwrap();
    assert!(raw.binding.is_some());
    let json = to_json(&raw, true);
    let from_csv = parse_csv(&to_csv(&raw)).unwrap();
    assert_eq!(to_json(&from_csv, true), json);
    assert!(json.contains("\"binding\": null"), "{json}");
}

/// Fuzz crash 8 (`form_csv`, on a 16-core campaign): `excluded,;-` read as the list `["-"]`,
/// which the CSV writer wrote as `-`, the mark of an empty list, so the form changed on a
/// round trip. `-` cannot name a list entry in any reader now.
#[test]
fn a_dash_cannot_name_a_list_entry() {
    use worksheet::form::format::{load_form_str, FileFormat};
    let head = "field,value,explanation\nformat,worksheet-form,\nversion,1,\n";
    for (line, path) in [
        ("excluded,;-,", "excluded[0]"),
        ("included,\"a, -\",", "included[1]"),
        ("order,\"start, -, stop\",", "order[1]"),
        ("work_streams,\" - ;A\",", "work_streams[0]"),
    ] {
        let err = load_form_str(&format!("{head}{line}\n"), FileFormat::Csv, "f.csv").unwrap_err();
        assert_eq!(
            (err.path.as_str(), err.code),
            (path, "bad-value"),
            "{line}: {err}"
        );
    }
    let json = r#"{"format": "worksheet-form", "version": 1, "work_streams": ["A", "-"]}"#;
    let err = load_form_str(json, FileFormat::Json, "f.json").unwrap_err();
    assert_eq!(
        (err.path.as_str(), err.code),
        ("work_streams[1]", "bad-value"),
        "{err}"
    );
    // `-` alone is still the empty list.
    let form = load_form_str(&format!("{head}excluded,-,\n"), FileFormat::Csv, "f.csv").unwrap();
    assert_eq!(form.raw().excluded.as_deref(), Some(&[][..]));
}

/// Fuzz crash 9 (`form_json`, after 1.5 M runs): `"work_streams": []` was accepted in JSON
/// while its CSV `work_streams,-` was refused. Every reader refuses an empty list now.
#[test]
fn an_empty_work_streams_list_is_refused_by_every_reader() {
    use worksheet::form::format::{load_form_str, FileFormat};
    let json = r#"{"format": "worksheet-form", "version": 1, "work_streams": []}"#;
    let csv = "field,value,explanation\nformat,worksheet-form,\nversion,1,\nwork_streams,-,\n";
    for (text, kind) in [(json, FileFormat::Json), (csv, FileFormat::Csv)] {
        let err = load_form_str(text, kind, "f").unwrap_err();
        assert_eq!(
            (err.path.as_str(), err.code),
            ("work_streams", "bad-value"),
            "{err}"
        );
    }
}

/// Fuzz crashes 10 and 11 (`form_json`, on the 16-core campaign): `"statistics": []` was
/// accepted in JSON while its CSV `statistics,-` was refused, and a clock domain `"2"` read
/// back from CSV as `device` (the text readers take a number as a menu choice). Both are
/// `bad-value` in every reader now.
#[test]
fn empty_statistics_and_numeric_domains_are_refused_by_every_reader() {
    use worksheet::form::format::{load_form_str, FileFormat};
    let json = |body: &str| format!(r#"{{"format": "worksheet-form", "version": 1, {body}}}"#);
    for (body, path) in [
        (r#""statistics": []"#, "statistics"),
        (
            r#""start": {"clock": {"domain": "2"}}"#,
            "start.clock.domain",
        ),
        (
            r#""stop": {"clock": {"domain": "17"}}"#,
            "stop.clock.domain",
        ),
    ] {
        let err = load_form_str(&json(body), FileFormat::Json, "f.json").unwrap_err();
        assert_eq!(
            (err.path.as_str(), err.code),
            (path, "bad-value"),
            "{body}: {err}"
        );
    }
    let csv = "field,value,explanation\nformat,worksheet-form,\nversion,1,\nstatistics,-,\n";
    let err = load_form_str(csv, FileFormat::Csv, "f.csv").unwrap_err();
    assert_eq!(
        (err.path.as_str(), err.code),
        ("statistics", "bad-value"),
        "{err}"
    );
    // A CSV form holding a number as a domain is refused alike.
    let csv =
        "field,value,explanation\nformat,worksheet-form,\nversion,1,\nstart.clock.domain,2,\n";
    let err = load_form_str(csv, FileFormat::Csv, "f.csv").unwrap_err();
    assert_eq!(
        (err.path.as_str(), err.code),
        ("start.clock.domain", "bad-value"),
        "{err}"
    );
}

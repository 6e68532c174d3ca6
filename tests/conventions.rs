//! The command-line conventions users bring from other tools: shell completions, a manual
//! page, `--version` with the build's features, `-` for the standard streams, and output that
//! fits a narrow terminal.

use assert_cmd::Command;

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").expect("the binary is built for integration tests")
}

/// Runs worksheet with `args`; returns the exit code, stdout and stderr.
fn run(args: &[&str]) -> (i32, String, String) {
    let out = worksheet().args(args).output().expect("runs");
    (
        out.status.code().expect("exited normally"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

/// Every subcommand name, as `--help` lists them.
const COMMANDS: [&str; 14] = [
    "check",
    "eval",
    "capture",
    "form",
    "lab",
    "render",
    "report",
    "import",
    "export",
    "compare",
    "audit",
    "lesson",
    "completions",
    "man",
];

#[test]
fn completions_are_written_for_each_shell() {
    let expectations = [
        ("bash", "complete -F _worksheet"),
        ("zsh", "#compdef worksheet"),
        ("fish", "complete -c worksheet"),
        ("powershell", "Register-ArgumentCompleter"),
    ];
    for (shell, marker) in expectations {
        let (code, stdout, stderr) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        assert!(stdout.contains(marker), "{shell}: no `{marker}`");
        for command in COMMANDS {
            assert!(
                stdout.contains(command),
                "{shell}: `{command}` is not completed"
            );
        }
    }
    // A subcommand's own options are completed too.
    let (_, bash, _) = run(&["completions", "bash"]);
    assert!(bash.contains("--round-sub-ns"), "import's options");
    let (code, _, stderr) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid value 'tcsh'"), "{stderr}");
}

#[test]
fn bash_completion_script_is_valid_bash() {
    let (_, script, _) = run(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("worksheet.bash");
    std::fs::write(&path, script).unwrap();
    let status = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
        .expect("bash runs");
    assert!(status.success(), "bash -n rejects the script");
}

#[test]
fn man_prints_a_roff_page_for_worksheet_and_for_each_command() {
    let (code, page, stderr) = run(&["man"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq \\(aq"),
        "{}",
        &page[..80]
    );
    assert!(page.contains(".TH worksheet 1"), "title line");
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH SUBCOMMANDS",
    ] {
        assert!(page.contains(section), "no {section}");
    }
    for command in COMMANDS {
        assert!(
            page.contains(&format!("worksheet\\-{command}(1)")),
            "{command} not listed"
        );
    }
    let (code, page, _) = run(&["man", "import"]);
    assert_eq!(code, 0);
    assert!(page.contains(".TH worksheet-import 1"), "{}", &page[..200]);
    assert!(
        page.contains("\\-\\-round\\-sub\\-ns"),
        "import's options are described"
    );
    let (code, _, stderr) = run(&["man", "nosuch"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`nosuch` is not a command; one of: check, eval"),
        "{stderr}"
    );
}

#[test]
fn version_names_the_enabled_features() {
    let mut features = Vec::new();
    if cfg!(feature = "parquet") {
        features.push("parquet");
    }
    if cfg!(feature = "cuda") {
        features.push("cuda");
    }
    if cfg!(feature = "proptest") {
        features.push("proptest");
    }
    let list = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(", ")
    };
    let expected = format!(
        "worksheet {} (features: {list})\n",
        env!("CARGO_PKG_VERSION")
    );
    for flag in ["--version", "-V"] {
        let (code, stdout, _) = run(&[flag]);
        assert_eq!(code, 0);
        assert_eq!(stdout, expected);
    }
}

/// Runs worksheet with `args` and `stdin` as its standard input.
fn run_with_stdin(args: &[&str], stdin: Vec<u8>) -> (i32, Vec<u8>, String) {
    let out = worksheet()
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("runs");
    (
        out.status.code().expect("exited normally"),
        out.stdout,
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut text)
        .unwrap();
    text
}

const CASE: &str = "fixtures/cases/three-boundaries.json";

#[test]
fn eval_and_check_read_a_case_from_stdin_plain_or_gzipped() {
    let case = std::fs::read(CASE).unwrap();
    let (code, from_file, _) = run(&["eval", CASE, "--format", "json"]);
    assert_eq!(code, 0);
    for stdin in [case.clone(), gzip(&case)] {
        let (code, stdout, stderr) = run_with_stdin(&["eval", "-", "--format", "json"], stdin);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(String::from_utf8(stdout).unwrap(), from_file);
    }
    let (code, stdout, stderr) = run_with_stdin(&["check", "-"], case);
    assert_eq!(code, 0, "{stderr}");
    let stdout = String::from_utf8(stdout).unwrap();
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");
}

#[test]
fn stdin_errors_are_the_errors_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    // Empty, and not JSON: the same code and message as the same bytes in a file.
    for bytes in [&b""[..], &b"{ nope"[..]] {
        let file = dir.path().join("x.json");
        std::fs::write(&file, bytes).unwrap();
        let (file_code, _, file_err) = run(&["eval", file.to_str().unwrap()]);
        let (code, _, err) = run_with_stdin(&["eval", "-"], bytes.to_vec());
        assert_eq!((code, file_code), (2, 2));
        assert_eq!(err, file_err.replace(&file.display().to_string(), "-"));
    }
    // The size cap of a form (1 MiB) holds for standard input too.
    let over = vec![b' '; (1 << 20) + 1];
    let (code, _, err) = run_with_stdin(&["form", "check", "-"], over);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("-: $: error[too-large]: the file is larger than 1048576 bytes"),
        "{err}"
    );
}

#[test]
fn form_check_reads_stdin_and_form_fill_refuses_it() {
    let form = "worksheets/seed-host-completion.json";
    let (file_code, from_file, _) = run(&["form", "check", form]);
    let (code, stdout, _) = run_with_stdin(&["form", "check", "-"], std::fs::read(form).unwrap());
    assert_eq!(code, file_code);
    assert_eq!(
        String::from_utf8(stdout).unwrap().replace("-", ""),
        from_file.replace(form, "").replace("-", "")
    );
    let (code, _, err) = run_with_stdin(&["form", "fill", "-"], Vec::new());
    assert_eq!(code, 2);
    assert!(err.contains("error[not-a-file]"), "{err}");
}

/// The case JSON of an import, without its name (a trace on stdin is named `stdin`).
fn case_without_name(bytes: &[u8]) -> serde_json::Value {
    let mut case: serde_json::Value = serde_json::from_slice(bytes).expect("a case");
    assert_eq!(case["format"], "worksheet-case");
    case.as_object_mut().unwrap().remove("name");
    case
}

#[test]
fn import_reads_stdin_and_writes_the_case_to_stdout() {
    let trace = "tests/data/traces/event_sync_trace.json.gz";
    let gz = std::fs::read(trace).unwrap();
    let (code, from_file, _) = run_with_stdin(&["import", trace, "-o", "-"], Vec::new());
    assert_eq!(code, 0);
    let expected = case_without_name(&from_file);
    // The trace gzipped or plain on stdin; the case on stdout, the summary on stderr.
    for stdin in [gz.clone(), gunzip(&gz)] {
        let (code, stdout, stderr) = run_with_stdin(&["import", "-", "-o", "-"], stdin);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(case_without_name(&stdout), expected);
        assert!(
            stderr.contains("case stdin"),
            "the summary is on stderr: {stderr}"
        );
    }
    let (code, audit, stderr) = run_with_stdin(&["audit", "-"], gz);
    assert_eq!(code, 0, "{stderr}");
    let audit = String::from_utf8(audit).unwrap();
    assert!(audit.starts_with("audit of - (kineto)"), "{audit}");
    let (_, from_file, _) = run(&["audit", trace]);
    assert_eq!(
        audit.replacen("audit of - ", "", 1),
        from_file.replacen(&format!("audit of {trace} "), "", 1)
    );
    // `-o /dev/null` is written into, twice, without --force.
    for _ in 0..2 {
        let (code, _, stderr) = run(&["import", trace, "-o", "/dev/null"]);
        assert_eq!(code, 0, "{stderr}");
    }
}

#[test]
fn an_nsys_export_is_read_from_stdin() {
    let export = "tests/data/nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite";
    let (code, from_file, _) = run(&["import", export, "--format", "json"]);
    assert_eq!(code, 0);
    let (code, stdout, stderr) = run_with_stdin(
        &["import", "-", "--format", "json"],
        std::fs::read(export).unwrap(),
    );
    assert_eq!(code, 0, "{stderr}");
    let file: serde_json::Value = serde_json::from_str(&from_file).unwrap();
    let stdin: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(stdin["audit"]["input"], "-");
    // The same numbers, facts, answers and findings as the file gives.
    for key in [
        "sets",
        "completion",
        "facts",
        "hta",
        "trace_format",
        "clock",
        "notes",
    ] {
        assert_eq!(stdin[key], file[key], "{key}");
    }
    assert_eq!(stdin["audit"]["findings"], file["audit"]["findings"]);
    assert_eq!(stdin["sets"][0]["ns"]["busy"], 373_273_080);
}

#[test]
fn render_and_report_write_to_stdout_and_dev_null() {
    let case = std::fs::read(CASE).unwrap();
    let (code, text, stderr) = run_with_stdin(
        &[
            "render", "-", "-o", "-", "--format", "text", "--width", "60",
        ],
        case.clone(),
    );
    assert_eq!(code, 0, "{stderr}");
    let (_, from_file, _) = run(&["render", CASE, "--format", "text", "--width", "60"]);
    assert_eq!(String::from_utf8(text).unwrap(), from_file);
    let (code, page, stderr) = run_with_stdin(&["report", "-", "-o", "-"], case);
    assert_eq!(code, 0, "{stderr}");
    let page = String::from_utf8(page).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..40]);
    assert!(page.trim_end().ends_with("</html>"));
    for args in [
        &["render", CASE, "-o", "/dev/null"][..],
        &["report", CASE, "-o", "/dev/null"],
        &["form", "new", "-o", "/dev/null"],
    ] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
}

/// Runs worksheet with `COLUMNS` set (stdout is a pipe here, so `COLUMNS` is the width).
fn run_at(columns: Option<u16>, args: &[&str]) -> String {
    let mut cmd = worksheet();
    cmd.args(args).env_remove("COLUMNS").env("NO_COLOR", "1");
    if let Some(c) = columns {
        cmd.env("COLUMNS", c.to_string());
    }
    let out = cmd.output().expect("runs");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn lines_wider_than(text: &str, columns: u16) -> Vec<&str> {
    text.lines()
        .filter(|l| l.chars().count() > usize::from(columns))
        .collect()
}

/// The records of a one-record-per-line layout: each line that does not start with the
/// four-space continuation indent begins a record; its continuation lines follow.
fn records(text: &str) -> Vec<Vec<&str>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    for line in text.lines() {
        match line.strip_prefix("    ") {
            Some(rest) if !out.is_empty() => out.last_mut().unwrap().push(rest),
            _ => out.push(vec![line]),
        }
    }
    out
}

#[test]
fn check_prints_one_record_per_line_when_the_table_does_not_fit() {
    let json = run_at(None, &["check", "fixtures/", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut expected = Vec::new();
    for case in report["cases"].as_array().unwrap() {
        for c in case["checks"].as_array().unwrap() {
            let question = if c["field"] == "verdict" {
                c["question"].as_str().unwrap().to_owned()
            } else {
                format!(
                    "{}.{}",
                    c["question"].as_str().unwrap(),
                    c["field"].as_str().unwrap()
                )
            };
            let word = if c["passed"] == true { "pass" } else { "FAIL" };
            expected.push((
                case["case"].as_str().unwrap().to_owned(),
                question,
                c["expected"].as_str().unwrap().to_owned(),
                c["actual"].as_str().unwrap().to_owned(),
                word,
            ));
        }
    }
    assert!(expected.len() > 200, "{} checks", expected.len());
    for columns in [60, 80] {
        let text = run_at(Some(columns), &["check", "fixtures/"]);
        assert_eq!(lines_wider_than(&text, columns), Vec::<&str>::new());
        let body: Vec<Vec<&str>> = records(&text)
            .into_iter()
            .filter(|r| r[0].contains(" ·"))
            .collect();
        assert_eq!(
            body.len(),
            expected.len(),
            "{columns}: one record per check"
        );
        for (record, (case, question, want, actual, word)) in body.iter().zip(&expected) {
            // Joined back, the record is the line; the breaks fell only between pieces.
            let joined = record.join(" ");
            let one_line = format!("{case} · {question}: {want} → {actual} {word}");
            assert_eq!(
                joined.split_whitespace().collect::<Vec<_>>().join(" "),
                one_line
            );
            // Each value (with its unit) and each identifier stands whole on one line.
            for piece in [case.as_str(), question, want, actual] {
                assert!(
                    record.iter().any(|line| line.contains(piece)),
                    "{columns}: `{piece}` split in {record:?}"
                );
            }
        }
    }
    // Piped with no COLUMNS: the full table, whatever its width.
    let text = run_at(None, &["check", "fixtures/"]);
    assert!(text.starts_with("| case "), "{}", &text[..80]);
    assert!(!lines_wider_than(&text, 120).is_empty());
    // A width the table fits: the table.
    let text = run_at(Some(80), &["check", "fixtures/cases/three-boundaries.json"]);
    assert!(text.starts_with("| case "), "{text}");
}

#[test]
fn eval_and_compare_fit_60_and_80_columns_without_splitting_values() {
    let capture = "fixtures/captures/h200-capture.json";
    for columns in [60, 80] {
        for file in std::fs::read_dir("fixtures/cases").unwrap() {
            let file = file.unwrap().path();
            let file = file.to_str().unwrap();
            let text = run_at(Some(columns), &["eval", file]);
            assert_eq!(
                lines_wider_than(&text, columns),
                Vec::<&str>::new(),
                "{file}"
            );
            // Every answer's value is whole on one line.
            let json = run_at(None, &["eval", file, "--format", "json"]);
            let report: serde_json::Value = serde_json::from_str(&json).unwrap();
            for answer in report["answers"].as_array().unwrap() {
                let id = answer["id"].as_str().unwrap();
                assert!(
                    text.lines().any(|l| l.contains(&format!("{id} ("))),
                    "{file}: {id}"
                );
            }
        }
        let text = run_at(Some(columns), &["compare", capture, capture, "--all"]);
        assert_eq!(lines_wider_than(&text, columns), Vec::<&str>::new());
        let first = records(&text)
            .into_iter()
            .find(|r| r[0].starts_with("boundary spin-10us-idle-submission"))
            .expect("the record of one boundary");
        let joined = first.join(" ");
        assert_eq!(
            joined.split_whitespace().collect::<Vec<_>>().join(" "),
            "boundary spin-10us-idle-submission: 6.228 us (n=200) → 6.228 us (n=200) \
             +0.0 % (noise ±0.0 %) same — identical samples"
        );
        assert!(first.iter().any(|l| l.contains("6.228 us (n=200)")));
    }
}

/// `text` with every run of whitespace made one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn import_summary_prose_wraps_without_splitting_tokens() {
    let trace = "tests/data/traces/nccl_data.json.gz";
    let json = run_at(None, &["import", trace, "--format", "json"]);
    let summary: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut prose: Vec<String> = summary["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| one_line(n.as_str().unwrap()))
        .collect();
    for finding in summary["audit"]["findings"].as_array().unwrap() {
        prose.push(one_line(finding["message"].as_str().unwrap()));
    }
    assert!(prose.len() > 5, "{prose:?}");
    let wide = run_at(None, &["import", trace]);
    assert!(
        !lines_wider_than(&wide, 200).is_empty(),
        "piped, the lines are whole"
    );
    for columns in [60, 80] {
        let text = run_at(Some(columns), &["import", trace]);
        // A line is wider only when it is one token longer than the line (kept whole).
        for line in lines_wider_than(&text, columns) {
            assert_eq!(line.split_whitespace().count(), 1, "{columns}: {line}");
        }
        // Every note and finding is there, its tokens whole (a split token would add a space).
        let flat = one_line(&text);
        for p in &prose {
            assert!(
                flat.contains(p.as_str()),
                "{columns}: `{p}` is split or missing"
            );
        }
        assert!(text.lines().count() > wide.lines().count());
    }
}

#[test]
fn lesson_feedback_wraps_at_the_width() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lesson = |columns: Option<u16>, args: &[&str]| {
        let mut cmd = worksheet();
        cmd.current_dir(d).args(args).env_remove("COLUMNS");
        if let Some(c) = columns {
            cmd.env("COLUMNS", c.to_string());
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    lesson(
        None,
        &["lesson", "start", "three-boundaries", "-o", "alice"],
    );
    std::fs::write(
        d.join("alice/answers.txt"),
        "submission: known 40 us\ncompletion-from-submission: 140 us\n",
    )
    .unwrap();
    let whole = lesson(None, &["lesson", "check", "alice"]);
    let feedback = whole.lines().find(|l| l.starts_with("WRONG")).unwrap();
    assert!(feedback.chars().count() > 200, "{feedback}");
    for columns in [60, 80] {
        let text = lesson(Some(columns), &["lesson", "check", "alice"]);
        assert_eq!(lines_wider_than(&text, columns), Vec::<&str>::new());
        assert!(one_line(&text).contains(&one_line(feedback)));
        let key = lesson(Some(columns), &["lesson", "key", "alice"]);
        assert_eq!(lines_wider_than(&key, columns), Vec::<&str>::new(), "{key}");
        assert!(
            one_line(&key).contains(
                "predict.completion-from-submission · part: predict · answer: unknown (no-wait)"
            ),
            "{key}"
        );
    }
}

/// Every argument of every (sub)command: (command path, long name, short, aliases).
fn every_argument() -> Vec<(String, String, Option<char>, Vec<String>)> {
    fn walk(
        cmd: &clap::Command,
        path: &str,
        out: &mut Vec<(String, String, Option<char>, Vec<String>)>,
    ) {
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                let aliases = arg
                    .get_all_aliases()
                    .unwrap_or_default()
                    .into_iter()
                    .map(str::to_owned)
                    .collect();
                out.push((path.to_owned(), long.to_owned(), arg.get_short(), aliases));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut out = Vec::new();
    let cli = <worksheet::cli::Cli as clap::CommandFactory>::command();
    walk(&cli, "worksheet", &mut out);
    out
}

#[test]
fn one_spelling_per_concept_across_commands() {
    let args = every_argument();
    assert!(args.len() > 60, "{} arguments", args.len());
    let with_o: Vec<&str> = args
        .iter()
        .filter(|a| a.2 == Some('o'))
        .map(|a| a.0.as_str())
        .collect();
    assert_eq!(
        with_o,
        [
            "worksheet capture",
            "worksheet form new",
            "worksheet lab streams",
            "worksheet render",
            "worksheet report",
            "worksheet import",
            "worksheet lesson start"
        ]
    );
    for (command, long, short, aliases) in &args {
        // `-o` is always `--output` (older spellings stay as aliases).
        if *short == Some('o') {
            assert_eq!(long, "output", "{command}: -o is --{long}");
        }
        assert_ne!(long, "out", "{command}: --out is an alias of --output");
        // The other shared concepts have one name, and no command has a second name for them.
        for (concept, wrong) in [
            ("force", &["overwrite", "clobber", "yes"][..]),
            ("format", &["fmt", "output-format"]),
            ("quiet", &["silent", "no-progress"]),
        ] {
            assert!(
                !wrong.contains(&long.as_str()),
                "{command}: --{long} should be --{concept}"
            );
        }
        if long == "quiet" {
            assert_eq!(*short, Some('q'), "{command}: --quiet is -q");
        }
        if long == "output" && command != "worksheet form new" {
            // Where an older spelling existed, it is kept as an alias.
            assert!(
                aliases.is_empty() || aliases == &["out".to_owned()],
                "{command}: {aliases:?}"
            );
        }
    }
    // The lesson folder takes -o/--output, and --out still works.
    let out = worksheet()
        .args(["lesson", "start", "three-boundaries", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("a"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_readme_clippy_line_is_the_one_ci_runs() {
    let ci = std::fs::read_to_string(".ci/run").unwrap();
    let ci_line = ci
        .lines()
        .find(|l| l.starts_with("cargo clippy"))
        .expect("CI runs clippy");
    for doc in ["README.md", "CONTRIBUTING.md"] {
        let text = std::fs::read_to_string(doc).unwrap();
        assert!(text.contains(ci_line), "{doc} does not show `{ci_line}`");
        for line in text.lines().filter(|l| l.contains("cargo clippy")) {
            assert!(
                line.contains(ci_line),
                "{doc}: `{line}` differs from .ci/run"
            );
        }
    }
}

#[test]
fn audit_tables_and_prose_fit_60_and_80_columns() {
    let mut steps_seen = 0;
    for trace in [
        "tests/data/traces/nccl_data.json.gz",
        "tests/data/ranks-sync/rank0.json.gz",
        "tests/data/nsys/perlmutter-cloverleaf-cuda.sqlite",
    ] {
        let json = run_at(None, &["audit", trace, "--format", "json"]);
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        let steps = report["steps"].as_array().unwrap();
        let breakdown = report["breakdown"].as_array().unwrap();
        steps_seen += steps.len();
        // Piped with no COLUMNS: the full tables.
        let wide = run_at(None, &["audit", trace]);
        if !steps.is_empty() {
            assert!(wide.contains("\n| step "), "{trace}");
        }
        assert!(wide.contains("\n| device "), "{trace}: the breakdown table");
        for columns in [60, 80] {
            let text = run_at(Some(columns), &["audit", trace]);
            // A line is wider only when it is one token longer than the line, kept whole
            // (`experimental_config=torch._C._profiler._ExperimentalConfig(…)` in a fix).
            for line in lines_wider_than(&text, columns) {
                assert_eq!(line.split_whitespace().count(), 1, "{columns}: {line}");
            }
            let flat_records: Vec<String> = records(&text)
                .iter()
                .map(|r| one_line(&r.join(" ")))
                .collect();
            // One record per step and per device of the breakdown, its values whole.
            for step in steps {
                let head = format!(
                    "{} · device: {} · start: t+",
                    step["step"].as_str().unwrap(),
                    step["device"].as_str().unwrap()
                );
                assert!(
                    flat_records.iter().any(|r| r.starts_with(&head)),
                    "{trace} at {columns}: no record `{head}…`"
                );
            }
            for b in breakdown {
                let head = format!("{} · span: ", b["device"].as_str().unwrap());
                assert!(
                    flat_records.iter().any(|r| r.starts_with(&head)),
                    "{trace} at {columns}: no record `{head}…`"
                );
            }
            // Every finding's message and fix is there, its tokens whole.
            let flat = one_line(&text);
            for f in report["findings"].as_array().unwrap() {
                for key in ["message", "fix"] {
                    let prose = one_line(f[key].as_str().unwrap());
                    assert!(flat.contains(&prose), "{trace} at {columns}: `{prose}`");
                }
            }
        }
    }
    assert!(steps_seen >= 10, "{steps_seen} steps");
}

/// A plain Kineto trace of at least `worksheet::progress::MIN_BYTES` bytes (a bar is drawn
/// for it on a terminal): a small real trace, padded with JSON whitespace before its last
/// brace.
fn large_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let gz = std::fs::read("tests/data/traces/event_sync_trace.json.gz").unwrap();
    let text = String::from_utf8(gunzip(&gz)).unwrap();
    let end = text.rfind('}').unwrap();
    let padding = " ".repeat(worksheet::progress::MIN_BYTES as usize);
    let path = dir.join("large.json");
    std::fs::write(&path, format!("{}{padding}{}", &text[..end], &text[end..])).unwrap();
    path
}

/// The four commands that read one large trace, writing into `dir`.
fn long_commands(trace: &str, dir: &std::path::Path) -> Vec<Vec<String>> {
    let at = |name: &str| dir.join(name).display().to_string();
    [
        vec!["import", trace, "--format", "json"],
        vec!["audit", trace],
        vec!["report", trace, "-o", &at("r.html"), "--force"],
        vec!["export", trace, "--perfetto", &at("p.json"), "--force"],
    ]
    .into_iter()
    .map(|a| a.into_iter().map(str::to_owned).collect())
    .collect()
}

#[test]
fn long_work_writes_nothing_to_a_piped_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let trace = large_trace(dir.path());
    let trace = trace.to_str().unwrap();
    // The padding changes nothing of the import.
    let (_, small, _) = run(&["audit", "tests/data/traces/event_sync_trace.json.gz"]);
    for args in long_commands(trace, dir.path()) {
        let out = worksheet().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
        if args[0] == "audit" {
            let text = String::from_utf8(out.stdout).unwrap();
            let body = |t: &str| t.split_once('\n').unwrap().1.to_owned();
            assert_eq!(body(&text), body(&small));
        }
    }
}

/// Runs `worksheet ARGS` on a pseudo-terminal (util-linux `script`), `--quiet` or not;
/// returns everything the terminal received.
fn on_a_terminal(args: &[String]) -> Option<String> {
    let binary = env!("CARGO_BIN_EXE_worksheet");
    let command = std::iter::once(binary.to_owned())
        .chain(args.iter().cloned())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("COLUMNS", "100")
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn long_work_draws_a_bar_of_bytes_on_a_terminal_unless_quiet() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        // Without util-linux's `script` there is no terminal to test on; the decision is
        // unit-tested in src/progress.rs.
        eprintln!("no `script`: the terminal half of this test did not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = large_trace(dir.path());
    let size = std::fs::metadata(&trace).unwrap().len();
    for mut args in long_commands(trace.to_str().unwrap(), dir.path()) {
        let terminal = on_a_terminal(&args).expect("script runs");
        // The bar names the file and counts its bytes up to its size (indicatif's units).
        assert!(
            terminal.contains("reading large.json"),
            "{args:?}: {terminal:?}"
        );
        let total = format!("/{}", indicatif::HumanBytes(size));
        assert!(
            terminal.contains(&total),
            "{args:?}: no `{total}` in {terminal:?}"
        );
        args.push("--quiet".to_owned());
        let quiet = on_a_terminal(&args).expect("script runs");
        assert!(!quiet.contains("reading large.json"), "{args:?}: {quiet:?}");
    }
}

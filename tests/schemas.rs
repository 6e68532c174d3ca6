//! Every JSON report validates against its schema in `schemas/`: the real output of each
//! command, run through the binary, checked with the `jsonschema` crate. A report that
//! drops a field, or a schema that drifts, fails here.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

fn validate(kind: &str, value: &Value) {
    let errors = output_errors(kind, value);
    assert!(errors.is_empty(), "{kind}: {errors:#?}");
    assert_eq!(value["format"], format!("worksheet-{kind}"));
    assert_eq!(value["version"], 1);
}

/// The first errors of `value` against `schemas/worksheet-<kind>.schema.json`, with every
/// schema of `schemas/` registered under its `$id`, so that a `$ref` to another report's
/// schema (the import's `audit` is a `worksheet-audit` report) is checked, not skipped.
fn output_errors(kind: &str, value: &Value) -> Vec<String> {
    let path = format!("schemas/worksheet-{kind}.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut schemas = jsonschema::Registry::new();
    for entry in std::fs::read_dir("schemas").unwrap() {
        let other: Value =
            serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
        if let Some(id) = other["$id"].as_str().map(str::to_owned) {
            schemas = schemas
                .add(id, jsonschema::Resource::from_contents(other))
                .unwrap();
        }
    }
    let registry = schemas.prepare().unwrap();
    let validator = jsonschema::options()
        .with_registry(&registry)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{kind}: the schema does not compile: {e}"));
    validator
        .iter_errors(value)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The import's `audit` is checked against the audit's schema through the `$ref`: an audit
/// without its `findings` (required by the audit's schema, not named by the import's) fails
/// the import's schema at `/audit`.
#[test]
fn the_imports_audit_is_checked_against_the_audit_schema() {
    let mut import = run(&[
        "import",
        "tests/data/traces/nccl_data.json.gz",
        "--format",
        "json",
    ]);
    assert!(import["audit"]["kernels"].is_array(), "{}", import["audit"]);
    validate("import", &import);
    import["audit"].as_object_mut().unwrap().remove("findings");
    let errors = output_errors("import", &import);
    assert!(
        errors.iter().any(|e| e.ends_with(" at /audit")),
        "{errors:#?}"
    );
}

#[test]
fn check_eval_form_check_and_compare_reports_validate() {
    validate("check", &run(&["check", "fixtures/", "--format", "json"]));
    for case in [
        "three-boundaries",
        "overlapping-phases",
        "cross-clock-subtraction",
    ] {
        let file = format!("fixtures/cases/{case}.json");
        validate("eval", &run(&["eval", &file, "--format", "json"]));
    }
    validate(
        "form-check",
        &run(&["form", "check", "worksheets/", "--format", "json"]),
    );
    let capture = "fixtures/captures/h200-capture.json";
    validate(
        "compare",
        &run(&["compare", capture, capture, "--format", "json"]),
    );
    validate(
        "compare",
        &run(&[
            "compare",
            capture,
            "fixtures/captures/cuda-example.json",
            "--format",
            "json",
        ]),
    );
}

#[test]
fn import_and_lab_reports_validate() {
    validate(
        "import",
        &run(&[
            "import",
            "tests/data/traces/event_sync_trace.json.gz",
            "--format",
            "json",
        ]),
    );
    validate(
        "import",
        &run(&[
            "import",
            "tests/data/nsys/mordred_report1.sqlite",
            "--format",
            "json",
        ]),
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lab.json");
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args([
            "lab",
            "executor",
            "--runs",
            "3",
            "--warmup",
            "1",
            "--target-ms",
            "2",
        ])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    validate("lab-executor", &report);
    // the committed report from before versioning still compares (read by its `lab` key)
    assert!(Path::new("labs/executor/report.json").exists());
}

#[test]
fn case_files_validate_captures_included() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap.json");
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args(["capture", "--simulate", "--runs", "5", "--out"])
        .arg(&cap)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1));
    for file in [
        cap.as_path(),
        Path::new("fixtures/captures/h200-capture.json"),
        Path::new("fixtures/captures/h200-lab-streams.json"),
        Path::new("fixtures/cases/three-boundaries.json"),
        Path::new("labs/executor/case.json"),
    ] {
        let value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        validate("case", &value);
    }
}

#[test]
fn audit_and_multi_rank_import_reports_validate() {
    for trace in [
        "tests/data/traces/nccl_data.json.gz",
        "tests/data/traces/event_sync_trace.json.gz",
        "tests/data/nsys/perlmutter-cloverleaf-cuda.sqlite",
    ] {
        assert!(
            Path::new(trace).exists(),
            "{trace}: the test data is missing"
        );
        let report = run(&["audit", trace, "--format", "json"]);
        validate("audit", &report);
        assert!(report["findings"].as_array().is_some_and(|f| !f.is_empty()));
    }
    let ranks = run(&[
        "import",
        "tests/data/ranks-sync/rank0.json.gz",
        "tests/data/ranks-sync/rank1.json.gz",
        "--format",
        "json",
    ]);
    validate("import-ranks", &ranks);
    assert_eq!(ranks["ranks"]["relations"][0]["bound"]["lo_ns"], -3967);
    assert_eq!(ranks["ranks"]["relations"][0]["bound"]["hi_ns"], 4525);
    // With one host clock declared, rank 1 is a straggler: the finding validates, and a
    // finding with a field missing does not.
    let declared = run(&[
        "import",
        "tests/data/ranks",
        "--clocks-within",
        "0",
        "--format",
        "json",
    ]);
    validate("import-ranks", &declared);
    let finding = &declared["ranks"]["findings"][0];
    assert_eq!(finding["code"], "straggler");
    let path = "schemas/worksheet-import-ranks.schema.json";
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut broken = declared.clone();
    broken["ranks"]["findings"][0]
        .as_object_mut()
        .unwrap()
        .remove("delay_ns");
    assert!(!validator.is_valid(&broken));
}

// ---------------------------------------------------------------------------------------
// The input schemas (case, form, lesson) mean what the readers mean, in both directions
// (review N17): every input the tool refuses for a structural reason fails its schema, and
// every input it accepts passes. The rules a schema cannot express are listed below, and
// each is named in the schema's `description`.

/// A validator for `schemas/worksheet-<kind>.schema.json`; the lesson schema refers to the
/// case schema's items, which is registered under its `$id`.
fn input_validator(kind: &str) -> (jsonschema::Validator, String) {
    let read = |kind: &str| -> Value {
        let path = format!("schemas/worksheet-{kind}.schema.json");
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    };
    let schema = read(kind);
    let case = read("case");
    let id = case["$id"].as_str().unwrap().to_owned();
    let registry = jsonschema::Registry::new()
        .add(id, jsonschema::Resource::from_contents(case))
        .unwrap()
        .prepare()
        .unwrap();
    let validator = jsonschema::options()
        .with_registry(&registry)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{kind}: the schema does not compile: {e}"));
    let description = schema["description"].as_str().unwrap().to_owned();
    (validator, description)
}

/// The first errors of `value` against `validator`.
fn schema_errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .take(3)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Malformed files the reader refuses for a rule JSON Schema cannot express, with that rule's
/// error code: each passes its schema, and its code is named in the schema's description.
const NOT_STRUCTURAL: [(&str, &str); 16] = [
    (
        "tests/data/malformed/duplicate-field.json",
        "duplicate-field",
    ),
    (
        "tests/data/malformed/reversed-interval.json",
        "reversed-interval",
    ),
    (
        "tests/data/malformed/unknown-stream-reference.json",
        "unknown-reference",
    ),
    (
        "tests/data/malformed/unknown-event-in-program.json",
        "unknown-reference",
    ),
    (
        "tests/data/malformed/duplicate-event-id.json",
        "duplicate-id",
    ),
    ("tests/data/malformed/overflow-past-i64.json", "overflow"),
    ("tests/data/malformed/overflow-seconds.json", "overflow"),
    (
        "tests/data/malformed/timer-never-stopped.json",
        "bad-program",
    ),
    (
        "tests/data/malformed/event-recorded-twice.json",
        "bad-program",
    ),
    (
        "tests/data/malformed/difference-of-unknown-question.json",
        "unknown-reference",
    ),
    (
        "tests/data/malformed/device-interval-recorded-backwards.json",
        "reversed-interval",
    ),
    (
        "tests/data/malformed/event-timestamps-go-backwards.json",
        "inconsistent-event",
    ),
    (
        "tests/data/malformed-forms/duplicate-field.json",
        "duplicate-field",
    ),
    (
        "tests/data/malformed-forms/self-dependency.json",
        "bad-value",
    ),
    (
        "tests/data/malformed-forms/unknown-step.json",
        "unknown-step",
    ),
    (
        "tests/data/malformed-inputs/form-order-space.json",
        "duplicate-step",
    ),
];

/// Runs `worksheet ARGS FILE`; returns its exit code and the error code it printed.
fn refusal(args: &[&str], file: &str) -> (i32, Option<String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = stderr
        .split_once("error[")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(code, _)| code.to_owned());
    (out.status.code().unwrap_or(-1), code)
}

/// Every malformed case or form file, with the schema and the command that reads it.
fn malformed_inputs() -> Vec<(String, &'static str, &'static [&'static str])> {
    const CASE: &[&str] = &["eval"];
    const FORM: &[&str] = &["form", "check"];
    let mut files = Vec::new();
    let json_in = |dir: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path().display().to_string())
            .filter(|p| p.ends_with(".json"))
            .collect();
        names.sort();
        names
    };
    files.extend(
        json_in("tests/data/malformed")
            .into_iter()
            .map(|f| (f, "case", CASE)),
    );
    files.extend(
        json_in("tests/data/malformed-forms")
            .into_iter()
            .map(|f| (f, "form", FORM)),
    );
    // malformed-inputs holds traces and nsys files too: its EXPECTED.csv names the command.
    let listing = std::fs::read_to_string("tests/data/malformed-inputs/EXPECTED.csv").unwrap();
    for line in listing.lines().skip(1) {
        let mut cells = line.split(',');
        let (file, command) = (cells.next().unwrap(), cells.next().unwrap());
        let path = format!("tests/data/malformed-inputs/{file}");
        match command {
            "eval" => files.push((path, "case", CASE)),
            "form check" => files.push((path, "form", FORM)),
            _ => {}
        }
    }
    files
}

#[test]
fn every_structurally_malformed_case_or_form_fails_its_schema() {
    let validators = [
        ("case", input_validator("case")),
        ("form", input_validator("form")),
    ];
    let files = malformed_inputs();
    assert!(files.len() > 60, "{} files", files.len());
    let (mut not_json, mut failing) = (0, 0);
    for (file, kind, command) in &files {
        let (validator, description) = &validators.iter().find(|v| v.0 == *kind).unwrap().1;
        // The tool refuses every one, as an input error.
        let (exit, code) = refusal(command, file);
        assert_eq!(exit, 2, "{file}: the tool accepts it");
        let code = code.unwrap_or_else(|| panic!("{file}: no error code"));
        let Ok(value) = serde_json::from_slice::<Value>(&std::fs::read(file).unwrap()) else {
            // Not JSON at all (or not UTF-8, or with a byte-order mark): no schema sees it.
            assert_eq!(code, "bad-syntax", "{file}");
            not_json += 1;
            continue;
        };
        let errors = schema_errors(validator, &value);
        match NOT_STRUCTURAL.iter().find(|(f, _)| f == file) {
            Some((_, rule)) => {
                assert_eq!(&code, rule, "{file}: refused for another reason");
                assert_eq!(
                    errors,
                    Vec::<String>::new(),
                    "{file}: listed as not structural"
                );
                assert!(
                    description.contains(&format!("`{rule}`")),
                    "{kind} schema: the rule `{rule}` is not named in its description"
                );
            }
            None => {
                assert!(
                    !errors.is_empty(),
                    "{file}: refused with error[{code}], but its {kind} schema passes it"
                );
                failing += 1;
            }
        }
    }
    // Every listed file exists among them (a renamed file would leave a stale entry).
    for (listed, _) in NOT_STRUCTURAL {
        assert!(files.iter().any(|(f, ..)| f == listed), "{listed}");
    }
    assert!(not_json >= 10, "{not_json} files are not JSON");
    assert!(failing >= 40, "{failing} files fail their schema");
}

/// The JSON files under `dir`, recursively, sorted.
fn json_files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_case_form_and_lesson_the_tool_accepts_passes_its_schema() {
    let (case, case_rules) = input_validator("case");
    let mut cases = json_files("fixtures");
    cases.push("labs/executor/case.json".into());
    assert!(cases.len() > 40, "{} case files", cases.len());
    for file in &cases {
        let file = file.to_str().unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let errors = schema_errors(&case, &value);
        let (exit, code) = refusal(&["eval"], file);
        if let Some(expected) = value["expect_error"]["code"].as_str() {
            // A fixture of a refusal: refused for a rule the schema cannot express.
            assert_eq!((exit, code.as_deref()), (2, Some(expected)), "{file}");
            assert!(case_rules.contains(&format!("`{expected}`")), "{expected}");
        } else {
            assert!(exit < 2, "{file}: the tool refuses it");
        }
        assert_eq!(errors, Vec::<String>::new(), "{file}");
    }
    // A case `import -o` writes validates too.
    let dir = tempfile::tempdir().unwrap();
    let imported = dir.path().join("case.json");
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args(["import", "tests/data/traces/nccl_data.json.gz", "-o"])
        .arg(&imported)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&imported).unwrap()).unwrap();
    assert_eq!(
        schema_errors(&case, &value),
        Vec::<String>::new(),
        "import -o"
    );

    let (form, _) = input_validator("form");
    let forms = json_files("worksheets");
    assert!(forms.len() >= 7, "{} forms", forms.len());
    for file in &forms {
        let file = file.to_str().unwrap();
        let (exit, _) = refusal(&["form", "check"], file);
        assert!(exit < 2, "{file}: the tool refuses it");
        let value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(schema_errors(&form, &value), Vec::<String>::new(), "{file}");
    }
    // The blank forms `form new` prints, explanations (`// field` keys) included.
    for question in [
        "",
        "submission",
        "device-interval",
        "host-completion",
        "end-to-end",
    ] {
        let args: &[&str] = if question.is_empty() {
            &["form", "new"]
        } else {
            &["form", "new", "--question", question]
        };
        let blank = run(args);
        assert_eq!(
            schema_errors(&form, &blank),
            Vec::<String>::new(),
            "{question}"
        );
    }

    let (lesson, _) = input_validator("lesson");
    let lessons = json_files("lessons");
    assert!(lessons.len() >= 6, "{} lessons", lessons.len());
    for file in &lessons {
        let file = file.to_str().unwrap();
        let text = std::fs::read_to_string(file).unwrap();
        worksheet::lesson::model::parse_lesson(&text, file).expect("the tool reads it");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            schema_errors(&lesson, &value),
            Vec::<String>::new(),
            "{file}"
        );
    }
}

/// A change to a lesson's JSON.
type Change = fn(&mut Value);

#[test]
fn a_lesson_the_reader_refuses_for_its_structure_fails_the_lesson_schema() {
    let (lesson, rules) = input_validator("lesson");
    let text = std::fs::read_to_string("lessons/overlap-arithmetic.json").unwrap();
    let good: Value = serde_json::from_str(&text).unwrap();
    // Each change is one the reader refuses; the schema must refuse it too.
    let changes: [(&str, Change); 8] = [
        ("an unknown field", |l| l["titel"] = "x".into()),
        ("a wrong format", |l| l["format"] = "worksheet-case".into()),
        ("no questions", |l| {
            l["questions"] = Value::Array(Vec::new())
        }),
        ("an empty title", |l| l["title"] = " ".into()),
        ("a question id with a colon", |l| {
            l["questions"][0]["id"] = "a:b".into()
        }),
        ("an unknown answer source", |l| {
            l["questions"][0]["answer"]["from"] = "verdikt".into()
        }),
        ("a tolerance without a unit", |l| {
            l["questions"][0]["tolerance"] = "1".into()
        }),
        ("extend of a case array a lesson may not extend", |l| {
            l["extend"]["program"] = Value::Array(Vec::new())
        }),
    ];
    for (what, change) in changes {
        let mut bad = good.clone();
        change(&mut bad);
        let text = serde_json::to_string(&bad).unwrap();
        assert!(
            worksheet::lesson::model::parse_lesson(&text, "l.json").is_err(),
            "{what}: the reader accepts it"
        );
        assert!(
            !schema_errors(&lesson, &bad).is_empty(),
            "{what}: the schema passes it"
        );
    }
    // A tolerance on a count: refused by both.
    let mut counted = good.clone();
    let q = counted["questions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|q| q["answer"]["from"] == "intervals")
        .expect("an intervals answer");
    q["answer"]["field"] = "max-depth".into();
    q["tolerance"] = "1 us".into();
    let text = serde_json::to_string(&counted).unwrap();
    assert!(worksheet::lesson::model::parse_lesson(&text, "l.json").is_err());
    assert!(!schema_errors(&lesson, &counted).is_empty());
    // Two questions with one id: refused by the reader, a rule the schema names.
    let mut twice = good.clone();
    let first = twice["questions"][0].clone();
    twice["questions"].as_array_mut().unwrap().push(first);
    let text = serde_json::to_string(&twice).unwrap();
    assert_eq!(
        worksheet::lesson::model::parse_lesson(&text, "l.json")
            .unwrap_err()
            .code,
        "duplicate-id"
    );
    assert_eq!(schema_errors(&lesson, &twice), Vec::<String>::new());
    assert!(rules.contains("`duplicate-id`"));
}

/// Writes `case` to a file in `dir` and runs `worksheet eval` on it; returns the exit code
/// and the error code printed.
fn eval_value(dir: &Path, case: &Value) -> (i32, Option<String>) {
    let file = dir.join("case.json");
    std::fs::write(&file, serde_json::to_string(case).unwrap()).unwrap();
    refusal(&["eval"], file.to_str().unwrap())
}

#[test]
fn a_null_optional_field_is_absent_for_the_reader_and_for_the_case_schema() {
    let (case, _) = input_validator("case");
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("fixtures/cases/three-boundaries.json").unwrap();
    let good: Value = serde_json::from_str(&text).unwrap();
    // serde reads `null` in an optional field as no value: the reader accepts these.
    let mut nulls = good.clone();
    nulls["description"] = Value::Null;
    nulls["provenance"] = Value::Null;
    nulls["expect_error"] = Value::Null;
    nulls["phases"][0]["label"] = Value::Null;
    nulls["phases"][0]["clock"] = Value::Null;
    nulls["streams"][0]["kind"] = Value::Null;
    nulls["program"][9]["stream"] = Value::Null;
    nulls["program"][9]["implicit"] = Value::Null;
    nulls["questions"][0]["expect"]["reason"] = Value::Null;
    nulls["questions"][3]["phases"] = Value::Null;
    nulls["questions"][3]["expect"]["gaps"] = Value::Null;
    assert_eq!(nulls["program"][9]["op"], "host-wait");
    assert_eq!(eval_value(dir.path(), &nulls), (0, None));
    assert_eq!(schema_errors(&case, &nulls), Vec::<String>::new());
    // A null where a value is needed is refused by both.
    let needs_a_value: [(&str, Change); 4] = [
        ("a completed, timed event without its time", |c| {
            c["events"][0]["at"] = Value::Null
        }),
        ("a wait whose only target is null", |c| {
            c["program"][9]["event"] = Value::Null
        }),
        ("a wait's return time without its clock", |c| {
            c["program"][9]["clock"] = Value::Null
        }),
        ("a known expectation without its value", |c| {
            c["questions"][0]["expect"]["value"] = Value::Null
        }),
    ];
    for (what, change) in needs_a_value {
        let mut bad = good.clone();
        change(&mut bad);
        let (exit, code) = eval_value(dir.path(), &bad);
        assert_eq!(exit, 2, "{what}: the reader accepts it");
        assert!(!schema_errors(&case, &bad).is_empty(), "{what}: {code:?}");
    }
}

/// The audit's HTA views are in its JSON, with real values, on a Kineto trace and an Nsight
/// Systems export (the schema above holds their shape).
#[test]
fn audit_json_carries_the_hta_views() {
    let kineto = run(&[
        "audit",
        "tests/data/traces/event_sync_trace.json.gz",
        "--format",
        "json",
    ]);
    validate("audit", &kineto);
    let s20 = &kineto["idle"][0];
    assert_eq!(s20["stream"], "gpu0-s20");
    assert_eq!(
        (
            &s20["host_wait_ns"],
            &s20["kernel_wait_ns"],
            &s20["other_ns"]
        ),
        (&Value::from(32_000), &Value::from(0), &Value::from(0))
    );
    assert_eq!(
        kineto["queues"][2]["pending"]["time_at_1_or_more_ns"],
        31_000
    );
    assert_eq!(kineto["launches"]["total"]["count"], 6);
    assert_eq!(
        kineto["launches"]["total"]["launch_delay_clipped_ns"],
        18_000
    );
    assert_eq!(kineto["bandwidth"][0]["kind"], "Memset");
    assert_eq!(kineto["bandwidth"][0]["bytes"], 1536);
    let nsys = run(&[
        "audit",
        "tests/data/nsys/perlmutter-cloverleaf-cuda.sqlite",
        "--format",
        "json",
    ]);
    validate("audit", &nsys);
    let htod = &nsys["bandwidth"][1];
    assert_eq!(
        (&htod["kind"], &htod["count"]),
        (&Value::from("HtoD"), &Value::from(254))
    );
    assert_eq!(htod["bytes"], 225_065_752_u64);
    assert_eq!(htod["total_ns"], 9_346_285);
    // 225,065,752 bytes / 9,346,285 ns = 24.0807... GB/s.
    assert_eq!(htod["mb_per_s"], 24_081);
}

/// The audit's op → kernels view is in its JSON with real values: on a trace that records
/// the link (numbers read off the JSON by a script joining kernel → launch call → cpu_op),
/// and as unknown, with its reason, on an Nsight Systems export.
#[test]
fn audit_json_carries_the_op_view() {
    let kineto = run(&[
        "audit",
        "tests/data/traces/nccl_data.json.gz",
        "--format",
        "json",
    ]);
    validate("audit", &kineto);
    let ops = kineto["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 23);
    let first = &ops[0];
    assert_eq!(
        (
            &first["name"],
            &first["device"],
            &first["kernels"],
            &first["launches"],
            &first["total_ns"],
            &first["mean_ns"],
            &first["min_ns"],
            &first["max_ns"],
        ),
        (
            &Value::from("record_param_comms"),
            &Value::from("gpu0"),
            &Value::from(21),
            &Value::from(21),
            &Value::from(46_876_493),
            &Value::from(2_232_214),
            &Value::from(7_648),
            &Value::from(5_993_392),
        )
    );
    assert_eq!(first["top_kernels"][0]["count"], 15);
    assert_eq!(first["top_kernels"][0]["total_ns"], 46_762_159);
    assert_eq!(ops[1]["name"], "aten::convolution_backward");
    assert_eq!(ops[1]["kernels"], 891);
    assert_eq!(kineto["op_links"]["linked"], 2_700);
    let kernels: u64 = ops.iter().map(|r| r["kernels"].as_u64().unwrap()).sum();
    assert_eq!(kernels, 2_700);
    let nsys = run(&[
        "audit",
        "tests/data/nsys/perlmutter-cloverleaf-cuda.sqlite",
        "--format",
        "json",
    ]);
    validate("audit", &nsys);
    assert!(nsys["op_links"]["unknown_why"]
        .as_str()
        .unwrap()
        .starts_with("not recorded: a Nsight Systems input"));
    assert!(nsys["ops"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["name"] == "(no recorded op)" && r["recorded"] == false));
}

//! One source for the `straggler` finding (issue 25 §3, §5): on every rank set in
//! `tests/data/ranks*`, with and without `--clocks-within 0`, `import DIR`, `audit DIR`,
//! `report DIR` and `report` of the case `import DIR -o` wrote state the same findings, the
//! same per-rank rows and the same open questions, and `audit DIR` gives each rank the audit
//! `audit FILE` gives it.

use std::process::Command;

use serde_json::Value;

fn worksheet(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&worksheet(args).1).unwrap()
}

fn validator(kind: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(format!("schemas/worksheet-{kind}.schema.json")).unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

/// The `<section id="stragglers">` of a report page.
fn section(page: &str) -> &str {
    let start = page
        .find("<section id=\"stragglers\">")
        .expect("a stragglers section");
    let end = start + page[start..].find("</section>").unwrap();
    &page[start..end]
}

fn html_escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const SETS: [&str; 2] = ["tests/data/ranks", "tests/data/ranks-sync"];

#[test]
fn import_audit_and_report_state_the_same_straggler_part() {
    let dir = tempfile::tempdir().unwrap();
    let (audit_ranks, audit) = (validator("audit-ranks"), validator("audit"));
    let mut fired = 0;
    for set in SETS {
        for declared in [&[][..], &["--clocks-within", "0"][..]] {
            fn with<'a>(mut args: Vec<&'a str>, declared: &[&'a str]) -> Vec<&'a str> {
                args.extend_from_slice(declared);
                args
            }
            let imported = json(&with(vec!["import", set, "--format", "json"], declared));
            let ranks = &imported["ranks"];
            let audited = json(&with(vec!["audit", set, "--format", "json"], declared));
            let errors: Vec<String> = audit_ranks
                .iter_errors(&audited)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{set} {declared:?}: {errors:#?}");
            let part = &audited["stragglers"];
            assert_eq!(part["findings"], ranks["findings"], "{set} {declared:?}");
            assert_eq!(part["per_rank"], ranks["stragglers"], "{set} {declared:?}");
            assert_eq!(
                part["ambiguous_last"], ranks["ambiguous_last"],
                "{set} {declared:?}"
            );
            assert_eq!(part["undecided"], ranks["undecided"], "{set} {declared:?}");
            fired += ranks["findings"].as_array().unwrap().len();

            // Each rank's audit is `audit FILE`'s.
            for r in audited["ranks"].as_array().unwrap() {
                assert!(audit.is_valid(&r["audit"]), "{set}: {r}");
                let file = r["file"].as_str().unwrap();
                assert_eq!(
                    r["audit"],
                    json(&["audit", file, "--format", "json"]),
                    "{file}"
                );
            }

            // The report of the folder and of the case `import -o` wrote: one section, which
            // states each finding's message and each rank's row.
            let page = dir.path().join("folder.html");
            let p = page.to_str().unwrap();
            worksheet(&with(vec!["report", set, "-o", p, "--force"], declared));
            let from_folder = std::fs::read_to_string(&page).unwrap();
            let case = dir.path().join("case.json");
            let c = case.to_str().unwrap();
            worksheet(&with(vec!["import", set, "-o", c, "--force"], declared));
            worksheet(&["report", c, "-o", p, "--force"]);
            let from_case = std::fs::read_to_string(&page).unwrap();
            assert_eq!(
                section(&from_folder),
                section(&from_case),
                "{set} {declared:?}"
            );
            let shown = section(&from_folder);
            for f in ranks["findings"].as_array().unwrap() {
                let message = html_escaped(f["message"].as_str().unwrap());
                assert!(shown.contains(&message), "{set}: {message} not in {shown}");
            }
            for row in ranks["stragglers"].as_array().unwrap() {
                let cell = format!(
                    "<tr><td>{}</td><td>{} of {}</td>",
                    row["rank"], row["last"], row["of"]
                );
                assert!(shown.contains(&cell), "{set}: {cell} not in {shown}");
            }
            for u in ranks["undecided"].as_array().unwrap() {
                let line = html_escaped(u.as_str().unwrap());
                assert!(shown.contains(&line), "{set}: {line} not in {shown}");
            }
        }
    }
    // Only `tests/data/ranks` with one host clock declared names a straggler.
    assert_eq!(fired, 1);
}

#[test]
fn audit_of_a_folder_names_the_straggler_with_its_numbers_and_fails_on_it() {
    let (code, text) = worksheet(&[
        "audit",
        "tests/data/ranks",
        "--clocks-within",
        "0",
        "--fail-on",
        "warning",
    ]);
    assert_eq!(code, Some(1));
    assert!(
        text.contains("== rank 0: tests/data/ranks/rank0.json.gz"),
        "{text}"
    );
    assert!(
        text.contains("== rank 1: tests/data/ranks/rank1.json.gz"),
        "{text}"
    );
    assert!(text.contains("== across ranks (2 ranks)\nwarning straggler: rank 1 arrived last at 7 of 8 collectives, a median 144.852 us after the first rank (12.1 % of the 1.195531 ms step, median of 8 ProfilerStep ranges on rank 1)"), "{text}");
    let audited = json(&[
        "audit",
        "tests/data/ranks",
        "--clocks-within",
        "0",
        "--format",
        "json",
    ]);
    let f = &audited["stragglers"]["findings"][0];
    assert_eq!(f["rank"], 1);
    assert_eq!(
        (f["late_in"].as_u64(), f["of"].as_u64()),
        (Some(7), Some(8))
    );
    assert_eq!(
        f["delay_ns"],
        serde_json::json!({"lo": 144_852, "hi": 144_852})
    );
    assert_eq!(f["step_ns"], 1_195_531);
    // Without the declaration the order stays open, and nothing fails.
    let (code, text) = worksheet(&["audit", "tests/data/ranks", "--fail-on", "warning"]);
    assert!(text.contains("no straggler finding"), "{text}");
    assert!(text.contains("would decide most of them"), "{text}");
    let rank_fails = worksheet(&[
        "audit",
        "tests/data/ranks/rank0.json.gz",
        "--fail-on",
        "warning",
    ])
    .0 == Some(1)
        || worksheet(&[
            "audit",
            "tests/data/ranks/rank1.json.gz",
            "--fail-on",
            "warning",
        ])
        .0 == Some(1);
    assert_eq!(code, Some(i32::from(rank_fails)));
}

#[test]
fn options_for_one_trace_are_refused_for_a_folder() {
    for args in [
        &["audit", "tests/data/ranks", "--explain", "straggler"][..],
        &["audit", "tests/data/ranks", "--compat", "hta"][..],
        &[
            "audit",
            "tests/data/ranks/rank0.json.gz",
            "--clocks-within",
            "0",
        ][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("bad-value"), "{args:?}: {err}");
    }
}

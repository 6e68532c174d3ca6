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

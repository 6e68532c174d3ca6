//! Every example in every `--help` runs (issue 26 §5, review N3: the render help's window
//! example selected nothing).
//!
//! The test walks the command tree from `worksheet --help`, takes each `Example:` /
//! `Examples (…):` block of every page (its lines up to the next blank line, each a shell
//! command), and runs them in help order in one scratch folder that links `fixtures`,
//! `labs` and `tests` from the repository, so an example may use what an earlier one wrote
//! (`form new -o my.json`, then `form fill my.json`). An example passes when it exits 0, or
//! 1 (a documented failed check, `--fail-on`); 3 is accepted only for an example that needs
//! CUDA when the binary was built without it, and it must say so.

use std::path::{Path, PathBuf};
use std::process::Command;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_worksheet"))
}

fn help_of(command: &[String]) -> String {
    let out = Command::new(binary())
        .args(command)
        .arg("--help")
        .output()
        .expect("worksheet runs");
    assert!(out.status.success(), "{command:?} --help failed");
    String::from_utf8(out.stdout).expect("utf-8 help")
}

/// The subcommand names listed under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    let Some(at) = help.find("\nCommands:\n") else {
        return Vec::new();
    };
    help[at + 11..]
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every page, depth first in help order, with its examples.
fn pages(command: Vec<String>, into: &mut Vec<(Vec<String>, Vec<String>)>) {
    let help = help_of(&command);
    let mut examples = Vec::new();
    let mut lines = help.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("Example") && line.ends_with(':') {
            examples.extend(
                lines
                    .by_ref()
                    .take_while(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_owned()),
            );
        }
    }
    into.push((command.clone(), examples));
    for sub in subcommands(&help) {
        let mut next = command.clone();
        next.push(sub);
        pages(next, into);
    }
}

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["fixtures", "labs", "tests"] {
        std::os::unix::fs::symlink(repo.join(name), dir.path().join(name)).expect("link");
    }
    // Where the completion and manual examples install to.
    for d in [
        ".zfunc",
        ".config/fish/completions",
        ".local/share/man/man1",
    ] {
        std::fs::create_dir_all(dir.path().join("home").join(d)).expect("home folders");
    }
    dir
}

#[test]
fn every_example_in_every_help_runs() {
    let mut all = Vec::new();
    pages(Vec::new(), &mut all);
    let examples: Vec<(Vec<String>, String)> = all
        .into_iter()
        .flat_map(|(page, ex)| ex.into_iter().map(move |e| (page.clone(), e)))
        .collect();
    assert!(
        examples.len() >= 40,
        "only {} examples found",
        examples.len()
    );
    let dir = scratch();
    let bin_dir = binary().parent().expect("a folder").to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    for (page, example) in &examples {
        // A line the terminal width wrapped cannot be copied: each example is one line.
        let opens = example.matches('(').count();
        assert!(
            opens == example.matches(')').count()
                && example.starts_with(|c: char| c.is_ascii_alphabetic())
                && !example.ends_with('>')
                && !example.ends_with('|'),
            "`worksheet {}` --help: the example `{example}` is cut by the 80-column wrap",
            page.join(" ")
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(example)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("HOME", dir.path().join("home"))
            .env("MANPAGER", "cat")
            .output()
            .expect("bash runs");
        let code = out.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let no_cuda = code == 3 && stderr.contains("built without the `cuda` feature");
        if !(code == 0 || code == 1 || no_cuda) {
            failures.push(format!(
                "`worksheet {}` --help: `{example}` exited {code}: {stderr}",
                page.join(" ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! The committed pictures are what the tool draws today (UX review N16): every `worksheet
//! render` line of the README's "Made by these commands" block and of
//! `labs/executor/README.md` is run as written, its output redirected to a temporary folder,
//! and compared with the committed file **byte for byte** (SVG, PNG and text alike: the
//! drawing is deterministic and the PNG's font is embedded). A `worksheet import … -o X &&`
//! before a render runs too, into the same temporary folder.
//!
//! After a change to the drawing, run the listed lines with `--force` and commit the pictures.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The shell lines of the first fenced block after `marker` in `file`.
fn block_after(file: &str, marker: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let from = text
        .find(marker)
        .unwrap_or_else(|| panic!("{file} lacks {marker:?}"));
    let rest = &text[from..];
    let open = rest.find("```sh\n").unwrap() + "```sh\n".len();
    let close = rest[open..].find("```").unwrap() + open;
    // Lines ending in `\` continue on the next.
    rest[open..close]
        .replace("\\\n", " ")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// One command of a line: its arguments after `worksheet`, with the comment cut off.
fn commands(line: &str) -> Vec<Vec<String>> {
    let line = line.split(" # ").next().unwrap_or(line);
    line.split("&&")
        .filter_map(|part| {
            let mut words = part.split_whitespace();
            let program = words.next()?;
            program
                .ends_with("worksheet")
                .then(|| words.map(str::to_owned).collect())
        })
        .collect()
}

/// Runs the render lines of a block in `dir`, outputs into `tmp`; returns (committed, drawn)
/// pairs for every picture written.
fn draw(lines: &[String], dir: &Path, tmp: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    for line in lines {
        let cmds = commands(line);
        if !cmds
            .iter()
            .any(|c| c.first().map(String::as_str) == Some("render"))
        {
            continue;
        }
        // Outputs (after `-o`) go to tmp; an input written earlier in the line is read there.
        let mut written: Vec<String> = Vec::new();
        for args in cmds {
            let mut out_path = None;
            let mut rewritten = Vec::new();
            let mut after_o = false;
            for a in &args {
                if after_o {
                    let target = tmp.join(a.replace('/', "__"));
                    out_path = Some((dir.join(a), target.clone()));
                    written.push(a.clone());
                    rewritten.push(target.display().to_string());
                    after_o = false;
                    continue;
                }
                after_o = a == "-o";
                if written.contains(a) {
                    rewritten.push(tmp.join(a.replace('/', "__")).display().to_string());
                } else {
                    rewritten.push(a.clone());
                }
            }
            let out = Command::cargo_bin("worksheet")
                .unwrap()
                .current_dir(dir)
                .args(&rewritten)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "`worksheet {}` in {}: {}",
                args.join(" "),
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            if args.first().map(String::as_str) == Some("render") {
                pairs.push(out_path.expect("a render line names its output with -o"));
            }
        }
    }
    pairs
}

fn assert_same(pairs: &[(PathBuf, PathBuf)]) {
    for (committed, drawn) in pairs {
        let want =
            std::fs::read(committed).unwrap_or_else(|e| panic!("{}: {e}", committed.display()));
        let got = std::fs::read(drawn).unwrap();
        assert!(
            want == got,
            "{} is not what the tool draws today ({} bytes committed, {} drawn): run its line \
             with --force and commit the picture",
            committed.display(),
            want.len(),
            got.len()
        );
    }
}

#[test]
fn the_readme_pictures_are_what_the_tool_draws() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = block_after("README.md", "Made by these commands:");
    let pairs = draw(&lines, Path::new("."), tmp.path());
    let names: Vec<String> = pairs.iter().map(|(c, _)| c.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "./docs/three-boundaries.svg",
            "./docs/three-boundaries.png",
            "./docs/df_index_resolver.png",
            "./docs/nccl_data.png",
            "./docs/cuda-example.png",
            "./docs/lab-streams.png",
        ]
    );
    assert_same(&pairs);
}

#[test]
fn the_executor_lab_pictures_are_what_the_tool_draws() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = block_after("labs/executor/README.md", "## How it was made");
    // The lab run itself is not repeated: only the render lines run.
    let pairs = draw(&lines, Path::new("labs/executor"), tmp.path());
    assert_eq!(pairs.len(), 8, "{pairs:?}");
    assert_same(&pairs);
}

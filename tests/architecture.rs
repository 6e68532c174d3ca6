//! The module graph has no back-edge: only `src/cli.rs` (and the binary's `src/main.rs`) may
//! name `crate::cli`, and commands return outcomes through `worksheet::exit`; nothing below the
//! command layer names `crate::cmd`; the audit and the recorded model (`trace/`) never import
//! the importer.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_the_command_line() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    assert!(files.len() > 20, "found only {} source files", files.len());
    let offenders: Vec<String> = files
        .iter()
        .filter(|p| !p.ends_with("src/cli.rs") && !p.ends_with("src/main.rs"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.contains("crate::cli") || text.contains("super::cli")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "these modules import cli.rs (use crate::exit instead): {offenders:?}"
    );
}

/// The `use crate::X` and `crate::X::` roots a source file's code names: comments and the
/// unit tests (after `#[cfg(test)]`) are left out, since tests may read through any layer.
fn crate_roots(text: &str) -> Vec<String> {
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap_or("")
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut roots = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        roots.push(rest[..end].to_owned());
    }
    roots
}

#[test]
fn the_audit_reads_the_recorded_model_and_never_the_importer() {
    // audit/ and trace/ sit below import/ and the commands: they name neither.
    for (dir, forbidden) in [
        ("src/audit", &["import", "cmd", "cli"][..]),
        ("src/trace", &["import", "audit", "cmd", "cli"][..]),
    ] {
        let mut files = Vec::new();
        rust_files(Path::new(dir), &mut files);
        files.retain(|f| !f.ends_with("tests.rs"));
        assert!(!files.is_empty(), "{dir}");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let roots = crate_roots(&text);
            for bad in forbidden {
                assert!(
                    !roots.iter().any(|r| r == bad),
                    "{} names crate::{bad}: {dir} must not import it",
                    f.display()
                );
            }
        }
    }
}

#[test]
fn nothing_below_the_commands_names_them() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let offenders: Vec<String> = files
        .iter()
        .filter(|p| !p.starts_with("src/cmd") && !p.ends_with("src/cli.rs"))
        .filter(|p| {
            crate_roots(&std::fs::read_to_string(p).unwrap())
                .iter()
                .any(|r| r == "cmd")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "{offenders:?} name crate::cmd");
}

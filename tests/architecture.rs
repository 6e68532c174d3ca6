//! The module graph has no back-edge to the command line: only `src/cli.rs` (and the
//! binary's `src/main.rs`) may name `crate::cli`; commands return outcomes through
//! `worksheet::exit`.

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

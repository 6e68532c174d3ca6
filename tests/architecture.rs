//! The module graph has no back-edge: only `src/cli.rs` (and the binary's `src/main.rs`) may
//! name `crate::cli`; nothing below the command layer names `crate::cmd`, clap or an exit code
//! (commands map the errors and outcomes of the layers below to codes, `cmd::exit`); the audit and the recorded model (`trace/`) never import
//! the importer; inside `case/`, `render/` and `capture/` the files form no circle.

use std::collections::{BTreeMap, BTreeSet};
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
        "these modules import cli.rs (commands return a cmd::exit::Failure instead): {offenders:?}"
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

/// The layers of the crate, lowest first: a top-level module may name only modules before it.
/// `tests.rs` files and `#[cfg(test)]` code may read through any layer.
const LAYERS: [&str; 36] = [
    "units",
    "verdict",
    "clock",
    "interval",
    "interval_set",
    "relation",
    "stats",
    "error",
    "input",
    "kind",
    "output",
    "escape",
    "progress",
    "memory",
    "table",
    "case",
    "schedule",
    "engine",
    "testing",
    "trace",
    "audit",
    "peer",
    "import",
    "check",
    "capture",
    "cuda",
    "compare",
    "form",
    "render",
    "report",
    "export",
    "lab",
    "lesson",
    "cmd",
    "cli",
    "main",
];

/// The top-level module a file under `src/` belongs to (`src/import/kineto/mod.rs` → `import`).
fn top_module(file: &Path) -> String {
    let rel = file.strip_prefix("src").unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

#[test]
fn no_arrow_runs_back_up_between_layers() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    files.retain(|f| !f.ends_with("tests.rs") && !f.to_string_lossy().ends_with("_tests.rs"));
    files.retain(|f| !f.ends_with("src/lib.rs"));
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut back_up = Vec::new();
    for f in &files {
        let me = top_module(f);
        let mine = rank(&me).unwrap_or_else(|| panic!("{}: add `{me}` to LAYERS", f.display()));
        for root in crate_roots(&std::fs::read_to_string(f).unwrap()) {
            if root == me {
                continue;
            }
            if let Some(theirs) = rank(&root) {
                if theirs > mine {
                    back_up.push(format!("{} names crate::{root}", f.display()));
                }
            }
        }
    }
    back_up.sort();
    back_up.dedup();
    assert!(back_up.is_empty(), "arrows back up: {back_up:#?}");
}

/// Only the command layer knows the command line: `cmd/` and `cli.rs` (the clap tree) are the
/// only files that name clap.
#[test]
fn only_the_commands_know_clap() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let offenders: Vec<String> = files
        .iter()
        .filter(|p| !p.starts_with("src/cmd") && !p.ends_with("src/cli.rs"))
        .filter(|p| {
            let code = without_tests(&code_only(&std::fs::read_to_string(p).unwrap()));
            code.contains("clap::") || code.contains("use clap")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "{offenders:?} use clap outside cmd/ and cli.rs"
    );
    // The rule sees what it looks for.
    let cmd = std::fs::read_to_string("src/cmd/render.rs").unwrap();
    assert!(without_tests(&code_only(&cmd)).contains("use clap"));
}

/// The identifiers that are exit codes: `cmd::exit`'s type and constants, an `exit_code`
/// method, the standard library's `ExitCode` and `process::exit`.
const EXIT_NAMES: [&str; 8] = [
    "Failure",
    "EXIT_OK",
    "EXIT_FAILED",
    "EXIT_INPUT",
    "EXIT_NO_CUDA",
    "exit_code",
    "ExitCode",
    "exit",
];

/// The exit-code identifiers `code` names as whole words (`StreamFailure` is not `Failure`;
/// `exit` counts only as `process::exit`).
fn exit_names_in(code: &str) -> Vec<&'static str> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    for name in EXIT_NAMES {
        let hit = code.match_indices(name).any(|(at, _)| {
            let before = code[..at].chars().count();
            let after = before + name.chars().count();
            let whole = !is_ident(before.checked_sub(1).and_then(|i| chars.get(i)))
                && !is_ident(chars.get(after));
            whole && (name != "exit" || code[..at].ends_with("process::"))
        });
        if hit {
            found.push(name);
        }
    }
    found
}

/// Only the command layer names exit codes: below `cmd/` a module returns its own error or
/// outcome (an input error, a refusal, a lesson's outcome), and the command maps it to a
/// code. `main.rs` hands the code to the process.
#[test]
fn only_the_commands_name_exit_codes() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let offenders: Vec<String> = files
        .iter()
        .filter(|p| {
            !p.starts_with("src/cmd") && !p.ends_with("src/cli.rs") && !p.ends_with("src/main.rs")
        })
        .filter_map(|p| {
            let code = without_tests(&code_only(&std::fs::read_to_string(p).unwrap()));
            let names = exit_names_in(&code);
            (!names.is_empty()).then(|| format!("{} names {names:?}", p.display()))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "exit codes belong to cmd/ and cli.rs: {offenders:#?}"
    );
    // The rule sees what it looks for, and only whole names.
    let cmd = std::fs::read_to_string("src/cmd/check.rs").unwrap();
    let names = exit_names_in(&without_tests(&code_only(&cmd)));
    assert!(
        names.contains(&"Failure") && names.contains(&"EXIT_FAILED"),
        "{names:?}"
    );
    assert!(exit_names_in("enum StreamFailure { Exit } fn exit_codes() {}").is_empty());
    assert_eq!(exit_names_in("std::process::exit(2)"), ["exit"]);
    assert_eq!(exit_names_in("e.exit_code()"), ["exit_code"]);
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

/// Rust source with comments, string and char literals blanked out (lengths kept), so that a
/// path in a doc link or a message is not taken for a use of a module.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let (c, next) = (chars[i], chars.get(i + 1).copied());
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i - 1] == '*' && chars[i] == '/') {
                i += 1;
            }
            i += 1;
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !is_ident(chars.get(i.wrapping_sub(1)))
        {
            // A raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            let closing: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let rest: String = chars[j..].iter().collect();
            let end = rest.find(&closing).map_or(chars.len(), |k| {
                j + rest[..k].chars().count() + closing.len()
            });
            out.push_str("\"\"");
            i = end;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\''); a lifetime ('a) is left alone.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `code` without its `#[cfg(test)]` items (test modules use what they test from anywhere).
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = match (rest.find(';'), rest.find('{')) {
            (Some(semi), Some(open)) if semi < open => semi + 1,
            (_, Some(open)) => {
                let mut depth = 0;
                let mut end = rest.len();
                for (k, c) in rest[open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (Some(semi), None) => semi + 1,
            (None, None) => rest.len(),
        };
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// The paths a `use` tree names, each as its segments: `super::{a, b::{self, C}}` →
/// `super::a`, `super::b`, `super::b::C`.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    expand_into(&[], &tree, &mut out);
    out
}

fn expand_into(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    let Some(open) = tree.find('{') else {
        let tree = tree.split(" as ").next().unwrap_or(tree);
        let tree = tree
            .split("as")
            .next()
            .filter(|_| tree.contains("::"))
            .unwrap_or(tree);
        let mut path = prefix.to_vec();
        path.extend(
            tree.split("::")
                .filter(|s| !s.is_empty() && *s != "self" && *s != "*")
                .map(str::to_owned),
        );
        out.push(path);
        return;
    };
    let mut path = prefix.to_vec();
    path.extend(
        tree[..open]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    );
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                if !inner[start..k].is_empty() {
                    expand_into(&path, &inner[start..k], out);
                }
                start = k + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].is_empty() {
        expand_into(&path, &inner[start..], out);
    }
}

/// The module path of a source file: `src/case/validate/ids.rs` → `case::validate::ids`,
/// `src/render/mod.rs` → `render`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|l| l == "mod" || l == "lib") {
        path.pop();
    }
    path
}

/// The file-level graph of the modules under `src/<folder>/`: an arrow from each file to
/// each other file of the folder whose module it names (in a `use` or an inline
/// `crate::…`, `super::…`, `self::…` or child-module path). A file naming one of its own
/// ancestors (the module that declares it, which re-exports its children's names) is no
/// arrow: that is how a folder's front door works, not a dependency between rooms. Test
/// code (`#[cfg(test)]` items, `tests.rs` files) is left out.
fn folder_graph(src: &Path, folder: &str) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(&src.join(folder), &mut files);
    if src.join(format!("{folder}.rs")).exists() {
        files.push(src.join(format!("{folder}.rs")));
    }
    files.retain(|f| !f.ends_with("tests.rs"));
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = module_of(src, file);
        let text = without_tests(&code_only(&std::fs::read_to_string(file).unwrap()));
        let children: BTreeSet<String> = modules
            .iter()
            .filter(|m| m.len() == me.len() + 1 && m.starts_with(&me))
            .map(|m| m.last().unwrap().clone())
            .collect();
        let mut named: Vec<Vec<String>> = Vec::new();
        // `use` trees.
        for statement in text.split(';') {
            if let Some(at) = statement.find("use ") {
                let before = statement[..at].trim_end();
                let is_use = before.is_empty()
                    || before.ends_with('}')
                    || before.ends_with(']')
                    || before.ends_with("pub")
                    || before.ends_with(')');
                if is_use && !is_ident(statement[..at].chars().last().as_ref()) {
                    named.extend(expand_use(&statement[at + 4..]));
                }
            }
        }
        // Inline paths: `crate::a::b(…)`, `super::x::y`, `child::f(…)`.
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if is_ident(chars.get(i))
                && !is_ident(chars.get(i.wrapping_sub(1)))
                && chars.get(i.wrapping_sub(1)) != Some(&':')
            {
                let mut j = i;
                while is_ident(chars.get(j))
                    || (chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':'))
                {
                    j += if chars[j] == ':' { 2 } else { 1 };
                }
                let path: Vec<String> = chars[i..j]
                    .iter()
                    .collect::<String>()
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                if path.len() > 1
                    && (["crate", "super", "self"].contains(&path[0].as_str())
                        || children.contains(&path[0]))
                {
                    named.push(path);
                }
                i = j.max(i + 1);
            } else {
                i += 1;
            }
        }
        let mut arrows = BTreeSet::new();
        for path in named {
            // Resolve to an absolute module path.
            let mut abs: Vec<String> = match path[0].as_str() {
                "crate" => Vec::new(),
                "super" => me[..me.len().saturating_sub(1)].to_vec(),
                "self" => me.clone(),
                first if children.contains(first) => me.clone(),
                _ => continue,
            };
            let skip = usize::from(["crate", "super", "self"].contains(&path[0].as_str()));
            let mut rest = path[skip..].iter();
            // `super::super::…`
            let mut segments: Vec<&String> = Vec::new();
            for s in rest.by_ref() {
                if s == "super" && segments.is_empty() {
                    abs.pop();
                } else {
                    segments.push(s);
                }
            }
            abs.extend(segments.into_iter().cloned());
            // The longest prefix that is a module of the folder.
            let target = (1..=abs.len())
                .rev()
                .map(|n| abs[..n].to_vec())
                .find(|m| modules.contains(m));
            if let Some(target) = target {
                let is_ancestor = me.len() > target.len() && me.starts_with(&target);
                if target != me && !is_ancestor {
                    arrows.insert(target);
                }
            }
        }
        graph.insert(me, arrows);
    }
    graph
}

/// The circles of a graph: its strongly connected components of more than one module.
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    let reaches = |from: &Vec<String>| -> BTreeSet<Vec<String>> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
        graph.keys().map(|m| (m, reaches(m))).collect();
    let mut found: Vec<Vec<String>> = Vec::new();
    for m in graph.keys() {
        let mut circle: Vec<String> = graph
            .keys()
            .filter(|n| *n != m && reach[m].contains(*n) && reach[*n].contains(m))
            .map(|n| n.join("::"))
            .collect();
        if !circle.is_empty() {
            circle.push(m.join("::"));
            circle.sort();
            if !found.contains(&circle) {
                found.push(circle);
            }
        }
    }
    found
}

/// Every folder of `src/` with more than a few files.
const FOLDERS: [&str; 18] = [
    "audit", "capture", "case", "check", "cmd", "compare", "export", "form", "import", "lab",
    "lesson", "peer", "relation", "render", "report", "stats", "testing", "trace",
];

/// No circle of files inside any folder (issue 23): the arrows inside
/// each folder run one way, so each file can be read after the ones it names.
#[test]
fn no_circle_of_files_inside_any_folder() {
    let src = Path::new("src");
    let mut failures = Vec::new();
    let mut total_arrows = 0;
    for folder in FOLDERS {
        let graph = folder_graph(src, folder);
        let arrows: usize = graph.values().map(BTreeSet::len).sum();
        assert!(graph.len() >= 2, "{folder}: {} files", graph.len());
        total_arrows += arrows;
        let found = circles(&graph);
        if !found.is_empty() {
            failures.push(format!("src/{folder}/: {found:?}"));
        }
    }
    assert!(
        total_arrows > 100,
        "only {total_arrows} arrows found: the parser is broken"
    );
    assert!(failures.is_empty(), "circles of files: {failures:#?}");
    // The layout names the drawing model, and the model (a leaf) names no other file.
    let render = folder_graph(src, "render");
    let of = |m: &str| render[&m.split("::").map(str::to_owned).collect::<Vec<_>>()].clone();
    assert!(of("render::layout").contains(&vec!["render".to_owned(), "model".to_owned()]));
    assert!(of("render::model").is_empty(), "{:?}", of("render::model"));
}

/// The circle finder sees a circle made by a `use` tree and an inline call, and none where
/// the arrows run one way or a file names its own parent module.
#[test]
fn the_circle_finder_finds_a_circle_and_only_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("room/inner")).unwrap();
    let write = |p: &str, text: &str| std::fs::write(src.join(p), text).unwrap();
    write(
        "room/mod.rs",
        "mod a;\nmod b;\nmod c;\nmod inner;\npub use a::A;\n",
    );
    write(
        "room/a.rs",
        "//! [`super::c`] in a doc is no arrow.\nuse super::{b::{self, B}};\npub struct A;\n",
    );
    write("room/b.rs", "use crate::room::A; // the front door: no arrow\npub fn f() { let _ = \"super::a\"; super::c::g(); }\n");
    write(
        "room/c.rs",
        "pub fn g() {}\n#[cfg(test)]\nmod tests {\n    use super::super::a::A;\n}\n",
    );
    write("room/inner.rs", "mod leaf;\nuse leaf::L;\n");
    write(
        "room/inner/leaf.rs",
        "use super::super::c::g;\npub struct L;\n",
    );
    let graph = folder_graph(src, "room");
    let module = |m: &str| m.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        graph[&module("room::a")],
        BTreeSet::from([module("room::b")])
    );
    assert_eq!(
        graph[&module("room::b")],
        BTreeSet::from([module("room::c")])
    );
    assert_eq!(
        graph[&module("room::inner")],
        BTreeSet::from([module("room::inner::leaf")])
    );
    assert_eq!(
        graph[&module("room::inner::leaf")],
        BTreeSet::from([module("room::c")])
    );
    assert!(circles(&graph).is_empty());
    // c names a through an inline path: a → b → c → a.
    write("room/c.rs", "pub fn g() { let _ = super::a::A; }\n");
    let graph = folder_graph(src, "room");
    assert_eq!(
        circles(&graph),
        vec![vec![
            "room::a".to_owned(),
            "room::b".to_owned(),
            "room::c".to_owned()
        ]]
    );
}

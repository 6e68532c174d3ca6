//! Every fixture is its own named test: `cargo test --test fixtures` lists them one by one.
//!
//! Each test calls [`worksheet::check::check_file`], the same library function that
//! `worksheet check` runs, so the harness and the command cannot drift.

use std::path::Path;

fn fixture_passes(path: &Path) -> datatest_stable::Result<()> {
    let case = worksheet::check::check_file(path).map_err(|e| e.to_string())?;
    let failures: Vec<String> = case
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| {
            format!(
                "question `{}` {}: expected {}, actual {}",
                c.question, c.field, c.expected, c.actual
            )
        })
        .collect();
    if case.checks.is_empty() {
        return Err(format!(
            "{}: states no expectations, so it checks nothing",
            path.display()
        )
        .into());
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} ({}):\n{}",
            case.case,
            path.display(),
            failures.join("\n")
        )
        .into())
    }
}

datatest_stable::harness! {
    { test = fixture_passes, root = "fixtures", pattern = r"\.json$" },
}

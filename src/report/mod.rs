//! `worksheet report INPUT -o report.html`: one self-contained HTML page of a case, a
//! capture, a lab's case file or a trace (imported on the way).
//!
//! The page holds the verdict table (known / unknown with its reason), the per-stream and
//! per-device tables, one timeline panel per clock (never a shared axis) whose zoom and pan
//! recompute the exact per-pixel density from the intervals embedded in the page, and
//! sections that other commands can add ([`html::Section`]: the audit findings go there).
//! No network: CSS and JS are inline and hand-written ([`html`]). Only [`run`] touches
//! files.

pub mod html;

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use crate::case::{load_case_file, load_case_str, Case};
use crate::cli::{Failure, EXIT_INPUT, EXIT_OK};
use crate::output::{refuse_existing, write_output};

/// Arguments of `worksheet report`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  worksheet report fixtures/cases/three-boundaries.json -o report.html\n  worksheet report tests/data/traces/nccl_data.json.gz -o nccl.html\n\n\
The page is one file with its CSS and JS inline: it opens offline in any browser.\n\n\
Exit codes: 0 written, 2 the input is malformed or the output exists (use --force)."
)]
pub struct ReportArgs {
    /// A case file, a capture, a lab's case file, or a trace (Kineto JSON / .json.gz, Nsight
    /// Systems .sqlite), which is imported first.
    pub input: PathBuf,
    /// Where to write the page (an .html file). Never overwritten without --force.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// What the input was read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A case file (fixture, capture, lab output).
    Case,
    /// A trace, imported: the importer's format line.
    Trace(String),
}

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Reads `path` as a case, or, when it is a trace, imports it into one.
///
/// # Errors
/// [`Failure`] (exit 2) with the case loader's or the importer's message.
pub fn load_input(path: &Path) -> Result<(Case, Source), Failure> {
    let mut head = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(16).read_to_end(&mut head);
    }
    let import = |path: &Path| -> Result<(Case, Source), Failure> {
        let imported =
            crate::import::import_path(path, &crate::import::ImportOptions::default())?;
        let name = path.display().to_string();
        let case = load_case_str(&imported.case.to_json_pretty(), &name)?;
        Ok((case, Source::Trace(imported.format)))
    };
    if head.starts_with(SQLITE_MAGIC) {
        return import(path);
    }
    match load_case_file(path) {
        Ok(case) => Ok((case, Source::Case)),
        Err(e) => {
            let trace = e.code == "too-large"
                || crate::case::read_case_text(path).is_ok_and(|t| {
                    t.get(..t.len().min(1 << 16))
                        .unwrap_or(&t)
                        .contains("\"traceEvents\"")
                });
            if trace {
                import(path)
            } else {
                Err(e.into())
            }
        }
    }
}

/// Writes the report of `args.input` to `args.output`.
///
/// # Errors
/// [`Failure`] (exit 2) for a malformed input, an output that is not `.html`, or an output
/// that exists without `--force`.
pub fn run(args: &ReportArgs, _out: &mut dyn Write) -> Result<u8, Failure> {
    let ext = args
        .output
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase());
    if !matches!(ext.as_deref(), Some("html" | "htm")) {
        return Err(Failure {
            message: format!(
                "{}: error[unknown-extension]: a report is an HTML page: name it .html",
                args.output.display()
            ),
            code: EXIT_INPUT,
        });
    }
    refuse_existing(&args.output, args.force)?;
    let (case, source) = load_input(&args.input)?;
    let page = html::render(&html::ReportInput {
        case: &case,
        source: &source,
        input_name: &args.input.display().to_string(),
        sections: Vec::new(),
    });
    write_output(&args.output, page.as_bytes(), args.force)?;
    if io::stderr().is_terminal() {
        let _ = writeln!(
            io::stderr(),
            "wrote {} ({} bytes)",
            args.output.display(),
            page.len()
        );
    }
    Ok(EXIT_OK)
}

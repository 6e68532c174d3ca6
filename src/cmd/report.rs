//! `worksheet report`: its arguments and the page written. The page itself is
//! `crate::report`'s.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

use crate::cmd::exit::{Failure, EXIT_INPUT, EXIT_OK};
use crate::output::{refuse_existing, write_output};

/// Arguments of `worksheet report`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  worksheet report fixtures/cases/three-boundaries.json -o report.html\n  worksheet report tests/data/traces/nccl_data.json.gz -o nccl.html\n  worksheet report tests/data/ranks --clocks-within 0 -o ranks.html\n\n\
A folder of ranks' traces adds the straggler finding across ranks.\n\n\
--window takes what `worksheet render --window` takes (`+100ms..+110ms`).\n\n\
The page is one file with its CSS and JS inline: it opens offline in any browser.\n\n\
Exit codes: 0 written, 2 the input is malformed or the output exists (use --force)."
)]
pub struct ReportArgs {
    /// A case file, a capture, a lab's case file, a trace (Kineto JSON / .json.gz, Nsight
    /// Systems .sqlite) or a folder of ranks' traces, which is imported first; `-` reads
    /// standard input.
    pub input: PathBuf,
    /// Where to write the page (an .html file; `-` for standard output). Never overwritten
    /// without --force.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// The timeline shows this stretch of one clock, after its origin (`+100ms..+110ms`)
    /// or in its own readings (`@START..@END`), as `worksheet render --window` takes it.
    #[arg(long, value_name = "START..END")]
    pub window: Option<String>,
    /// The clock `--window` applies to (needed when the input has more than one).
    #[arg(long, value_name = "ID", requires = "window")]
    pub clock: Option<String>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// A folder of ranks only: how well their clocks agree, as `worksheet import
    /// --clocks-within` (docs/ranks.md); repeatable.
    #[arg(long = "clocks-within", value_name = "DURATION")]
    pub clocks_within: Vec<String>,
    /// No progress bar (one is drawn on standard error while a large trace is read, when
    /// standard error is a terminal).
    #[arg(long, short)]
    pub quiet: bool,
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
    // `-` (standard output) and a device or FIFO (`/dev/null`) take the page as it is.
    let stream =
        crate::output::is_stdout(&args.output) || crate::output::is_stream_target(&args.output);
    if !matches!(ext.as_deref(), Some("html" | "htm")) && !stream {
        return Err(Failure {
            message: format!(
                "{}: error[unknown-extension]: a report is an HTML page: name it .html",
                args.output.display()
            ),
            code: EXIT_INPUT,
        });
    }
    refuse_existing(&args.output, args.force)?;
    let file = args.input.display();
    let window = super::render::window_of(&args.input, args.window.as_deref(), args.clock.clone())?;
    let (case, source) =
        crate::import::input::load_input_declared(&args.input, &args.clocks_within)?;
    if let Some(w) = &window {
        // The window is checked as `render` checks it: a clock of the case, something in it.
        let options = crate::render::layout::LayoutOptions {
            focus: None,
            window: Some(w.clone()),
        };
        crate::render::layout::layout(&case, &options).map_err(|e| Failure {
            message: format!("{file}: error[{}]: {e}", e.code()),
            code: EXIT_INPUT,
        })?;
    }
    // The audit travels in the case (`provenance.audit`): a trace imported on the way and
    // the case `worksheet import` wrote from it give the same section.
    let mut sections: Vec<crate::report::html::Section> = case
        .provenance
        .as_ref()
        .and_then(|p| p.get("audit"))
        .map(crate::report::audit::section)
        .into_iter()
        .collect();
    // A multi-rank case (a folder, or the case `import DIR -o` wrote): the straggler finding.
    sections.extend(
        case.provenance
            .as_ref()
            .and_then(crate::report::ranks::section),
    );
    let page = crate::report::html::render(&crate::report::html::ReportInput {
        case: &case,
        source: &source,
        input_name: &args.input.display().to_string(),
        sections,
        window,
    });
    write_output(&args.output, page.as_bytes(), args.force)?;
    if io::stderr().is_terminal() && !crate::output::is_stdout(&args.output) {
        let _ = writeln!(
            io::stderr(),
            "wrote {} ({} bytes)",
            args.output.display(),
            page.len()
        );
    }
    Ok(EXIT_OK)
}

//! `worksheet render`: timeline pictures of any case file — fixtures, captures, lab output.
//!
//! A case is first laid out ([`model::layout`]: one panel per clock, lanes per stream, bars,
//! ticks, wait arrows, covered union / gaps / overlap), then drawn by a pure renderer that
//! returns a `String`: [`svg::render`] for a picture, [`text::render`] for a terminal
//! sketch. Only [`run`] touches files (through [`crate::output`]).
//!
//! Two clocks never share an axis: each clock is its own panel with its own axis and unit
//! caption, and an arrow from a wait on one clock to work on another shows what the wait
//! covers, not a time relation.

pub mod axis;
pub mod model;
pub mod svg;
pub mod text;

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::case::load_case_file;
use crate::exit::{Failure, EXIT_INPUT, EXIT_OK};
use crate::output::{refuse_existing, write_output};

/// What `render` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RenderFormat {
    /// An SVG picture.
    Svg,
    /// A compact terminal sketch.
    Text,
}

/// Arguments of `worksheet render`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  worksheet render fixtures/cases/three-boundaries.json -o three-boundaries.svg\n  worksheet render labs/executor/case.json --focus job-15 --format text\n\n\
Exit codes: 0 drawn, 2 the case is malformed, the focus id is unknown, or the\n\
output exists (use --force)."
)]
pub struct RenderArgs {
    /// The case file (a fixture, a capture, or a lab's case file).
    pub file: PathBuf,
    /// Where to write the picture (default: standard output). Never overwritten without --force.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Picture format.
    #[arg(long, value_enum, default_value_t = RenderFormat::Svg)]
    pub format: RenderFormat,
    /// Zoom the clock of this phase, timer, host wait, mark or event to it.
    #[arg(long, value_name = "ID")]
    pub focus: Option<String>,
    /// Width: pixels for SVG (default 1200), columns for text (default 100).
    #[arg(long, value_parser = clap::value_parser!(u32).range(40..=20_000))]
    pub width: Option<u32>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Draws the case `args.file` in `args.format`.
///
/// # Errors
/// [`Failure`] (exit 2) for a malformed case, an unknown focus id, or an output that exists
/// without `--force`.
pub fn run(args: &RenderArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    if let Some(path) = &args.output {
        refuse_existing(path, args.force)?;
    }
    let case = load_case_file(&args.file)?;
    let timeline = model::layout(
        &case,
        &model::LayoutOptions {
            focus: args.focus.clone(),
        },
    )
    .map_err(|e| Failure {
        message: format!("error: {e}"),
        code: EXIT_INPUT,
    })?;
    let bytes = match args.format {
        RenderFormat::Svg => svg::render(
            &timeline,
            &svg::SvgOptions {
                width: args.width.unwrap_or(1200).max(600),
            },
        ),
        RenderFormat::Text => text::render(
            &timeline,
            &text::TextOptions {
                width: args.width.map_or(100, |w| w as usize),
            },
        ),
    };
    match &args.output {
        Some(path) => {
            write_output(path, bytes.as_bytes(), args.force)?;
            if io::stderr().is_terminal() {
                let _ = writeln!(io::stderr(), "wrote {}", path.display());
            }
        }
        None => out.write_all(bytes.as_bytes())?,
    }
    Ok(EXIT_OK)
}

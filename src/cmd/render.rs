//! `worksheet render`: its arguments, the picture format chosen from the output's name, and
//! the picture written. The drawing itself is `crate::render`'s.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::cmd::exit::{Failure, EXIT_INPUT, EXIT_OK};
use crate::output::{refuse_existing, write_output};

/// What `render` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RenderFormat {
    /// An SVG picture.
    Svg,
    /// A PNG picture (the SVG rasterised with the embedded font).
    Png,
    /// A compact terminal sketch.
    Text,
}

/// Arguments of `worksheet render`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  worksheet render fixtures/cases/three-boundaries.json -o three-boundaries.svg\n  worksheet render labs/executor/case.json --focus job-15 --format text\n  \
worksheet render tests/data/traces/nccl_data.json.gz -o nccl.png\n  \
worksheet render tests/data/traces/nccl_data.json.gz --window +100ms..+110ms\n\n\
A --window counts from the origin the picture's axis names (`ms after 1716423322.4 s`);\n\
`@START..@END` gives the clock's own readings instead.\n\n\
The format follows the output's extension (.svg, .png, .txt); any other\n\
extension is refused.\n\n\
Exit codes: 0 drawn, 2 the case is malformed, the focus id or window is bad,\n\
the extension is unknown, or the output exists (use --force)."
)]
pub struct RenderArgs {
    /// The case file (a fixture, a capture, or a lab's case file), or a trace (Kineto JSON /
    /// .json.gz, Nsight Systems .sqlite), imported in memory first; `-` reads standard input.
    #[arg(value_name = "INPUT")]
    pub file: PathBuf,
    /// Where to write the picture (default: standard output). Never overwritten without --force.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Picture format (default: from the output's extension; SVG on standard output).
    #[arg(long, value_enum)]
    pub format: Option<RenderFormat>,
    /// Zoom the clock of this phase, timer, host wait, mark or event to it.
    #[arg(long, value_name = "ID")]
    pub focus: Option<String>,
    /// Zoom one clock to a time range after its origin (the one its axis names), for example
    /// `+100ms..+110ms`; `@START..@END` takes the clock's own readings. A window that selects
    /// nothing is an error naming the clock's range.
    #[arg(long, value_name = "START..END")]
    pub window: Option<String>,
    /// The clock `--window` applies to (needed when the case draws more than one clock and
    /// no --focus names one).
    #[arg(long, value_name = "ID", requires = "window")]
    pub clock: Option<String>,
    /// Width: pixels for SVG (default 1200), columns for text (default 100).
    #[arg(long, value_parser = clap::value_parser!(u32).range(40..=20_000))]
    pub width: Option<u32>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The format to write: the one asked for, or the output's extension's; a mismatch or an
/// unknown extension is an error (`unknown-extension`).
fn choose_format(
    output: Option<&Path>,
    asked: Option<RenderFormat>,
) -> Result<RenderFormat, Failure> {
    // Standard output (`-`, or no -o) and a device or FIFO (`/dev/null`) have no extension
    // to go by: --format, or SVG.
    let stream = |p: &Path| {
        crate::output::is_stdout(p)
            || (p.extension().is_none() && crate::output::is_stream_target(p))
    };
    let Some(path) = output.filter(|p| !stream(p)) else {
        return Ok(asked.unwrap_or(RenderFormat::Svg));
    };
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let by_ext = match ext.as_str() {
        "svg" => Some(RenderFormat::Svg),
        "png" => Some(RenderFormat::Png),
        "txt" | "text" => Some(RenderFormat::Text),
        _ => None,
    };
    match (asked, by_ext) {
        (Some(a), Some(e)) if a != e => Err(Failure {
            message: format!(
                "{}: error[unknown-extension]: --format {} does not match the extension `.{ext}` (use .svg, .png or .txt to match)",
                path.display(),
                format!("{a:?}").to_lowercase()
            ),
            code: EXIT_INPUT,
        }),
        (_, Some(e)) => Ok(e),
        (_, None) => Err(Failure {
            message: format!(
                "{}: error[unknown-extension]: cannot tell the picture format from the extension `{}`: name the file .svg, .png or .txt",
                path.display(),
                if ext.is_empty() { "(none)".to_owned() } else { format!(".{ext}") }
            ),
            code: EXIT_INPUT,
        }),
    }
}

/// Draws the case `args.file` in the chosen format.
///
/// # Errors
/// [`Failure`] (exit 2) for a malformed case, an unknown focus id, a bad window, an unknown
/// output extension, or an output that exists without `--force`.
pub fn run(args: &RenderArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    let format = choose_format(args.output.as_deref(), args.format)?;
    if let Some(path) = &args.output {
        refuse_existing(path, args.force)?;
    }
    let file = args.file.display();
    let window = window_of(&args.file, args.window.as_deref(), args.clock.clone())?;
    let (case, _) = crate::import::input::load_input(&args.file)?;
    let timeline = crate::render::layout::layout(
        &case,
        &crate::render::layout::LayoutOptions {
            focus: args.focus.clone(),
            window,
        },
    )
    .map_err(|e| Failure {
        message: format!("{file}: error[{}]: {e}", e.code()),
        code: EXIT_INPUT,
    })?;
    let svg_options = crate::render::svg::SvgOptions {
        width: args.width.unwrap_or(1200).max(600),
    };
    let bytes: Vec<u8> = match format {
        RenderFormat::Svg => crate::render::svg::render(&timeline, &svg_options).into_bytes(),
        RenderFormat::Png => {
            crate::render::png::svg_to_png(&crate::render::svg::render(&timeline, &svg_options))
                .map_err(|m| Failure {
                    message: format!("{file}: error[png]: {m}"),
                    code: EXIT_INPUT,
                })?
        }
        RenderFormat::Text => crate::render::text::render(
            &timeline,
            &crate::render::text::TextOptions {
                width: args.width.map_or(100, |w| w as usize),
            },
        )
        .into_bytes(),
    };
    match &args.output {
        Some(path) => {
            write_output(path, &bytes, args.force)?;
            if io::stderr().is_terminal() && !crate::output::is_stdout(path) {
                let _ = writeln!(io::stderr(), "wrote {}", path.display());
            }
        }
        None => out.write_all(&bytes)?,
    }
    Ok(EXIT_OK)
}

/// `--window TEXT` (with `--clock`) of `render` and `report` for the input `file`: exit 2,
/// `bad-window`, naming the file, when it does not parse.
pub(crate) fn window_of(
    file: &std::path::Path,
    window: Option<&str>,
    clock: Option<String>,
) -> Result<Option<crate::render::layout::Window>, Failure> {
    window
        .map(|text| {
            crate::render::layout::Window::parse(text, clock).map_err(|m| Failure {
                message: format!("{}: error[bad-window]: --window {m}", file.display()),
                code: EXIT_INPUT,
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_follows_the_extension_and_unknown_ones_are_refused() {
        let f = |p: &str, a| choose_format(Some(Path::new(p)), a);
        assert_eq!(f("x.svg", None).unwrap(), RenderFormat::Svg);
        assert_eq!(f("x.PNG", None).unwrap(), RenderFormat::Png);
        assert_eq!(
            f("x.txt", Some(RenderFormat::Text)).unwrap(),
            RenderFormat::Text
        );
        for bad in [
            f("x.jpg", None),
            f("x", None),
            f("x.svg", Some(RenderFormat::Png)),
        ] {
            assert!(bad
                .unwrap_err()
                .message
                .contains("error[unknown-extension]"));
        }
        assert_eq!(choose_format(None, None).unwrap(), RenderFormat::Svg);
    }
}

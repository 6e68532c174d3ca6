//! `worksheet render`: timeline pictures of any case file — fixtures, captures, lab output.
//!
//! A case is first laid out ([`model::layout`]: one panel per clock, lanes per stream, bars,
//! ticks, wait arrows, covered union / gaps / overlap), then drawn by a pure renderer that
//! returns a `String`: [`svg::render`] for a picture, [`text::render`] for a terminal
//! sketch. Only [`run`] and [`write_output`] touch files.
//!
//! Two clocks never share an axis: each clock is its own panel with its own axis and unit
//! caption, and an arrow from a wait on one clock to work on another shows what the wait
//! covers, not a time relation.

pub mod axis;
pub mod model;
pub mod svg;
pub mod text;

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::case::load_case_file;
use crate::cli::{Failure, EXIT_INPUT, EXIT_OK};

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
Exit codes: 0 drawn, 2 the case is malformed, the focus id is unknown, or the output exists (use --force)."
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

/// Fails when `path` exists and `force` is off (checked early, before any work).
///
/// # Errors
/// A [`Failure`] with exit code 2.
pub fn refuse_existing(path: &Path, force: bool) -> Result<(), Failure> {
    if !force && path.exists() {
        return Err(Failure {
            message: format!(
                "error: {} exists; pass --force to overwrite it",
                path.display()
            ),
            code: EXIT_INPUT,
        });
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically: into a temporary file in the same folder, then
/// renamed into place, so a reader never sees half a file. Without `force` an existing file
/// is never replaced (not even one created meanwhile).
///
/// # Errors
/// A [`Failure`] with exit code 2 naming the path.
pub fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<(), Failure> {
    let fail = |what: String| Failure {
        message: format!("error: writing {}: {what}", path.display()),
        code: EXIT_INPUT,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".worksheet-").suffix(".tmp");
    // Ordinary file permissions (0666 less the umask), not the temporary file's 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(&dir).map_err(|e| fail(e.to_string()))?;
    tmp.write_all(bytes).map_err(|e| fail(e.to_string()))?;
    tmp.as_file().sync_all().map_err(|e| fail(e.to_string()))?;
    if force {
        tmp.persist(path).map_err(|e| fail(e.error.to_string()))?;
    } else {
        tmp.persist_noclobber(path).map_err(|e| {
            if e.error.kind() == io::ErrorKind::AlreadyExists {
                fail("it exists; pass --force to overwrite it".into())
            } else {
                fail(e.error.to_string())
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_output_never_clobbers_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.svg");
        write_output(&p, b"one", false).unwrap();
        let err = write_output(&p, b"two", false).unwrap_err();
        assert_eq!(err.code, EXIT_INPUT);
        assert!(err.message.contains("--force"), "{}", err.message);
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        write_output(&p, b"three", true).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"three");
        // No temporary files are left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_ne!(
                mode & 0o044,
                0,
                "readable by others under the usual umask: {mode:o}"
            );
        }
    }
}

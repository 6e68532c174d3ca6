//! Progress on long work (review N20): while `import`, `report`, `audit` or `export` reads
//! one large trace, a bar of the bytes read of the file's size, on standard error.
//!
//! Whether a bar is drawn is [`shown`]'s decision: standard error is a terminal, `--quiet`
//! is not given, and the input is a regular file of at least [`MIN_BYTES`]. Piped, quiet,
//! from standard input or small, nothing is drawn, and nothing is written to standard error.
//! A command announces its input with [`for_input`], which returns a guard that clears the
//! bar when the command ends. The trace reader counts the bytes it reads through [`Counted`],
//! which moves the bar when one was announced and does nothing otherwise, so the readers
//! take no argument for it. The bar appears on the first read: an input that no [`Counted`]
//! reads (a case file, an Nsight Systems export, which SQLite reads in pages) draws none.
//! A reader that reads the file again from its start moves the bar back to its start.

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The smallest input that gets a bar (1 MiB): a smaller one is read before a bar could
/// be seen.
pub const MIN_BYTES: u64 = 1 << 20;

/// Whether to draw a bar for an input of `size` bytes (`None`: not a regular file, such as
/// standard input), given `--quiet` and whether standard error is a terminal.
pub fn shown(quiet: bool, stderr_is_terminal: bool, size: Option<u64>) -> bool {
    !quiet && stderr_is_terminal && size.is_some_and(|s| s >= MIN_BYTES)
}

/// The input announced by [`for_input`], and its bar once a reader has started.
struct Announced {
    /// The file's size in bytes.
    total: u64,
    /// The name shown beside the bar.
    label: String,
    /// The bar, drawn from the first read on.
    bar: Option<ProgressBar>,
}

/// The announced input of this process (one command runs at a time).
static ANNOUNCED: Mutex<Option<Announced>> = Mutex::new(None);

/// Clears the bar, and forgets the input, when dropped.
#[must_use = "the bar is cleared when the guard is dropped"]
pub struct Guard {
    active: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.active {
            return;
        }
        let announced = ANNOUNCED.lock().map(|mut a| a.take()).unwrap_or(None);
        if let Some(bar) = announced.and_then(|a| a.bar) {
            bar.finish_and_clear();
        }
    }
}

/// Announces that the command reads `paths`: when they are one file that [`shown`] accepts
/// (standard error a terminal, no `quiet`, at least [`MIN_BYTES`]), the trace reader draws a
/// bar of the bytes it reads. Several inputs (a multi-rank import has its own bar of files),
/// standard input (`-`) and folders get none.
pub fn for_input(paths: &[&Path], quiet: bool) -> Guard {
    let [path] = paths else {
        return Guard { active: false };
    };
    let size = if crate::input::is_stdin(path) {
        None
    } else {
        std::fs::metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
    };
    let (true, Some(total)) = (shown(quiet, std::io::stderr().is_terminal(), size), size) else {
        return Guard { active: false };
    };
    let label = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if let Ok(mut announced) = ANNOUNCED.lock() {
        *announced = Some(Announced {
            total,
            label,
            bar: None,
        });
    }
    Guard { active: true }
}

/// A bar of `total` bytes named `label`, drawn on standard error.
fn new_bar(total: u64, label: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("reading {msg} {wide_bar} {bytes}/{total_bytes} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(crate::escape::printable(label).into_owned());
    bar
}

/// The announced input's bar (made anew when there is none or the last read cleared it), if
/// an input was announced.
fn current_bar() -> Option<ProgressBar> {
    let mut announced = ANNOUNCED.lock().ok()?;
    let a = announced.as_mut()?;
    if a.bar.as_ref().is_none_or(ProgressBar::is_finished) {
        a.bar = Some(new_bar(a.total, &a.label));
    }
    a.bar.clone()
}

/// A reader of the announced input's bytes that moves its bar (see the module's text).
pub struct Counted<R> {
    inner: R,
    bar: Option<ProgressBar>,
}

impl<R> Counted<R> {
    /// Reads `inner`, the rest of the file after `already` bytes were read.
    pub fn new(inner: R, already: u64) -> Self {
        let bar = current_bar();
        if let Some(bar) = &bar {
            bar.set_position(already);
        }
        Counted { inner, bar }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            // The end of the file: the bar goes before anything is printed.
            self.clear();
        } else if let Some(bar) = &self.bar {
            bar.inc(n as u64);
        }
        Ok(n)
    }
}

impl<R> Counted<R> {
    /// Clears the bar (the file is read, or its reader stopped).
    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl<R> Drop for Counted<R> {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_only_on_a_terminal_without_quiet_for_a_large_file() {
        let large = Some(MIN_BYTES);
        assert!(shown(false, true, large));
        assert!(shown(false, true, Some(13 << 20)));
        // Piped, quiet, small, or of unknown size (standard input): nothing.
        assert!(!shown(false, false, large));
        assert!(!shown(true, true, large));
        assert!(!shown(false, true, Some(MIN_BYTES - 1)));
        assert!(!shown(false, true, None));
    }

    #[test]
    fn counted_reads_pass_the_bytes_through_unchanged() {
        let data: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        let mut read = Vec::new();
        Counted::new(data.as_slice(), 0)
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, data);
    }
}

//! `worksheet import -o FILE`: the case streamed from the model into the output, never held
//! as one text. Serialised through a byte count (the summary's `bytes of JSON`), a gzip
//! encoder when the name ends in `.gz`, and a buffer, into the temporary file that
//! [`crate::output`] renames into place: the same bytes, the same atomicity and `--force` rules
//! as [`crate::output::write_output`] of the whole text.

use std::io::{self, Write};
use std::path::Path;

use crate::case::raw::RawCase;
use crate::error::Refusal;
use crate::output::{stage_output, Counting, Staged};

/// Whether a case written to `path` is gzipped: its name ends in `.gz`.
pub(crate) fn gzipped(path: &Path) -> bool {
    path.to_string_lossy().ends_with(".gz")
}

/// Streams `raw`'s pretty JSON text (gzipped for a `.gz` name) into a staged output at
/// `path`: complete in its temporary file (or written, for standard output and devices), to
/// be [`Staged::commit`]ted. Returns it and the size of the JSON text in bytes (before gzip).
///
/// # Errors
/// A [`Refusal`]: the output exists without `force`, or writing failed (the temporary file
/// is then removed).
pub(crate) fn stage_case(
    path: &Path,
    force: bool,
    raw: &RawCase,
) -> Result<(Staged, u64), Refusal> {
    stage_case_fed(path, force, raw, Feed::STREAM)
}

/// [`stage_case`] with the gzip encoder fed as `feed` says.
fn stage_case_fed(
    path: &Path,
    force: bool,
    raw: &RawCase,
    feed: Feed,
) -> Result<(Staged, u64), Refusal> {
    if !gzipped(path) {
        let mut json_bytes = 0;
        let staged = stage_output(path, force, |w| {
            json_bytes = text_into(raw, w)?;
            Ok(())
        })?;
        return Ok((staged, json_bytes));
    }
    let mut json_bytes = 0;
    let mut diverged = false;
    let streamed = stage_output(path, force, |w| {
        let mut gz = ExactGz::new(w, feed);
        let written = text_into(raw, &mut gz);
        diverged = gz.diverged;
        json_bytes = written?;
        gz.finish()
    });
    if !diverged {
        return Ok((streamed?, json_bytes));
    }
    // The encoder would have run short of input (a case that compresses past what the
    // window holds): its temporary file is removed; the whole text is compressed at once.
    let staged = stage_output(path, force, |w| {
        let text = raw.to_json_pretty();
        json_bytes = text.len() as u64;
        w.write_all(&crate::output::gzip(text.as_bytes()))
    })?;
    Ok((staged, json_bytes))
}

/// Writes `raw`'s pretty JSON text into `w` (not flushed: the caller's buffer is); returns
/// its length in bytes.
fn text_into(raw: &RawCase, w: &mut dyn Write) -> io::Result<u64> {
    let mut counted = Counting::new(w);
    raw.write_json_pretty(&mut counted)?;
    Ok(counted.count())
}

/// How much of the text the gzip encoder is handed at once: it is called while more than
/// `keep` bytes wait, once `high` bytes wait.
#[derive(Clone, Copy, Debug)]
struct Feed {
    /// Bytes that wait before the encoder is called.
    high: usize,
    /// Bytes left waiting after it: the encoder never sees the end of its input before the
    /// text's end.
    keep: usize,
}

impl Feed {
    /// The feed of `import -o FILE.gz`.
    const STREAM: Feed = Feed {
        high: 4 << 20,
        keep: 2 << 20,
    };
}

/// A gzip encoder that makes the bytes [`crate::output::gzip`] makes of the whole text, fed
/// in parts. The deflate encoder's output depends on how its input is cut: its matcher keeps
/// state that a call ending on an empty input drops. `gzip` hands it the whole rest of the
/// text at each call (one call per 32 KiB of output); this hands it the waiting part, at
/// least [`Feed::keep`] bytes, at the same calls. While each call returns with input left
/// over, every read of the encoder was as full as with the whole text, and so is its output;
/// a call that takes all that waits sets `diverged` (the caller then compresses the whole
/// text).
struct ExactGz<W: Write> {
    /// The encoder (`gzip`'s: default level, same header).
    gz: flate2::write::GzEncoder<W>,
    /// Text written and not yet taken by the encoder, from `start`.
    waiting: Vec<u8>,
    /// Where the untaken text begins in `waiting`.
    start: usize,
    /// When the encoder is called.
    feed: Feed,
    /// Whether a call took all the waiting text before the text's end.
    diverged: bool,
}

impl<W: Write> ExactGz<W> {
    /// An encoder into `w`.
    fn new(w: W, feed: Feed) -> Self {
        ExactGz {
            gz: flate2::write::GzEncoder::new(w, flate2::Compression::default()),
            waiting: Vec::with_capacity(feed.high + (64 << 10)),
            start: 0,
            feed,
            diverged: false,
        }
    }

    /// Calls the encoder while more than `keep` bytes wait (one call each, as `write_all`
    /// makes them), then moves the rest to the front.
    fn pump(&mut self, keep: usize) -> io::Result<()> {
        while self.waiting.len() - self.start > keep {
            let taken = self.gz.write(&self.waiting[self.start..])?;
            if taken == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.start += taken;
            if keep > 0 && self.start == self.waiting.len() {
                self.diverged = true;
                return Err(io::Error::other("the gzip encoder ran short of input"));
            }
        }
        self.waiting.drain(..self.start);
        self.start = 0;
        Ok(())
    }

    /// Compresses the rest and ends the gzip stream.
    fn finish(mut self) -> io::Result<()> {
        self.pump(0)?;
        self.gz.finish().map(|_| ())
    }
}

impl<W: Write> Write for ExactGz<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.waiting.extend_from_slice(buf);
        if self.waiting.len() >= self.feed.high {
            self.pump(self.feed.keep)?;
        }
        Ok(buf.len())
    }

    /// Nothing: a flush of the encoder would end a deflate block early (a sync flush), and
    /// the bytes would not be `gzip`'s. [`ExactGz::finish`] writes everything.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// [`stage_case`] committed at once: the case at `path`, and the bytes written (gzipped when
/// asked).
///
/// # Errors
/// As [`stage_case`] and [`Staged::commit`].
pub(crate) fn write_case(path: &Path, force: bool, raw: &RawCase) -> Result<u64, Refusal> {
    stage_case(path, force, raw)?.0.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{import_path_with, summarize_owned, ImportOptions};
    use crate::output::{gzip, write_output};

    /// Every trace of tests/data.
    fn traces() -> Vec<std::path::PathBuf> {
        let mut all = Vec::new();
        for (dir, ext) in [
            ("tests/data/traces", ".json.gz"),
            ("tests/data/truth", ".json.gz"),
            ("tests/data/nsys", ".sqlite"),
        ] {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.to_string_lossy().ends_with(ext) {
                    all.push(p);
                }
            }
        }
        all.sort();
        all
    }

    /// The streamed case is the text `import -o` wrote whole, byte for byte, plain and
    /// gzipped, with and without expectations; its counted size is the text's.
    #[test]
    fn the_streamed_case_is_the_whole_text_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let options = ImportOptions::default();
        let traces = traces();
        assert!(traces.len() >= 20, "{traces:?}");
        for (i, trace) in traces.iter().enumerate() {
            let (imported, _) = import_path_with(trace, &options, true).unwrap();
            // Expectations on every other trace (both paths of the summary).
            let expect = i % 2 == 1;
            let mut whole = summarize_owned(imported.clone(), expect, true).unwrap();
            let text = std::mem::take(&mut whole.case_json);
            assert_eq!(whole.size.json_bytes, text.len(), "{}", trace.display());
            let plain = dir.path().join(format!("{i}.json"));
            let gz = dir.path().join(format!("{i}.json.gz"));
            let (streamed, (staged, gz_written)) =
                crate::import::summarize_writing(imported, expect, |raw| {
                    let (staged, n) = stage_case(&plain, false, raw).unwrap();
                    let gz_written = write_case(&gz, false, raw).unwrap();
                    (usize::try_from(n).unwrap(), (staged, gz_written))
                })
                .unwrap();
            assert_eq!(streamed.size.json_bytes, text.len(), "{}", trace.display());
            assert!(streamed.case_json.is_empty());
            // Not in place before the commit.
            assert!(!plain.exists());
            assert_eq!(staged.commit().unwrap(), text.len() as u64);
            assert!(
                std::fs::read(&plain).unwrap() == text.as_bytes(),
                "{}",
                trace.display()
            );
            // Gzipped: the bytes `gzip` of the whole text made.
            let want = gzip(text.as_bytes());
            assert_eq!(gz_written, want.len() as u64, "{}", trace.display());
            assert!(std::fs::read(&gz).unwrap() == want, "{}", trace.display());
        }
    }

    /// Fed in parts too small for the encoder, the write falls back to the whole text: the
    /// same bytes either way.
    #[test]
    fn a_gzip_feed_that_runs_short_falls_back_to_the_whole_text() {
        let dir = tempfile::tempdir().unwrap();
        let trace = std::path::Path::new("tests/data/traces/nccl_data.json.gz");
        let (imported, _) = import_path_with(trace, &ImportOptions::default(), true).unwrap();
        let raw = imported.case;
        let text = raw.to_json_pretty();
        let want = gzip(text.as_bytes());
        for (i, feed) in [
            Feed { high: 64, keep: 1 },
            Feed {
                high: 1 << 20,
                keep: 256 << 10,
            },
            Feed::STREAM,
        ]
        .into_iter()
        .enumerate()
        {
            let path = dir.path().join(format!("{i}.json.gz"));
            let (staged, n) = stage_case_fed(&path, false, &raw, feed).unwrap();
            assert_eq!(n, text.len() as u64);
            assert_eq!(staged.commit().unwrap(), want.len() as u64);
            assert!(std::fs::read(&path).unwrap() == want, "{feed:?}");
        }
        // Only the case's file is left each time.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
        // The small feed runs short; the large one does not.
        let mut small = ExactGz::new(Vec::new(), Feed { high: 64, keep: 1 });
        assert!(small.write_all(text.as_bytes()).is_err());
        assert!(small.diverged);
        let mut large = ExactGz::new(
            Vec::new(),
            Feed {
                high: 1 << 20,
                keep: 256 << 10,
            },
        );
        large.write_all(text.as_bytes()).unwrap();
        assert!(!large.diverged);
    }

    /// A failed write replaces nothing and leaves no temporary file; an existing file stays
    /// without `force`.
    #[test]
    fn a_failed_or_refused_case_write_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("case.json.gz");
        write_output(&path, b"mine", false).unwrap();
        let raw = RawCase::new("small");
        let err = write_case(&path, false, &raw).unwrap_err();
        assert!(err.message.contains("error[exists]"), "{}", err.message);
        assert_eq!(std::fs::read(&path).unwrap(), b"mine");
        // Staged but dropped (the case did not validate): nothing replaced, nothing left.
        let (staged, n) = stage_case(&path, true, &raw).unwrap();
        assert_eq!(n, raw.to_json_pretty().len() as u64);
        drop(staged);
        assert_eq!(std::fs::read(&path).unwrap(), b"mine");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Committed with force: replaced by the gzipped text.
        let written = write_case(&path, true, &raw).unwrap();
        let want = gzip(raw.to_json_pretty().as_bytes());
        assert_eq!(written, want.len() as u64);
        assert_eq!(std::fs::read(&path).unwrap(), want);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

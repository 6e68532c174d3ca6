//! Writing output files: atomically, and never over a file the user has without `--force`.
//!
//! Every command that writes a file (forms, renders, lab exports, captures) goes through
//! [`write_output`], so the rule holds in one place: the bytes go to a temporary file in the
//! target's folder and are renamed into place, so a reader never sees half a file, and an
//! existing file (even one created meanwhile) is replaced only with `force`.
//!
//! Two outputs are not files: `-` is standard output ([`is_stdout`]), and an existing
//! character device or FIFO (`/dev/null`, `/dev/stdout`, a shell's `>(gzip > x.gz)`) is
//! written into as it is, with no temporary file and no `--force`, since nothing the user
//! keeps is replaced. A FIFO with no reader is an error at once, never a hang.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::Refusal;

/// Fails when `path` exists and `force` is off, when its folder does not exist (both
/// checked early, before any work, so a long measurement never ends in a write that cannot
/// happen), and when it exists as anything but a regular file, even with `force`.
///
/// # Errors
/// A [`Refusal`] (exit 2 at the command line): `exists` or `not-a-file`.
pub fn refuse_existing(path: &Path, force: bool) -> Result<(), Refusal> {
    if is_stdout(path) || is_stream_target(path) {
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(Refusal {
                message: format!(
                    "{}: error[io]: cannot write the file: the folder `{}` does not exist",
                    path.display(),
                    dir.display()
                ),
            });
        }
    }
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    // A folder (or a device) is named as what it is, with or without `--force`.
    if !force && meta.is_file() {
        return Err(Refusal {
            message: format!(
                "{}: error[exists]: the file exists; pass --force to overwrite it",
                path.display()
            ),
        });
    }
    if !meta.is_file() {
        return Err(Refusal {
            message: format!(
                "{}: error[not-a-file]: this is {}; --force replaces only a regular file",
                path.display(),
                crate::input::describe(meta.file_type())
            ),
        });
    }
    Ok(())
}

/// Whether the output `path` is `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Whether `path` (links followed) exists as a character device or a FIFO: a stream that
/// is written into, not a file that is replaced.
pub fn is_stream_target(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| {
            let kind = m.file_type();
            kind.is_char_device() || kind.is_fifo()
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Opens the device or FIFO at `path` for writing. The open does not wait for a reader: a
/// FIFO nobody reads is `ENXIO` at once; after the open, writes block as usual.
fn open_stream(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ENXIO) {
            return io::Error::other(
                "nobody reads this FIFO (named pipe); start its reader first (it is written into, never replaced)",
            );
        }
        e
    })?;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this function owns; only O_NONBLOCK is cleared.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(file)
}

/// The prefix of this process's temporary files: `.worksheet-PID-`.
fn temp_prefix() -> String {
    format!(".worksheet-{}-", std::process::id())
}

/// Removes temporary files that a killed writer left in `dir`: `.worksheet-PID-*.tmp` whose
/// process no longer runs. Best effort: what cannot be removed stays.
fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name
            .strip_prefix(".worksheet-")
            .and_then(|r| r.strip_suffix(".tmp"))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        if pid > 0 && !process_runs(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn process_runs(pid: i32) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only asks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_runs(_pid: i32) -> bool {
    true
}

/// Writes `bytes` to `path` atomically: into a temporary file in the same folder, then
/// renamed into place, so a reader never sees half a file. Without `force` an existing file
/// is never replaced (not even one created meanwhile); with it, only a regular file is
/// (never a folder or link). `-` is standard output, and an existing character device or
/// FIFO is written into directly (see the module's note). Temporary files left by a killed writer in the
/// same folder are removed first.
///
/// # Errors
/// A [`Refusal`] (exit 2 at the command line) naming the path.
pub fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<(), Refusal> {
    write_output_with(path, force, |w| w.write_all(bytes)).map(|_| ())
}

/// [`write_output`] of what `write` writes, streamed: the bytes go through a buffer into the
/// temporary file (or standard output, or the device) as they are made, never held whole.
/// The same rules hold: renamed into place only when `write` succeeds (on an error the
/// temporary file is removed and nothing is replaced), never over a file without `force`.
/// Returns the number of bytes written.
///
/// # Errors
/// A [`Refusal`] (exit 2 at the command line) naming the path, also when `write` fails.
pub fn write_output_with(
    path: &Path,
    force: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<u64, Refusal> {
    stage_output(path, force, write)?.commit()
}

/// Output written but not yet in place: for a file, the complete temporary file beside it,
/// renamed over `path` by [`Staged::commit`] and removed when dropped uncommitted. Standard
/// output and devices are written at once (nothing to stage).
#[derive(Debug)]
#[must_use = "a staged output is removed unless committed"]
pub struct Staged {
    /// Bytes written.
    bytes: u64,
    /// The temporary file and its target, for a file.
    file: Option<(tempfile::NamedTempFile, PathBuf, bool)>,
}

impl Staged {
    /// The number of bytes written.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Renames the temporary file into place (see [`write_output`] for the rules) and returns
    /// the number of bytes written.
    ///
    /// # Errors
    /// A [`Refusal`]: the file appeared meanwhile without `force` (`exists`), or the rename failed.
    pub fn commit(self) -> Result<u64, Refusal> {
        let Some((tmp, path, force)) = self.file else {
            return Ok(self.bytes);
        };
        if force {
            tmp.persist(&path)
                .map_err(|e| io_refusal(&path, &e.error))?;
        } else {
            tmp.persist_noclobber(&path).map_err(|e| {
                if e.error.kind() == io::ErrorKind::AlreadyExists {
                    Refusal {
                        message: format!(
                            "{}: error[exists]: the file exists; pass --force to overwrite it",
                            path.display()
                        ),
                    }
                } else {
                    io_refusal(&path, &e.error)
                }
            })?;
        }
        Ok(self.bytes)
    }
}

/// `PATH: error[io]: cannot write the file: WHY`.
fn io_refusal(path: &Path, e: &dyn std::fmt::Display) -> Refusal {
    Refusal {
        message: format!("{}: error[io]: cannot write the file: {e}", path.display()),
    }
}

/// A writer that counts the bytes it passes on.
#[derive(Debug)]
pub struct Counting<W> {
    /// Where the bytes go.
    inner: W,
    /// Bytes passed on so far.
    count: u64,
}

impl<W: Write> Counting<W> {
    /// Counts what goes to `inner`.
    pub fn new(inner: W) -> Self {
        Counting { inner, count: 0 }
    }

    /// Bytes passed on so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The inner writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Standard output whose reader may stop early (`| head`), which is not an error: once the
/// pipe is broken, the rest is discarded as if written (so the count is the whole output's).
struct ReaderGone<W> {
    /// Standard output.
    inner: W,
    /// Whether the reader has gone.
    gone: bool,
}

impl<W: Write> Write for ReaderGone<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.gone {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.gone {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// The buffer between a streamed writer and its file.
const BUFFER: usize = 1 << 16;

/// Writes through a buffer and a byte count into `sink`; flushes it.
fn counted(
    sink: impl Write,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<u64> {
    let mut w = Counting::new(io::BufWriter::with_capacity(BUFFER, sink));
    write(&mut w)?;
    w.flush()?;
    Ok(w.count())
}

/// The first half of [`write_output_with`]: everything but the rename. A file's bytes are
/// in a complete, synced temporary file in `path`'s folder when this returns; the caller
/// decides whether to [`Staged::commit`] it (a dropped [`Staged`] removes it). Standard
/// output and devices are written at once.
///
/// # Errors
/// A [`Refusal`] (exit 2 at the command line) naming the path, also when `write` fails.
pub fn stage_output(
    path: &Path,
    force: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<Staged, Refusal> {
    if is_stdout(path) {
        let stdout = io::stdout();
        let reader_gone = ReaderGone {
            inner: stdout.lock(),
            gone: false,
        };
        return match counted(reader_gone, write) {
            Ok(bytes) => Ok(Staged { bytes, file: None }),
            Err(e) => Err(Refusal {
                message: format!("-: error[io]: cannot write to standard output: {e}"),
            }),
        };
    }
    if is_stream_target(path) {
        let bytes = open_stream(path)
            .and_then(|file| counted(file, write))
            .map_err(|e| io_refusal(path, &e))?;
        return Ok(Staged { bytes, file: None });
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    refuse_existing(path, force)?;
    remove_stale_temps(&dir);
    let prefix = temp_prefix();
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Ordinary file permissions (0666 less the umask), not the temporary file's 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let fail = |e: io::Error| io_refusal(path, &e);
    let mut tmp = builder.tempfile_in(&dir).map_err(fail)?;
    // On an error `tmp` is dropped here, and the temporary file with it.
    let bytes = counted(tmp.as_file_mut(), write).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    Ok(Staged {
        bytes,
        file: Some((tmp, path.to_path_buf(), force)),
    })
}

/// Gzip-compresses `bytes` (default level): a `.gz` output's bytes.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(bytes)
        .and_then(|()| encoder.finish())
        .expect("writing to a Vec cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn force_replaces_only_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("kept");
        std::fs::write(&target, b"mine").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write_output(&link, b"x", true).unwrap_err();
        assert!(err.message.contains("symbolic link"), "{}", err.message);
        let err = write_output(dir.path(), b"x", true).unwrap_err();
        assert!(err.message.contains("a folder"), "{}", err.message);
        assert_eq!(std::fs::read(&target).unwrap(), b"mine");
    }

    /// Reliability rerun: a folder given as the output was called "the file exists; pass
    /// --force", and `--force` then refused it as a folder. Without `--force` it is named as
    /// what it is at once; a regular file still asks for `--force`.
    #[cfg(unix)]
    #[test]
    fn a_folder_is_named_as_a_folder_without_force_too() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_output(dir.path(), b"x", false).unwrap_err();
        assert!(
            err.message.contains("error[not-a-file]: this is a folder"),
            "{}",
            err.message
        );
        let file = dir.path().join("kept");
        std::fs::write(&file, b"mine").unwrap();
        let err = write_output(&file, b"x", false).unwrap_err();
        assert!(err.message.contains("error[exists]"), "{}", err.message);
        assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_written_into_without_force() {
        write_output(Path::new("/dev/null"), b"gone", false).unwrap();
        let dir = tempfile::tempdir().unwrap();
        // A link to a device is followed: the device is written into.
        let link = dir.path().join("null");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        write_output(&link, b"gone", false).unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Nobody reads the FIFO: an error at once, not a hang.
        let err = write_output(&fifo, b"x", true).unwrap_err();
        assert!(
            err.message.contains("error[io]") && err.message.contains("nobody reads this FIFO"),
            "{}",
            err.message
        );
        // With a reader, the bytes arrive and the FIFO stays a FIFO.
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let mut written = Err(Refusal::new("not yet"));
        for _ in 0..200 {
            written = write_output(&fifo, b"through the pipe", false);
            if written.is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        written.unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }

    /// A streamed write that fails replaces nothing and leaves no temporary file; one that
    /// succeeds counts its bytes.
    #[test]
    fn a_failed_streamed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_output(&p, b"old", false).unwrap();
        let err = write_output_with(&p, true, |w| {
            w.write_all(&[b'x'; 200_000])?;
            Err(io::Error::other("the model ran out"))
        })
        .unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "{}: error[io]: cannot write the file: the model ran out",
                p.display()
            )
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let n = write_output_with(&p, true, |w| {
            for _ in 0..100_000 {
                w.write_all(b"ab")?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 200_000);
        assert_eq!(std::fs::read(&p).unwrap(), b"ab".repeat(100_000));
        // Without force, the existing file is refused before anything is written.
        let mut called = false;
        let err = write_output_with(&p, false, |_| {
            called = true;
            Ok(())
        })
        .unwrap_err();
        assert!(err.message.contains("error[exists]"), "{}", err.message);
        assert!(!called);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_output_never_clobbers_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.svg");
        write_output(&p, b"one", false).unwrap();
        let err = write_output(&p, b"two", false).unwrap_err();
        assert!(err.message.contains("error[exists]"), "{}", err.message);
        assert!(err.message.contains("--force"), "{}", err.message);
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        write_output(&p, b"three", true).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"three");
        assert!(refuse_existing(&p, false).is_err());
        assert!(refuse_existing(&p, true).is_ok());
        // No temporary files are left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // One that a killed writer left (pid far above any pid_max) is removed by the next
        // write; one of a live process (this one) stays.
        let stale = dir.path().join(".worksheet-2147483646-abcdef.tmp");
        let live = dir.path().join(format!("{}x.tmp", temp_prefix()));
        std::fs::write(&stale, b"half").unwrap();
        std::fs::write(&live, b"busy").unwrap();
        write_output(&p, b"four", true).unwrap();
        assert!(!stale.exists());
        assert!(live.exists());
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

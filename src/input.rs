//! Opening user input without ever blocking, and walking folders without ever looping.
//!
//! Every reader of user files (cases, forms, Kineto traces, Nsight Systems exports) opens its
//! file through [`open_file`] (or checks it with [`require_file`] before a library such as
//! SQLite opens it), so the rule holds in one place: only a regular file is read. A FIFO, a
//! device, a socket or a folder is refused with `error[not-a-file]` *before* anything could
//! block on it — `open(2)` on a FIFO with no writer waits forever, and `/dev/zero` never ends.
//! The file is also opened with `O_NONBLOCK`, so a FIFO swapped in after the check cannot
//! block either, and the opened descriptor is checked once more.
//!
//! `-` is standard input, for every reader, through the same functions: the first read of
//! `-` copies standard input into a temporary file (up to [`MAX_STDIN_BYTES`]), and every
//! later open of `-` opens that copy, so a reader that opens its input twice (the importer's
//! fast path, then its careful one) or hands a path to a library (SQLite) reads the same bytes
//! a file would give, under the same caps and with the same errors; gzip is detected by its
//! magic bytes as for a file. [`release_stdin`] removes the copy (the CLI calls it on exit).
//!
//! [`walk`] lists the files under folders for `check` and `form check`: it remembers every
//! folder it entered by (device, inode), so a symbolic link back to a folder already walked
//! (a loop, or a second name for one folder) is never entered twice; a link that leads back
//! to a folder being walked is reported once as `error[symlink-loop]`. A folder that cannot
//! be listed is an `io` error, never silently skipped.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs::{File, FileType, Metadata};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::InputError;

/// The most standard input that `-` takes: the largest cap of any reader (a trace's, 2 GiB),
/// so each reader's own, smaller cap then applies to the copy as it does to a file.
pub const MAX_STDIN_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// Whether `path` is `-`, standard input (or, as an output, standard output).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The copy of standard input, made at the first read of `-` (an error is kept too, so a
/// second reader gets the same answer rather than an empty stream).
static STDIN_COPY: Mutex<Option<Result<tempfile::TempPath, InputError>>> = Mutex::new(None);

/// Copies everything from `source` into a new temporary file, refusing more than `max`
/// bytes (`too-large`, naming what was expected of standard input).
fn spool(source: &mut impl std::io::Read, max: u64) -> Result<tempfile::TempPath, InputError> {
    let mut file = tempfile::Builder::new()
        .prefix(".worksheet-stdin-")
        .tempfile()
        .map_err(|e| {
            InputError::new(
                "$",
                "io",
                format!("cannot copy standard input to a temporary file: {e}"),
            )
        })?;
    let copied = std::io::copy(&mut std::io::Read::take(source, max + 1), &mut file)
        .map_err(|e| InputError::new("$", "io", format!("cannot read standard input: {e}")))?;
    if copied > max {
        return Err(InputError::new(
            "$",
            "too-large",
            format!("standard input is larger than {max} bytes, the most any reader takes"),
        ));
    }
    Ok(file.into_temp_path())
}

/// The path at which the bytes of `path` can be read: `path` itself, or for `-` the copy of
/// standard input (made on the first call). For readers that hand a path to a library
/// (SQLite); others use [`open_file`], which calls it.
///
/// # Errors
/// For `-`: `io` (standard input unreadable, no temporary file) or `too-large`. No file named.
pub fn source_path(path: &Path) -> Result<Cow<'_, Path>, InputError> {
    if !is_stdin(path) {
        return Ok(Cow::Borrowed(path));
    }
    let mut copy = STDIN_COPY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let copy = copy.get_or_insert_with(|| spool(&mut std::io::stdin().lock(), MAX_STDIN_BYTES));
    match copy {
        Ok(temp) => Ok(Cow::Owned(temp.to_path_buf())),
        Err(e) => Err(e.clone()),
    }
}

/// Removes the copy of standard input, if one was made. Best effort; a later read of `-`
/// reads standard input again (which by then is at its end).
pub fn release_stdin() {
    let mut copy = STDIN_COPY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *copy = None;
}

/// What a path is, in words: `a FIFO (named pipe)`, `a folder`, ...
pub fn describe(kind: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

fn not_a_file(kind: FileType) -> InputError {
    InputError::new(
        "$",
        "not-a-file",
        format!(
            "this is {}, not a regular file; only regular files are read (a pipe or a device could block or never end)",
            describe(kind)
        ),
    )
}

fn io_error(e: &std::io::Error) -> InputError {
    InputError::new("$", "io", format!("cannot read the file: {e}"))
}

/// Checks, without opening it, that `path` is a regular file (links followed), and returns
/// its metadata.
///
/// # Errors
/// `io` (missing, unreadable), `not-a-file`. The error names no file: callers add it.
pub fn require_file(path: &Path) -> Result<Metadata, InputError> {
    let path = source_path(path)?;
    let meta = std::fs::metadata(&path).map_err(|e| io_error(&e))?;
    if !meta.is_file() {
        return Err(not_a_file(meta.file_type()));
    }
    Ok(meta)
}

/// Opens `path` for reading if, and only if, it is a regular file; never blocks.
///
/// # Errors
/// `io` (missing, unreadable), `not-a-file` (a FIFO, device, socket or folder). The error
/// names no file: callers add it with [`InputError::in_file`].
pub fn open_file(path: &Path) -> Result<File, InputError> {
    let path = source_path(path)?;
    let path = path.as_ref();
    require_file(path)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // No effect on a regular file; makes open(2) return at once on a FIFO.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| io_error(&e))?;
    let meta = file.metadata().map_err(|e| io_error(&e))?;
    if !meta.is_file() {
        return Err(not_a_file(meta.file_type()));
    }
    Ok(file)
}

/// Reads a whole regular file, refusing one larger than `max` bytes without reading it
/// (and stopping at `max + 1` bytes should it grow meanwhile).
///
/// # Errors
/// `io`, `not-a-file`, `too-large` (the message names `what` is expected). No file named.
pub fn read_capped(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, InputError> {
    use std::io::Read;
    let file = open_file(path)?;
    let len = file.metadata().map_err(|e| io_error(&e))?.len();
    let too_large = || {
        InputError::new(
            "$",
            "too-large",
            format!("the file is larger than {max} bytes; {what} is expected"),
        )
    };
    if len > max {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&e))?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The files a folder walk found, and what it could not walk.
#[derive(Debug, Default)]
pub struct Walk {
    /// Files, in path order per folder (paths given as files come as given).
    pub files: Vec<PathBuf>,
    /// Folders that could not be listed (`io`), links back into the walk (`symlink-loop`)
    /// and given paths that do not exist (`io`), each with its path as the file.
    pub errors: Vec<InputError>,
    /// Folders given in `paths` in which nothing wanted was found and nothing failed: a
    /// command that must not pass on "0 files" words them with [`no_wanted_file`].
    pub empty: Vec<PathBuf>,
}

#[cfg(unix)]
fn identity(meta: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &Metadata) -> (u64, u64) {
    (0, 0)
}

/// Lists the files under `paths` that `wanted` accepts: a path given as a file is taken as
/// it is, folders are walked recursively in sorted order. Symbolic links are followed, but
/// no folder (by device and inode) is entered twice, so the walk always ends; a link back to
/// a folder on the current path is reported once as `symlink-loop`. A folder given in which
/// nothing wanted is found, and nothing failed, is listed in [`Walk::empty`].
pub fn walk(paths: &[PathBuf], wanted: &dyn Fn(&Path) -> bool) -> Walk {
    let mut out = Walk::default();
    let mut seen = HashSet::new();
    for path in paths {
        if is_stdin(path) {
            out.files.push(path.clone());
            continue;
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let mut stack = Vec::new();
                let (files, errors) = (out.files.len(), out.errors.len());
                walk_dir(path, &meta, wanted, &mut seen, &mut stack, &mut out);
                if out.files.len() == files && out.errors.len() == errors {
                    out.empty.push(path.clone());
                }
            }
            Ok(_) => out.files.push(path.clone()),
            Err(e) => out.errors.push(
                InputError::new("$", "io", format!("cannot read this path: {e}"))
                    .in_file(path.display().to_string()),
            ),
        }
    }
    out
}

/// The field path of an error about a folder as a whole (no field of a file is at fault).
pub const FOLDER_PATH: &str = "(folder)";

/// The error for a folder given where files were `expected` that holds none of them
/// ([`Walk::empty`]).
pub fn no_wanted_file(dir: &Path, expected: &str) -> InputError {
    let entries = std::fs::read_dir(dir).map(Iterator::count).unwrap_or(0);
    let held = match entries {
        0 => "the folder is empty".to_owned(),
        1 => "it holds 1 other entry".to_owned(),
        n => format!("it holds {n} other entries"),
    };
    InputError::new(
        FOLDER_PATH,
        "bad-value",
        format!(
            "the folder `{}` holds no file to read: expected {expected} in it or in a folder below it; {held}",
            dir.display()
        ),
    )
    .in_file(dir.display().to_string())
}

fn walk_dir(
    dir: &Path,
    meta: &Metadata,
    wanted: &dyn Fn(&Path) -> bool,
    seen: &mut HashSet<(u64, u64)>,
    stack: &mut Vec<(u64, u64)>,
    out: &mut Walk,
) {
    let id = identity(meta);
    if stack.contains(&id) {
        out.errors.push(
            InputError::new(
                "$",
                "symlink-loop",
                "this link leads back to a folder that contains it; it is not followed (the folder is walked once)",
            )
            .in_file(dir.display().to_string()),
        );
        return;
    }
    if !seen.insert(id) {
        // A second name for a folder already walked: its files are already listed.
        return;
    }
    let io = |e: std::io::Error| {
        InputError::new("$", "io", format!("cannot list this folder: {e}"))
            .in_file(dir.display().to_string())
    };
    let entries: Result<Vec<PathBuf>, _> =
        std::fs::read_dir(dir).and_then(|rd| rd.map(|e| e.map(|e| e.path())).collect());
    let mut entries = match entries {
        Ok(list) => list,
        Err(e) => {
            out.errors.push(io(e));
            return;
        }
    };
    entries.sort();
    stack.push(id);
    for entry in entries {
        match std::fs::metadata(&entry) {
            Ok(m) if m.is_dir() => walk_dir(&entry, &m, wanted, seen, stack, out),
            // A dangling link or an unreadable entry: the reader names the problem.
            _ => {
                if wanted(&entry) {
                    out.files.push(entry);
                }
            }
        }
    }
    stack.pop();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = open_file(&fifo).unwrap_err();
        assert_eq!(err.code, "not-a-file");
        assert!(err.message.contains("FIFO"), "{}", err.message);
        let err = open_file(dir.path()).unwrap_err();
        assert_eq!(err.code, "not-a-file");
        assert!(err.message.contains("a folder"), "{}", err.message);
        let err = open_file(Path::new("/dev/zero")).unwrap_err();
        assert!(err.message.contains("character device"), "{}", err.message);
    }

    #[test]
    fn a_symlink_loop_is_walked_once_and_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.json"), "{}").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/b.json"), "{}").unwrap();
        std::os::unix::fs::symlink(".", root.join("self")).unwrap();
        std::os::unix::fs::symlink("..", root.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("alias")).unwrap();
        let json = |p: &Path| p.extension().is_some_and(|e| e == "json");
        let w = walk(&[root.to_path_buf()], &json);
        assert_eq!(
            w.files,
            vec![root.join("a.json"), root.join("alias/b.json")],
            "each file once, through the first name met in sorted order"
        );
        let codes: Vec<_> = w.errors.iter().map(|e| (e.code, e.file.clone())).collect();
        assert_eq!(
            codes,
            vec![
                ("symlink-loop", root.join("alias/up").display().to_string()),
                ("symlink-loop", root.join("self").display().to_string()),
            ]
        );
    }

    #[test]
    fn a_missing_path_is_an_io_error() {
        let w = walk(&[PathBuf::from("/nonexistent/x")], &|_| true);
        assert!(w.files.is_empty());
        assert_eq!(w.errors[0].code, "io");
    }

    #[test]
    fn stdin_is_copied_whole_up_to_the_cap() {
        let copy = spool(&mut std::io::Cursor::new(b"abc".to_vec()), 3).unwrap();
        assert_eq!(std::fs::read(&copy).unwrap(), b"abc");
        assert_eq!(read_capped(&copy, 3, "x").unwrap(), b"abc");
        let err = spool(&mut std::io::Cursor::new(b"abcd".to_vec()), 3).unwrap_err();
        assert_eq!(err.code, "too-large");
        assert!(
            err.message
                .contains("standard input is larger than 3 bytes"),
            "{}",
            err.message
        );
        let path = copy.to_path_buf();
        drop(copy);
        assert!(!path.exists(), "the copy is removed when dropped");
        assert!(is_stdin(Path::new("-")));
        assert!(!is_stdin(Path::new("./-")));
        assert_eq!(
            source_path(Path::new("x.json")).unwrap(),
            Path::new("x.json")
        );
    }

    #[test]
    fn read_capped_refuses_by_length_first() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'x'; 100]).unwrap();
        assert_eq!(read_capped(&p, 100, "x").unwrap().len(), 100);
        assert_eq!(read_capped(&p, 99, "x").unwrap_err().code, "too-large");
    }
}

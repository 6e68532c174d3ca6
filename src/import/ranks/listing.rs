//! Which files of a folder a multi-rank import reads, and every entry it does not read, with
//! the reason (reliability review D5: FIFOs, links to devices, link loops, dangling links and
//! subfolders were skipped without a word).
//!
//! A folder's regular files named `*.json` or `*.json.gz` are read (not recursively, in name
//! order); a TensorBoard log folder's profiler traces instead, where it has them
//! ([`crate::import::folder`]). Every other entry is listed in [`Listing::skipped`]: the import prints each as a
//! note. Where skipping leaves fewer than two traces, the listing is an error (exit 2) that
//! names the folder, the files found and what was skipped, since the import would otherwise
//! mean something else than the folder says.

use std::path::{Path, PathBuf};

use crate::import::ImportError;

/// An entry of a folder that is not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The entry, as its folder joined with its name.
    pub path: PathBuf,
    /// Why it is not read.
    pub why: String,
}

/// The trace files a multi-rank import reads, and the entries of its folders it does not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Files as given, then each folder's trace files in name order.
    pub files: Vec<PathBuf>,
    /// Folder entries not read.
    pub skipped: Vec<Skipped>,
}

impl Listing {
    /// One note per skipped entry: `not read: DIR/fifo.json: a FIFO (named pipe), not a
    /// regular file`.
    pub fn notes(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|s| format!("not read: {}: {}", s.path.display(), s.why))
            .collect()
    }
}

/// Whether `e` is "too many levels of symbolic links".
fn is_loop(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

fn is_trace_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// Why a folder entry is not read, or `None` for a regular trace file (links followed).
fn why_not_read(path: &Path, name: &str) -> Option<String> {
    let link = std::fs::symlink_metadata(path)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false);
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if link && e.kind() == std::io::ErrorKind::NotFound => {
            let target = std::fs::read_link(path)
                .map(|t| format!(" (to `{}`)", t.display()))
                .unwrap_or_default();
            return Some(format!(
                "a dangling symbolic link{target}: its target does not exist"
            ));
        }
        Err(e) if link && is_loop(&e) => {
            return Some("a symbolic-link loop: the link never reaches a file".to_owned());
        }
        Err(e) => return Some(format!("cannot be read: {e}")),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return Some(
            "a subfolder: folders are not searched inside a folder (name it as its own argument to read its traces)"
                .to_owned(),
        );
    }
    if !kind.is_file() {
        let via = if link {
            ", through a symbolic link"
        } else {
            ""
        };
        return Some(format!(
            "{}{via}, not a regular file",
            crate::input::describe(kind)
        ));
    }
    if !is_trace_name(name) {
        return Some("not named `*.json` or `*.json.gz`".to_owned());
    }
    None
}

/// Lists `paths`: files as given, folders' regular `*.json` / `*.json.gz` files (not
/// recursive, in name order), and every folder entry not read, with the reason.
///
/// # Errors
/// `io` for a folder that cannot be listed; `bad-value` when fewer than two traces are
/// found, naming the folders, the files found and every entry skipped.
pub fn list(paths: &[PathBuf]) -> Result<Listing, ImportError> {
    let listing = list_any(paths)?;
    if listing.files.len() < 2 {
        return Err(too_few(paths, &listing));
    }
    Ok(listing)
}

/// [`list`], however many traces it finds. A TensorBoard log folder gives its profiler
/// traces ([`tensorboard_traces`]) instead of its own entries.
///
/// # Errors
/// `io` for a folder that cannot be listed.
pub fn list_any(paths: &[PathBuf]) -> Result<Listing, ImportError> {
    let mut listing = Listing::default();
    for p in paths {
        if !p.is_dir() {
            listing.files.push(p.clone());
            continue;
        }
        let profiler = tensorboard_traces(p);
        if !profiler.is_empty() {
            listing.files.extend(profiler);
            continue;
        }
        let mut entries: Vec<(PathBuf, String)> = std::fs::read_dir(p)
            .map_err(|e| {
                ImportError::new("$", "io", format!("cannot list the folder: {e}"))
                    .in_file(p.display().to_string())
            })?
            .map(|e| {
                e.map(|e| (e.path(), e.file_name().to_string_lossy().into_owned()))
                    .map_err(|e| {
                        ImportError::new("$", "io", format!("cannot list the folder: {e}"))
                            .in_file(p.display().to_string())
                    })
            })
            .collect::<Result<_, _>>()?;
        entries.sort();
        for (path, name) in entries {
            match why_not_read(&path, &name) {
                None => listing.files.push(path),
                Some(why) => listing.skipped.push(Skipped { path, why }),
            }
        }
    }
    Ok(listing)
}

/// The field path of an error about a folder's entries as a whole (no field of a file).
pub(crate) use crate::input::FOLDER_PATH;

/// The error for one folder given where a trace was expected that holds none: it names the
/// folder, what was expected there, and every entry not read, with the reason.
pub(crate) fn no_trace(dir: &Path, listing: &Listing) -> ImportError {
    let skipped = listing.notes();
    ImportError::new(
        FOLDER_PATH,
        "bad-value",
        format!(
            "the folder `{}` holds no trace: expected a trace file in it (a Kineto trace `*.json` or `*.json.gz`), or a TensorBoard log dir (`plugins/profile/*/*.pt.trace.json[.gz]` in it or in one of its run folders); an Nsight Systems `.sqlite` is read when named itself{}",
            dir.display(),
            if skipped.is_empty() {
                "; the folder is empty".to_owned()
            } else {
                format!("; {}", skipped.join("; "))
            }
        ),
    )
    .in_file(dir.display().to_string())
}

/// The error for fewer than two traces: what was given, found and skipped (for one folder
/// of no trace, [`no_trace`]).
pub(crate) fn too_few(paths: &[PathBuf], listing: &Listing) -> ImportError {
    if let ([dir], []) = (paths, listing.files.as_slice()) {
        if dir.is_dir() {
            return no_trace(dir, listing);
        }
    }
    let given: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let found = match listing.files.as_slice() {
        [] => "no trace file".to_owned(),
        files => format!(
            "only {}",
            files
                .iter()
                .map(|f| format!("`{}`", f.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let skipped = if listing.skipped.is_empty() {
        String::new()
    } else {
        format!(
            "; not read: {}",
            listing
                .notes()
                .iter()
                .map(|n| n.trim_start_matches("not read: ").to_owned())
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    ImportError::new(
        "$",
        "bad-value",
        format!(
            "a multi-rank import needs at least two trace files (regular `*.json` or `*.json.gz` files, or folders holding them); found {found}{skipped}"
        ),
    )
    .in_file(given.join(", "))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn every_entry_not_read_is_listed_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("rank-0.json"), "{}").unwrap();
        std::fs::write(d.join("rank-1.json.gz"), "x").unwrap();
        std::fs::write(d.join("notes.txt"), "x").unwrap();
        std::fs::create_dir(d.join("sub.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("zero.json")).unwrap();
        std::os::unix::fs::symlink("loopy.json", d.join("loopy.json")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/x.json", d.join("dangling.json")).unwrap();
        std::os::unix::fs::symlink(".", d.join("self.json")).unwrap();
        let fifo = d.join("fifo.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let listing = list(&[d.to_path_buf()]).unwrap();
        assert_eq!(
            listing.files,
            vec![d.join("rank-0.json"), d.join("rank-1.json.gz")]
        );
        let why = |name: &str| {
            listing
                .skipped
                .iter()
                .find(|s| s.path == d.join(name))
                .map(|s| s.why.clone())
                .unwrap_or_else(|| panic!("{name} not listed: {listing:?}"))
        };
        assert!(why("notes.txt").starts_with("not named"));
        assert!(why("sub.json").starts_with("a subfolder"));
        assert!(why("self.json").starts_with("a subfolder"));
        assert_eq!(
            why("zero.json"),
            "a character device, through a symbolic link, not a regular file"
        );
        assert!(why("loopy.json").starts_with("a symbolic-link loop"));
        assert!(
            why("dangling.json").starts_with("a dangling symbolic link (to `/nonexistent/x.json`)")
        );
        if made.is_ok_and(|s| s.success()) {
            assert_eq!(why("fifo.json"), "a FIFO (named pipe), not a regular file");
            assert_eq!(listing.skipped.len(), 7);
        }
        assert!(listing.notes()[0].starts_with("not read: "));
    }

    #[test]
    fn fewer_than_two_traces_names_the_folder_and_what_was_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let err = list(&[d.to_path_buf()]).unwrap_err();
        assert_eq!(err.file, d.display().to_string());
        assert!(
            err.message
                .starts_with(&format!("the folder `{}` holds no trace", d.display()))
                && err.message.ends_with("the folder is empty"),
            "{}",
            err.message
        );
        std::fs::write(d.join("rank-0.json"), "{}").unwrap();
        // A target inside the temporary folder, so that nothing on the machine can exist there.
        std::os::unix::fs::symlink(d.join("absent"), d.join("rank-1.json")).unwrap();
        let err = list(&[d.to_path_buf()]).unwrap_err();
        assert_eq!(err.code, "bad-value");
        assert!(
            err.message
                .contains(&format!("found only `{}`", d.join("rank-0.json").display())),
            "{}",
            err.message
        );
        assert!(
            err.message
                .contains("rank-1.json: a dangling symbolic link"),
            "{}",
            err.message
        );
    }
}
/// Whether `name` is a trace file the PyTorch profiler's TensorBoard handler writes.
fn is_profiler_trace(name: &str) -> bool {
    name.ends_with(".pt.trace.json") || name.ends_with(".pt.trace.json.gz")
}

/// The sorted entries of `dir` that are folders (links followed); none when it cannot be read.
fn subfolders(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The traces of a TensorBoard log folder `dir`, in path order: the regular files named
/// `*.pt.trace.json[.gz]` in `dir/plugins/profile/*/` and `dir/*/plugins/profile/*/`.
/// Empty when `dir` is not laid out that way.
pub fn tensorboard_traces(dir: &Path) -> Vec<PathBuf> {
    let mut roots = vec![dir.to_path_buf()];
    roots.extend(subfolders(dir));
    let mut out = Vec::new();
    for root in roots {
        for run in subfolders(&root.join("plugins").join("profile")) {
            let Ok(entries) = std::fs::read_dir(&run) else {
                continue;
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| is_profiler_trace(&e.file_name().to_string_lossy()))
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            out.extend(files);
        }
    }
    out
}

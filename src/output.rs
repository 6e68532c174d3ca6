//! Writing output files: atomically, and never over a file the user has without `--force`.
//!
//! Every command that writes a file (forms, renders, lab exports, captures) goes through
//! [`write_output`], so the rule holds in one place: the bytes go to a temporary file in the
//! target's folder and are renamed into place, so a reader never sees half a file, and an
//! existing file (even one created meanwhile) is replaced only with `force`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::exit::{Failure, EXIT_INPUT};

/// Fails when `path` exists and `force` is off, or when its folder does not exist (checked
/// early, before any work, so a long measurement never ends in a write that cannot happen).
///
/// # Errors
/// A [`Failure`] with exit code 2.
pub fn refuse_existing(path: &Path, force: bool) -> Result<(), Failure> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(Failure {
                message: format!(
                    "{}: error[io]: cannot write the file: the folder `{}` does not exist",
                    path.display(),
                    dir.display()
                ),
                code: EXIT_INPUT,
            });
        }
    }
    if !force && path.exists() {
        return Err(Failure {
            message: format!(
                "{}: error[exists]: the file exists; pass --force to overwrite it",
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
        message: format!(
            "{}: error[io]: cannot write the file: {what}",
            path.display()
        ),
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
                Failure {
                    message: format!(
                        "{}: error[exists]: the file exists; pass --force to overwrite it",
                        path.display()
                    ),
                    code: EXIT_INPUT,
                }
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
        assert!(refuse_existing(&p, false).is_err());
        assert!(refuse_existing(&p, true).is_ok());
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

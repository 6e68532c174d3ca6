//! Keeping a form's answers safe while `form fill` runs: one filler at a time, and saves
//! that never drop an answer.
//!
//! [`FormLock`] is an advisory lock (`flock`, through the `fs4` crate) on a lock file beside
//! the form, `.NAME.lock`, holding the filler's pid. The form itself cannot carry the lock:
//! every save renames a new file over it. A second `form fill` is refused with
//! `error[locked]` naming the holder; the lock ends with its process, even a killed one.
//!
//! [`Saver`] writes the form after each answer. Before writing it looks at the file: when
//! someone changed it since the last read or write (an editor, a filler that ignored the
//! lock), it re-reads it and merges field by field — a field the filler changed since its
//! last save takes the filler's value, every other field keeps what is on disk — so neither
//! side's answers are dropped.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::{read_form, render, FileFormat, FormError, RawForm};
use crate::error::Refusal;

/// The lock a `form fill` holds on its form until it ends.
#[derive(Debug)]
pub struct FormLock {
    file: File,
    path: PathBuf,
}

/// The lock file of `form`: `.NAME.lock` in the same folder.
pub fn lock_path(form: &Path) -> PathBuf {
    let name = form
        .file_name()
        .map_or_else(|| "form".into(), |n| n.to_string_lossy().into_owned());
    form.with_file_name(format!(".{name}.lock"))
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    true
}

impl FormLock {
    /// Takes the lock of `form`, or says who holds it.
    ///
    /// # Errors
    /// `locked` (another process holds it: its pid is named), `io`.
    pub fn acquire(form: &Path) -> Result<FormLock, FormError> {
        let label = form.display().to_string();
        let path = lock_path(form);
        let io = |e: std::io::Error| {
            FormError::new(
                "$",
                "io",
                format!("cannot take the lock {}: {e}", path.display()),
            )
            .in_file(&label)
        };
        // A holder removes the lock file as it ends; a file opened just before that removal
        // is not the lock any more, so check that the locked file is still the one named.
        loop {
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => {}
                Err(fs4::TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    let who = if holder.is_empty() {
                        "another process".to_owned()
                    } else {
                        format!("another `worksheet form fill` (pid {holder})")
                    };
                    return Err(FormError::new(
                        "$",
                        "locked",
                        format!(
                            "{who} is filling this form (lock {}); wait for it to end, so that neither loses answers",
                            path.display()
                        ),
                    )
                    .in_file(&label));
                }
                Err(fs4::TryLockError::Error(e)) => return Err(io(e)),
            }
            let still_named = std::fs::metadata(&path)
                .ok()
                .zip(file.metadata().ok())
                .is_some_and(|(named, held)| same_file(&named, &held));
            if !still_named {
                continue;
            }
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            writeln!(file, "{}", std::process::id()).map_err(io)?;
            file.flush().map_err(io)?;
            return Ok(FormLock { file, path });
        }
    }
}

impl Drop for FormLock {
    fn drop(&mut self) {
        // Removed while still locked; the lock itself ends when the file is closed.
        let _ = std::fs::remove_file(&self.path);
        let _ = fs4::FileExt::unlock(&self.file);
    }
}

/// What identifies one version of a file on disk, to notice a change cheaply.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        #[cfg(unix)]
        inode: {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        },
    })
}

/// Saves a form after each answer, merging in changes made to the file meanwhile.
#[derive(Debug)]
pub struct Saver {
    path: PathBuf,
    format: FileFormat,
    /// The filler's form as of its last save (or the first read).
    ours_before: RawForm,
    /// The form on disk as of the last read or write.
    disk: RawForm,
    /// The file as of the last read or write.
    stamp: Option<Stamp>,
}

impl Saver {
    /// A saver for `path`, whose content was read as `form` (the stamp is taken now).
    pub fn new(path: &Path, format: FileFormat, form: &RawForm) -> Saver {
        Saver {
            path: path.to_path_buf(),
            format,
            ours_before: form.clone(),
            disk: form.clone(),
            stamp: stamp(path),
        }
    }

    /// Writes `ours`, merged with the file when it changed since the last read or write;
    /// returns what was written.
    ///
    /// # Errors
    /// [`Refusal`] (exit 2 at the command line): the changed file no longer reads as a form, or it cannot be
    /// written.
    pub fn save(&mut self, ours: &RawForm) -> Result<RawForm, Refusal> {
        if stamp(&self.path) != self.stamp {
            let theirs = read_form(&self.path).map_err(|e| Refusal {
                message: format!(
                    "{e}\n(the form changed on disk while it was being filled, and no longer reads: the last answer is not saved)"
                ),
            })?;
            self.disk = theirs.into_raw();
        }
        let merged = merge(&self.ours_before, ours, &self.disk);
        let text = render(&merged, self.format);
        // Never write a form that `form check` and `form fill` would refuse to read back.
        if text.len() as u64 > super::MAX_FORM_BYTES {
            return Err(crate::error::InputError::new(
                "$",
                "too-large",
                format!(
                    "with this answer the form would be {} bytes, over the {} bytes a form may hold, and could not be read back: the answer is not saved (the file keeps the answers before it)",
                    text.len(),
                    super::MAX_FORM_BYTES
                ),
            )
            .in_file(self.path.display().to_string())
            .into());
        }
        crate::output::write_output(&self.path, text.as_bytes(), true)?;
        self.stamp = stamp(&self.path);
        self.ours_before = ours.clone();
        self.disk = merged.clone();
        Ok(merged)
    }
}

/// Three-way merge of forms by field: where `ours` differs from `base` (the filler changed
/// it) take `ours`, elsewhere keep `theirs`. Nested objects merge field by field; lists are
/// single answers.
pub fn merge(base: &RawForm, ours: &RawForm, theirs: &RawForm) -> RawForm {
    if ours == base {
        return theirs.clone();
    }
    let as_value = |f: &RawForm| serde_json::to_value(f).unwrap_or(serde_json::Value::Null);
    let merged = merge_values(&as_value(base), &as_value(ours), &as_value(theirs));
    serde_json::from_value(merged).unwrap_or_else(|_| ours.clone())
}

fn merge_values(
    base: &serde_json::Value,
    ours: &serde_json::Value,
    theirs: &serde_json::Value,
) -> serde_json::Value {
    use serde_json::Value;
    let empty = serde_json::Map::new();
    let base_fields = match base {
        Value::Object(b) => Some(b),
        // A section nobody had started: both sides' fields merge one by one.
        Value::Null => Some(&empty),
        _ => None,
    };
    match (base_fields, ours, theirs) {
        (Some(b), Value::Object(o), Value::Object(t)) => {
            let mut out = serde_json::Map::new();
            let keys: std::collections::BTreeSet<&String> =
                b.keys().chain(o.keys()).chain(t.keys()).collect();
            for key in keys {
                let null = Value::Null;
                let (bv, ov, tv) = (
                    b.get(key).unwrap_or(&null),
                    o.get(key).unwrap_or(&null),
                    t.get(key).unwrap_or(&null),
                );
                let v = merge_values(bv, ov, tv);
                if !v.is_null() || o.contains_key(key) || t.contains_key(key) {
                    out.insert(key.clone(), v);
                }
            }
            Value::Object(out)
        }
        _ if ours != base => ours.clone(),
        _ => theirs.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::form::fields;

    fn with(form: &RawForm, sets: &[(&str, &str)]) -> RawForm {
        let mut f = form.clone();
        for (path, value) in sets {
            fields::set(&mut f, path, value).unwrap();
        }
        f
    }

    #[test]
    fn merge_keeps_both_sides_answers() {
        let base = with(
            &crate::form::format::blank(None, None),
            &[("description", "base")],
        );
        let ours = with(
            &base,
            &[("start.clock.domain", "host"), ("stop.marker", "after")],
        );
        let theirs = with(
            &base,
            &[
                ("start.clock.instance", "boot-a"),
                ("stop.marker", "theirs"),
                ("description", "edited"),
            ],
        );
        let m = merge(&base, &ours, &theirs);
        let get = |p: &str| fields::get(&m, p);
        assert_eq!(get("start.clock.domain").as_deref(), Some("host"));
        assert_eq!(get("start.clock.instance").as_deref(), Some("boot-a"));
        assert_eq!(
            get("stop.marker").as_deref(),
            Some("after"),
            "ours is newer"
        );
        assert_eq!(get("description").as_deref(), Some("edited"));
    }

    #[test]
    fn a_save_after_an_outside_edit_keeps_the_edit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        let base = with(
            &crate::form::format::blank(None, None),
            &[("description", "base")],
        );
        std::fs::write(&path, render(&base, FileFormat::Json)).unwrap();
        let mut saver = Saver::new(&path, FileFormat::Json, &base);
        let ours = with(&base, &[("start.clock.domain", "host")]);
        saver.save(&ours).unwrap();
        // Someone else answers a field in the file meanwhile.
        let outside = with(&ours, &[("stop.marker", "typed in an editor")]);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, render(&outside, FileFormat::Json)).unwrap();
        let ours2 = with(&ours, &[("start.clock.instance", "boot-a")]);
        let written = saver.save(&ours2).unwrap();
        let on_disk = read_form(&path).unwrap().into_raw();
        assert_eq!(written, on_disk);
        let get = |p: &str| fields::get(&on_disk, p);
        assert_eq!(get("stop.marker").as_deref(), Some("typed in an editor"));
        assert_eq!(get("start.clock.instance").as_deref(), Some("boot-a"));
        assert_eq!(get("start.clock.domain").as_deref(), Some("host"));
        // And a further save without outside change keeps it too.
        let ours3 = with(&ours2, &[("wait.scope", "device")]);
        let on_disk = saver.save(&ours3).unwrap();
        assert_eq!(
            fields::get(&on_disk, "stop.marker").as_deref(),
            Some("typed in an editor")
        );
    }

    #[test]
    fn a_form_too_large_to_read_back_is_never_written() {
        // review D3: a form over MAX_FORM_BYTES was written, then refused by every reader
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        let base = with(
            &crate::form::format::blank(None, None),
            &[("description", "kept")],
        );
        std::fs::write(&path, render(&base, FileFormat::Json)).unwrap();
        let before = std::fs::read(&path).unwrap();
        let mut saver = Saver::new(&path, FileFormat::Json, &base);
        let mut huge = base.clone();
        huge.description = Some("\"".repeat(600 * 1024)); // 1.2 MB once escaped
        let err = saver.save(&huge).unwrap_err();
        assert!(err.message.contains("error[too-large]"), "{}", err.message);
        assert!(
            err.message.contains("over the 1048576 bytes"),
            "{}",
            err.message
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let mut fits = base.clone();
        fits.description = Some("x".repeat(900 * 1024));
        saver.save(&fits).unwrap();
        assert!(read_form(&path).is_ok());
    }

    #[test]
    fn a_second_lock_names_the_first_holder() {
        let dir = tempfile::tempdir().unwrap();
        let form = dir.path().join("f.json");
        let first = FormLock::acquire(&form).unwrap();
        let err = FormLock::acquire(&form).unwrap_err();
        assert_eq!(err.code, "locked");
        assert!(
            err.message
                .contains(&format!("(pid {})", std::process::id())),
            "{}",
            err.message
        );
        drop(first);
        assert!(!lock_path(&form).exists());
        let _again = FormLock::acquire(&form).unwrap();
    }
}

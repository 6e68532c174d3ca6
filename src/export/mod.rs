//! `worksheet export INPUT… --parquet DIR`: the case's phases, collectives, clock relations,
//! findings and summary numbers as Parquet tables, for an existing engine past one machine.
//!
//! The tables are built here from the same answers `worksheet import` prints ([`tables`]);
//! writing them as Parquet needs the `parquet` cargo feature (the `parquet` crate, without
//! arrow). The schema is versioned and documented in `docs/parquet.md`; every file carries
//! `format` / `version` key-value metadata. Each file is written atomically through
//! [`crate::output`], and none is replaced without `--force` (all are checked before any
//! is written). `--csv DIR` writes the same tables as CSV ([`csv`]), without the feature.

pub mod csv;
#[cfg(feature = "parquet")]
mod parquet;
pub mod perfetto;
pub mod tables;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Refusal, Stopped};

pub use tables::{build, Column, Input, Table, Values};

/// The value of the `format` key in every file's key-value metadata.
pub const FORMAT: &str = "worksheet-parquet";
/// The schema version (the `version` key); raised on any change to a table's columns.
pub const VERSION: &str = "5";

/// The files a folder gets: `<table>.parquet`.
pub fn table_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.parquet"))
}

/// Writes each table as `DIR/<table>.parquet`, creating `DIR` when missing, and a line per
/// file on `out`.
///
/// # Errors
/// [`Stopped`]: refused when the folder or a file cannot be written or a table cannot be
/// encoded; a write error of `out`.
pub fn write_parquet(
    dir: &Path,
    tables: &[Table],
    force: bool,
    out: &mut dyn Write,
) -> Result<(), Stopped> {
    write_tables(dir, tables, out, table_path, |t, path| {
        let bytes = encode(t)?;
        crate::output::write_output(path, &bytes, force)?;
        Ok(bytes.len() as u64)
    })
}

/// Writes each table to `path_of(dir, name)` with `write_one` (which returns the bytes
/// written), creating `dir` when missing, and a line per file on `out`: the one loop of
/// [`write_parquet`] and [`csv::write_csv`].
pub(crate) fn write_tables(
    dir: &Path,
    tables: &[Table],
    out: &mut dyn Write,
    path_of: fn(&Path, &str) -> PathBuf,
    mut write_one: impl FnMut(&Table, &Path) -> Result<u64, Stopped>,
) -> Result<(), Stopped> {
    std::fs::create_dir_all(dir).map_err(|e| Refusal {
        message: format!(
            "{}: error[io]: cannot create the folder: {e}",
            dir.display()
        ),
    })?;
    for t in tables {
        let path = path_of(dir, t.name);
        let bytes = write_one(t, &path)?;
        writeln!(
            out,
            "{}: {} row(s), {} byte(s)",
            path.display(),
            t.rows(),
            bytes
        )?;
    }
    Ok(())
}

#[cfg(feature = "parquet")]
fn encode(t: &Table) -> Result<Vec<u8>, Refusal> {
    parquet::encode(t).map_err(|e| Refusal {
        message: format!(
            "error[internal]: cannot encode the `{}` table as Parquet: {e}",
            t.name
        ),
    })
}

#[cfg(not(feature = "parquet"))]
fn encode(_: &Table) -> Result<Vec<u8>, Refusal> {
    Err(Refusal {
        message: "error[unsupported]: this worksheet was built without the `parquet` feature"
            .to_owned(),
    })
}

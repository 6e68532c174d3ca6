//! Writing the export's tables as CSV (`worksheet export --csv DIR`): one `<table>.csv` per
//! table, the same tables, columns and rows as the Parquet files, without the `parquet`
//! feature.
//!
//! The text is RFC 4180 (a header row of the column names, records ended by CRLF), and keeps
//! what the Parquet types keep: an integer is its exact decimal digits, unquoted; a text is
//! always quoted (by the `csv` crate: `"` doubled inside), so an empty text `""` differs from
//! a null, which is an empty unquoted field. DuckDB, PostgreSQL's `COPY … CSV` and pandas read
//! these conventions as they are written.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{Table, Values};
use crate::error::Stopped;

/// The files a folder gets: `<table>.csv`.
pub fn table_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.csv"))
}

/// The record terminator (RFC 4180).
const CRLF: &[u8] = b"\r\n";

/// Quotes texts through the `csv` crate: each text is written as a one-field record with
/// every field quoted, into a scratch buffer the field is then copied from.
struct Quoter {
    writer: ::csv::Writer<Vec<u8>>,
    /// How much of the scratch buffer is already copied out.
    seen: usize,
}

/// The scratch buffer is started again past this size, so it never holds a whole table.
const SCRATCH: usize = 1 << 20;

impl Quoter {
    fn new() -> Self {
        Quoter {
            writer: ::csv::WriterBuilder::new()
                .quote_style(::csv::QuoteStyle::Always)
                .terminator(::csv::Terminator::Any(b'\n'))
                .from_writer(Vec::new()),
            seen: 0,
        }
    }

    /// Writes `text`, quoted, to `out`.
    fn quote(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        if self.seen > SCRATCH {
            *self = Quoter::new();
        }
        self.writer.write_record([text]).map_err(io::Error::other)?;
        self.writer.flush()?;
        let all = self.writer.get_ref();
        // The record is the quoted field and the terminator `\n`.
        out.write_all(&all[self.seen..all.len() - 1])?;
        self.seen = all.len();
        Ok(())
    }
}

/// Writes `t` as CSV text into `out`.
///
/// # Errors
/// A write error of `out`.
pub fn encode_into(t: &Table, out: &mut dyn Write) -> io::Result<()> {
    let header: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
    // Column names are plain identifiers (`[a-z_]`): nothing to quote.
    out.write_all(header.join(",").as_bytes())?;
    out.write_all(CRLF)?;
    let mut quoter = Quoter::new();
    for row in 0..t.rows() {
        for (i, c) in t.columns.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            match &c.values {
                Values::Int(v) => {
                    if let Some(x) = v[row] {
                        write!(out, "{x}")?;
                    }
                }
                Values::Text(v) => {
                    if let Some(s) = &v[row] {
                        quoter.quote(s, out)?;
                    }
                }
            }
        }
        out.write_all(CRLF)?;
    }
    Ok(())
}

/// Writes each table as `DIR/<table>.csv`, creating `DIR` when missing, each file atomically
/// and none over a file without `force`, and a line per file on `out`.
///
/// # Errors
/// [`Stopped`]: refused when the folder or a file cannot be written; a write error of `out`.
pub fn write_csv(
    dir: &Path,
    tables: &[Table],
    force: bool,
    out: &mut dyn Write,
) -> Result<(), Stopped> {
    super::write_tables(dir, tables, out, table_path, |t, path| {
        let bytes = crate::output::write_output_with(path, force, |w| encode_into(t, w))?;
        Ok(bytes)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Column;

    fn text(t: &Table) -> String {
        let mut v = Vec::new();
        encode_into(t, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    /// Integers exact and bare, texts quoted with `"` doubled, a null empty and unquoted, an
    /// empty text `""`, CRLF after every record.
    #[test]
    fn integers_are_exact_texts_quoted_and_nulls_empty() {
        let t = Table {
            name: "t",
            columns: vec![
                Column {
                    name: "n",
                    nullable: true,
                    values: Values::Int(vec![Some(i64::MAX), None, Some(-7)]),
                },
                Column {
                    name: "s",
                    nullable: true,
                    values: Values::Text(vec![
                        Some("a, \"b\"\nc".to_owned()),
                        Some(String::new()),
                        None,
                    ]),
                },
            ],
        };
        assert_eq!(
            text(&t),
            "n,s\r\n9223372036854775807,\"a, \"\"b\"\"\nc\"\r\n,\"\"\r\n-7,\r\n"
        );
    }

    /// The scratch buffer starts again without losing or repeating a byte.
    #[test]
    fn long_tables_quote_every_text_once() {
        let long = "x".repeat(1000);
        let n = 3 * SCRATCH / 1000;
        let t = Table {
            name: "t",
            columns: vec![Column {
                name: "s",
                nullable: false,
                values: Values::Text(vec![Some(long.clone()); n]),
            }],
        };
        let want = format!("s\r\n{}", format!("\"{long}\"\r\n").repeat(n));
        assert_eq!(text(&t), want);
    }
}

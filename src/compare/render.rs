//! A comparison for people (text table, Markdown) and for programs (JSON, schema
//! `schemas/worksheet-compare.schema.json`).

use std::io::{self, Write};

use super::{Comparison, Row, RowVerdict};
use crate::escape::printable;
use crate::table::{glue, new_table, word_cell};

/// The output formats of `worksheet compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareFormat {
    /// A table that fits the terminal.
    Text,
    /// The versioned JSON report.
    Json,
    /// A Markdown table (for a pull request).
    Markdown,
}

fn verdict_text(r: &Row) -> String {
    match (r.verdict, r.reason) {
        (RowVerdict::Unknown, Some(reason)) => format!("unknown ({reason})"),
        (v, _) => v.word().to_owned(),
    }
}

fn median_text(side: Option<&super::Side>) -> String {
    match side {
        None => "-".into(),
        Some(s) => match (&s.median, s.unknown) {
            (Some(m), _) if s.count > 1 => format!("{m} (n={})", s.count),
            (Some(m), _) => m.clone(),
            (None, Some(reason)) => format!("unknown ({reason})"),
            (None, None) => "-".into(),
        },
    }
}

fn summary_line(c: &Comparison) -> String {
    let order = [
        "slower",
        "faster",
        "ambiguous",
        "unknown",
        "same",
        "new",
        "gone",
    ];
    let parts: Vec<String> = order
        .iter()
        .filter_map(|k| c.counts.get(k).map(|n| format!("{n} {k}")))
        .collect();
    format!("{} (threshold {})", parts.join(", "), c.threshold)
}

/// Writes the comparison.
///
/// # Errors
/// Write errors of `out`.
pub fn write(c: &Comparison, format: CompareFormat, out: &mut dyn Write) -> io::Result<()> {
    write_with(c, format, false, out)
}

/// Writes the comparison; in text, a comparison of more than
/// [`super::impact::SUMMARY_ROWS`] rows is summarized (headline, the rows of largest impact,
/// each one line) unless `all`.
///
/// # Errors
/// Write errors of `out`.
pub fn write_with(
    c: &Comparison,
    format: CompareFormat,
    all: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let width = usize::from(crate::table::width().unwrap_or(80));
    if format == CompareFormat::Text && !all && c.rows.len() > super::impact::SUMMARY_ROWS {
        let safe = |s: &str| printable(s).into_owned();
        writeln!(out, "base {}\nnew  {}", safe(&c.base), safe(&c.new))?;
        if let Some(h) = &c.headline {
            for line in super::impact::headline_lines(h, width) {
                writeln!(out, "{}", safe(&line))?;
            }
        }
        for line in super::impact::summary_lines(&c.rows, width) {
            writeln!(out, "{line}")?;
        }
        return writeln!(out, "{}", summary_line(c));
    }
    if format == CompareFormat::Text {
        if let Some(h) = &c.headline {
            let safe = |s: &str| printable(s).into_owned();
            for line in super::impact::headline_lines(h, width) {
                writeln!(out, "{}", safe(&line))?;
            }
        }
    }
    match format {
        CompareFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, c)?;
            writeln!(out)
        }
        CompareFormat::Text => {
            // Names and files come from the inputs: no control character reaches the terminal.
            let safe = |s: &str| printable(s).into_owned();
            writeln!(out, "base {}\nnew  {}", safe(&c.base), safe(&c.new))?;
            let mut t = new_table(&["what", "base", "new", "change", "noise", "verdict", "why"]);
            for r in &c.rows {
                t.add_row(vec![
                    comfy_table::Cell::new(safe(&format!("{} {}", r.group, r.name))),
                    comfy_table::Cell::new(median_text(r.base.as_ref())),
                    comfy_table::Cell::new(median_text(r.new.as_ref())),
                    comfy_table::Cell::new(r.change.clone().unwrap_or_default()),
                    comfy_table::Cell::new(r.noise.clone().unwrap_or_default()),
                    word_cell(&verdict_text(r)),
                    comfy_table::Cell::new(safe(&r.why)),
                ]);
            }
            // On a narrow terminal: `what: base → new  change (noise)  verdict — why`.
            let record = |c: &[String]| {
                let mut line = format!("{}: {} → {}", c[0], glue(&c[1]), glue(&c[2]));
                if !c[3].is_empty() {
                    line += &format!("  {}", glue(&c[3]));
                }
                if !c[4].is_empty() {
                    line += &format!(" ({})", glue(&format!("noise {}", c[4])));
                }
                line += &format!("  {}", glue(&c[5]));
                if !c[6].is_empty() {
                    line += &format!(" — {}", c[6].replace('\n', " "));
                }
                line
            };
            writeln!(out, "{}", crate::table::fitted(&t, &record))?;
            writeln!(out, "{}", summary_line(c))
        }
        CompareFormat::Markdown => {
            writeln!(
                out,
                "Comparison of `{}` (base) and `{}` (new)\n",
                printable(&c.base),
                printable(&c.new)
            )?;
            writeln!(
                out,
                "| what | base | new | change | noise | verdict | why |"
            )?;
            writeln!(out, "|---|---|---|---|---:|---|---|")?;
            let cell = |s: &str| printable(s).replace('|', "\\|");
            for r in &c.rows {
                writeln!(
                    out,
                    "| {} {} | {} | {} | {} | {} | **{}** | {} |",
                    r.group,
                    cell(&r.name),
                    cell(&median_text(r.base.as_ref())),
                    cell(&median_text(r.new.as_ref())),
                    r.change.clone().unwrap_or_default(),
                    r.noise.clone().unwrap_or_default(),
                    verdict_text(r),
                    cell(&r.why)
                )?;
            }
            writeln!(out, "\n{}", summary_line(c))?;
            writeln!(out, "\nMethod: {}.", c.method)
        }
    }
}

//! Tables for people that fit the terminal, and colour only where it helps and is wanted.
//!
//! The width ([`width`]) is the terminal's on a terminal; when stdout is not a terminal it is
//! `COLUMNS` if set (so `COLUMNS=80 worksheet eval … | less` fits), otherwise there is none and
//! piped output keeps the full table. A table printed through [`fitted`] is the full table when
//! it fits the width, and otherwise **one record per line** (`case · question: expected →
//! actual  pass`, as cargo test and pytest print), wrapped at spaces only: a word, a value
//! with its unit or an identifier is never split across lines ([`wrap`]); one longer than the
//! line stands alone on its line. Tables not yet printed through [`fitted`] go through [`fit`],
//! comfy-table's dynamic arrangement, which wraps inside cells. Colour (FAIL, unknown, slower
//! in red; ambiguous in yellow) is used only on a terminal and never when `NO_COLOR` is set
//! (<https://no-color.org>).

use std::io::IsTerminal;

use comfy_table::{presets::ASCII_MARKDOWN, Cell, Color, ContentArrangement, Table};

/// The width to fit when stdout is not a terminal: `COLUMNS`, if it is a sensible number.
pub fn columns_env() -> Option<u16> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c >= 20)
}

/// The width a text report should keep to, if any: the terminal's on a terminal, else
/// `COLUMNS`.
pub fn width() -> Option<u16> {
    if std::io::stdout().is_terminal() {
        // comfy-table asks the terminal for its size.
        if let Some(w) = Table::new().width() {
            return Some(w);
        }
    }
    columns_env()
}

/// Makes `table` fit the width ([`width`]) by wrapping cells.
pub fn fit(table: &mut Table) {
    table.set_content_arrangement(ContentArrangement::Dynamic);
    if !std::io::stdout().is_terminal() {
        if let Some(w) = columns_env() {
            table.set_width(w);
        }
    }
}

/// A Markdown-style ASCII table with `header`, to be printed through [`fitted`].
pub fn new_table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(ASCII_MARKDOWN)
        .set_header(header.to_vec());
    table
}

/// No-break space: [`glue`] puts it between the words of one value, [`wrap`] never breaks
/// there and turns it back into a plain space.
const GLUE: char = '\u{a0}';

/// `text` as one unbreakable piece for [`wrap`] (a value and its unit, `known 70.651 us`).
pub fn glue(text: &str) -> String {
    text.replace(' ', &GLUE.to_string())
}

/// `text` with each `, `-separated item [`glue`]d: a list may break between items, never
/// inside one (`count 2, sum 140 us, union 100 us`).
pub fn glue_items(text: &str) -> String {
    text.split(", ").map(glue).collect::<Vec<_>>().join(", ")
}

/// `text` wrapped at `width` columns, breaking only at plain spaces (never inside a word, at
/// a hyphen, or inside a [`glue`]d value); continuation lines start with `indent`. A piece
/// longer than the line stands alone on its own line. The text's own line breaks are kept.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let options = textwrap::Options::new(width.max(1))
        .break_words(false)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .subsequent_indent(indent);
    textwrap::wrap(text, options)
        .iter()
        .map(|line| line.replace(GLUE, " "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// [`wrap`] at the output's width ([`width`]); unchanged when there is none (piped output).
pub fn wrap_prose(text: &str, indent: &str) -> String {
    match width() {
        Some(w) => wrap(text, usize::from(w), indent),
        None => text.replace(GLUE, " "),
    }
}

/// The cells of `row`, as text.
fn cells(row: &comfy_table::Row) -> Vec<String> {
    row.cell_iter().map(Cell::content).collect()
}

/// The widest line of `text`, in terminal columns.
fn widest(text: &str) -> usize {
    text.lines()
        .map(textwrap::core::display_width)
        .max()
        .unwrap_or(0)
}

/// `table` laid out for the output's width ([`width`]): see [`fitted_to`].
pub fn fitted(table: &Table, record: &dyn Fn(&[String]) -> String) -> String {
    fitted_to(table, width(), record)
}

/// `table` laid out for `width` columns: the whole table when there is no width or it fits;
/// otherwise one record per row, `record(cells)` (with [`glue`]d values) wrapped by [`wrap`]
/// with a four-space hanging indent. Cells are never cut or wrapped inside.
pub fn fitted_to(
    table: &Table,
    width: Option<u16>,
    record: &dyn Fn(&[String]) -> String,
) -> String {
    let mut whole = table.clone();
    whole.set_content_arrangement(ContentArrangement::Disabled);
    let text = whole.to_string();
    let Some(width) = width.map(usize::from) else {
        return text;
    };
    if widest(&text) <= width {
        return text;
    }
    table
        .row_iter()
        .map(|row| wrap(&record(&cells(row)), width, "    "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `table` laid out for the output's width, with [`record_with_headers`] as the record of a
/// row when the table does not fit.
pub fn fitted_records(table: &Table) -> String {
    let header: Vec<String> = table.header().map(cells).unwrap_or_default();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    fitted(table, &|c: &[String]| record_with_headers(&header, c))
}

/// The longest cell [`record_with_headers`] keeps on one line: a value with its unit, a
/// count, a short phrase. A longer cell is prose, and wraps at its spaces.
const GLUED_CELL_CHARS: usize = 30;

/// A record line for any table: the first cell, then `header: value` for each other non-empty
/// cell, separated by ` · ` (the header and each value of at most 30 characters [`glue`]d;
/// a longer one is prose and wraps).
pub fn record_with_headers(header: &[&str], cells: &[String]) -> String {
    let mut parts = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let cell = cell.replace('\n', " ");
        if cell.is_empty() {
            continue;
        }
        let cell = if cell.chars().count() <= GLUED_CELL_CHARS {
            glue(&cell)
        } else {
            cell
        };
        if i == 0 {
            parts.push(cell);
        } else {
            let name = header.get(i).copied().unwrap_or("");
            parts.push(format!("{}: {cell}", glue(name)));
        }
    }
    parts.join(" · ")
}

/// Whether to colour output: stdout is a terminal and `NO_COLOR` is unset or empty.
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A cell for a result word: red for `FAIL`, `unknown…`, `slower`; yellow for `ambiguous`;
/// green for `faster`; plain otherwise, and plain whenever [`colour`] is off.
pub fn word_cell(text: &str) -> Cell {
    let cell = Cell::new(text);
    if !colour() {
        return cell;
    }
    if text == "FAIL" || text.starts_with("unknown") || text == "slower" {
        cell.fg(Color::Red)
    } else if text == "ambiguous" {
        cell.fg(Color::Yellow)
    } else if text == "faster" {
        cell.fg(Color::Green)
    } else {
        cell
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_only_and_keeps_glued_values_whole() {
        let line = format!(
            "cuda-example · completion-minus-device: {} → {}  pass",
            glue("known 7.035 us"),
            glue("known 7.035 us")
        );
        assert_eq!(
            wrap(&line, 40, "    "),
            "cuda-example · completion-minus-device:\n    known 7.035 us → known 7.035 us\n    pass"
        );
        // A piece longer than the line is not split; hyphens are not break points.
        let long = "stream:gpu0-s7-with-a-very-long-identifier-name end";
        assert_eq!(
            wrap(long, 20, "  "),
            "stream:gpu0-s7-with-a-very-long-identifier-name\n  end"
        );
        assert_eq!(wrap("a-b c-d", 4, ""), "a-b\nc-d");
    }

    #[test]
    fn a_table_that_fits_is_whole_and_one_that_does_not_is_records() {
        let mut t = new_table(&["case", "question", "expected", "actual", "result"]);
        t.add_row(vec![
            "cuda-example",
            "host-completion",
            "known 70.651 us",
            "known 70.651 us",
            "pass",
        ]);
        let record = |c: &[String]| {
            format!(
                "{} · {}: {} → {}  {}",
                c[0],
                c[1],
                glue(&c[2]),
                glue(&c[3]),
                c[4]
            )
        };
        let whole = fitted_to(&t, None, &record);
        assert_eq!(widest(&whole), 79);
        assert_eq!(fitted_to(&t, Some(79), &record), whole);
        assert_eq!(
            fitted_to(&t, Some(78), &record),
            "cuda-example · host-completion: known 70.651 us → known 70.651 us  pass"
        );
        assert_eq!(
            fitted_to(&t, Some(60), &record),
            "cuda-example · host-completion: known 70.651 us →\n    known 70.651 us  pass"
        );
        assert_eq!(
            record_with_headers(
                &["q", "busy (union)", "gaps"],
                &["s:a".into(), "1 ms".into(), String::new()]
            ),
            format!("s:a · {}: {}", glue("busy (union)"), glue("1 ms"))
        );
    }
}

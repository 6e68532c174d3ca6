//! Tables for people that fit the terminal, and colour only where it helps and is wanted.
//!
//! Every text table goes through [`fit`]: comfy-table's dynamic arrangement wraps cells so a
//! table stays within the width. On a terminal the width is the terminal's; when stdout is
//! not a terminal it is `COLUMNS` if set (so `COLUMNS=80 worksheet eval … | less` fits),
//! otherwise the table is not limited. Colour (FAIL, unknown, slower in red; ambiguous in
//! yellow) is used only on a terminal and never when `NO_COLOR` is set (<https://no-color.org>).

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

/// A Markdown-style ASCII table with `header` that fits the width.
pub fn new_table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(ASCII_MARKDOWN)
        .set_header(header.to_vec());
    fit(&mut table);
    table
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

//! Text from an input made safe to print: the one function every command uses before text
//! that came from a file (a case name, a phase label, a kernel or call name, a file name in
//! an error) reaches a terminal.
//!
//! A trace or a case can hold any character. Printed raw, an ESC sequence moves the cursor,
//! clears the screen or recolours the rest of the output, an OSC sequence (`ESC ] 0 ; … BEL`)
//! sets the terminal's title, a carriage return overwrites the start of the line, and a
//! bidirectional override reorders it. [`printable`] writes each such character as a Rust
//! escape (`\u{1b}`), so the text stays readable and exact, and the terminal is untouched.

use std::borrow::Cow;

/// Whether `c` is written as an escape: a control character other than the line feed, or a
/// bidirectional embedding, override or isolate.
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` made safe for a terminal: control characters (ESC, BEL, NUL, carriage return, tab
/// ...; not the line feed) and the bidirectional overrides are written as escapes
/// (`\u{1b}`), so text from a file can neither move the cursor, set the title nor reorder
/// the line. Text without them is returned as it is, without copying.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_plain_text_is_borrowed() {
        assert!(matches!(
            printable("plain\nlines"),
            Cow::Borrowed("plain\nlines")
        ));
        assert_eq!(
            printable("n\u{1b}]0;title\u{7}\r\0\t\u{202e}x"),
            "n\\u{1b}]0;title\\u{7}\\u{d}\\u{0}\\u{9}\\u{202e}x"
        );
        assert_eq!(printable("a\u{1b}[2Jb\0c"), "a\\u{1b}[2Jb\\u{0}c");
        // C1 controls (8-bit CSI) too
        assert_eq!(printable("a\u{9b}2J"), "a\\u{9b}2J");
    }
}

//! The longest string a case may hold, checked on the text as it streams by, before the
//! parser keeps any of it.
//!
//! `serde_json` reading from a stream gathers each string whole in a scratch buffer (grown
//! by doubling) before handing it over, so one endless string in a gzip bomb grew to the
//! 2 GiB text bound and cost 2.1 GB (reliability review, section 1). [`StringScan`] follows
//! only what it must of the JSON text — whether it is inside a string, and after a
//! backslash — and counts the bytes of the current string; past [`MAX_CASE_STRING_BYTES`]
//! the read fails, so a string costs at most the scratch buffer's twice its size, within
//! the cap. [`StringCapped`] applies it to a reader; [`longest_string_check`] to a text
//! held whole, so that the streamed and in-memory readers refuse the same cases.
//!
//! The scan is a few `memchr` calls per block of text: it finds quotes and backslashes and
//! skips everything else.

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

/// The longest string a case may hold, in bytes of JSON text between its quotes (16 MiB).
/// A case's strings are ids, names, labels and notes: the importer keeps no name past
/// 1 MiB (`import::MAX_NAME_BYTES`), and a hand-written label is a line.
pub const MAX_CASE_STRING_BYTES: u64 = 16 << 20;

/// Where a scan of JSON text stands: inside a string or not, after a backslash or not, and
/// how many bytes the current string holds so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct StringScan {
    in_string: bool,
    escaped: bool,
    run: u64,
    /// Where the current string's text starts, in the whole text.
    start: u64,
    seen: u64,
}

impl StringScan {
    /// Scans `bytes`, which follow what was scanned before. `Err(start)`: a string passes
    /// `max` bytes; `start` is where its text starts (after its quote), in the whole text.
    pub fn feed(&mut self, bytes: &[u8], max: u64) -> Result<(), u64> {
        let mut at = 0;
        while at < bytes.len() {
            if !self.in_string {
                match memchr::memchr(b'"', &bytes[at..]) {
                    None => at = bytes.len(),
                    Some(i) => {
                        at += i + 1;
                        self.in_string = true;
                        self.run = 0;
                        self.start = self.seen + at as u64;
                    }
                }
                continue;
            }
            if self.escaped {
                self.escaped = false;
                self.run += 1;
                at += 1;
            } else {
                let rest = &bytes[at..];
                match memchr::memchr2(b'"', b'\\', rest) {
                    None => {
                        self.run += rest.len() as u64;
                        at = bytes.len();
                    }
                    Some(i) => {
                        self.run += i as u64;
                        if rest[i] == b'"' {
                            self.in_string = false;
                        } else {
                            self.escaped = true;
                            self.run += 1;
                        }
                        at += i + 1;
                    }
                }
            }
            if self.run > max {
                return Err(self.start);
            }
        }
        self.seen += bytes.len() as u64;
        Ok(())
    }
}

/// How [`too_long_string`]'s message starts ([`is_too_long_string`] looks for it).
const TOO_LONG_STRING: &str = "the string starting at byte ";

/// The error of a string past `max` bytes, starting at byte `start` of the text: `too-large`.
pub fn too_long_string(max: u64, start: u64) -> super::CaseError {
    super::CaseError::new(
        "$",
        "too-large",
        format!(
            "{TOO_LONG_STRING}{start} of the text is longer than {max} bytes: no \
             string of a case (an id, name, label or note) is this long; the rest is not read"
        ),
    )
}

/// Whether `e` is the refusal of a string past its bound (not of a text past its size), so
/// that a reader trying a file as a case does not take it for a trace too large to be one.
pub fn is_too_long_string(e: &super::CaseError) -> bool {
    e.code == "too-large" && e.message.starts_with(TOO_LONG_STRING)
}

/// Checks a text held whole as [`StringCapped`] checks a stream.
///
/// # Errors
/// `too-large` ([`too_long_string`]) for a string past `max` bytes.
pub fn longest_string_check(text: &str, max: u64) -> Result<(), super::CaseError> {
    StringScan::default()
        .feed(text.as_bytes(), max)
        .map_err(|offset| too_long_string(max, offset))
}

/// A reader that fails once a string of the JSON text passes `max` bytes, recording where
/// in `over` (so the caller can tell this failure from any other).
pub struct StringCapped<R> {
    inner: R,
    max: u64,
    scan: StringScan,
    over: Rc<Cell<Option<u64>>>,
}

impl<R> StringCapped<R> {
    /// Checks the text `inner` gives; `over` is set to the offset of a string past `max`.
    pub fn new(inner: R, max: u64, over: &Rc<Cell<Option<u64>>>) -> Self {
        StringCapped {
            inner,
            max,
            scan: StringScan::default(),
            over: Rc::clone(over),
        }
    }
}

impl<R: Read> Read for StringCapped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Err(offset) = self.scan.feed(&buf[..n], self.max) {
            self.over.set(Some(offset));
            return Err(io::Error::other(
                "a string of the case passes its size bound",
            ));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_in_pieces(text: &[u8], piece: usize, max: u64) -> Result<(), u64> {
        let mut scan = StringScan::default();
        for chunk in text.chunks(piece) {
            scan.feed(chunk, max)?;
        }
        Ok(())
    }

    #[test]
    fn strings_are_measured_between_their_quotes_across_pieces() {
        // The string `abcd` is 4 bytes; escapes count as the bytes written.
        let text = br#"{"ab": "abcd", "e\"f": "x\\y"}"#;
        for piece in 1..=text.len() {
            assert_eq!(scan_in_pieces(text, piece, 4), Ok(()), "piece {piece}");
            // `abcd` (its text starts at byte 8) passes 3 bytes.
            assert_eq!(scan_in_pieces(text, piece, 3), Err(8), "piece {piece}");
        }
        // An escaped quote does not end a string: `e\"f` is 4 bytes.
        let text = br#"{"e\"f": 1}"#;
        assert_eq!(scan_in_pieces(text, 1, 4), Ok(()));
        assert_eq!(scan_in_pieces(text, 1, 3), Err(2));
        // Quotes outside strings open them; text between strings is not counted.
        assert_eq!(scan_in_pieces(b"[1,      2, \"\"]", 3, 0), Ok(()));
    }

    #[test]
    fn a_reader_fails_at_the_first_long_string_and_says_where() {
        let over = Rc::new(Cell::new(None));
        let mut text = br#"{"name": ""#.to_vec();
        text.resize(1 << 20, b'a');
        let mut capped = StringCapped::new(text.as_slice(), 1000, &over);
        let err = std::io::copy(&mut capped, &mut std::io::sink()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Other);
        assert_eq!(over.get(), Some(10));
        let e = longest_string_check(std::str::from_utf8(&text).unwrap(), 1000).unwrap_err();
        assert_eq!(e.code, "too-large");
        assert!(
            e.message.starts_with(
                "the string starting at byte 10 of the text is longer than 1000 bytes"
            ),
            "{}",
            e.message
        );
        assert!(longest_string_check(r#"{"a": "bcd"}"#, 3).is_ok());
    }
}

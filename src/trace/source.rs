//! The text of a trace, streamed: the file's bytes, gunzipped when they start with the gzip
//! magic, checked to be UTF-8 and capped at a size, handed to the parser block by block, so
//! that memory holds a few blocks of the text and never the whole of it.
//!
//! `in_thread` moves the reading, gunzipping and checking to a second thread, which hands
//! the text over in blocks through a bounded channel: on two cores, decompression and
//! parsing run at once, and memory holds at most `BLOCKS_IN_FLIGHT` blocks.
//!
//! Trouble found on the way (a damaged gzip stream, bytes that are not UTF-8, text past the
//! cap) travels to the parser as an [`io::Error`] carrying an [`ImportError`];
//! `trouble_of` gets it back out of the parser's error.

use std::fmt;
use std::io::{self, BufReader, Read};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, OnceLock};
use std::thread::Scope;

use crate::error::InputError as ImportError;

/// An [`ImportError`] found while streaming, carried inside an [`io::Error`].
#[derive(Debug)]
struct Trouble(ImportError);

impl fmt::Display for Trouble {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Trouble {}

/// `err` as an [`io::Error`] that [`trouble_of_io`] turns back into `err`.
fn trouble(err: ImportError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, Trouble(err))
}

/// The [`ImportError`] an I/O error carries, or `io` (`cannot read the file`) for any other.
pub(crate) fn trouble_of_io(e: io::Error) -> ImportError {
    if e.get_ref().is_some_and(|inner| inner.is::<Trouble>()) {
        if let Some(inner) = e.into_inner() {
            if let Ok(t) = inner.downcast::<Trouble>() {
                return t.0;
            }
        }
        unreachable!("checked just above");
    }
    ImportError::new("$", "io", format!("cannot read the file: {e}"))
}

/// The [`ImportError`] behind a parser error that came from reading, if it did.
pub(crate) fn trouble_of(e: serde_json::Error) -> Result<ImportError, serde_json::Error> {
    if e.is_io() {
        Ok(trouble_of_io(io::Error::from(e)))
    } else {
        Err(e)
    }
}

/// A refusal that ends a read for good, set by whichever stage meets it first (the size
/// cap here, the event budget in the splitter): the fast path gives up on it, and the
/// caller returns it instead of reading the file again (reliability review D4, D6: a gzip
/// bomb was streamed twice, and the audit then held its whole text).
pub(crate) type Refusal = Arc<OnceLock<ImportError>>;

/// Text read from `inner`, checked block by block: valid UTF-8 (a sequence cut between two
/// blocks is completed from the next) and at most `max` bytes.
pub(crate) struct CheckedText<R> {
    inner: R,
    gzip: bool,
    max: u64,
    seen: u64,
    /// The start of a UTF-8 sequence cut at the end of the last block.
    carry: [u8; 4],
    carry_len: usize,
    /// Set when the text passes `max`.
    refusal: Refusal,
}

impl<R: Read> CheckedText<R> {
    /// Checks the text `inner` gives; `gzip` says whether it is decompressed (for messages).
    pub(crate) fn new(inner: R, gzip: bool, max: u64) -> Self {
        CheckedText {
            inner,
            gzip,
            max,
            seen: 0,
            carry: [0; 4],
            carry_len: 0,
            refusal: Refusal::default(),
        }
    }

    /// The refusal this text sets when it passes its cap, shared with whoever reads it.
    pub(crate) fn refusal(&self) -> Refusal {
        Arc::clone(&self.refusal)
    }

    /// The error for text that is not UTF-8: `e` is the error of the bytes from `at` on
    /// (worded as `String::from_utf8`'s, with the offset in the whole text).
    fn not_utf8(at: u64, e: std::str::Utf8Error) -> ImportError {
        let at = at + e.valid_up_to() as u64;
        let what = match e.error_len() {
            Some(n) => format!("invalid utf-8 sequence of {n} bytes from index {at}"),
            None => format!("incomplete utf-8 byte sequence from index {at}"),
        };
        ImportError::new(
            "$",
            "bad-syntax",
            format!("the file is neither gzip nor UTF-8 JSON text ({what})"),
        )
    }

    /// Checks that `bytes`, which follow `self.seen` bytes of text, continue valid UTF-8.
    fn check_utf8(&mut self, bytes: &[u8]) -> Result<(), ImportError> {
        let mut start = 0;
        if self.carry_len > 0 {
            let carry_at = self.seen - self.carry_len as u64;
            let mut tmp = [0u8; 4];
            tmp[..self.carry_len].copy_from_slice(&self.carry[..self.carry_len]);
            let mut k = self.carry_len;
            loop {
                match std::str::from_utf8(&tmp[..k]) {
                    Ok(_) => break,
                    Err(e) if e.error_len().is_some() || k == 4 => {
                        return Err(Self::not_utf8(carry_at, e));
                    }
                    Err(_) if start == bytes.len() => {
                        self.carry[..k].copy_from_slice(&tmp[..k]);
                        self.carry_len = k;
                        return Ok(());
                    }
                    Err(_) => {
                        tmp[k] = bytes[start];
                        k += 1;
                        start += 1;
                    }
                }
            }
            self.carry_len = 0;
        }
        let rest = &bytes[start..];
        if let Err(e) = std::str::from_utf8(rest) {
            let good = e.valid_up_to();
            if e.error_len().is_some() || rest.len() - good > 3 {
                return Err(Self::not_utf8(self.seen + start as u64, e));
            }
            self.carry_len = rest.len() - good;
            self.carry[..self.carry_len].copy_from_slice(&rest[good..]);
        }
        Ok(())
    }
}

impl<R: Read> Read for CheckedText<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match self.inner.read(buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
            Err(e) if self.gzip => {
                return Err(trouble(ImportError::new(
                    "$",
                    "bad-syntax",
                    format!("the gzip stream is damaged or truncated ({e})"),
                )))
            }
            Err(e) => return Err(e),
        };
        if n == 0 {
            if self.carry_len > 0 {
                let at = self.seen - self.carry_len as u64;
                let cut = std::str::from_utf8(&self.carry[..self.carry_len])
                    .expect_err("a carried sequence is incomplete");
                return Err(trouble(Self::not_utf8(at, cut)));
            }
            return Ok(0);
        }
        self.seen += n as u64;
        if self.seen > self.max {
            let what = if self.gzip {
                "decompressed text"
            } else {
                "file"
            };
            let err = ImportError::new(
                "$",
                "too-large",
                format!("the {what} is larger than {} bytes", self.max),
            );
            let _ = self.refusal.set(err.clone());
            return Err(trouble(err));
        }
        // `seen` already counts this block; `check_utf8` wants the offset before it.
        self.seen -= n as u64;
        let checked = self.check_utf8(&buf[..n]);
        self.seen += n as u64;
        checked.map_err(trouble)?;
        Ok(n)
    }
}

/// The text of a trace file whose first bytes `head` have been read already and whose rest
/// `rest` gives: gunzipped when `head` has the gzip magic, checked, capped at `max` bytes.
pub(crate) fn open<R: Read + Send + 'static>(
    head: Vec<u8>,
    rest: R,
    max: u64,
) -> CheckedText<Box<dyn Read + Send>> {
    let gzip = crate::case::is_gzip(&head);
    // The bytes read move the progress bar of `import`, `report`, `audit`, `export`.
    let rest = crate::progress::Counted::new(rest, head.len() as u64);
    let bytes = io::Cursor::new(head).chain(rest);
    if gzip {
        let decoder = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, bytes));
        CheckedText::new(Box::new(decoder), true, max)
    } else {
        CheckedText::new(Box::new(bytes), false, max)
    }
}

/// Bytes in one block handed from the reading thread to the parser.
pub(crate) const BLOCK_BYTES: usize = 1 << 18;

/// Blocks the reading thread may have ready before it waits for the parser.
pub(crate) const BLOCKS_IN_FLIGHT: usize = 4;

/// Reads `text` on a thread of `scope`, block by block; the parser reads the blocks from
/// the returned reader. When the reader is dropped (the parser stopped), the thread stops
/// at its next block.
pub(crate) fn in_thread<'scope, R: Read + Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    mut text: R,
) -> Blocks {
    let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(BLOCKS_IN_FLIGHT);
    scope.spawn(move || loop {
        let mut block = vec![0u8; BLOCK_BYTES];
        let mut filled = 0;
        let end = loop {
            match text.read(&mut block[filled..]) {
                Ok(0) => break Ok(true),
                Ok(n) => {
                    filled += n;
                    if filled == block.len() {
                        break Ok(false);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        block.truncate(filled);
        if !block.is_empty() && tx.send(Ok(block)).is_err() {
            return; // the parser stopped
        }
        match end {
            Ok(false) => {}
            Ok(true) => return,
            Err(e) => {
                // Nothing more to do whether or not the parser is still there.
                let _ = tx.send(Err(e));
                return;
            }
        }
    });
    Blocks {
        rx,
        block: Vec::new(),
        pos: 0,
        done: false,
    }
}

/// The parser's end of [`in_thread`]: the text, block by block.
pub(crate) struct Blocks {
    rx: Receiver<io::Result<Vec<u8>>>,
    block: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Read for Blocks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.block.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(block)) => {
                    self.block = block;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.block.len() - self.pos);
        buf[..n].copy_from_slice(&self.block[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8], chunk: usize, max: u64) -> Result<Vec<u8>, ImportError> {
        /// A reader that hands out at most `chunk` bytes at a time.
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut out = Vec::new();
        CheckedText::new(Chunks(bytes, chunk), false, max)
            .read_to_end(&mut out)
            .map_err(trouble_of_io)?;
        Ok(out)
    }

    /// UTF-8 sequences cut anywhere between two blocks are accepted; bad bytes are found at
    /// their offset, whatever the block size.
    #[test]
    fn utf8_is_checked_across_block_boundaries() {
        let text = "a é € 𝄞 z".repeat(5);
        for chunk in 1..9 {
            assert_eq!(
                read_all(text.as_bytes(), chunk, 1 << 20).unwrap(),
                text.as_bytes()
            );
        }
        let mut bad = text.clone().into_bytes();
        bad[6] = 0xff; // `€` is bytes 5..8: its second byte
        for chunk in 1..9 {
            let err = read_all(&bad, chunk, 1 << 20).unwrap_err();
            assert_eq!(err.code, "bad-syntax");
            assert!(err.message.contains("neither gzip nor UTF-8"), "{err}");
        }
        let cut = &text.as_bytes()[..6]; // `a é ` and the first byte of `€`
        let err = read_all(cut, 2, 1 << 20).unwrap_err();
        assert!(
            err.message
                .contains("incomplete utf-8 byte sequence from index 5"),
            "{err}"
        );
    }

    /// The text arrives whole and in order through the thread, and trouble found there
    /// reaches the parser; a parser that stops early stops the thread.
    #[test]
    fn blocks_from_a_thread_keep_the_text_and_its_trouble() {
        let text: Vec<u8> = (0..3 * BLOCK_BYTES + 17)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        let got = std::thread::scope(|s| {
            let mut out = Vec::new();
            in_thread(s, CheckedText::new(text.as_slice(), false, u64::MAX))
                .read_to_end(&mut out)
                .map(|_| out)
        });
        assert_eq!(got.unwrap(), text);
        let err = std::thread::scope(|s| {
            let mut out = Vec::new();
            in_thread(
                s,
                CheckedText::new(text.as_slice(), false, 2 * BLOCK_BYTES as u64),
            )
            .read_to_end(&mut out)
            .map_err(trouble_of_io)
        });
        assert_eq!(err.unwrap_err().code, "too-large");
        let first = std::thread::scope(|s| {
            let mut one = [0u8; 3];
            in_thread(s, text.as_slice())
                .read_exact(&mut one)
                .map(|()| one)
        });
        assert_eq!(&first.unwrap(), b"abc");
    }

    #[test]
    fn the_cap_counts_the_text() {
        assert_eq!(read_all(b"0123456789", 3, 10).unwrap().len(), 10);
        let err = read_all(b"0123456789", 3, 9).unwrap_err();
        assert_eq!(err.code, "too-large");
        assert!(err.message.contains("file is larger than 9 bytes"), "{err}");
        // the refusal is shared with whoever reads the text, so nobody reads it again
        let mut text = CheckedText::new(&b"0123456789"[..], false, 9);
        let refusal = text.refusal();
        assert!(refusal.get().is_none());
        let _ = text.read_to_end(&mut Vec::new());
        assert_eq!(refusal.get().map(|e| e.code), Some("too-large"));
    }
}

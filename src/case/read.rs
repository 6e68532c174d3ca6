//! Reading case files: streamed from the file, or from its gzip stream, straight into the
//! raw mirror, so that a case of any size `import -o` can write is read without ever
//! holding its text.
//!
//! What is bounded is what is kept, not the size of the file: at most
//! [`MAX_CASE_TEXT_BYTES`] of (decompressed) text is streamed, the bound the importer puts
//! on a trace, and the parse keeps only the raw case. A gzip bomb or a file that never ends
//! is refused as `too-large` once the bound is passed, having held no more than a read
//! buffer. Errors stay exact: when the streamed parse fails, the file is read again whole
//! (up to [`MAX_CASE_BYTES`], as every case was read before) and parsed by [`parse_raw`], so
//! the code, path, line and message are those of the in-memory reader. A file too large for
//! that fails as it always did, `too-large`, and the message says what a second streamed
//! parse, tracking the JSON path, found wrong (code, path, line and serde's message).

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::path::Path;
use std::rc::Rc;

use serde::Deserialize;

use super::{
    default_name, parse_raw, path_text, raw, validate, Case, CaseError, ExpectError, Loaded,
    MAX_CASE_BYTES,
};

/// The most (decompressed) case text streamed, in bytes (2 GiB: the importer's bound on a
/// trace, `import::MAX_TRACE_BYTES`, so any case `import -o` writes is read); more is
/// refused as `too-large`.
pub const MAX_CASE_TEXT_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// How much a case read may take. [`ReadLimits::DEFAULT`] is what the commands use; tests
/// pass smaller ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// The most (decompressed) text streamed; more is `too-large`.
    pub text_bytes: u64,
    /// The most text read whole to explain a failed parse exactly; a larger file that does
    /// not parse is `too-large`, its message saying what the streamed parse found.
    pub reread_bytes: u64,
}

impl ReadLimits {
    /// [`MAX_CASE_TEXT_BYTES`] streamed, [`MAX_CASE_BYTES`] re-read.
    pub const DEFAULT: ReadLimits = ReadLimits {
        text_bytes: MAX_CASE_TEXT_BYTES,
        reread_bytes: MAX_CASE_BYTES,
    };
}

/// Buffer size of the file and gzip readers.
const BUFFER: usize = 1 << 16;

/// A reader that passes at most `left` bytes and then fails, setting `over`, if any byte
/// remains (a stream that ends exactly at the bound is read whole).
struct Capped<R> {
    inner: R,
    left: u64,
    over: Rc<Cell<bool>>,
}

impl<R> Capped<R> {
    fn new(inner: R, limit: u64, over: &Rc<Cell<bool>>) -> Self {
        Capped {
            inner,
            left: limit,
            over: Rc::clone(over),
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.over.set(true);
            return Err(io::Error::other("the case text passes the size bound"));
        }
        let want = usize::try_from(self.left).map_or(buf.len(), |left| left.min(buf.len()));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// An opened case file: the plain text or the decompressed gzip stream, capped.
enum Stream {
    Plain(BufReader<Capped<File>>),
    Gzip(BufReader<Capped<flate2::bufread::MultiGzDecoder<BufReader<File>>>>),
}

/// Opens `path` for a streamed parse: `io`, `not-a-file`, or `too-large` when a plain file
/// is longer than the bound (refused without reading). The error names no file.
fn open_stream(path: &Path, limit: u64, over: &Rc<Cell<bool>>) -> Result<Stream, CaseError> {
    let io_error = |e: io::Error| CaseError::new("$", "io", format!("cannot read the file: {e}"));
    let mut file = crate::input::open_file(path)?;
    let mut head = [0u8; 2];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(e)),
        }
    }
    file.rewind().map_err(io_error)?;
    if super::is_gzip(&head[..got]) {
        let decoder =
            flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(BUFFER, file));
        return Ok(Stream::Gzip(BufReader::with_capacity(
            BUFFER,
            Capped::new(decoder, limit, over),
        )));
    }
    let len = file.metadata().map_err(io_error)?.len();
    if len > limit {
        return Err(CaseError::new(
            "$",
            "too-large",
            format!("the file is larger than {limit} bytes; a case file is expected"),
        ));
    }
    Ok(Stream::Plain(BufReader::with_capacity(BUFFER, Capped::new(file, limit, over))))
}

/// Why a streamed parse failed.
enum StreamFailure {
    /// The file could not be opened (the error names no file).
    Open(CaseError),
    /// The parse failed: serde's error and, when tracked, the JSON path.
    Parse {
        error: serde_json::Error,
        path: Option<String>,
        /// Whether the text ended cleanly but something followed the object.
        trailing: bool,
        /// Whether the stream was gzip.
        gzip: bool,
    },
}

/// One streamed parse of `path` into the raw mirror; with `track`, the error's JSON path is
/// kept (slower: every key is recorded on the way).
fn stream_parse(
    path: &Path,
    limit: u64,
    over: &Rc<Cell<bool>>,
    track: bool,
) -> Result<raw::RawCase, StreamFailure> {
    match open_stream(path, limit, over).map_err(StreamFailure::Open)? {
        Stream::Plain(r) => parse_reader(r, track, false),
        Stream::Gzip(r) => parse_reader(r, track, true),
    }
}

fn parse_reader<R: Read>(
    reader: R,
    track: bool,
    gzip: bool,
) -> Result<raw::RawCase, StreamFailure> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = if track {
        serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = path_text(e.path().to_string());
            (e.into_inner(), Some(path))
        })
    } else {
        raw::RawCase::deserialize(&mut de).map_err(|e| (e, None))
    };
    let raw = parsed.map_err(|(error, path)| StreamFailure::Parse {
        error,
        path,
        trailing: false,
        gzip,
    })?;
    de.end().map_err(|error| StreamFailure::Parse {
        error,
        path: None,
        trailing: true,
        gzip,
    })?;
    Ok(raw)
}

/// The error of a streamed parse of a file too large to be read again whole: `too-large`,
/// as such a file was always refused, saying what the streamed parse found (its code, JSON
/// path, line and serde's message). Past `limit` (the streamed bound) it is the plain
/// `too-large` of a gzip bomb.
fn stream_error(failure: StreamFailure, over: bool, limit: u64, reread: u64) -> CaseError {
    let (error, path, trailing, gzip) = match failure {
        StreamFailure::Open(e) => return e,
        StreamFailure::Parse {
            error,
            path,
            trailing,
            gzip,
        } => (error, path, trailing, gzip),
    };
    let what = if gzip { "decompressed text" } else { "file" };
    if over {
        return CaseError::new(
            "$",
            "too-large",
            format!("the {what} is larger than {limit} bytes; a case file is expected"),
        );
    }
    let message = crate::error::without_position(&error.to_string());
    let (code, path) = match error.classify() {
        serde_json::error::Category::Io if gzip => ("bad-syntax", "$".to_owned()),
        serde_json::error::Category::Io => ("io", "$".to_owned()),
        _ if trailing => ("bad-syntax", "$".to_owned()),
        _ => (
            super::classify_serde(&error),
            path.unwrap_or_else(|| "$".to_owned()),
        ),
    };
    let line = match error.line() {
        0 => String::new(),
        n => format!(" (line {n})"),
    };
    CaseError::new(
        "$",
        "too-large",
        format!(
            "the {what} is larger than {reread} bytes, the most read whole to explain an error, \
             and does not parse as a case: {path}: error[{code}]: {message}{line}"
        ),
    )
}

/// Reads and parses a case file into its raw mirror, streamed within `limits`; errors name
/// the file.
///
/// # Errors
/// `io`, `not-a-file`, `too-large`, and every parse error of [`parse_raw`] (including
/// `wrong-kind` for a form, report or trace), exactly as [`parse_raw`] gives it for a file
/// of at most `limits.reread_bytes`; a larger file that does not parse is `too-large`, the
/// message naming the streamed parse's code, path and line.
pub fn read_raw(path: &Path, limits: ReadLimits) -> Result<raw::RawCase, CaseError> {
    let file = path.display().to_string();
    let over = Rc::new(Cell::new(false));
    let failure = match stream_parse(path, limits.text_bytes, &over, false) {
        Ok(raw) => return Ok(raw),
        Err(StreamFailure::Open(e)) => return Err(e.in_file(&file)),
        Err(failure) => failure,
    };
    // The exact error: parse the whole text again, as the in-memory reader does.
    match super::read_case_text_capped(path, limits.reread_bytes) {
        Ok(text) => {
            return parse_raw(&text)
                .map_err(|e| crate::kind::not_a_case(&text).unwrap_or(e).in_file(&file));
        }
        Err(e) if e.code != "too-large" => return Err(e),
        Err(_) => {}
    }
    if over.get() {
        let e = stream_error(failure, true, limits.text_bytes, limits.reread_bytes);
        return Err(e.in_file(&file));
    }
    // Too large to hold: stream once more, tracking the path this time.
    let again = Rc::new(Cell::new(false));
    match stream_parse(path, limits.text_bytes, &again, true) {
        Ok(raw) => Ok(raw),
        Err(failure) => {
            let e = stream_error(failure, again.get(), limits.text_bytes, limits.reread_bytes);
            Err(e.in_file(&file))
        }
    }
}

/// Reads, parses and validates a case file, streamed within `limits`.
///
/// # Errors
/// As [`read_raw`], then validation errors, naming the file.
pub fn load_case_file_with(path: &Path, limits: ReadLimits) -> Result<Case, CaseError> {
    let file = path.display().to_string();
    let raw = read_raw(path, limits)?;
    validate(raw, &default_name(&file)).map_err(|e| e.in_file(&file))
}

/// Reads a case file for `check`, streamed within `limits`, honouring a declared
/// `expect_error`.
///
/// # Errors
/// As [`read_raw`] when the file cannot be read or parsed (a file that does not parse
/// cannot declare an expectation), and validation errors when it declares none.
pub fn load_for_check_with(path: &Path, limits: ReadLimits) -> Result<Loaded, CaseError> {
    let file = path.display().to_string();
    let mut raw = read_raw(path, limits)?;
    match raw.expect_error.take() {
        None => validate(raw, &default_name(&file))
            .map(|c| Loaded::Case(Box::new(c)))
            .map_err(|e| e.in_file(&file)),
        Some(expected) => {
            let name = raw.name.clone().unwrap_or_else(|| default_name(&file));
            let actual = validate(raw, &name).err().map(|e| e.in_file(&file));
            Ok(Loaded::ExpectsError {
                name,
                expected: ExpectError {
                    code: expected.code,
                    path: expected.path,
                },
                actual,
            })
        }
    }
}

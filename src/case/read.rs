//! Reading case files: streamed from the file, or from its gzip stream, straight into the
//! raw mirror, so that a case of any size `import -o` can write is read without ever
//! holding its text.
//!
//! What is bounded is what is kept, not the size of the file: at most
//! [`MAX_CASE_TEXT_BYTES`] of (decompressed) text is streamed, the bound the importer puts
//! on a trace, and the parse keeps only the raw case. A gzip bomb or a file that never ends
//! is refused as `too-large` once the bound is passed, having held no more than a read
//! buffer; one string longer than [`MAX_CASE_STRING_BYTES`] (which the parser would gather
//! whole) is refused as it passes that bound, having held at most twice the bound
//! (`string_cap.rs`), and the file is not read again. Errors stay exact: when the streamed parse fails, the file is read again whole
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

use super::string_cap::{too_long_string, StringCapped, MAX_CASE_STRING_BYTES};
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

/// An opened case file: the plain text or the decompressed gzip stream, capped in size and
/// in the length of any one string.
enum Stream {
    Plain(BufReader<StringCapped<Capped<File>>>),
    Gzip(Box<BufReader<StringCapped<Capped<GzipText>>>>),
}

/// The decompressed text of a gzip case file.
type GzipText = flate2::bufread::MultiGzDecoder<BufReader<File>>;

/// The flags a streamed parse sets when it stops at a bound: the text's (`text`), or a
/// string's (`string`, where the string starts).
#[derive(Default)]
struct Over {
    text: Rc<Cell<bool>>,
    string: Rc<Cell<Option<u64>>>,
}

/// Opens `path` for a streamed parse: `io`, `not-a-file`, or `too-large` when a plain file
/// is longer than the bound (refused without reading). The error names no file.
fn open_stream(path: &Path, limit: u64, over: &Over) -> Result<Stream, CaseError> {
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
        let decoder = flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(BUFFER, file));
        return Ok(Stream::Gzip(Box::new(BufReader::with_capacity(
            BUFFER,
            StringCapped::new(
                Capped::new(decoder, limit, &over.text),
                MAX_CASE_STRING_BYTES,
                &over.string,
            ),
        ))));
    }
    let len = file.metadata().map_err(io_error)?.len();
    if len > limit {
        return Err(CaseError::new(
            "$",
            "too-large",
            format!("the file is larger than {limit} bytes; a case file is expected"),
        ));
    }
    Ok(Stream::Plain(BufReader::with_capacity(
        BUFFER,
        StringCapped::new(
            Capped::new(file, limit, &over.text),
            MAX_CASE_STRING_BYTES,
            &over.string,
        ),
    )))
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
    over: &Over,
    track: bool,
) -> Result<raw::RawCase, StreamFailure> {
    match open_stream(path, limit, over).map_err(StreamFailure::Open)? {
        Stream::Plain(r) => parse_reader(r, track, false),
        Stream::Gzip(r) => parse_reader(*r, track, true),
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
    let over = Over::default();
    let failure = match stream_parse(path, limits.text_bytes, &over, false) {
        Ok(mut raw) => {
            shrink(&mut raw);
            return Ok(raw);
        }
        Err(StreamFailure::Open(e)) => return Err(e.in_file(&file)),
        Err(failure) => failure,
    };
    // A string past its bound: refused as the in-memory reader refuses it, without reading
    // the file again (one endless string in a gzip bomb cost 2.1 GB: reliability review).
    if let Some(start) = over.string.get() {
        return Err(too_long_string(MAX_CASE_STRING_BYTES, start).in_file(&file));
    }
    // The exact error: parse the whole text again, as the in-memory reader does.
    match super::read_case_text_capped(path, limits.reread_bytes) {
        Ok(text) => {
            return parse_raw(&text)
                .map_err(|e| crate::kind::not_a_case(&text).unwrap_or(e).in_file(&file));
        }
        Err(e) if e.code != "too-large" => return Err(e),
        Err(_) => {}
    }
    if over.text.get() {
        let e = stream_error(failure, true, limits.text_bytes, limits.reread_bytes);
        return Err(e.in_file(&file));
    }
    // Too large to hold: stream once more, tracking the path this time.
    let again = Over::default();
    match stream_parse(path, limits.text_bytes, &again, true) {
        Ok(raw) => Ok(raw),
        Err(failure) => {
            let e = stream_error(
                failure,
                again.text.get(),
                limits.text_bytes,
                limits.reread_bytes,
            );
            Err(e.in_file(&file))
        }
    }
}

/// Gives back the spare capacity the parse left in the long lists (a list grown by doubling
/// holds up to twice its length), before validation builds the case beside them.
fn shrink(raw: &mut raw::RawCase) {
    raw.phases.shrink_to_fit();
    raw.program.shrink_to_fit();
    for q in &mut raw.questions {
        match q {
            raw::RawQuestion::Intervals {
                phases: Some(list), ..
            }
            | raw::RawQuestion::HostCompletion {
                work: Some(list), ..
            } => list.shrink_to_fit(),
            _ => {}
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

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::case::{load_case_str, read_case_text};

    /// A case of `n` phases on one stream (a 1 us gap after each, every seventh overlapping
    /// the next) and one interval question over all of them.
    fn big_case(n: usize) -> String {
        let phases: Vec<serde_json::Value> = (0..n)
            .map(|i| {
                let start = i * 3;
                let end = if i % 7 == 0 { start + 4 } else { start + 2 };
                serde_json::json!({
                    "id": format!("kernel-{i}"),
                    "label": format!("void some_templated_kernel<float, {i}>(float const*, float*, int)"),
                    "stream": "s0",
                    "start": format!("{start} us"),
                    "end": format!("{end} us"),
                })
            })
            .collect();
        let case = serde_json::json!({
            "format": "worksheet-case",
            "version": 1,
            "name": "big",
            "clocks": [{"id": "gpu", "domain": "device", "instance": "gpu0-ctx1"}],
            "streams": [{"id": "s0", "clock": "gpu", "device": "gpu0"}],
            "phases": phases,
            "questions": [{"id": "all", "kind": "intervals", "expect": {"count": n}}],
        });
        serde_json::to_string_pretty(&case).unwrap()
    }

    fn gzip(bytes: &[u8], level: u32) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    /// The error the in-memory reader gives for `path` (text read whole, then parsed).
    fn in_memory(path: &Path) -> Result<raw::RawCase, CaseError> {
        let file = path.display().to_string();
        let text = read_case_text(path)?;
        parse_raw(&text).map_err(|e| crate::kind::not_a_case(&text).unwrap_or(e).in_file(&file))
    }

    #[test]
    fn a_large_case_streams_to_what_the_text_parses_to() {
        let text = big_case(25_000);
        assert!(text.len() > 3 << 20, "{} bytes", text.len());
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("big.json");
        let gz = dir.path().join("big.json.gz");
        std::fs::write(&plain, &text).unwrap();
        std::fs::write(&gz, gzip(text.as_bytes(), 1)).unwrap();
        let want = parse_raw(&text).unwrap().to_json_pretty();
        let report = |case: &Case| serde_json::to_value(crate::engine::evaluate(case)).unwrap();
        let want_report = report(&load_case_str(&text, "big.json").unwrap());
        assert_eq!(
            want_report["answers"][0]["per_clock"][0]["results"]["count"],
            25_000
        );
        assert_eq!(want_report["answers"][0]["results"]["max_depth"], 2);
        // Re-reading is allowed 1 MiB only: a good case never needs it.
        let limits = ReadLimits {
            text_bytes: MAX_CASE_TEXT_BYTES,
            reread_bytes: 1 << 20,
        };
        for path in [&plain, &gz] {
            assert_eq!(read_raw(path, limits).unwrap().to_json_pretty(), want);
            let case = load_case_file_with(path, limits).unwrap();
            assert_eq!(case.phases.len(), 25_000);
            assert_eq!(report(&case), want_report, "{}", path.display());
        }
    }

    /// Any case the importer writes is read: the bound is the importer's bound on a trace.
    #[test]
    fn the_bound_is_the_importers() {
        assert_eq!(MAX_CASE_TEXT_BYTES, crate::import::MAX_TRACE_BYTES);
        assert_eq!(ReadLimits::DEFAULT.reread_bytes, MAX_CASE_BYTES);
    }

    #[test]
    fn the_streamed_bound_is_exact() {
        let text = big_case(3);
        let len = text.len() as u64;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("c.json");
        let gz = dir.path().join("c.json.gz");
        std::fs::write(&plain, &text).unwrap();
        std::fs::write(&gz, gzip(text.as_bytes(), 1)).unwrap();
        let at = |text_bytes| ReadLimits {
            text_bytes,
            reread_bytes: 16,
        };
        for path in [&plain, &gz] {
            assert!(read_raw(path, at(len)).is_ok(), "{}", path.display());
            let e = read_raw(path, at(len - 1)).unwrap_err();
            assert_eq!(e.code, "too-large");
            let what = if path == &gz {
                "decompressed text"
            } else {
                "file"
            };
            assert_eq!(
                e.message,
                format!(
                    "the {what} is larger than {} bytes; a case file is expected",
                    len - 1
                )
            );
            assert_eq!(e.file, path.display().to_string());
        }
    }

    /// A small file that expands past the bound is refused once the bound is read, whether
    /// it expands to blanks or to one endless string (which the parser would keep).
    #[test]
    fn a_gzip_bomb_is_too_large_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let limits = ReadLimits {
            text_bytes: 1 << 20,
            reread_bytes: 1 << 16,
        };
        let mut string_bomb = br#"{"format": "worksheet-case", "version": 1, "name": ""#.to_vec();
        string_bomb.resize(16 << 20, b'a');
        for (name, bytes) in [("blank", vec![b' '; 16 << 20]), ("string", string_bomb)] {
            let path = dir.path().join(format!("{name}.json.gz"));
            let gz = gzip(&bytes, 9);
            assert!(gz.len() < 64 << 10, "{name}: {} bytes", gz.len());
            std::fs::write(&path, gz).unwrap();
            let e = read_raw(&path, limits).unwrap_err();
            assert_eq!(e.code, "too-large", "{name}: {e}");
            assert_eq!(
                e.message,
                "the decompressed text is larger than 1048576 bytes; a case file is expected"
            );
        }
    }

    /// Reliability review, section 1: a case whose `name` string never ends (4 GiB of text in
    /// a gzip bomb) held 2.1 GB before the 2 GiB text bound refused it. One string is now
    /// refused as it passes 16 MiB, with the default limits, plain or gzipped, streamed or
    /// held whole; a string at the bound is read.
    #[test]
    fn a_string_past_its_bound_is_refused_as_it_passes_it() {
        let dir = tempfile::tempdir().unwrap();
        let head = br#"{"format": "worksheet-case", "version": 1, "name": ""#;
        let max = MAX_CASE_STRING_BYTES as usize;
        let mut bomb = head.to_vec();
        bomb.resize(head.len() + 4 * max, b'a');
        let gz = gzip(&bomb, 9);
        assert!(gz.len() < 256 << 10, "{} bytes", gz.len());
        let path = dir.path().join("name-bomb.json.gz");
        std::fs::write(&path, gz).unwrap();
        let want = format!(
            "the string starting at byte {} of the text is longer than 16777216 bytes: no string \
             of a case (an id, name, label or note) is this long; the rest is not read",
            head.len()
        );
        let e = read_raw(&path, ReadLimits::DEFAULT).unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str(), &e.message),
            ("too-large", "$", &want)
        );
        assert_eq!(e.file, path.display().to_string());
        // Plain, just past the bound and at it: the same error, and a case read whole.
        let mut text = head.to_vec();
        text.resize(head.len() + max + 1, b'a');
        text.extend_from_slice(b"\"}");
        let path = dir.path().join("long-name.json");
        std::fs::write(&path, &text).unwrap();
        let e = read_raw(&path, ReadLimits::DEFAULT).unwrap_err();
        assert_eq!((e.code, &e.message), ("too-large", &want));
        let e = parse_raw(std::str::from_utf8(&text).unwrap()).unwrap_err();
        assert_eq!((e.code, &e.message), ("too-large", &want));
        text.remove(head.len());
        std::fs::write(&path, &text).unwrap();
        assert_eq!(
            read_raw(&path, ReadLimits::DEFAULT)
                .unwrap()
                .name
                .unwrap()
                .len(),
            max
        );
    }

    #[test]
    fn a_plain_file_past_the_bound_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zeros.json");
        std::fs::File::create(&path)
            .unwrap()
            .set_len(2 << 20)
            .unwrap();
        let limits = ReadLimits {
            text_bytes: 1 << 20,
            reread_bytes: 1 << 16,
        };
        let e = read_raw(&path, limits).unwrap_err();
        assert_eq!(e.code, "too-large");
        assert_eq!(
            e.message,
            "the file is larger than 1048576 bytes; a case file is expected"
        );
    }

    /// Every malformed case fails streamed exactly as the in-memory reader fails.
    #[test]
    fn streamed_errors_are_the_in_memory_errors() {
        let mut paths: Vec<_> = std::fs::read_dir("tests/data/malformed")
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.push("tests/data/gzip/truncated.json.gz".into());
        paths.push("fixtures/README.md".into());
        paths.sort();
        let mut parse_errors = 0;
        for path in &paths {
            let streamed = read_raw(path, ReadLimits::DEFAULT);
            match in_memory(path) {
                Ok(raw) => assert_eq!(
                    streamed.unwrap().to_json_pretty(),
                    raw.to_json_pretty(),
                    "{}",
                    path.display()
                ),
                Err(want) => {
                    parse_errors += 1;
                    assert_eq!(streamed.unwrap_err(), want, "{}", path.display());
                }
            }
        }
        assert!(parse_errors >= 15, "{parse_errors} parse errors");
    }

    /// Past the re-read bound, a parse error is `too-large`, naming what the streamed parse
    /// found: the in-memory code and path.
    #[test]
    fn a_file_too_large_to_reread_names_the_streamed_error() {
        let dir = tempfile::tempdir().unwrap();
        let limits = ReadLimits {
            text_bytes: MAX_CASE_TEXT_BYTES,
            reread_bytes: 64,
        };
        let mut text = big_case(2);
        text = text.replacen("\"end\": \"4 us\"", "\"end\": \"4 us\", \"ned\": 3", 1);
        let path = dir.path().join("typo.json");
        std::fs::write(&path, &text).unwrap();
        let want = in_memory(&path).unwrap_err();
        assert_eq!(
            (want.code, want.path.as_str()),
            ("unknown-field", "phases[0].ned")
        );
        let e = read_raw(&path, limits).unwrap_err();
        assert_eq!(e.code, "too-large");
        assert_eq!(e.path, "$");
        let line = want.line.unwrap();
        assert_eq!(
            e.message,
            format!(
                "the file is larger than 64 bytes, the most read whole to explain an error, and \
                 does not parse as a case: phases[0].ned: error[unknown-field]: {} (line {line})",
                want.message
            )
        );
    }
}

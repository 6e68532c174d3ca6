//! The front door of the trace floor: a trace file opened, recognised and refused past the
//! caps before it is parsed; the audit's recorded model read from it; and the words an error
//! gets on the error path alone (a byte-order mark, a file of another kind, damaged gzip).

use std::io::Read;
use std::path::Path;

use super::{detect, kineto, nsys, source, ReadOptions, TraceFormat, MAX_TRACE_BYTES};
use crate::error::InputError;

/// Opens the regular file at `path` and reads its first 16 bytes (for [`detect`]); the
/// file is then positioned after them.
///
/// # Errors
/// `io` or `not-a-file`, naming the file.
pub fn open_with_head(path: &Path) -> Result<(std::fs::File, Vec<u8>), InputError> {
    let file = path.display().to_string();
    let mut handle = crate::input::open_file(path).map_err(|e| e.in_file(&file))?;
    let mut head = Vec::with_capacity(16);
    (&mut handle).take(16).read_to_end(&mut head).map_err(|e| {
        InputError::new("$", "io", format!("cannot read the file: {e}")).in_file(&file)
    })?;
    Ok((handle, head))
}

/// A plain (not gzipped) trace file larger than [`MAX_TRACE_BYTES`] is `too-large` from its
/// size, before a byte of it is parsed (review D4, unclear message 7: 2 GiB were read first).
///
/// # Errors
/// `too-large`, or `io` when the size cannot be read.
pub(crate) fn refuse_past_cap(handle: &std::fs::File, head: &[u8]) -> Result<(), InputError> {
    if crate::case::is_gzip(head) {
        return Ok(());
    }
    let len = handle
        .metadata()
        .map_err(|e| InputError::new("$", "io", format!("cannot read the file: {e}")))?
        .len();
    if len > MAX_TRACE_BYTES {
        return Err(InputError::new(
            "$",
            "too-large",
            format!(
                "the file holds {len} bytes, more than the {MAX_TRACE_BYTES} bytes one trace or case file may hold; refused from its size, unread"
            ),
        ));
    }
    Ok(())
}

/// Reads the file at `path` into the audit's format-neutral model ([`crate::trace::model`]):
/// a Kineto trace, an Nsight Systems SQLite export, or a case file (`"format":
/// "worksheet-case"`, plain or gzipped).
///
/// # Errors
/// [`InputError`]: the same codes as `import::import_path`, and a case file's own error codes.
pub fn read_audit_trace(
    path: &Path,
    options: &ReadOptions,
) -> Result<crate::trace::model::Trace, InputError> {
    read_audit_trace_tapped(path, options, &mut kineto::tap::NoTap)
}

/// [`read_audit_trace`], handing `tap` every top-level value and event of a Kineto trace the
/// fast path reads, in the same pass; any other way of reading tells the tap
/// ([`kineto::tap::EventTap::abandon`]).
///
/// # Errors
/// What [`read_audit_trace`] returns.
pub fn read_audit_trace_tapped(
    path: &Path,
    options: &ReadOptions,
    tap: &mut dyn kineto::tap::EventTap,
) -> Result<crate::trace::model::Trace, InputError> {
    let file = path.display().to_string();
    let (handle, head) = open_with_head(path)?;
    if detect(path, &head)? == TraceFormat::NsysSqlite {
        tap.abandon();
        return nsys::neutral::read_trace(path);
    }
    // A trace the importer reads gives the same model through its one streaming pass
    // (`import::kineto`'s fast_tests): no whole text in memory, no second parse.
    refuse_past_cap(&handle, &head).map_err(|e| e.in_file(&file))?;
    let text = source::open(head, handle, MAX_TRACE_BYTES);
    let refusal = text.refusal();
    let fast = kineto::audit_split(text, options, Some(refusal.clone()), tap);
    if let Some(Ok(trace)) = fast {
        return Ok(trace);
    }
    tap.abandon();
    // Past the cap or the event budget: refused, never read whole (review D4).
    if let Some(refused) = refusal.get() {
        return Err(refused.clone().in_file(&file));
    }
    // Anything else (a trace the importer refuses, a case file): a case is read by the case
    // reader (streamed), a trace by the lenient reader, streamed through the same pieces.
    if starts_like_a_case(path)? {
        let case = crate::case::load_case_file(path)?;
        return Ok(crate::trace::model::Trace::from_case(&case));
    }
    let mut base = None;
    loop {
        let (handle, head) = open_with_head(path)?;
        let text = source::open(head, handle, MAX_TRACE_BYTES);
        let read = std::thread::scope(|scope| {
            let pieces = kineto::split::in_thread(scope, text);
            kineto::lenient::read_trace_pieces(&pieces, options, base)
        });
        match read {
            kineto::lenient::PiecesRead::Done(result) => {
                return (*result).map_err(|e| gzip_context(e, path).in_file(&file));
            }
            kineto::lenient::PiecesRead::Again(b) if base.is_none() => base = Some(b),
            _ => break,
        }
    }
    audit_unfollowed(path, options)
}

/// The audit's model of a trace whose text the splitter's pieces do not follow (not JSON, a
/// repeated key, one value past 64 MiB, ...). Up to [`EXPLAIN_MAX_BYTES`] of text, the lenient
/// reader reads it whole and words any error exactly. Past that the importer's careful reader
/// streams it: a trace it reads gives the audit's model from the same pass (equal to the
/// lenient reader's), a text that is not JSON its syntax error (a 4.7 MB gzip of 1 GiB of
/// blanks held 1 GB here). Only a large text that is JSON but that the importer refuses is
/// read whole, up to the cap, for the lenient reader.
fn audit_unfollowed(
    path: &Path,
    options: &ReadOptions,
) -> Result<crate::trace::model::Trace, InputError> {
    let file = path.display().to_string();
    let whole = |max: u64| -> Result<Vec<u8>, InputError> {
        let (handle, head) = open_with_head(path)?;
        let mut bytes = Vec::new();
        source::open(head, handle, MAX_TRACE_BYTES)
            .take(max)
            .read_to_end(&mut bytes)
            .map_err(|e| source::trouble_of_io(e).in_file(&file))?;
        Ok(bytes)
    };
    let lenient = |bytes: Vec<u8>| {
        // Checked UTF-8 by the text reader, whole.
        let text = String::from_utf8(bytes).map_err(|e| {
            InputError::new("$", "bad-syntax", format!("the text is not UTF-8 ({e})"))
                .in_file(&file)
        })?;
        kineto::lenient::read_trace(&text, options)
            .map_err(|e| gzip_context(e, path).in_file(&file))
    };
    let start = whole(EXPLAIN_MAX_BYTES + 1)?;
    if start.len() as u64 <= EXPLAIN_MAX_BYTES {
        return lenient(start);
    }
    drop(start);
    let (handle, head) = open_with_head(path)?;
    let streamed = std::thread::scope(|scope| {
        let blocks = source::in_thread(scope, source::open(head, handle, MAX_TRACE_BYTES));
        let reader = std::io::BufReader::with_capacity(1 << 16, blocks);
        kineto::read::read_trace(reader, options)
            .map(|(read, top, _)| kineto::audit_taking(read, &top))
    });
    match streamed {
        Ok(trace) => trace.map_err(|e| e.in_file(&file)),
        Err(e) if matches!(e.code, "bad-syntax" | "too-large" | "io") => {
            Err(gzip_context(e, path).in_file(&file))
        }
        // JSON that the importer refuses: the lenient reader audits it, from the whole text.
        Err(_) => lenient(whole(MAX_TRACE_BYTES + 1)?),
    }
}

/// Whether the text at `path` starts like a case file (`"worksheet-case"` in its first 512
/// characters), read through the same checks as a trace.
///
/// # Errors
/// `io` or `not-a-file`, naming the file.
fn starts_like_a_case(path: &Path) -> Result<bool, InputError> {
    let (handle, head) = open_with_head(path)?;
    let mut start = Vec::with_capacity(2048);
    // Up to 512 characters of UTF-8 text; trouble reading is for the reader to word.
    let _ = source::open(head, handle, MAX_TRACE_BYTES)
        .take(2048)
        .read_to_end(&mut start);
    let start = String::from_utf8_lossy(&start);
    let start: String = start.chars().take(512).collect();
    Ok(start.contains("\"worksheet-case\""))
}

/// Bytes of a trace file → text, through the same checks as a streamed import
/// ([`text::open`]): gunzipped when they start with the gzip magic, with the size cap `max`
/// applied to the decompressed text too (a gzip bomb is `too-large`). The whole text is
/// kept: for readers that need it all at once (`--compat hta`); `import` itself streams.
pub(crate) fn decode_text(bytes: Vec<u8>, file: &str, max: u64) -> Result<String, InputError> {
    let mut text = String::new();
    source::open(bytes, std::io::empty(), max)
        .read_to_string(&mut text)
        .map_err(|e| source::trouble_of_io(e).in_file(file))?;
    Ok(text)
}

/// A streamed parse cannot look back at the text, so on the error path alone the file is read
/// again (under the same cap) to say what serde_json's message does not: a byte-order mark,
/// `NaN` / `Infinity` or a lone surrogate where the parser stopped, and a file of another
/// kind (a case, a form, a report), naming the command to use. Otherwise `err` as it is.
pub(crate) fn explain_failure(err: InputError, path: &Path) -> InputError {
    let err = gzip_context(err, path);
    if err.code != "bad-syntax" && err.code != "missing-field" && err.code != "wrong-type" {
        return err;
    }
    // Each look streams the text again, so the error path holds no more of it than the
    // import did (review D4: a 1 GiB refused trace was held whole here).
    let stream =
        |max: u64| open_with_head(path).map(|(handle, head)| source::open(head, handle, max));
    let Ok(start) = stream(MAX_TRACE_BYTES) else {
        return err;
    };
    let mut head = Vec::with_capacity(3);
    if start.take(3).read_to_end(&mut head).is_ok() && head == "\u{feff}".as_bytes() {
        if let Err(bom) = crate::error::refuse_bom("\u{feff}") {
            return bom;
        }
    }
    if let Ok(whole) = stream(MAX_TRACE_BYTES) {
        if let Some(other_kind) = crate::kind::not_a_trace_kind(crate::kind::peek_reader(whole)) {
            return other_kind;
        }
    }
    // A parse into a JSON value with paths names the field; it costs several times the
    // text, so only texts up to the case cap get it, read only that far.
    let mut text = String::new();
    let read =
        stream(EXPLAIN_MAX_BYTES).map(|t| t.take(EXPLAIN_MAX_BYTES + 1).read_to_string(&mut text));
    if !matches!(read, Ok(Ok(_))) {
        return err;
    }
    if err.code == "bad-syntax" && text.len() as u64 <= EXPLAIN_MAX_BYTES {
        let mut de = serde_json::Deserializer::from_str(&text);
        if let Err(e) = serde_path_to_error::deserialize::<_, serde_json::Value>(&mut de) {
            if let Some(clear) = crate::error::explain_syntax(&text, e.inner()) {
                let path = e.path().to_string();
                return InputError {
                    path: if path == "." { err.path } else { path },
                    message: format!(
                        "{clear} (line {} column {})",
                        e.inner().line(),
                        e.inner().column()
                    ),
                    ..err
                };
            }
        }
    }
    err
}

/// What the gzip layer says about a content error (reliability review, unclear messages 5
/// and 6): a file named `.gz` that is not gzip was read as plain text, so its JSON error
/// says so; and a gzip stream whose damage gave the JSON reader garbage (one flipped byte
/// in the middle: `duplicate field`) is checked to its end, where the CRC finds the damage,
/// which is then the error. Errors of reading, size and kind are returned as they are.
fn gzip_context(err: InputError, path: &Path) -> InputError {
    if matches!(err.code, "io" | "too-large" | "not-a-file" | "wrong-kind")
        || err.message.contains("gzip stream is damaged")
    {
        return err;
    }
    let Ok((handle, head)) = open_with_head(path) else {
        return err;
    };
    let named_gz = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"));
    if !crate::case::is_gzip(&head) {
        if named_gz {
            return InputError {
                message: format!(
                    "{} (the file is named `.gz` but does not start with gzip's magic bytes 1f 8b, so it was read as plain text)",
                    err.message
                ),
                ..err
            };
        }
        return err;
    }
    // The whole stream, decompressed into nothing (bounded memory, at most the cap).
    let decoder = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
        std::io::Cursor::new(head).chain(handle),
    ));
    match std::io::copy(&mut decoder.take(MAX_TRACE_BYTES), &mut std::io::sink()) {
        Ok(_) => err,
        Err(e) => InputError::new(
            "$",
            "bad-syntax",
            format!(
                "the gzip stream is damaged ({e}); the JSON reader met its garbage first (at {}: {}), which is a consequence of the damage",
                err.path, err.message
            ),
        ),
    }
}

/// The largest trace text [`explain_failure`] parses again to name a syntax error's field.
const EXPLAIN_MAX_BYTES: u64 = 64 << 20;

//! Validation of what SPEC §4 calls implicit waits: a stream's declared kind, and a host wait
//! that is a copy (`implicit` + `copy`). An implicit wait must target its copy's stream, and
//! the copy must be launched earlier in the program, so the schedule can place it.

use super::raw::{RawImplicit, RawStreamKind};
use super::{
    ImplicitKind, ImplicitWait, OpIdx, PhaseDef, PhaseIdx, StreamDef, StreamKind, WaitTarget,
};

/// The validated kind of a declared stream.
pub(super) fn stream_kind(kind: RawStreamKind) -> StreamKind {
    match kind {
        RawStreamKind::LegacyDefault => StreamKind::LegacyDefault,
        RawStreamKind::Blocking => StreamKind::Blocking,
        RawStreamKind::NonBlocking => StreamKind::NonBlocking,
        RawStreamKind::PerThreadDefault => StreamKind::PerThreadDefault,
    }
}

/// Checks an implicit wait (SPEC §4): it targets the copy's stream, and the copy was launched
/// earlier in the program. The error is the `bad-program` message.
pub(super) fn implicit_wait(
    id: &str,
    kind: RawImplicit,
    copy: PhaseIdx,
    target: &WaitTarget,
    phases: &[PhaseDef],
    streams: &[StreamDef],
    launched: &[Option<OpIdx>],
) -> std::result::Result<ImplicitWait, String> {
    let kind = match kind {
        RawImplicit::SyncCopyDtoh => ImplicitKind::SyncCopyDtoh,
        RawImplicit::AsyncCopyDtohPageable => ImplicitKind::AsyncCopyDtohPageable,
        RawImplicit::PageableHtod => ImplicitKind::PageableHtod,
    };
    let phase = &phases[copy];
    let WaitTarget::Stream(s) = target else {
        return Err(format!(
            "implicit wait `{id}` must target the `stream` of its copy `{}`: a copy waits for its own stream",
            phase.id
        ));
    };
    if phase.stream != Some(*s) {
        return Err(format!(
            "implicit wait `{id}` is on stream `{}`, but its copy `{}` runs in {}",
            streams[*s].id,
            phase.id,
            phase.stream.map_or("no stream".to_owned(), |t| format!(
                "stream `{}`",
                streams[t].id
            ))
        ));
    }
    let Some(copy_op) = launched[copy] else {
        return Err(format!(
            "implicit wait `{id}` names copy `{}`, which is not launched before it in the program",
            phase.id
        ));
    };
    Ok(ImplicitWait {
        kind,
        copy,
        copy_op,
    })
}

#[cfg(test)]
mod tests {
    use crate::case::load_case_str;

    /// A case with streams A and B, a copy on A, and `wait` as the last program op.
    fn with_wait(wait: &str) -> String {
        format!(
            r#"{{"format": "worksheet-case", "version": 1,
            "clocks": [{{"id": "gpu", "domain": "device", "instance": "ctx"}}],
            "streams": [{{"id": "A", "clock": "gpu", "device": "gpu0"}}, {{"id": "B", "clock": "gpu", "device": "gpu0"}}],
            "phases": [{{"id": "copy", "stream": "A", "start": "0 us", "end": "1 us"}},
                       {{"id": "late", "stream": "A", "start": "1 us", "end": "2 us"}}],
            "program": [{{"op": "launch", "phase": "copy"}}, {wait}, {{"op": "launch", "phase": "late"}}]}}"#
        )
    }

    fn error(wait: &str) -> (String, &'static str, String) {
        let e = load_case_str(&with_wait(wait), "implicit.json").unwrap_err();
        (e.path, e.code, e.message)
    }

    #[test]
    fn an_implicit_wait_needs_its_copy_and_a_copy_needs_implicit() {
        let (path, code, _) =
            error(r#"{"op": "host-wait", "id": "w", "stream": "A", "implicit": "sync-copy-dtoh"}"#);
        assert_eq!((path.as_str(), code), ("program[1].copy", "missing-field"));
        let (path, code, _) =
            error(r#"{"op": "host-wait", "id": "w", "stream": "A", "copy": "copy"}"#);
        assert_eq!(
            (path.as_str(), code),
            ("program[1].implicit", "missing-field")
        );
    }

    #[test]
    fn an_implicit_wait_is_on_its_copys_stream_after_its_launch() {
        let (path, code, message) = error(
            r#"{"op": "host-wait", "id": "w", "stream": "B", "implicit": "sync-copy-dtoh", "copy": "copy"}"#,
        );
        assert_eq!((path.as_str(), code), ("program[1]", "bad-program"));
        assert!(
            message.contains("its copy `copy` runs in stream `A`"),
            "{message}"
        );
        let (_, code, message) = error(
            r#"{"op": "host-wait", "id": "w", "device": "gpu0", "implicit": "sync-copy-dtoh", "copy": "copy"}"#,
        );
        assert_eq!(code, "bad-program");
        assert!(message.contains("must target the `stream`"), "{message}");
        let (_, code, message) = error(
            r#"{"op": "host-wait", "id": "w", "stream": "A", "implicit": "pageable-htod", "copy": "late"}"#,
        );
        assert_eq!(code, "bad-program");
        assert!(message.contains("not launched before it"), "{message}");
        let (path, code, _) = error(
            r#"{"op": "host-wait", "id": "w", "stream": "A", "implicit": "sync-copy", "copy": "copy"}"#,
        );
        // Inside the internally tagged op, serde locates the error at the op.
        assert_eq!((path.as_str(), code), ("program[1]", "unknown-variant"));
    }
}

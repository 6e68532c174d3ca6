//! What the engine says about implicit waits (SPEC §4, "Implicit waits"): why a copy counts
//! as a wait, and why an implicit wait did not cover claimed work.
//!
//! The coverage itself is [`crate::schedule`]'s; this module only words it. Every implicit
//! wait behind a known completion gets a note quoting the CUDA runtime's "API synchronization
//! behavior", so no verdict becomes known without the documented wait behind it.

use crate::case::{Case, ImplicitKind, ImplicitWait, Op, OpIdx, PhaseIdx, StreamKind};

/// Where the CUDA documentation says why a copy is a wait.
const SOURCE: &str = "CUDA runtime API, \"API synchronization behavior\"";

/// The implicit wait at program index `k`, if it is one.
fn implicit_of(case: &Case, k: OpIdx) -> Option<(&str, ImplicitWait)> {
    match &case.program[k] {
        Op::HostWait {
            id,
            implicit: Some(w),
            ..
        } => Some((id.as_str(), *w)),
        _ => None,
    }
}

/// The words after a wait's target: `` (copy `memcpy-3`, sync-copy-dtoh)`` for an implicit
/// wait, nothing for a named one.
pub(super) fn suffix(case: &Case, k: OpIdx) -> String {
    match implicit_of(case, k) {
        Some((_, w)) => format!(" (copy `{}`, {})", case.phases[w.copy].id, w.kind.word()),
        None => String::new(),
    }
}

/// One note per kind of implicit wait among `waits` (program indices): which waits, and why
/// each counts as a wait.
pub(super) fn notes(case: &Case, waits: &[OpIdx]) -> Vec<String> {
    [
        ImplicitKind::SyncCopyDtoh,
        ImplicitKind::AsyncCopyDtohPageable,
        ImplicitKind::PageableHtod,
    ]
    .iter()
    .filter_map(|&kind| {
        let ids: Vec<String> = waits
            .iter()
            .filter_map(|&k| implicit_of(case, k))
            .filter(|(_, w)| w.kind == kind)
            .map(|(id, _)| format!("`{id}`"))
            .collect();
        (!ids.is_empty()).then(|| {
            format!(
                "implicit wait(s) {} ({}): {} ({SOURCE})",
                super::listing(ids.into_iter()),
                kind.word(),
                kind.why()
            )
        })
    })
    .collect()
}

/// Why the implicit waits among `waits` did not cover the `missed` phases, when the reason is
/// one of the implicit ones: the copy itself (pageable host-to-device), or work on another
/// stream of the device that only a declared legacy default stream waiting for a declared
/// blocking stream would have covered. Empty when no implicit wait is involved.
pub(super) fn why_missed(case: &Case, waits: &[OpIdx], missed: &[PhaseIdx]) -> Vec<String> {
    let mut why = Vec::new();
    for &k in waits {
        let Some((id, w)) = implicit_of(case, k) else {
            continue;
        };
        let copy = &case.phases[w.copy];
        let Some(s) = copy.stream else { continue };
        let stream = &case.streams[s];
        if missed.contains(&w.copy) && !w.kind.covers_the_copy() {
            why.push(format!(
                "`{id}` does not cover its own copy `{}`: {}",
                copy.id,
                w.kind.why()
            ));
        }
        let mut others: Vec<usize> = missed
            .iter()
            .filter_map(|&p| case.phases[p].stream)
            .filter(|&t| t != s && case.streams[t].device == stream.device)
            .collect();
        others.sort_unstable();
        others.dedup();
        if others.is_empty() {
            continue;
        }
        let named = |list: &[usize]| {
            super::listing(list.iter().map(|&t| format!("`{}`", case.streams[t].id)))
        };
        why.push(match stream.kind {
            None => format!(
                "`{id}` covers only its own stream `{}`: the input does not say whether it is the legacy default stream, so work on {} is not shown covered",
                stream.id,
                named(&others)
            ),
            Some(StreamKind::LegacyDefault) => {
                let undeclared: Vec<usize> = others
                    .iter()
                    .copied()
                    .filter(|&t| case.streams[t].kind.is_none())
                    .collect();
                if undeclared.is_empty() {
                    format!(
                        "`{id}` is on the legacy default stream `{}`, which waits only for the earlier work of blocking streams: {} is not blocking, or its work was submitted after the copy",
                        stream.id,
                        named(&others)
                    )
                } else {
                    format!(
                        "`{id}` is on the legacy default stream `{}`, but the input does not say whether {} is blocking, so only the copy's own stream is covered there",
                        stream.id,
                        named(&undeclared)
                    )
                }
            }
            Some(kind) => format!(
                "`{id}` covers only its own stream `{}` ({}): only the legacy default stream waits for other streams",
                stream.id,
                kind.word()
            ),
        });
    }
    why
}

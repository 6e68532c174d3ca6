//! Phase references resolved before validation proper, so that their text is freed before the
//! validated case is built beside the raw one.
//!
//! A case imported from a large trace names every kernel in its program (one `launch` each)
//! and again in several questions (per stream, per step, per class): 445,800 phases and
//! 1,783,200 question references at ×20 `df_index_resolver`, over half the raw case's memory.
//! Each name that resolves is replaced by its index here and its text dropped; validation then
//! uses the index. It is the index validation would give: validation reaches the program and
//! the questions only when every phase id is non-empty and unique, and then its table is this
//! one (first occurrence of each id). A name that does not resolve is kept, so validation
//! reports it exactly as before.

use std::collections::HashMap;

use crate::case::raw::{RawOp, RawPhase, RawQuestion};

/// The indices taken out of a raw case by [`preresolve`].
#[derive(Debug, Default)]
pub(super) struct Preresolved {
    /// Per program op: the launched phase's index, when its name was taken.
    pub launches: Vec<Option<usize>>,
    /// Per question: its phase list (`phases` or `work`) as indices, when it was taken.
    pub lists: Vec<Option<Vec<usize>>>,
}

/// Takes every reference to `phases` of `program` and `questions` that resolves out of them,
/// leaving an empty name (or an empty list) in its place.
pub(super) fn preresolve(
    phases: &[RawPhase],
    program: &mut [RawOp],
    questions: &mut [RawQuestion],
) -> Preresolved {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(phases.len());
    for (i, p) in phases.iter().enumerate() {
        index.entry(&*p.id).or_insert(i);
    }
    let launches = program
        .iter_mut()
        .map(|op| match op {
            RawOp::Launch { phase } => {
                let p = index.get(&**phase).copied();
                if p.is_some() {
                    drop(std::mem::take(phase));
                }
                p
            }
            _ => None,
        })
        .collect();
    let lists = questions
        .iter_mut()
        .map(|q| match q {
            RawQuestion::Intervals {
                phases: Some(list), ..
            }
            | RawQuestion::HostCompletion {
                work: Some(list), ..
            } => {
                let resolved: Option<Vec<usize>> =
                    list.iter().map(|p| index.get(&**p).copied()).collect();
                if resolved.is_some() {
                    drop(std::mem::take(list));
                }
                resolved
            }
            _ => None,
        })
        .collect();
    Preresolved { launches, lists }
}

#[cfg(test)]
mod tests {
    use crate::case::{load_case_str, parse_raw, Ask, Op};

    const CASE: &str = r#"{
        "format": "worksheet-case", "version": 1,
        "clocks": [{"id": "gpu", "domain": "device", "instance": "ctx"}],
        "streams": [{"id": "s", "clock": "gpu", "device": "gpu0"}],
        "phases": [
            {"id": "a", "stream": "s", "start": "0 ns", "end": "2 ns"},
            {"id": "b", "stream": "s", "start": "3 ns", "end": "5 ns"}
        ],
        "program": [{"op": "launch", "phase": "b"}, {"op": "launch", "phase": "A_"}],
        "questions": [
            {"id": "ab", "kind": "intervals", "phases": ["b", "a"]},
            {"id": "ax", "kind": "intervals", "phases": ["a", "x"]}
        ]
    }"#;

    #[test]
    fn names_that_resolve_are_taken_and_others_kept() {
        let mut raw = parse_raw(CASE).unwrap();
        let pre = super::preresolve(&raw.phases, &mut raw.program, &mut raw.questions);
        assert_eq!(pre.launches, [Some(1), None]);
        assert_eq!(pre.lists, [Some(vec![1, 0]), None]);
        let text = raw.to_json_pretty();
        assert!(text.contains(r#""phase": """#), "{text}");
        assert!(text.contains(r#""phase": "A_""#), "{text}");
        assert!(text.contains(r#""x""#), "{text}");
    }

    /// A name that does not resolve fails as before; the ones that do give the same case.
    #[test]
    fn validation_is_unchanged() {
        let e = load_case_str(CASE, "p.json").unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str()),
            ("unknown-reference", "program[1].phase")
        );
        let ok = CASE.replace("\"A_\"", "\"a\"");
        let e = load_case_str(&ok, "p.json").unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str()),
            ("unknown-reference", "questions[1].phases[1]")
        );
        let ok = ok.replace("\"x\"", "\"b\"");
        let case = load_case_str(&ok, "p.json").unwrap();
        assert!(matches!(case.program[..], [Op::Launch(1), Op::Launch(0)]));
        let lists: Vec<&[usize]> = case
            .questions
            .iter()
            .map(|q| match &q.ask {
                Ask::Intervals { phases } => phases.as_slice(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(lists, [&[1, 0][..], &[0, 1][..]]);
        assert_eq!(&*case.phases[1].label, "b");
    }
}

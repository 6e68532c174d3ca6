//! One axis per clock, not per clock id: clock ids with the same domain and instance are one
//! clock (SPEC §2), so their readings compare exactly and are drawn in one panel.
//!
//! An nsys import gives each process its own clock id (`pid144`, `pid145`: whose program a
//! wait is) on the one session clock; drawn per id they would sit in separate panels with
//! "positions are not comparable", which is false for them. [`shared`] rewrites every clock
//! index of a case to the first clock id of its clock (`Case::relation_graph`'s canonical
//! index), so the layout makes one panel per clock, named by all of its ids. The engine's
//! answers are computed on the case as written (the layout does that before calling
//! [`shared`]): nothing is answered on the rewritten copy.

use std::borrow::Cow;

use crate::case::{Ask, Case, Op};

/// The case with every clock index replaced by its clock's first index; borrowed unchanged
/// when no two clock ids share a clock.
pub fn shared(case: &Case) -> Cow<'_, Case> {
    let canon = &case.relation_graph().0;
    if canon.iter().enumerate().all(|(i, c)| i == *c) {
        return Cow::Borrowed(case);
    }
    let to = |c: &mut usize| *c = canon[*c];
    let mut drawn = case.clone();
    drawn.streams.iter_mut().for_each(|s| to(&mut s.clock));
    drawn.phases.iter_mut().for_each(|p| to(&mut p.clock));
    drawn.marks.iter_mut().for_each(|m| to(&mut m.clock));
    for t in &mut drawn.timers {
        to(&mut t.start.0);
        to(&mut t.stop.0);
    }
    for op in &mut drawn.program {
        if let Op::HostWait {
            returned: Some((c, _)),
            ..
        } = op
        {
            to(c);
        }
    }
    for q in &mut drawn.questions {
        if let Ask::ClockOffset { a, b } = &mut q.ask {
            to(a);
            to(b);
        }
    }
    for r in &mut drawn.relations {
        to(&mut r.a);
        to(&mut r.b);
    }
    Cow::Owned(drawn)
}

/// The name of clock `c`'s panel: its id, and the other ids of the same clock after `=`
/// (`pid144 = pid145`).
pub fn panel_name(case: &Case, c: usize) -> String {
    let canon = &case.relation_graph().0;
    canon
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == canon[c])
        .map(|(i, _)| case.clocks[i].id.as_str())
        .collect::<Vec<_>>()
        .join(" = ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::load_case_str;

    const TWO_IDS_ONE_CLOCK: &str = r#"{"format": "worksheet-case", "version": 1, "name": "two", "clocks": [
        {"id": "p1", "domain": "nsys-session", "instance": "s"},
        {"id": "p2", "domain": "nsys-session", "instance": "s"},
        {"id": "other", "domain": "host", "instance": "h"}],
      "streams": [{"id": "a", "clock": "p1", "device": "gpu0"},
                  {"id": "b", "clock": "p2", "device": "gpu1"}],
      "phases": [{"id": "x", "stream": "a", "start": "0 ns", "end": "10 ns"},
                 {"id": "y", "stream": "b", "start": "5 ns", "end": "20 ns"}]}"#;

    #[test]
    fn ids_of_one_clock_share_the_first_ids_index() {
        let case = load_case_str(TWO_IDS_ONE_CLOCK, "two").unwrap();
        let drawn = shared(&case);
        assert!(matches!(drawn, Cow::Owned(_)));
        assert_eq!(drawn.streams[1].clock, 0);
        assert_eq!(drawn.phases[1].clock, 0);
        assert_eq!(panel_name(&drawn, 0), "p1 = p2");
        assert_eq!(panel_name(&drawn, 2), "other");
    }

    #[test]
    fn a_case_of_distinct_clocks_is_borrowed() {
        let text = TWO_IDS_ONE_CLOCK.replace(
            r#""id": "p2", "domain": "nsys-session", "instance": "s""#,
            r#""id": "p2", "domain": "nsys-session", "instance": "t""#,
        );
        let case = load_case_str(&text, "two").unwrap();
        assert!(matches!(shared(&case), Cow::Borrowed(_)));
    }
}

//! Validation rules that only the fixture harness guarded, pinned in the lib tests so
//! the mutation campaign (`-- --lib`) sees them (issue 16).

use crate::case::load_case_str;

/// A case with one host clock `instance`, one stream, one phase given `phase_clock`, and
/// one question of `question` JSON.
fn case(instance: &str, phase_clock: &str, question: &str) -> Result<(), (String, &'static str)> {
    let text = format!(
        r#"{{"format": "worksheet-case", "version": 1,
        "clocks": [{{"id": "host", "domain": "host", "instance": "{instance}"}},
                   {{"id": "gpu", "domain": "device", "instance": "ctx"}}],
        "streams": [{{"id": "A", "clock": "gpu", "device": "gpu0"}}],
        "phases": [{{"id": "k", "stream": "A"{phase_clock}, "start": "0 us", "end": "4 us"}}],
        "program": [{{"op": "timer-start", "timer": "t", "clock": "host", "at": "0 us"}},
                    {{"op": "timer-stop", "timer": "t", "clock": "host", "at": "9 us"}}],
        "questions": [{question}]}}"#
    );
    load_case_str(&text, "v.json")
        .map(|_| ())
        .map_err(|e| (e.path.clone(), e.code))
}

const SUBMISSION: &str = r#"{"id": "q", "kind": "submission", "timer": "t"}"#;

#[test]
fn bounded_expectations_need_lo_at_most_hi() {
    let bounded = |lo: &str, hi: &str| {
        let q = format!(
            r#"{{"id": "q", "kind": "submission", "timer": "t", "expect": {{"verdict": "bounded", "lo": "{lo}", "hi": "{hi}"}}}}"#
        );
        case("boot", "", &q)
    };
    assert_eq!(bounded("1 us", "2 us"), Ok(()));
    assert_eq!(bounded("2 us", "2 us"), Ok(()));
    assert_eq!(
        bounded("3 us", "2 us"),
        Err(("questions[0].expect.hi".to_owned(), "bad-value"))
    );
}

#[test]
fn interval_expectations_name_a_verdict_and_an_unknown_its_reason() {
    let expect = |body: &str| {
        let q =
            format!(r#"{{"id": "q", "kind": "intervals", "phases": ["k"], "expect": {{{body}}}}}"#);
        case("boot", "", &q)
    };
    assert_eq!(expect(r#""verdict": "known""#), Ok(()));
    assert_eq!(
        expect(r#""verdict": "unknown", "reason": "cross-domain""#),
        Ok(())
    );
    assert_eq!(
        expect(r#""verdict": "unknown""#),
        Err(("questions[0].expect.reason".to_owned(), "missing-field"))
    );
    assert_eq!(
        expect(r#""verdict": "known", "reason": "cross-domain""#),
        Err(("questions[0].expect.reason".to_owned(), "bad-value"))
    );
    assert_eq!(
        expect(r#""verdict": "maybe""#),
        Err(("questions[0].expect.verdict".to_owned(), "unknown-variant"))
    );
}

#[test]
fn clocks_need_an_instance_and_phases_their_streams_clock() {
    assert_eq!(case("boot", "", SUBMISSION), Ok(()));
    assert_eq!(
        case("  ", "", SUBMISSION),
        Err(("clocks[0].instance".to_owned(), "missing-instance"))
    );
    assert_eq!(case("boot", r#", "clock": "gpu""#, SUBMISSION), Ok(()));
    assert_eq!(
        case("boot", r#", "clock": "host""#, SUBMISSION),
        Err(("phases[0].clock".to_owned(), "bad-value"))
    );
}

/// Events on two streams of one device clock, recorded by `program` (JSON ops), and
/// `questions`.
fn events_case(program: &str, e0_at: &str, questions: &str) -> Result<(), (String, &'static str)> {
    let text = format!(
        r#"{{"format": "worksheet-case", "version": 1,
        "clocks": [{{"id": "gpu", "domain": "device", "instance": "ctx"}}],
        "streams": [{{"id": "A", "clock": "gpu", "device": "gpu0"}},
                    {{"id": "B", "clock": "gpu", "device": "gpu0"}}],
        "events": [{{"id": "e0", "stream": "A", "timing": true, "state": "completed", "at": "{e0_at}"}},
                   {{"id": "e1", "stream": "A", "timing": true, "state": "completed", "at": "5 us"}},
                   {{"id": "f", "stream": "B", "timing": true, "state": "completed", "at": "1 us"}}],
        "program": [{program}],
        "questions": [{questions}]}}"#
    );
    load_case_str(&text, "v.json")
        .map(|_| ())
        .map_err(|e| (e.path.clone(), e.code))
}

const ALL_RECORDED: &str = r#"{"op": "record", "event": "e0"}, {"op": "record", "event": "e1"}, {"op": "record", "event": "f"}"#;
const INTERVAL: &str = r#"{"id": "d", "kind": "device-interval", "start": "e0", "end": "e1"}"#;

#[test]
fn completed_events_must_be_recorded_by_a_program_that_exists() {
    assert_eq!(events_case(ALL_RECORDED, "5 us", INTERVAL), Ok(()));
    // No program at all: the events stand alone.
    assert_eq!(events_case("", "5 us", ""), Ok(()));
    let partial = r#"{"op": "record", "event": "e0"}, {"op": "record", "event": "e1"}"#;
    assert_eq!(
        events_case(partial, "5 us", ""),
        Err(("events[2].state".to_owned(), "inconsistent-event"))
    );
}

#[test]
fn records_on_one_stream_keep_their_order_and_may_tie() {
    assert_eq!(events_case(ALL_RECORDED, "5 us", ""), Ok(()));
    assert_eq!(
        events_case(ALL_RECORDED, "6 us", ""),
        Err(("events[1].at".to_owned(), "inconsistent-event"))
    );
}

#[test]
fn a_device_interval_runs_forward_in_stream_order() {
    let q = |start: &str, end: &str| {
        format!(r#"{{"id": "d", "kind": "device-interval", "start": "{start}", "end": "{end}"}}"#)
    };
    assert_eq!(events_case(ALL_RECORDED, "5 us", &q("e0", "e0")), Ok(()));
    assert_eq!(
        events_case(ALL_RECORDED, "5 us", &q("e1", "e0")),
        Err(("questions[0].end".to_owned(), "reversed-interval"))
    );
    // Across streams, record order says nothing: left to the engine.
    assert_eq!(events_case(ALL_RECORDED, "5 us", &q("f", "e0")), Ok(()));
}

#[test]
fn a_difference_subtracts_durations_only() {
    let diff = |minuend: &str| {
        format!(
            r#"{INTERVAL}, {{"id": "set", "kind": "intervals", "phases": []}},
            {{"id": "x", "kind": "difference", "minuend": "{minuend}", "subtrahend": "d"}}"#
        )
    };
    assert_eq!(events_case(ALL_RECORDED, "5 us", &diff("d")), Ok(()));
    assert_eq!(
        events_case(ALL_RECORDED, "5 us", &diff("set")),
        Err(("questions[2].minuend".to_owned(), "bad-value"))
    );
}

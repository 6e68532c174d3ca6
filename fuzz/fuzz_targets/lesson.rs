//! The lesson file reader: `lesson::model::parse_lesson`, then, for a lesson measured on a
//! built-in fixture, what `lesson start` and `lesson check` do with it: the measurement
//! (`lesson::measure::measure`, the lesson's `extend` applied; labs are not run: the bench
//! here refuses them), the handout, the answer key and the re-run policy, the blank and
//! filled answer sheets, and grading.
//! Beyond "no panic": documented error codes; the blank sheet reads back as every question
//! unanswered; the key's own answers, written on a sheet (text and CSV) and read back,
//! grade all right (a key a student cannot write down or that grades itself wrong is a bug).
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::lab::streams::{StreamsOptions, StreamsRecord};
use worksheet::lab::executor::{LabConfig, LabRun};
use worksheet::lesson::grade::{answer_key, grade, rerun_reasons, Mark};
use worksheet::lesson::measure::{measure, Bench, MeasureError};
use worksheet::lesson::model::parse_lesson;
use worksheet::lesson::sheet::{blank_sheet, filled_sheet, handout, read_sheet, HandoutContext};

/// Runs no lab: a fuzzed lesson may ask for billions of runs.
struct NoLab;

impl Bench for NoLab {
    fn executor(&mut self, _: &LabConfig) -> Result<LabRun, MeasureError> {
        Err(MeasureError::Failed("no lab in the fuzzer".into()))
    }
    fn streams(&mut self, _: &StreamsOptions) -> Result<(StreamsRecord, bool), MeasureError> {
        Err(MeasureError::NoCuda("no lab in the fuzzer".into()))
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let codes = worksheet_fuzz::lesson_codes();
    let lesson = match parse_lesson(text, "fuzz.json") {
        Ok(l) => l,
        Err(e) => return worksheet_fuzz::documented(&e, &codes),
    };
    let blank = read_sheet(&blank_sheet(&lesson), false, &lesson, "answers.txt")
        .unwrap_or_else(|e| panic!("the blank sheet does not read back: {e}"));
    assert_eq!(blank.len(), lesson.questions.len());
    assert!(blank.iter().all(|(_, a)| a.is_empty()), "{blank:?}");
    let measured = match measure(&lesson, &mut NoLab) {
        Ok(m) => m,
        Err(MeasureError::Lesson(e)) => return worksheet_fuzz::documented(&e, &codes),
        Err(_) => return,
    };
    let ctx = HandoutContext {
        dir: "lesson",
        picture_json: &measured.picture_json,
        command: &measured.command,
        fixture: Some("fixture"),
        simulated: measured.simulated,
        files: Vec::new(),
        cautions: &[],
        rerun_advice: None,
    };
    let _ = handout(&lesson, &ctx);
    let case = worksheet::case::load_case_str(&measured.case_json, "case.json")
        .unwrap_or_else(|e| panic!("the measured case does not load: {e}"));
    if let Err(e) = rerun_reasons(&lesson, &case) {
        return worksheet_fuzz::documented(&e, &codes);
    }
    let key = match answer_key(&lesson, &case) {
        Ok(key) => key,
        Err(e) => return worksheet_fuzz::documented(&e, &codes),
    };
    let answers: Vec<(String, String)> = key
        .iter()
        .map(|k| (k.id.clone(), k.expected.to_string()))
        .collect();
    for csv in [false, true] {
        let sheet = filled_sheet(&lesson, &answers, csv);
        let read = read_sheet(&sheet, csv, &lesson, "answers")
            .unwrap_or_else(|e| panic!("the key's sheet does not read back: {e}\n{sheet}"));
        for g in grade(&lesson, &key, &read) {
            assert_eq!(
                g.mark,
                Mark::Right,
                "the key grades itself {:?}: {g:?}",
                g.mark
            );
        }
    }
});

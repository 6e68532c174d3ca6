//! Case JSON: load + evaluate; accepted cases survive `to_json_pretty` and answer the same.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::case::{load_case_str, parse_raw, CASE_ERROR_CODES};
use worksheet::engine::evaluate;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let case = match load_case_str(text, "fuzz.json") {
        Ok(case) => case,
        Err(e) => return worksheet_fuzz::documented(&e, &CASE_ERROR_CODES),
    };
    let report = evaluate(&case);
    worksheet_fuzz::report_identities(&report);
    let again = parse_raw(text).unwrap().to_json_pretty();
    let case2 = load_case_str(&again, "fuzz.json")
        .unwrap_or_else(|e| panic!("written back, the case does not load: {e}\n{again}"));
    let report2 = evaluate(&case2);
    assert_eq!(
        serde_json::to_string(&report).unwrap(),
        serde_json::to_string(&report2).unwrap(),
        "the case written back answers differently"
    );
});

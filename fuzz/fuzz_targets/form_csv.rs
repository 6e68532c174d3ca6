//! Form CSV: load + check; accepted forms round-trip through JSON and CSV alike.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::form::format::{load_form_str, FileFormat};
use worksheet::form::FORM_ERROR_CODES;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match load_form_str(text, FileFormat::Csv, "fuzz.csv") {
        Ok(form) => {
            let _ = worksheet::form::check::check(&form);
            let _ = worksheet::form::check_form(&form, "fuzz.csv", None);
            worksheet_fuzz::form_round_trip(form.raw());
        }
        Err(e) => worksheet_fuzz::documented(&e, &FORM_ERROR_CODES),
    }
});

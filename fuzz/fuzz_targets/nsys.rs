//! Nsight Systems export bytes, written to a scratch `.sqlite` file: header checks,
//! quick_check, schema reading, import + summary + the written case.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::import::{import_path, ImportOptions};

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export.sqlite");
    std::fs::write(&path, data).unwrap();
    match import_path(&path, &ImportOptions::default()) {
        Ok(imported) => worksheet_fuzz::imported(&imported),
        Err(e) => worksheet_fuzz::documented(&e, &worksheet_fuzz::import_codes()),
    }
});

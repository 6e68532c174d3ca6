//! Nsight Systems export bytes, written to a scratch `.sqlite` file: header checks,
//! quick_check, schema reading (`trace::nsys::read`), the recorded model from the same open
//! export (`trace::nsys::neutral`, through the audited import), import + summary + the
//! written case.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::import::{import_path_audited, ImportOptions};

fuzz_target!(|data: &[u8]| {
    // One scratch folder for the whole run (a new one per input costs more than the import).
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let path = DIR
        .get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .join("export.sqlite");
    // What SQLite may leave beside a file (a WAL-mode header) must not reach the next input.
    for side in [
        "export.sqlite-wal",
        "export.sqlite-shm",
        "export.sqlite-journal",
    ] {
        let _ = std::fs::remove_file(path.with_file_name(side));
    }
    std::fs::write(&path, data).unwrap();
    match import_path_audited(&path, &ImportOptions::default()) {
        Ok(imported) => worksheet_fuzz::imported(&imported),
        Err(e) => worksheet_fuzz::documented(&e, &worksheet_fuzz::import_codes()),
    }
});

//! Kineto trace bytes: text straight to the importer, gzip through a scratch file (one
//! folder for the run) so the size cap and the decoder run too; then summary and the
//! written case.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::import::{import_path, kineto::import_text, ImportOptions};

fuzz_target!(|data: &[u8]| {
    let options = ImportOptions::default();
    let result = if data.starts_with(&[0x1f, 0x8b]) {
        let path = worksheet_fuzz::scratch_file("trace.json.gz", data);
        import_path(&path, &options)
    } else {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        import_text(text, "trace", &options)
    };
    match result {
        Ok(imported) => worksheet_fuzz::imported(&imported),
        Err(e) => worksheet_fuzz::documented(&e, &worksheet_fuzz::import_codes()),
    }
});

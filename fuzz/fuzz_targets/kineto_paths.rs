//! The two Kineto reading paths agree. `import_path` on a plain-text file takes the fast
//! path (the text cut into events on a second thread, each parsed from its slice) and falls
//! back to the careful streaming reader when that gives up; `import_text` is the careful
//! reader alone. Whenever the fast path answers, the careful reader must answer the same:
//! the same case, facts and notes. (An error always comes from the careful reader, so errors
//! agree by construction.)
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::import::{import_path, kineto::import_text, ImportOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // One scratch file per input, in the folder kept for the run (a new folder per round
    // cost more than the import: 840 executions a second a core).
    let path = worksheet_fuzz::scratch_file("trace.json", data);
    for round_sub_ns in [false, true] {
        let options = ImportOptions { round_sub_ns };
        let Ok(fast) = import_path(&path, &options) else {
            continue;
        };
        let careful = import_text(text, "trace", &options).unwrap_or_else(|e| {
            panic!("the fast path read a trace the careful reader refuses: {e}")
        });
        assert_eq!(
            format!("{fast:?}"),
            format!("{careful:?}"),
            "the two paths differ"
        );
    }
});

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
    for round_sub_ns in [false, true] {
        let options = ImportOptions { round_sub_ns };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.json");
        std::fs::write(&path, data).unwrap();
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

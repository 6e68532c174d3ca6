//! The import's fast path (the splitter, the memchr scanner, the visitors where it is
//! unsure) against the careful streaming reader, on arbitrary text: where the fast path
//! gives an answer, the careful reader gives the very same case and audit model; where the
//! careful reader refuses the text, the fast path gives up (so the error the user sees is the
//! careful reader's). Odd-length inputs read with `--round-sub-ns`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::import::{
    kineto::{import_fast, import_with_audit},
    ImportOptions,
};

fuzz_target!(|data: &[u8]| {
    // The importer's text is checked UTF-8 before any reader sees it.
    if std::str::from_utf8(data).is_err() {
        return;
    }
    let options = ImportOptions {
        round_sub_ns: data.len() % 2 == 1,
    };
    let careful = import_with_audit(data, "t", &options);
    let Some((imported, audit)) = import_fast(data, "t", &options) else {
        return;
    };
    let (careful, careful_audit) = match careful {
        Ok(both) => both,
        Err(e) => panic!("the fast path read a text the careful reader refuses: {e}"),
    };
    assert_eq!(format!("{imported:?}"), format!("{careful:?}"), "the case");
    assert_eq!(format!("{audit:?}"), format!("{careful_audit:?}"), "the audit model");
});

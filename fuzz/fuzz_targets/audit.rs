//! The audit: a Kineto trace's text through the audit's reader (`trace::kineto::lenient::read_trace`)
//! and `audit::audit`. Beyond "no panic": reading errors have documented codes; every
//! finding's code is in the catalogue and every figure it states lies within the trace's
//! span; the breakdown adds up to each device's span; step rows and kernel shares are
//! within their bounds; the text, Markdown and JSON renderings work (`audit_holds`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::audit::{audit, AuditOptions};
use worksheet::import::ImportOptions;
use worksheet::trace::kineto::lenient::read_trace;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match read_trace(text, &ImportOptions::default()) {
        Ok(trace) => {
            let a = audit(&trace, "fuzz.json", &AuditOptions::default());
            worksheet_fuzz::audit_holds(&trace, &a);
        }
        Err(e) => worksheet_fuzz::documented(&e, &worksheet_fuzz::import_codes()),
    }
});

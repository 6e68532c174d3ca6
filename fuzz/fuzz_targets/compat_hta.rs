//! `--compat hta`: HTA 0.5.0's temporal breakdown reproduced on a Kineto trace's text
//! (`HtaTrace::from_text` → `compare`), with HTA's defaults and with rounding switched off.
//! Beyond "no panic": documented error codes; the exact breakdown (every assumption off)
//! keeps HTA's identity `idle + compute + non_compute = kernel_time` with every part in
//! `0..=kernel_time`, and so does HTA's when HTA itself would not fail its assertions;
//! each assumption's delta and the interaction add up to `HTA default − exact`; the text
//! rendering works.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::peer::hta::{Breakdown, HtaOptions, HtaTrace};
use worksheet::import::ImportOptions;

/// HTA's identity and bounds, for a breakdown of proper rows (none reversed) whose sums
/// cannot have saturated.
fn identity(b: &Breakdown) {
    if b.reversed_rows > 0 || b.kernel_time_ns >= i64::MAX / 4 {
        return;
    }
    assert!(b.kernel_time_ns >= 0, "{b:?}");
    assert_eq!(
        b.idle_ns + b.compute_ns + b.non_compute_ns,
        b.kernel_time_ns,
        "{b:?}"
    );
    for part in [b.idle_ns, b.compute_ns, b.non_compute_ns] {
        assert!(part >= 0 && part <= b.kernel_time_ns, "{b:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let trace = match HtaTrace::from_text(text, &ImportOptions::default()) {
        Ok(trace) => trace,
        Err(e) => return worksheet_fuzz::documented(&e, &worksheet_fuzz::import_codes()),
    };
    let rounding_off = HtaOptions {
        us_rounding: false,
        ..HtaOptions::HTA_DEFAULTS
    };
    for hta in [HtaOptions::HTA_DEFAULTS, rounding_off] {
        let c = trace.compare(hta);
        if let Some(exact) = &c.exact {
            identity(exact);
        }
        if let Some(d) = &c.hta_defaults {
            if !d.hta_fails() {
                identity(d);
            }
        }
        // Without rounding HTA never fails its own assertions.
        if !hta.us_rounding || !trace.rounds() {
            if let Some(d) = c.hta_defaults.as_ref().filter(|d| d.reversed_rows == 0) {
                assert!(!d.hta_fails(), "HTA fails without rounding: {d:?}");
            }
        }
        if let (Some(d), Some(e), Some(i)) = (&c.hta_defaults, &c.exact, &c.interaction) {
            let mut sum = i.kernel_time_ns;
            for a in &c.assumptions {
                sum = sum.saturating_add(a.delta.expect("complete").kernel_time_ns);
            }
            let whole = d.kernel_time_ns.saturating_sub(e.kernel_time_ns);
            if whole.abs() < i64::MAX / 8 && sum.abs() < i64::MAX / 8 {
                assert_eq!(sum, whole, "deltas + interaction != default - exact: {c:?}");
            }
        }
        let _ = c.to_text();
    }
});

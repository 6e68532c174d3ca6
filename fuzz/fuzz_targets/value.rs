//! Time values: `parse_value`, and every accepted value prints back to itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::units::parse_value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(n) = parse_value(text) {
        let printed = n.to_string();
        assert_eq!(parse_value(&printed).ok(), Some(n), "{text:?} -> {printed}");
        for unit in ["ns", "us", "ms", "s"] {
            let unit = worksheet::units::Unit::parse(unit).unwrap();
            let shown = n.format_in(unit);
            if let Ok(back) = parse_value(&shown) {
                assert_eq!(back, n, "{text:?} in {unit:?} -> {shown}");
            }
        }
    }
});

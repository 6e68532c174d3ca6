//! The recorded model the import's one pass gathers (`trace::kineto::neutral`) against the
//! lenient whole-text reader's (`trace::kineto::lenient`), on real and edge traces.
use super::import_with_audit;
use crate::trace::kineto::lenient::read_trace;
use crate::trace::ReadOptions as ImportOptions;

/// The model the import's pass gathers, and the lenient whole-text reader's, as JSON (or
/// the error's path, code and message).
fn both(text: &str, options: &ImportOptions) -> (String, String) {
    let show = |t: Result<crate::trace::model::Trace, crate::error::InputError>| match t {
        Ok(t) => serde_json::to_string(&t).unwrap(),
        Err(e) => format!("{} {} {}", e.path, e.code, e.message),
    };
    let (_, streamed) = import_with_audit(text.as_bytes(), "t", options).expect("imports");
    (show(streamed), show(read_trace(text, options)))
}

/// Every real trace of `tests/data/traces` that imports: the same model, field by field.
#[test]
fn the_import_pass_gathers_the_lenient_readers_model_on_real_traces() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".json.gz") {
            continue;
        }
        let mut text = String::new();
        let file = std::fs::File::open(&path).unwrap();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text).unwrap();
        let (streamed, whole) = both(&text, &ImportOptions::default());
        assert!(streamed == whole, "{}", path.display());
        assert!(streamed.contains("\"activities\":[{"), "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 8, "{seen} traces");
}

/// Events only the audit reads, in every shape the lenient reader treats differently:
/// fields in another order (the name after the times), a base after the events, a
/// negative duration, a time with digits below 1 ns (left out, or rounded), a time that
/// is not a number, an overflow once the base is added, a `"stream 7"` tid (a stream,
/// not a thread), a zero timestamp, sync rows, calls without a correlation.
#[test]
fn the_import_pass_gathers_the_lenient_readers_model_on_edge_cases() {
    let k = r#"{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":"stream 7","ts":0,"dur":10,"args":{"device":0,"correlation":1}}"#;
    let c = r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":1,"dur":2,"args":{"correlation":1}}"#;
    let no_corr = r#"{"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","tid":"main","ts":3,"dur":1}"#;
    let sync = r#"{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","tid":9,"ts":40,"dur":5,"args":{"correlation":4}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,"ts":40,"dur":5,"args":{"cuda_sync_kind":"Stream Sync","stream":7,"correlation":4,"device":0}}"#;
    let host = r#"{"ph":"X","cat":"cpu_op","name":"ProfilerStep#2","tid":9,"ts":60,"dur":5},
        {"ts":3,"dur":1,"ph":"X","cat":"cpu_op","tid":4,"name":"ProfilerStep#1"},
        {"ts":3,"dur":1,"ph":"X","cat":"cpu_op","tid":4,"name":"aten::add"},
        {"ph":"X","cat":"Operator","name":"aten::_local_scalar_dense","tid":4,"ts":7,"dur":1},
        {"ph":"X","cat":"user_annotation","name":"aten::item","tid":4,"ts":7,"dur":1},
        {"ph":"X","cat":"user_annotation","tid":4,"ts":6,"dur":-2},
        {"ph":"X","cat":"user_annotation","name":"sub-ns","tid":4,"ts":6.0004,"dur":2},
        {"ph":"X","cat":"user_annotation","name":"text","tid":4,"ts":"6","dur":2},
        {"ph":"X","cat":"user_annotation","name":"no dur","tid":4,"ts":6},
        {"ph":"i","cat":"user_annotation","name":"instant","tid":4,"ts":6,"dur":1},
        {"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#1","pid":0,"tid":7,"ts":1,"dur":12},
        {"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","ts":1,"dur":100},
        {"ph":"X","cat":"Trace","name":"again","ts":0,"dur":200}"#;
    let events = [k, c, no_corr, sync, host].join(",");
    let rounding = ImportOptions { round_sub_ns: true };
    for text in [
        format!(r#"{{"traceEvents":[{events}]}}"#),
        format!(r#"{{"traceEvents":[{events}],"baseTimeNanoseconds":1000000}}"#),
        format!(r#"{{"baseTimeNanoseconds":1000000,"traceEvents":[{events}]}}"#),
        format!("[{events}]"),
    ] {
        for options in [ImportOptions::default(), rounding] {
            let (streamed, whole) = both(&text, &options);
            assert_eq!(streamed, whole, "{text}");
            for part in [
                "negative-duration",
                "scalar-read",
                "\"window\":[",
                "ProfilerStep#2",
            ] {
                assert!(streamed.contains(part), "{part}: {streamed}");
            }
            let based = text.contains("baseTimeNanoseconds");
            assert_eq!(streamed.contains("zero-timestamp"), based, "{streamed}");
        }
    }
    // A host range whose end overflows once the base is added: both fail the same way.
    let far =
        r#"{"ph":"X","cat":"user_annotation","name":"far","tid":9,"ts":9223372036854775,"dur":3}"#;
    for base in ["", r#","baseTimeNanoseconds":1000000"#] {
        let text = format!(r#"{{"traceEvents":[{k},{c},{far}]{base}}}"#);
        let (streamed, whole) = both(&text, &ImportOptions::default());
        assert_eq!(streamed, whole, "{text}");
        assert!(streamed.contains("overflow"), "{streamed}");
    }
}

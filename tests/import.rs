//! `worksheet import` on real PyTorch profiler (Kineto) traces, kept gzipped in
//! `tests/data/traces/` (provenance: `tests/data/traces/README.md`).
//!
//! One compatibility test per trace-format version (ns decimals since a base, integer
//! absolute µs, the 2021 capitalised categories), each asserting values read off the trace
//! by hand (a small Python script reading the JSON text with `Decimal`, quoted in the test);
//! then the waits of `event_sync_trace`, the malformed traces, and the command line.
//!
//! Implicit waits (SPEC §4): only `sampled_rank-0/1` have copies that wait (8 `cudaMemcpyAsync`
//! device-to-pageable copies each); every other trace's copies are `Async` host-to-device or
//! device-to-device, so none of their answers changed.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use worksheet::case::raw::RawQuestion;
use worksheet::case::{load_case_str, validate, Case, ImplicitKind, Op, WaitTarget};
use worksheet::engine::evaluate;
use worksheet::import::{import_path, summarize, ImportOptions, Imported, Summary};

const TRACES: &str = "tests/data/traces";

fn trace(name: &str) -> PathBuf {
    Path::new(TRACES).join(name)
}

/// Imports a real trace and summarizes it (no expectations embedded).
fn import(name: &str) -> (Imported, Summary, Case) {
    let imported = import_path(&trace(name), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let summary = summarize(&imported, false).expect("the imported case validates");
    let case = validate(imported.case.clone(), "t").expect("valid");
    (imported, summary, case)
}

/// `(count, busy ns, span ns)` of summary row `question`.
fn row(summary: &Summary, question: &str) -> (usize, i128, Option<i128>) {
    let r = summary
        .sets
        .iter()
        .find(|r| r.question == question)
        .unwrap_or_else(|| panic!("no row {question}"));
    (r.count, r.ns.busy, r.ns.span)
}

/// `[start, end)` of phase `id` in ns.
fn phase(case: &Case, id: &str) -> (i64, i64, Option<String>) {
    let p = case
        .phases
        .iter()
        .find(|p| &*p.id == id)
        .unwrap_or_else(|| panic!("no phase {id}"));
    (
        p.interval.start().as_i64(),
        p.interval.end().as_i64(),
        p.stream.map(|s| case.streams[s].id.clone()),
    )
}

fn fact<'a>(imported: &'a Imported, key: &str) -> &'a str {
    imported
        .facts
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no fact {key}"))
}

fn completion<'a>(summary: &'a Summary, id: &str) -> &'a str {
    summary
        .completion
        .iter()
        .find(|c| c.question == id)
        .map(|c| c.answer.as_str())
        .unwrap_or_else(|| panic!("no completion question {id}"))
}

/// Current format: `ts` in µs with three decimals since `baseTimeNanoseconds`
/// (1711964646000000000). By hand: the first kernel of stream 40 is
/// `ncclKernel_Broadcast_RING_LL_Sum_int8_t(...)`, correlation 19832, `ts`
/// 4458676423385.774, `dur` 30.975 → [1716423322423385774, 1716423322423416749) ns.
#[test]
fn ns_decimals_since_a_base_nccl_data() {
    let (imported, summary, case) = import("nccl_data.json.gz");
    assert!(
        imported.format.contains("baseTimeNanoseconds"),
        "{}",
        imported.format
    );
    // Stream 7: 2679 kernels + 960 copies + 114 sets; stream 40: 21 NCCL kernels.
    assert_eq!(row(&summary, "stream:gpu0-s7").0, 3753);
    assert_eq!(row(&summary, "stream:gpu0-s40").0, 21);
    assert_eq!(row(&summary, "compute:gpu0").0, 2679);
    assert_eq!(row(&summary, "communication:gpu0").0, 21);
    assert_eq!(row(&summary, "memory:gpu0").0, 1074);
    assert_eq!(
        phase(&case, "ncclKernel_Broadcast_RING_LL_Sum_int8_t#19832"),
        (
            1_716_423_322_423_385_774,
            1_716_423_322_423_416_749,
            Some("gpu0-s40".to_owned())
        )
    );
    // The last activity of stream 7 (multi_tensor_apply_kernel, correlation 64874) ends at
    // base + 4458677083276.404 µs + 154.782 µs.
    let (_, end, _) = phase(&case, "at::native::multi_tensor_apply_kernel#64874");
    assert_eq!(end, 1_716_423_323_083_431_186);
    // Exact breakdown: HTA 0.5.0 with HTA_DISABLE_NS_ROUNDING=1 and the last step kept says
    // idle 503050.991406 µs, compute 115655.847 µs, kernel time 660551.005633 µs, overlap
    // 15.61 %: the same to the ns, less its float noise (BENCHMARKS.md).
    let hta = &summary.hta[0];
    assert_eq!(
        (hta.kernel_time_ns, hta.idle_ns, hta.compute_ns),
        (660_551_005, 503_050_991, 115_655_847)
    );
    let overlap = &summary.overlaps[0];
    assert_eq!(overlap.overlap_ns, 7_317_025);
    assert_eq!(overlap.of_communication, "15.61 %");
    // 30 gpu_user_annotation ranges: phases without a stream, in no question.
    let annotations: Vec<_> = case
        .phases
        .iter()
        .filter(|p| p.id.starts_with("annotation-"))
        .collect();
    assert_eq!(annotations.len(), 30);
    assert!(annotations.iter().all(|p| p.stream.is_none()));
    assert_eq!(row(&summary, "device:gpu0").0, 3774);
    // Rank 0 of 2: the clock's instance says so.
    assert!(
        summary.clock.contains("rank 0 of 2, pid 2910249"),
        "{}",
        summary.clock
    );
}

/// Integer absolute Unix µs with `cuda_sync` rows. By hand: the first kernel of stream 20 is
/// `fft2d_r2c_32x32<...>`, correlation 5181, `ts` 1695835585751593, `dur` 63.
#[test]
fn integer_microseconds_with_sync_rows_benchmark_trace() {
    let (imported, summary, case) = import("benchmark_result_2869224_1695835535_trace.json.gz");
    assert_eq!(imported.format, "kineto: integer absolute Unix µs");
    assert_eq!(row(&summary, "stream:gpu0-s7").0, 91);
    assert_eq!(row(&summary, "stream:gpu0-s20").0, 7);
    assert_eq!(
        phase(&case, "fft2d_r2c_32x32#5181"),
        (
            1_695_835_585_751_593_000,
            1_695_835_585_751_656_000,
            Some("gpu0-s20".to_owned())
        )
    );
    assert_eq!(
        fact(&imported, "host waits"),
        "5 on a device (Context Sync); 16 on a stream (Stream Sync)"
    );
    assert_eq!(fact(&imported, "stream waits (Stream Wait Event)"), "20");
    assert_eq!(fact(&imported, "sync rows and calls not mapped"), "none");
    // The script's own syncs cover its work before the profiler's final one.
    assert!(completion(&summary, "completion:before-final-sync").starts_with("known"));
    assert!(completion(&summary, "completion:all-work").starts_with("known"));
}

/// Integer `ts`, decimal `dur` (`30669.0`), two ranks of one job. By hand: stream 84's first
/// kernel on rank 0 is `ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t`, correlation 6937369,
/// `ts` 1682725898094377, `dur` 30669.0.
#[test]
fn integer_microseconds_with_decimal_durations_two_ranks() {
    let (_, s0, c0) = import("sampled_rank-0.json.gz");
    let (_, s1, c1) = import("sampled_rank-1.json.gz");
    assert_eq!(
        phase(&c0, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t#6937369"),
        (
            1_682_725_898_094_377_000,
            1_682_725_898_125_046_000,
            Some("gpu0-s84".to_owned())
        )
    );
    assert_eq!(
        phase(&c1, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t#6907311").2,
        Some("gpu1-s84".to_owned())
    );
    for (s, stream, n) in [
        (&s0, "stream:gpu0-s7", 1052),
        (&s0, "stream:gpu0-s23", 126),
        (&s0, "stream:gpu0-s84", 8),
        (&s1, "stream:gpu1-s7", 1002),
    ] {
        assert_eq!(row(s, stream).0, n, "{stream}");
    }
    // Two ranks are two instances of the clock: never one number across them.
    assert_ne!(c0.clocks[0].clock, c1.clocks[0].clock);
    assert_eq!(c0.clocks[0].clock.domain, c1.clocks[0].clock.domain);
    assert!(s0.clock.contains("rank 0 of 128"), "{}", s0.clock);
    assert!(s1.clock.contains("rank 1 of 128"), "{}", s1.clock);
    // No named wait in a sampled trace, but 8 `cudaMemcpyAsync` device-to-pageable copies on
    // stream 23 per rank: each returns only once it has completed (CUDA "API synchronization
    // behavior"), so each is an implicit wait on stream 23.
    let (imported0, _, _) = import("sampled_rank-0.json.gz");
    assert_eq!(
        fact(&imported0, "host waits"),
        "8 on a stream (implicit: async-copy-dtoh-pageable copy)"
    );
    let copy_waits = c0
        .program
        .iter()
        .filter(|op| {
            matches!(op, Op::HostWait { implicit: Some(w), target: WaitTarget::Stream(s), .. }
                if w.kind == ImplicitKind::AsyncCopyDtohPageable && c0.streams[*s].id == "gpu0-s23")
        })
        .count();
    assert_eq!(copy_waits, 8);
    // Changed by the implicit waits: unknown (no-wait) → unknown (wait-misses-work). The
    // timer now stops after a wait, but Kineto records no stream flags, so the copies' waits
    // cover stream 23 only, not the work of streams 7, 25 and 84.
    assert_eq!(
        completion(&s0, "completion:all-work"),
        "unknown (wait-misses-work)"
    );
    assert_eq!(
        completion(&s1, "completion:all-work"),
        "unknown (wait-misses-work)"
    );
}

/// The 2021 format: capitalised categories, `tid: "stream 7"`, integer µs. The reference
/// numbers of `kineto-legacy/README.md` (a naive union in integer µs): 8,772 kernels,
/// Σ kernel 591,532 µs, ∪ GPU 603,558 µs, span 996,477 µs (1623142623529248 ..
/// 1623142624525725); the second file 594,868 / 614,413 / 801,550.
#[test]
fn legacy_2021_capitalised_categories() {
    let (imported, summary, _) = import("worker0.1623143089861.pt.trace.json.gz");
    assert!(
        imported.format.starts_with("kineto 2021"),
        "{}",
        imported.format
    );
    let compute = summary
        .sets
        .iter()
        .find(|r| r.question == "compute:gpu0")
        .unwrap();
    assert_eq!((compute.count, compute.ns.sum), (8772, 591_532_000));
    assert_eq!(
        row(&summary, "device:gpu0"),
        (9096, 603_558_000, Some(996_477_000))
    );
    let (_, second, _) = import("worker0.1623212756351.pt.trace.json.gz");
    let compute = second
        .sets
        .iter()
        .find(|r| r.question == "compute:gpu0")
        .unwrap();
    assert_eq!((compute.count, compute.ns.sum), (8868, 594_868_000));
    assert_eq!(
        row(&second, "device:gpu0"),
        (9258, 614_413_000, Some(801_550_000))
    );
    // No cuda_sync rows in 2021: the one cudaDeviceSynchronize is taken as a device wait
    // (one device only), the 12 cudaStreamSynchronize calls name no stream.
    assert_eq!(
        fact(&imported, "host waits"),
        "1 on a device (cudaDeviceSynchronize, no cuda_sync row)"
    );
    assert!(imported
        .notes
        .iter()
        .any(|n| n.contains("only device with GPU work")));
    assert!(fact(&imported, "sync rows and calls not mapped")
        .contains("12 cudaStreamSynchronize without a cuda_sync row"));
}

/// The speed anchor (216,092 events): streams 7 and 14 (2,020 NCCL AllReduce). By hand: the
/// first kernel of stream 14 is `ncclKernel_AllReduce_RING_LL_Sum_float`, correlation 99108,
/// `ts` 1669783687571046, `dur` 15. HTA 0.5.0 (last step kept, no rounding) agrees to the µs:
/// idle 732352, compute 620516, non-compute 380097, kernel time 1732965.
#[test]
fn df_index_resolver_speed_anchor() {
    let (imported, summary, case) = import("df_index_resolver.json.gz");
    assert_eq!(fact(&imported, "trace events read"), "216092");
    assert_eq!(row(&summary, "stream:gpu1-s7").0, 20270);
    assert_eq!(row(&summary, "stream:gpu1-s14").0, 2020);
    assert_eq!(
        phase(&case, "ncclKernel_AllReduce_RING_LL_Sum_float#99108"),
        (
            1_669_783_687_571_046_000,
            1_669_783_687_571_061_000,
            Some("gpu1-s14".to_owned())
        )
    );
    let hta = &summary.hta[0];
    assert_eq!(
        (
            hta.kernel_time_ns,
            hta.idle_ns,
            hta.compute_ns,
            hta.non_compute_ns
        ),
        (1_732_965_000, 732_352_000, 620_516_000, 380_097_000)
    );
}

/// Three streams ordered by cudaEventRecord + cudaStreamWaitEvent; the allocator's
/// cudaEventQuery calls appear as `Event Sync` rows but do not block; the script never
/// waits, so only the profiler's final device sync covers the work.
#[test]
fn event_sync_trace_waits_and_their_coverage() {
    let (imported, summary, case) = import("event_sync_trace.json.gz");
    assert_eq!(
        fact(&imported, "host waits"),
        "1 on a device (Context Sync)"
    );
    assert_eq!(fact(&imported, "stream waits (Stream Wait Event)"), "1");
    assert!(fact(&imported, "sync rows and calls not mapped")
        .starts_with("3 Event Sync by cudaEventQuery"));
    // The stream wait: stream 24 waits for the record (correlation 1385) on stream 20.
    let text = imported.case.to_json_pretty();
    assert!(text.contains(
        r#""op": "stream-wait",
      "stream": "gpu0-s24",
      "event": "record-c1385""#
    ));
    assert_eq!(case.events.len(), 1);
    assert!(
        completion(&summary, "completion:all-work").starts_with("known 19.543 ms"),
        "{:?}",
        summary.completion
    );
    assert_eq!(
        completion(&summary, "completion:before-final-sync"),
        "unknown (no-wait)"
    );
    assert!(imported
        .notes
        .iter()
        .any(|n| n.contains("`final-device-sync`") && n.contains("profiler")));
    for (stream, n) in [("gpu0-s20", 2), ("gpu0-s24", 2), ("gpu0-s28", 2)] {
        assert_eq!(row(&summary, &format!("stream:{stream}")).0, n);
    }
    assert_eq!(
        phase(&case, "ampere_sgemm_128x64_nn#1413"),
        (
            1_712_867_402_368_050_000,
            1_712_867_402_368_173_000,
            Some("gpu0-s24".to_owned())
        )
    );
}

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").unwrap()
}

/// Every file in `tests/data/traces/malformed/` names its expected code and path in
/// `EXPECTED.csv`; each exits 2 naming the file, the field and the code, never a panic.
#[test]
fn every_malformed_trace_exits_2_naming_file_code_and_field() {
    let dir = Path::new(TRACES).join("malformed");
    let expected = fs::read_to_string(dir.join("EXPECTED.csv")).unwrap();
    let mut seen = 0;
    for line in expected.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let (file, code, path) = (cols[0], cols[1], cols[2]);
        let full = dir.join(file);
        let out = worksheet().arg("import").arg(&full).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        let prefix = format!("{}: {path}: error[{code}]:", full.display());
        assert!(
            stderr.starts_with(&prefix),
            "{file}: expected `{prefix}`, got {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        seen += 1;
    }
    let files = fs::read_dir(&dir).unwrap().count() - 1;
    assert_eq!(
        seen, files,
        "every malformed file is listed in EXPECTED.csv"
    );
}

#[test]
fn sub_nanosecond_digits_are_refused_unless_rounding_is_asked_for() {
    let file = Path::new(TRACES).join("malformed/sub-ns-ts.json");
    let out = worksheet()
        .args(["import", "--round-sub-ns"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("| values rounded to the nearest ns (--round-sub-ns) | 1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("were rounded to the nearest ns"),
        "{stdout}"
    );
}

#[test]
fn an_nsight_export_imports_and_its_case_replays() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("saxpy.json.gz");
    let out = worksheet()
        .args([
            "import",
            "tests/data/nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
            "--expect",
            "-o",
        ])
        .arg(&case)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("nsys sqlite (nsys 2022.2.1.31, schema 2.9.1 (EXPORT_META_DATA))"),
        "{stdout}"
    );
    let replay = worksheet().arg("check").arg(&case).output().unwrap();
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    assert!(String::from_utf8_lossy(&replay.stdout).contains("1 passed, 0 failed"));
}

#[test]
fn a_damaged_nsight_export_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.sqlite");
    fs::write(&file, b"SQLite format 3\0 and more").unwrap();
    let out = worksheet().arg("import").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with(&file.display().to_string()), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let code = stderr
        .split("error[")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_default();
    assert!(
        worksheet::import::nsys::NSYS_ERROR_CODES.contains(&code),
        "{stderr}"
    );
}

/// The summary of the smallest real trace, as people see it.
#[test]
fn summary_table_of_event_sync_trace() {
    let out = worksheet()
        .args(["import", "tests/data/traces/event_sync_trace.json.gz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(
        "import_summary_event_sync_trace",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn the_json_summary_has_exact_values_in_ns() {
    let out = worksheet()
        .args([
            "import",
            "tests/data/traces/event_sync_trace.json.gz",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let device = v["sets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["question"] == "device:gpu0")
        .unwrap();
    assert_eq!(device["count"], 6);
    assert_eq!(device["busy"], "372 us");
    assert_eq!(device["ns"]["busy"], 372_000);
    assert_eq!(v["completion"][1]["answer"], "unknown (no-wait)");
    assert!(v["written"].is_null());
}

/// Every key path of a JSON value (`sets[].ns.busy`), array elements pooled; `audit` is
/// one key (its findings depend on the trace, not the format).
fn key_paths(v: &serde_json::Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                let path = format!("{at}.{k}");
                out.insert(path.clone());
                if k != "audit" {
                    key_paths(child, &path, out);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                key_paths(item, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// One summary shape for both formats: the JSON summary of a Kineto trace and of an Nsight
/// Systems export have the same keys, down to the rows (both traces have compute,
/// communication, memory and completion rows).
#[test]
fn kineto_and_nsys_json_summaries_have_the_same_keys() {
    let keys = |file: &str| {
        let out = worksheet()
            .args(["import", file, "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut paths = std::collections::BTreeSet::new();
        key_paths(&v, "", &mut paths);
        paths
    };
    let kineto = keys("tests/data/traces/nccl_data.json.gz");
    let nsys = keys("tests/data/nsys/mfu_2gpu_before.sqlite");
    assert_eq!(kineto, nsys);
    for path in [
        ".sets[].ns.busy",
        ".overlaps[].overlap_ns",
        ".hta[].idle_ns",
        ".completion[].answer",
    ] {
        assert!(nsys.contains(path), "{path}: {nsys:?}");
    }
}

/// `-o case.json.gz --expect` writes a gzipped case that `check` replays (every answer as
/// an expectation), `eval` answers and `render` draws; a second import refuses to overwrite.
#[test]
fn the_written_case_is_read_by_check_eval_and_render() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("bench.json.gz");
    let out = worksheet()
        .args([
            "import",
            "tests/data/traces/benchmark_result_2869224_1695835535_trace.json.gz",
            "--expect",
            "-o",
        ])
        .arg(&case)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("written to {}", case.display())),
        "{stdout}"
    );
    assert_eq!(&fs::read(&case).unwrap()[..2], &[0x1f, 0x8b], "gzipped");

    let check = worksheet().arg("check").arg(&case).output().unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{text}");
    assert!(text.contains("1 passed, 0 failed"), "{text}");
    // Folders are searched for *.json.gz too.
    let check = worksheet().arg("check").arg(dir.path()).output().unwrap();
    assert_eq!(check.status.code(), Some(0));

    let eval = worksheet().arg("eval").arg(&case).output().unwrap();
    assert_eq!(eval.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&eval.stdout).contains("completion:before-final-sync"));

    let render = worksheet()
        .args(["render", "--format", "text"])
        .arg(&case)
        .output()
        .unwrap();
    assert_eq!(render.status.code(), Some(0));
    let picture = String::from_utf8_lossy(&render.stdout);
    assert!(
        picture.contains("timeline: benchmark_result_2869224_1695835535_trace"),
        "{picture}"
    );

    let again = worksheet()
        .args(["import", "tests/data/traces/event_sync_trace.json.gz", "-o"])
        .arg(&case)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    let forced = worksheet()
        .args([
            "import",
            "tests/data/traces/event_sync_trace.json.gz",
            "--force",
            "-o",
        ])
        .arg(&case)
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0));
}

/// A plain-JSON case written without `--expect` has no expectations, so `check` has
/// nothing to compare, and the trace's own name becomes the case name.
#[test]
fn a_plain_case_carries_no_expectations_and_its_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("e.json");
    worksheet()
        .args(["import", "tests/data/traces/event_sync_trace.json.gz", "-o"])
        .arg(&case)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&case).unwrap()).unwrap();
    assert_eq!(v["name"], "event_sync_trace");
    assert_eq!(v["clocks"][0]["domain"], "kineto");
    assert!(v["questions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|q| q.get("expect").is_none()));
    assert!(v["provenance"]["notes"].as_array().unwrap().len() >= 3);
    assert_eq!(
        v["provenance"]["trace_format"],
        "kineto: integer absolute Unix µs"
    );
}

/// A Kineto trace made by hand: kernel k1 on stream 7 and k2 on stream 9, then a synchronous
/// `cudaMemcpy` DtoH into pinned memory on stream 7 (an implicit wait: it returns once the
/// copy has completed), then a `cudaMemcpyAsync` DtoH into pinned memory (no wait).
///
/// ```text
/// host  launch k1 [10,20)  launch k2 [20,30)  cudaMemcpy [30,170)  cudaMemcpyAsync [180,185)
/// s7    k1 [100,150)  copy#3 [150,160)                      copy#4 [200,210)
/// s9    k2 [100,600)
/// ```
#[test]
fn a_synchronous_device_to_host_copy_is_a_wait_on_its_stream() {
    let gpu = |cat: &str, name: &str, stream: i64, corr: i64, ts: i64, dur: i64| {
        format!(
            r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {ts}, "dur": {dur},
                "args": {{"device": 0, "stream": {stream}, "correlation": {corr}}}}}"#
        )
    };
    let call = |name: &str, corr: i64, c0: i64, c1: i64| {
        format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{name}", "pid": 9, "tid": 9, "ts": {c0}, "dur": {},
                "args": {{"correlation": {corr}}}}}"#,
            c1 - c0
        )
    };
    let events = [
        gpu("kernel", "k1", 7, 1, 100, 50),
        call("cudaLaunchKernel", 1, 10, 20),
        gpu("kernel", "k2", 9, 2, 100, 500),
        call("cudaLaunchKernel", 2, 20, 30),
        gpu(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Pinned)",
            7,
            3,
            150,
            10,
        ),
        call("cudaMemcpy", 3, 30, 170),
        gpu(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Pinned)",
            7,
            4,
            200,
            10,
        ),
        call("cudaMemcpyAsync", 4, 180, 185),
    ];
    let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"));
    let imported =
        worksheet::import::kineto::import_text(&text, "copies", &ImportOptions::default()).unwrap();
    assert_eq!(
        fact(&imported, "host waits"),
        "1 on a stream (implicit: sync-copy-dtoh copy)"
    );
    let mut raw = imported.case.clone();
    for (id, work) in [
        ("stream-7", vec!["k1#1", "Memcpy_DtoH#3"]),
        ("stream-9", vec!["k2#2"]),
        ("async-to-pinned", vec!["Memcpy_DtoH#4"]),
    ] {
        raw.questions.push(RawQuestion::HostCompletion {
            id: id.into(),
            timer: "all-work".into(),
            work: Some(work.into_iter().map(Into::into).collect()),
            expect: None,
        });
    }
    let report = evaluate(&load_case_str(&raw.to_json_pretty(), "copies").unwrap());
    let headline = |id: &str| report.answer(id).unwrap().headline();
    // The timer runs from the first call (10 µs) to the copy's return (170 µs).
    assert_eq!(headline("stream-7"), "known 160 us");
    assert_eq!(headline("stream-9"), "unknown (wait-misses-work)");
    assert_eq!(headline("async-to-pinned"), "unknown (wait-misses-work)");
    assert_eq!(
        headline("completion:all-work"),
        "unknown (wait-misses-work)"
    );
}

/// The op → kernels view in `import`: the text prints `audit`'s table (the same rows, the
/// same link line) after the kernel table, and the JSON carries the audit's `ops` and
/// `op_links` as `audit --format json` does.
#[test]
fn import_prints_and_carries_the_audits_op_view() {
    let trace = "tests/data/traces/nccl_data.json.gz";
    let run = |args: &[&str]| {
        let out = worksheet().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let import_text = run(&["import", trace]);
    let audit_text = run(&["audit", trace]);
    let block = |text: &str| {
        let from = text.find("op → kernels (").expect("an op table");
        let to = from + text[from..].find("op links: ").unwrap();
        let end = to + text[to..].find('\n').unwrap();
        text[from..end].to_owned()
    };
    assert_eq!(block(&import_text), block(&audit_text));
    // After the kernel table, with its ten largest rows of 23 and every kernel linked.
    assert!(
        import_text.find("kernels (10 of 72").unwrap()
            < import_text.find("op → kernels (").unwrap()
    );
    assert!(import_text.contains("op → kernels (10 of 23 rows by total;"));
    assert!(
        import_text.contains("op links: 2700 of 2700 kernels joined to the op that launched them")
    );
    let import: serde_json::Value =
        serde_json::from_str(&run(&["import", trace, "--format", "json"])).unwrap();
    let audit: serde_json::Value =
        serde_json::from_str(&run(&["audit", trace, "--format", "json"])).unwrap();
    assert_eq!(import["audit"]["ops"], audit["ops"]);
    assert_eq!(import["audit"]["op_links"], audit["op_links"]);
    let first = &import["audit"]["ops"][0];
    assert_eq!(first["name"], "record_param_comms");
    assert_eq!(first["kernels"], 21);
    assert_eq!(first["total_ns"], 46_876_493);
}

/// `import --top N` shows N kernel rows and N op rows, as `audit --top N` does; the default
/// is the audit's 10.
#[test]
fn import_top_sets_the_kernel_and_op_rows_shown() {
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("worksheet")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let nccl = "tests/data/traces/nccl_data.json.gz";
    let top2 = run(&["import", nccl, "--top", "2"]);
    assert!(top2.contains("\nkernels (2 of 72 by total;"), "{top2}");
    assert!(
        top2.contains("… and 70 more row(s): 3285 activities, 105.806705 ms in all"),
        "{top2}"
    );
    assert!(
        top2.contains("\nop → kernels (2 of 23 rows by total;"),
        "{top2}"
    );
    assert!(
        top2.contains("… and 21 more row(s): 1788 kernels, 76.517495 ms in all"),
        "{top2}"
    );
    let default = run(&["import", nccl]);
    assert!(
        default.contains("\nkernels (10 of 72 by total;"),
        "{default}"
    );
    assert!(
        default.contains("\nop → kernels (10 of 23 rows by total;"),
        "{default}"
    );
    let audit = run(&["audit", nccl, "--top", "2"]);
    let ops_of = |text: &str| {
        text[text.find("op → kernels (").unwrap()..]
            .lines()
            .take(6)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        ops_of(&top2),
        ops_of(&audit),
        "the same op rows as audit --top 2"
    );
}

/// Reliability rerun F2: a single trace whose `distributedInfo.rank` is not a rank of its job
/// (−1, a string, 2^62, or not below `world_size`) imports with a note that says so; a rank
/// below `world_size` gets none.
#[test]
fn a_rank_that_is_not_a_rank_of_the_job_is_noted() {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(fs::File::open("tests/data/ranks/rank0.json.gz").unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            serde_json::json!(-1),
            Some("distributedInfo.rank is -1, which is not a rank"),
        ),
        (
            serde_json::json!("zero"),
            Some("distributedInfo.rank is \"zero\", which is not a rank"),
        ),
        (
            serde_json::json!(1u64 << 62),
            Some("distributedInfo.rank is 4611686018427387904, which is not a rank"),
        ),
        (
            serde_json::json!(2),
            Some("distributedInfo.rank is 2, not below distributedInfo.world_size 2"),
        ),
        (serde_json::json!(1), None),
    ];
    for (rank, expected) in cases {
        let mut t = trace.clone();
        t["distributedInfo"]["rank"] = rank.clone();
        let path = dir.path().join("t.json");
        fs::write(&path, t.to_string()).unwrap();
        let imported = import_path(&path, &ImportOptions::default()).unwrap();
        let noted: Vec<&String> = imported
            .notes
            .iter()
            .filter(|n| n.starts_with("distributedInfo.rank"))
            .collect();
        match expected {
            Some(words) => assert!(
                noted.len() == 1 && noted[0].starts_with(words),
                "{rank}: {noted:?}"
            ),
            None => assert!(noted.is_empty(), "{rank}: {noted:?}"),
        }
    }
}

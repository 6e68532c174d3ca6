//! Copy and stream kinds in an export: which memcpy rows are implicit waits (SPEC §4), and
//! which streams are the legacy default stream, blocking or non-blocking.
//!
//! - **Memory kinds.** `CUPTI_ACTIVITY_KIND_MEMCPY` carries `copyKind` (1 HtoD, 2 DtoH;
//!   `ENUM_CUDA_MEMCPY_OPER`) and `srcKind` / `dstKind`. These use **nsys's** numbering
//!   (`ENUM_CUDA_MEM_KIND`: 0 pageable, 1 pinned, 2 device, …, 7 unknown), not CUPTI's
//!   `CUpti_ActivityMemoryKind` (0 unknown, 1 pageable, 2 pinned, 3 device). When the file
//!   has `ENUM_CUDA_MEM_KIND` its names are used; older files (2021.2, 2022.2) lack it, and
//!   their numbering is nsys's too: in `mordred_report1` and `saxpy-mpi-cuda` every HtoD copy
//!   goes from 0 to 2 and every DtoH copy from 2 to 0, which in CUPTI's numbering would be
//!   "unknown → pinned", impossible for a host-to-device copy.
//! - **Stream kinds.** `TARGET_INFO_CUDA_STREAM` lists each stream with CUPTI's creation
//!   `flag` (`CUpti_ActivityStreamFlag`, `ENUM_CUPTI_STREAM_TYPE`): 1 default (created
//!   without `cudaStreamNonBlocking`: **blocking**), 2 **non-blocking**, 3 the NULL stream,
//!   0 unknown. The NULL stream is declared **legacy-default** unless a call submitting work
//!   to it is a per-thread-default-stream variant (`_ptsz`, `_ptds`): then, and for flag 0 or
//!   a stream the table does not list, the kind is left undeclared, so a copy's wait covers
//!   its own stream only. The table is keyed by `processId` (a pid) and `contextId`; a pid
//!   two `globalPid`s share gets no kinds.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::read::{GpuRow, Proc, StreamInfoRow, StreamKey};
use crate::case::raw::RawStreamKind;
use crate::import::copies::{Direction, HostMemory};

/// nsys's `ENUM_CUDA_MEM_KIND` numbering, for files without the table.
const PAGEABLE: i64 = 0;
const PINNED: i64 = 1;

/// Direction and host memory of a memcpy row.
pub(super) fn copy_facts(
    row: &GpuRow,
    memory_kinds: Option<&HashMap<i64, String>>,
) -> (Direction, HostMemory) {
    let (direction, host_side) = match row.copy_kind {
        Some(1) => (Direction::HtoD, row.src_kind),
        Some(2) => (Direction::DtoH, row.dst_kind),
        _ => return (Direction::Other, HostMemory::Unknown),
    };
    let host = match (host_side, memory_kinds) {
        (None, _) => HostMemory::Unknown,
        (Some(k), Some(names)) => match names.get(&k).map(String::as_str) {
            Some("CUDA_MEMOPR_MEMORY_KIND_PAGEABLE") => HostMemory::Pageable,
            Some("CUDA_MEMOPR_MEMORY_KIND_PINNED") => HostMemory::Pinned,
            _ => HostMemory::Unknown,
        },
        (Some(PAGEABLE), None) => HostMemory::Pageable,
        (Some(PINNED), None) => HostMemory::Pinned,
        (Some(_), None) => HostMemory::Unknown,
    };
    (direction, host)
}

/// The declared kind of each stream that has one (see the module documentation).
/// `per_thread` holds the streams that received work from a `_ptsz` / `_ptds` call.
pub(super) fn stream_kinds(
    streams: &[StreamKey],
    info: &[StreamInfoRow],
    flag_names: Option<&HashMap<i64, String>>,
    per_thread: &HashSet<StreamKey>,
    procs: &[Proc],
) -> BTreeMap<StreamKey, RawStreamKind> {
    let mut pids: HashMap<i64, usize> = HashMap::new();
    for p in procs {
        *pids.entry(p.pid()).or_default() += 1;
    }
    let mut flags: HashMap<(i64, i64, i64), Option<i64>> = HashMap::new();
    for r in info {
        flags
            .entry((r.pid, r.context, r.stream))
            .and_modify(|f| {
                if *f != r.flag {
                    *f = None;
                }
            })
            .or_insert(r.flag);
    }
    let mut kinds = BTreeMap::new();
    for k in streams {
        if pids.get(&k.proc.pid()).copied().unwrap_or(0) != 1 {
            continue;
        }
        let Some(Some(flag)) = flags.get(&(k.proc.pid(), k.context, k.stream)) else {
            continue;
        };
        let name = match flag_names {
            Some(names) => names.get(flag).map(String::as_str),
            None => match flag {
                1 => Some("CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT"),
                2 => Some("CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING"),
                3 => Some("CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL"),
                _ => None,
            },
        };
        let kind = match name {
            Some("CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT") => RawStreamKind::Blocking,
            Some("CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING") => RawStreamKind::NonBlocking,
            Some("CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL") if !per_thread.contains(k) => {
                RawStreamKind::LegacyDefault
            }
            _ => continue,
        };
        kinds.insert(*k, kind);
    }
    kinds
}

/// Whether anything else was submitted to a stream while a copy's call ran: `submitted` is
/// the sorted submission times (call ends) of the stream, the copy's own among them.
pub(super) fn overtaken(submitted: &[i64], call_start: i64, call_end: i64) -> bool {
    let from = submitted.partition_point(|&t| t <= call_start);
    let to = submitted.partition_point(|&t| t <= call_end);
    to - from > 1
}

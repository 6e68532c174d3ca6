//! Which copies are waits: the one mapping from a trace's copy facts to SPEC §4's implicit
//! waits, shared by the Kineto and nsys readers.
//!
//! The CUDA runtime API documentation, section "API synchronization behavior", says of
//! `cudaMemcpy` and its relatives:
//!
//! | call | direction | host memory | returns | implicit wait |
//! |---|---|---|---|---|
//! | synchronous (`cudaMemcpy`, `cuMemcpyDtoH`, …) | device → host | pageable or pinned | once the copy has completed | `sync-copy-dtoh`: covers the copy and its stream's earlier work |
//! | synchronous | host → device | pageable | after a stream sync *before* the copy, once the data is staged | `pageable-htod`: covers the stream's earlier work, not the copy |
//! | synchronous | host → device | pinned | "synchronous with respect to the host" | none: SPEC §4 does not list it |
//! | `Async` | device → host | pageable | once the copy has completed | `async-copy-dtoh-pageable` |
//! | `Async` | device → host | pinned | at once | none |
//! | `Async` | host → device | any | at once (pageable: staged first, no device sync) | none |
//! | any | device → device, peer, arrays, managed | — | — | none |
//!
//! A call is **synchronous** when its name (without `_v2`, `_ptds`, … suffixes) starts with
//! `cudaMemcpy` or `cuMemcpy` and does not contain `Async`; **Async** when it does. Any other
//! call (a graph launch, a library's own copy path) makes no copy a wait. Kernel launches are
//! never waits.

use crate::case::raw::RawImplicit;

/// The direction of a copy, as far as implicit waits care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Host to device.
    HtoD,
    /// Device to host.
    DtoH,
    /// Anything else (device to device, peer, arrays, host to host, managed).
    Other,
}

/// The kind of the host side of a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostMemory {
    /// Pageable (`malloc`) memory.
    Pageable,
    /// Pinned (page-locked) memory.
    Pinned,
    /// Not recorded, or not host memory.
    Unknown,
}

/// How the copy was called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    /// `cudaMemcpy`, `cuMemcpyDtoH`, …: returns per the table above.
    Synchronous,
    /// `cudaMemcpyAsync`, `cuMemcpyDtoHAsync`, …
    Async,
}

/// How a copy was called, from its API call's base name; `None` for a call that is not a
/// memcpy call.
pub(crate) fn call_of(base_name: &str) -> Option<Call> {
    if !(base_name.starts_with("cudaMemcpy") || base_name.starts_with("cuMemcpy")) {
        return None;
    }
    Some(if base_name.contains("Async") {
        Call::Async
    } else {
        Call::Synchronous
    })
}

/// The implicit wait a copy is, if any (the table of the module documentation).
pub(crate) fn implicit_wait(
    call: Call,
    direction: Direction,
    host: HostMemory,
) -> Option<RawImplicit> {
    match (call, direction, host) {
        (Call::Synchronous, Direction::DtoH, _) => Some(RawImplicit::SyncCopyDtoh),
        (Call::Async, Direction::DtoH, HostMemory::Pageable) => {
            Some(RawImplicit::AsyncCopyDtohPageable)
        }
        (Call::Synchronous, Direction::HtoD, HostMemory::Pageable) => {
            Some(RawImplicit::PageableHtod)
        }
        _ => None,
    }
}

/// Direction and host memory from a Kineto `gpu_memcpy` name, `Memcpy DtoH (Device -> Pageable)`:
/// the direction word, then `(source -> destination)`. A name of another shape is
/// `(Other, Unknown)`.
pub(crate) fn kineto_copy(name: &str) -> (Direction, HostMemory) {
    let mut words = name.split_whitespace();
    let direction = match (words.next(), words.next()) {
        (Some("Memcpy"), Some("HtoD")) => Direction::HtoD,
        (Some("Memcpy"), Some("DtoH")) => Direction::DtoH,
        _ => return (Direction::Other, HostMemory::Unknown),
    };
    let kinds = name
        .find('(')
        .zip(name.rfind(')'))
        .and_then(|(a, b)| name.get(a + 1..b))
        .and_then(|inside| inside.split_once("->"))
        .map(|(src, dst)| (src.trim(), dst.trim()));
    let host_side = match (direction, kinds) {
        (Direction::HtoD, Some((src, _))) => src,
        (Direction::DtoH, Some((_, dst))) => dst,
        _ => "",
    };
    let host = match host_side {
        "Pageable" => HostMemory::Pageable,
        "Pinned" => HostMemory::Pinned,
        _ => HostMemory::Unknown,
    };
    (direction, host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kineto_names_carry_direction_and_host_memory() {
        assert_eq!(
            kineto_copy("Memcpy DtoH (Device -> Pageable)"),
            (Direction::DtoH, HostMemory::Pageable)
        );
        assert_eq!(
            kineto_copy("Memcpy DtoH (Device -> Pinned)"),
            (Direction::DtoH, HostMemory::Pinned)
        );
        assert_eq!(
            kineto_copy("Memcpy HtoD (Pageable -> Device)"),
            (Direction::HtoD, HostMemory::Pageable)
        );
        assert_eq!(
            kineto_copy("Memcpy DtoD (Device -> Device)"),
            (Direction::Other, HostMemory::Unknown)
        );
        assert_eq!(
            kineto_copy("Memcpy DtoH"),
            (Direction::DtoH, HostMemory::Unknown)
        );
    }

    #[test]
    fn only_the_documented_copies_are_waits() {
        use Direction::*;
        use HostMemory::*;
        let sync = call_of("cudaMemcpy").unwrap();
        let async_ = call_of("cudaMemcpyAsync").unwrap();
        assert_eq!(call_of("cuMemcpyDtoH"), Some(Call::Synchronous));
        assert_eq!(call_of("cuMemcpyDtoHAsync"), Some(Call::Async));
        assert_eq!(call_of("cudaLaunchKernel"), None);
        assert_eq!(
            implicit_wait(sync, DtoH, Pinned),
            Some(RawImplicit::SyncCopyDtoh)
        );
        assert_eq!(
            implicit_wait(sync, DtoH, Unknown),
            Some(RawImplicit::SyncCopyDtoh)
        );
        assert_eq!(
            implicit_wait(sync, HtoD, Pageable),
            Some(RawImplicit::PageableHtod)
        );
        assert_eq!(implicit_wait(sync, HtoD, Pinned), None);
        assert_eq!(implicit_wait(sync, HtoD, Unknown), None);
        assert_eq!(implicit_wait(sync, Other, Pageable), None);
        assert_eq!(
            implicit_wait(async_, DtoH, Pageable),
            Some(RawImplicit::AsyncCopyDtohPageable)
        );
        assert_eq!(implicit_wait(async_, DtoH, Pinned), None);
        assert_eq!(implicit_wait(async_, DtoH, Unknown), None);
        assert_eq!(implicit_wait(async_, HtoD, Pageable), None);
    }
}

//! The device operations a capture needs, behind one trait.
//!
//! [`Backend`] is what the procedure ([`super::procedure`], and the lab `crate::lab::streams`) drives. The
//! real one talks to the CUDA driver (`crate::cuda`, feature `cuda`); [`super::sim`] is a
//! deterministic simulator used by the tests and by `--simulate`. Handles are small indices
//! so that the procedure stays plain data.
//!
//! Every method that reads the host clock or touches the device is here, so the procedure
//! itself never does I/O: what it measures is exactly the calls it makes in order.

use std::ops::Range;

use super::record::{DeviceInfo, DriverAnswer};
use crate::units::Nanos;

/// A device stream, by index in the backend's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamId(pub usize);

/// A device event, by index in the backend's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId(pub usize);

/// Why a device operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// No usable CUDA here (no driver library, no NVRTC, no device).
    #[error("CUDA not available: {0}")]
    Unavailable(String),
    /// A driver call returned an error.
    #[error("{call} failed: {name}")]
    Driver {
        /// The call (`cuLaunchKernel`).
        call: &'static str,
        /// The driver's name for the error.
        name: String,
    },
    /// Anything else (a kernel that failed to compile, a gate that timed out, a wrong result).
    #[error("{0}")]
    Other(String),
}

/// The operations of a capture. Each call is made where the procedure says; nothing is
/// implied (no hidden synchronization, no event tracking).
pub trait Backend {
    /// The device and the clocks' instances.
    fn info(&self) -> DeviceInfo;
    /// Reads the host clock (monotonic, origin fixed when the backend was made).
    fn now(&mut self) -> Nanos;
    /// Makes a new stream.
    ///
    /// # Errors
    /// The driver's refusal.
    fn new_stream(&mut self) -> Result<StreamId, BackendError>;
    /// Makes a new event, with timing enabled or disabled.
    ///
    /// # Errors
    /// The driver's refusal.
    fn new_event(&mut self, timing: bool) -> Result<EventId, BackendError>;
    /// Records `event` in `stream`.
    ///
    /// # Errors
    /// The driver's refusal.
    fn record(&mut self, event: EventId, stream: StreamId) -> Result<(), BackendError>;
    /// Launches the spin kernel (one thread busy-waits on `%globaltimer` for `length`) in
    /// `stream`; with a `slot`, it stores its first and last timer readings there.
    ///
    /// # Errors
    /// The driver's refusal.
    fn spin(
        &mut self,
        stream: StreamId,
        length: Nanos,
        slot: Option<usize>,
    ) -> Result<(), BackendError>;
    /// Launches a gate kernel in `stream`: it holds the stream until [`Backend::release`]
    /// (or its own timeout).
    ///
    /// # Errors
    /// The driver's refusal.
    fn gate(&mut self, stream: StreamId) -> Result<(), BackendError>;
    /// Releases the last gate (one store to host memory the gate polls).
    ///
    /// # Errors
    /// When no gate is waiting.
    fn release(&mut self) -> Result<(), BackendError>;
    /// How many gates have timed out so far (a timed-out gate released itself, so the
    /// run it held was not held to the end).
    fn gate_timeouts(&mut self) -> u32;
    /// Makes `stream` wait for `event` (a declared cross-stream dependency).
    ///
    /// # Errors
    /// The driver's refusal.
    fn stream_wait(&mut self, stream: StreamId, event: EventId) -> Result<(), BackendError>;
    /// Blocks the host until `event` has completed.
    ///
    /// # Errors
    /// The driver's refusal.
    fn wait_event(&mut self, event: EventId) -> Result<(), BackendError>;
    /// Blocks the host until `stream` is idle.
    ///
    /// # Errors
    /// The driver's refusal.
    fn sync_stream(&mut self, stream: StreamId) -> Result<(), BackendError>;
    /// Blocks the host until every stream of the device is idle.
    ///
    /// # Errors
    /// The driver's refusal.
    fn sync_device(&mut self) -> Result<(), BackendError>;
    /// The driver's elapsed time from `start` to `end`, or its error, without blocking.
    fn elapsed(&mut self, start: EventId, end: EventId) -> DriverAnswer;
    /// Whether `event` has completed (`Success`), or the driver's error
    /// (`CUDA_ERROR_NOT_READY` while pending), without blocking.
    fn query(&mut self, event: EventId) -> DriverAnswer;
    /// Prepares `slots` places for spin-kernel timer readings (device memory).
    ///
    /// # Errors
    /// The driver's refusal.
    fn reserve_slots(&mut self, slots: usize) -> Result<(), BackendError>;
    /// Reads back the first `slots` timer readings, `(first, last)` in `%globaltimer` ns.
    ///
    /// # Errors
    /// The driver's refusal.
    fn read_slots(&mut self, slots: usize) -> Result<Vec<(i64, i64)>, BackendError>;
    /// Allocates the lab's buffers: `words` `u32` in pinned host memory (input and output)
    /// and on the device.
    ///
    /// # Errors
    /// The driver's refusal.
    fn lab_alloc(&mut self, words: usize) -> Result<(), BackendError>;
    /// The lab's pinned host input.
    fn lab_input(&mut self) -> &mut [u32];
    /// The lab's pinned host output.
    fn lab_output(&mut self) -> &mut [u32];
    /// Copies input words `range` to the device, in `stream`.
    ///
    /// # Errors
    /// The driver's refusal.
    fn copy_in(&mut self, stream: StreamId, range: Range<usize>) -> Result<(), BackendError>;
    /// Runs the lab kernel ([`super::lcg::lcg_iterate`], `iters` steps per word) on
    /// device words `range`, in place, in `stream`.
    ///
    /// # Errors
    /// The driver's refusal.
    fn compute(
        &mut self,
        stream: StreamId,
        range: Range<usize>,
        iters: u32,
    ) -> Result<(), BackendError>;
    /// Copies device words `range` back to the host output, in `stream`.
    ///
    /// # Errors
    /// The driver's refusal.
    fn copy_out(&mut self, stream: StreamId, range: Range<usize>) -> Result<(), BackendError>;
}

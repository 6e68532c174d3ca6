//! The real [`Backend`]: the CUDA driver API through cudarc (feature `cuda`).
//!
//! Built with cudarc's dynamic loading, so the binary builds and starts on a machine with
//! no CUDA; [`CudaBackend::open`] checks that libcuda and NVRTC can be loaded **before any
//! driver call** (cudarc panics at the first call otherwise) and says "CUDA not available"
//! with the reason.
//!
//! Everything timed goes through cudarc's thin `result` layer — raw handles, raw pointers —
//! so no call adds hidden work: no event tracking, no implicit synchronization. Streams are
//! non-blocking (no implicit order with the legacy default stream). Kernels are compiled
//! once by NVRTC from [`KERNELS`] and loaded before anything is timed.
//!
//! The gate (as nvbench's blocking kernel): one thread polls a word of mapped, pinned host
//! memory until the host stores the gate's generation there, or until its own timeout, in
//! which case it writes its generation into a second word so the run is marked failed.

use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaFunction};

use crate::capture::backend::{Backend, BackendError, EventId, StreamId};
use crate::capture::record::{ms_to_nanos, DeviceInfo, DriverAnswer};
use crate::units::Nanos;

/// The kernels, CUDA C++ compiled by NVRTC at start.
///
/// - `spin`: one thread busy-waits on `%globaltimer` until `ns` have passed; stores its first
///   and last readings when `out` is not null.
/// - `gate`: holds its stream until `*flag >= generation` (host-released), or `timeout_ns`.
/// - `lcg`: `iters` steps of `x ← 1664525·x + 1013904223` on each word, in place.
pub const KERNELS: &str = r#"
extern "C" __global__ void spin(unsigned long long ns, unsigned long long* out) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
    if (out != 0) { out[0] = t0; out[1] = t; }
}

extern "C" __global__ void gate(volatile unsigned int* flag, unsigned int generation,
                                unsigned long long timeout_ns, volatile unsigned int* timed_out) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag < generation) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) { *timed_out = generation; return; }
    }
}

extern "C" __global__ void lcg(unsigned int* data, unsigned long long n, unsigned int iters) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n; i += stride) {
        unsigned int x = data[i];
        for (unsigned int k = 0; k < iters; ++k) x = x * 1664525u + 1013904223u;
        data[i] = x;
    }
}
"#;

/// How long a gate waits for its release before it lets its stream go (and says so).
const GATE_TIMEOUT_NS: u64 = 2_000_000_000;

fn name(e: DriverError) -> String {
    e.error_name()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0))
}

fn driver(call: &'static str) -> impl Fn(DriverError) -> BackendError {
    move |e| BackendError::Driver {
        call,
        name: name(e),
    }
}

/// Checks, without calling the driver, that the CUDA libraries can be loaded.
///
/// # Errors
/// [`BackendError::Unavailable`] naming the missing library.
pub fn check_available() -> Result<(), BackendError> {
    // SAFETY: only tries to dlopen the library by its usual names; calls nothing in it.
    if !unsafe { sys::is_culib_present() } {
        return Err(BackendError::Unavailable(
            "libcuda not found (the NVIDIA driver's library; is an NVIDIA driver installed?)"
                .into(),
        ));
    }
    // SAFETY: as above, for NVRTC.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(BackendError::Unavailable(
            "libnvrtc not found (NVRTC compiles the capture's kernels; install CUDA 13's NVRTC)"
                .into(),
        ));
    }
    Ok(())
}

/// Mapped, pinned host memory of `len` `T`s.
struct Pinned<T> {
    ptr: *mut T,
    len: usize,
}

impl<T: Copy + Default> Pinned<T> {
    fn new(len: usize, flags: u32) -> Result<Self, BackendError> {
        let bytes = (len * std::mem::size_of::<T>()).max(1);
        // SAFETY: a fresh allocation; zeroed below before any read.
        let raw = unsafe { result::malloc_host(bytes, flags) }.map_err(driver("cuMemHostAlloc"))?;
        let ptr = raw.cast::<T>();
        for i in 0..len {
            // SAFETY: `i < len` within the allocation.
            unsafe { ptr.add(i).write(T::default()) };
        }
        Ok(Pinned { ptr, len })
    }

    fn slice(&self) -> &[T] {
        // SAFETY: `len` initialized elements, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn slice_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for Pinned<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc, freed once.
        let _ = unsafe { result::free_host(self.ptr.cast::<c_void>()) };
    }
}

struct DeviceBuf {
    ptr: sys::CUdeviceptr,
}

impl DeviceBuf {
    fn new(bytes: usize) -> Result<Self, BackendError> {
        // SAFETY: a fresh allocation, zeroed before use.
        let ptr = unsafe { result::malloc_sync(bytes.max(16)) }.map_err(driver("cuMemAlloc"))?;
        // SAFETY: `ptr` holds `bytes.max(16)` bytes.
        unsafe { result::memset_d8_sync(ptr, 0, bytes.max(16)) }.map_err(driver("cuMemsetD8"))?;
        Ok(DeviceBuf { ptr })
    }
}

impl Drop for DeviceBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

struct Lab {
    input: Pinned<u32>,
    output: Pinned<u32>,
    device: DeviceBuf,
}

/// The CUDA driver as a [`Backend`]. One context, on the thread that opened it.
pub struct CudaBackend {
    origin: Instant,
    info: DeviceInfo,
    streams: Vec<sys::CUstream>,
    events: Vec<sys::CUevent>,
    spin: CudaFunction,
    gate: CudaFunction,
    lcg: CudaFunction,
    /// `[flag, timed_out]`, mapped into the device's address space.
    gate_words: Pinned<u32>,
    gate_words_device: sys::CUdeviceptr,
    generation: u32,
    released: u32,
    timeouts_seen: u32,
    timeouts: u32,
    slots: Option<DeviceBuf>,
    lab: Option<Lab>,
    // Dropped last (fields drop in order): everything above belongs to this context.
    ctx: Arc<CudaContext>,
}

fn arch(major: i32, minor: i32) -> Option<&'static str> {
    Some(match (major, minor) {
        (7, 5) => "compute_75",
        (8, 0) => "compute_80",
        (8, 6) => "compute_86",
        (8, 9) => "compute_89",
        (9, 0) => "compute_90",
        (10, 0) => "compute_100",
        (12, 0) => "compute_120",
        _ => return None,
    })
}

fn uuid_text(u: &sys::CUuuid) -> String {
    let b: Vec<u8> = u.bytes.iter().map(|c| *c as u8).collect();
    let hex = |r: Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// `580.159.04` out of `/proc/driver/nvidia/version`'s first line.
fn kernel_module_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_owned)
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

impl CudaBackend {
    /// Opens device `ordinal`: checks the libraries, creates the context, compiles and loads
    /// the kernels, maps the gate's words.
    ///
    /// # Errors
    /// [`BackendError::Unavailable`] when the libraries or the device are missing; a driver
    /// or NVRTC error otherwise.
    pub fn open(ordinal: usize) -> Result<Self, BackendError> {
        check_available()?;
        result::init().map_err(|e| {
            BackendError::Unavailable(format!("cuInit failed: {} (no usable GPU?)", name(e)))
        })?;
        let count = result::device::get_count().map_err(driver("cuDeviceGetCount"))?;
        if ordinal as i64 >= i64::from(count) {
            return Err(BackendError::Unavailable(format!(
                "no CUDA device {ordinal} (the driver sees {count})"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(driver("cuDevicePrimaryCtxRetain"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(driver("cuDeviceGetAttribute"))?;
        let mut version = 0_i32;
        // SAFETY: writes one int.
        unsafe { sys::cuDriverGetVersion(&mut version) }
            .result()
            .map_err(driver("cuDriverGetVersion"))?;
        let opts = cudarc::nvrtc::CompileOptions {
            arch: arch(major, minor),
            ..Default::default()
        };
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(KERNELS, opts).map_err(|e| {
            BackendError::Other(format!("NVRTC could not compile the kernels: {e}"))
        })?;
        let module = ctx.load_module(ptx).map_err(driver("cuModuleLoadData"))?;
        let f = |n: &str| {
            module
                .load_function(n)
                .map_err(driver("cuModuleGetFunction"))
        };
        let (spin, gate, lcg) = (f("spin")?, f("gate")?, f("lcg")?);
        let gate_words = Pinned::<u32>::new(
            2,
            sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
        )?;
        let mut gate_words_device: sys::CUdeviceptr = 0;
        // SAFETY: `gate_words` was allocated with DEVICEMAP in this context.
        unsafe {
            sys::cuMemHostGetDevicePointer_v2(
                &mut gate_words_device,
                gate_words.ptr.cast::<c_void>(),
                0,
            )
        }
        .result()
        .map_err(driver("cuMemHostGetDevicePointer"))?;
        let info = DeviceInfo {
            name: ctx.name().map_err(driver("cuDeviceGetName"))?,
            uuid: uuid_text(&ctx.uuid().map_err(driver("cuDeviceGetUuid"))?),
            context: format!("{:p}", ctx.cu_ctx()),
            compute_capability: format!("{major}.{minor}"),
            driver_cuda_version: format!("{}.{}", version / 1000, version % 1000 / 10),
            driver_version: read_trimmed("/proc/driver/nvidia/version")
                .and_then(|s| kernel_module_version(&s))
                .unwrap_or_else(|| "unknown".into()),
            boot_id: read_trimmed("/proc/sys/kernel/random/boot_id")
                .unwrap_or_else(|| "unknown".into()),
            pid: std::process::id(),
            hostname: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
            simulated: false,
        };
        Ok(CudaBackend {
            origin: Instant::now(),
            info,
            streams: Vec::new(),
            events: Vec::new(),
            spin,
            gate,
            lcg,
            gate_words,
            gate_words_device,
            generation: 0,
            released: 0,
            timeouts_seen: 0,
            timeouts: 0,
            slots: None,
            lab: None,
            ctx,
        })
    }

    fn stream(&self, s: StreamId) -> Result<sys::CUstream, BackendError> {
        self.streams
            .get(s.0)
            .copied()
            .ok_or_else(|| BackendError::Other(format!("no stream {}", s.0)))
    }

    fn event(&self, e: EventId) -> Result<sys::CUevent, BackendError> {
        self.events
            .get(e.0)
            .copied()
            .ok_or_else(|| BackendError::Other(format!("no event {}", e.0)))
    }

    fn lab(&mut self) -> Result<&mut Lab, BackendError> {
        self.lab
            .as_mut()
            .ok_or_else(|| BackendError::Other("lab buffers not allocated".into()))
    }

    fn launch(
        &self,
        f: &CudaFunction,
        grid: u32,
        block: u32,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
    ) -> Result<(), BackendError> {
        // SAFETY: `f` belongs to this context's loaded module; `params` point at values of
        // the kernel's parameter types, read by the driver before this call returns.
        unsafe {
            result::launch_kernel(
                f.cu_function(),
                (grid, 1, 1),
                (block, 1, 1),
                0,
                stream,
                params,
            )
        }
        .map_err(driver("cuLaunchKernel"))
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let _ = result::ctx::synchronize();
        for e in self.events.drain(..) {
            // SAFETY: created by cuEventCreate, destroyed once.
            let _ = unsafe { result::event::destroy(e) };
        }
        for s in self.streams.drain(..) {
            // SAFETY: created by cuStreamCreate, destroyed once.
            let _ = unsafe { result::stream::destroy(s) };
        }
        self.slots = None;
        self.lab = None;
    }
}

impl Backend for CudaBackend {
    fn info(&self) -> DeviceInfo {
        self.info.clone()
    }

    fn now(&mut self) -> Nanos {
        Nanos::new(self.origin.elapsed().as_nanos() as i64)
    }

    fn new_stream(&mut self) -> Result<StreamId, BackendError> {
        let s = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(driver("cuStreamCreate"))?;
        self.streams.push(s);
        Ok(StreamId(self.streams.len() - 1))
    }

    fn new_event(&mut self, timing: bool) -> Result<EventId, BackendError> {
        let flags = if timing {
            sys::CUevent_flags::CU_EVENT_DEFAULT
        } else {
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        let e = result::event::create(flags).map_err(driver("cuEventCreate"))?;
        self.events.push(e);
        Ok(EventId(self.events.len() - 1))
    }

    fn record(&mut self, event: EventId, stream: StreamId) -> Result<(), BackendError> {
        let (e, s) = (self.event(event)?, self.stream(stream)?);
        // SAFETY: live handles of this context.
        unsafe { result::event::record(e, s) }.map_err(driver("cuEventRecord"))
    }

    fn spin(
        &mut self,
        stream: StreamId,
        length: Nanos,
        slot: Option<usize>,
    ) -> Result<(), BackendError> {
        let s = self.stream(stream)?;
        let mut ns = length.as_i64().max(0) as u64;
        let mut out: sys::CUdeviceptr = match (slot, &self.slots) {
            (Some(k), Some(buf)) => buf.ptr + (k as u64) * 16,
            _ => 0,
        };
        let mut params = [
            (&mut ns as *mut u64).cast::<c_void>(),
            (&mut out as *mut sys::CUdeviceptr).cast::<c_void>(),
        ];
        self.launch(&self.spin, 1, 1, s, &mut params)
    }

    fn gate(&mut self, stream: StreamId) -> Result<(), BackendError> {
        let s = self.stream(stream)?;
        self.generation += 1;
        let mut flag: sys::CUdeviceptr = self.gate_words_device;
        let mut generation = self.generation;
        let mut timeout = GATE_TIMEOUT_NS;
        let mut timed_out: sys::CUdeviceptr = self.gate_words_device + 4;
        let mut params = [
            (&mut flag as *mut sys::CUdeviceptr).cast::<c_void>(),
            (&mut generation as *mut u32).cast::<c_void>(),
            (&mut timeout as *mut u64).cast::<c_void>(),
            (&mut timed_out as *mut sys::CUdeviceptr).cast::<c_void>(),
        ];
        self.launch(&self.gate, 1, 1, s, &mut params)
    }

    fn release(&mut self) -> Result<(), BackendError> {
        if self.released >= self.generation {
            return Err(BackendError::Other("no gate to release".into()));
        }
        self.released = self.generation;
        // SAFETY: word 0 of the mapped pinned allocation; the device only reads it.
        unsafe { std::ptr::write_volatile(self.gate_words.ptr, self.generation) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn gate_timeouts(&mut self) -> u32 {
        // SAFETY: word 1 of the mapped pinned allocation, written by a timed-out gate.
        let last = unsafe { std::ptr::read_volatile(self.gate_words.ptr.add(1)) };
        if last != self.timeouts_seen {
            self.timeouts_seen = last;
            self.timeouts += 1;
        }
        self.timeouts
    }

    fn stream_wait(&mut self, stream: StreamId, event: EventId) -> Result<(), BackendError> {
        let (s, e) = (self.stream(stream)?, self.event(event)?);
        // SAFETY: live handles of this context.
        unsafe { result::stream::wait_event(s, e, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
            .map_err(driver("cuStreamWaitEvent"))
    }

    fn wait_event(&mut self, event: EventId) -> Result<(), BackendError> {
        let e = self.event(event)?;
        // SAFETY: a live event.
        unsafe { result::event::synchronize(e) }.map_err(driver("cuEventSynchronize"))
    }

    fn sync_stream(&mut self, stream: StreamId) -> Result<(), BackendError> {
        let s = self.stream(stream)?;
        // SAFETY: a live stream.
        unsafe { result::stream::synchronize(s) }.map_err(driver("cuStreamSynchronize"))
    }

    fn sync_device(&mut self) -> Result<(), BackendError> {
        result::ctx::synchronize().map_err(driver("cuCtxSynchronize"))
    }

    fn elapsed(&mut self, start: EventId, end: EventId) -> DriverAnswer {
        let (Ok(a), Ok(b)) = (self.event(start), self.event(end)) else {
            return DriverAnswer::Error {
                name: DriverAnswer::INVALID_HANDLE.into(),
            };
        };
        // SAFETY: live events; the raw call answers NOT_READY instead of blocking.
        match unsafe { result::event::elapsed(a, b) } {
            Ok(ms) => DriverAnswer::Elapsed {
                value: ms_to_nanos(ms),
            },
            Err(e) => DriverAnswer::Error { name: name(e) },
        }
    }

    fn query(&mut self, event: EventId) -> DriverAnswer {
        let Ok(e) = self.event(event) else {
            return DriverAnswer::Error {
                name: DriverAnswer::INVALID_HANDLE.into(),
            };
        };
        // SAFETY: a live event.
        match unsafe { result::event::query(e) } {
            Ok(()) => DriverAnswer::Success,
            Err(e) => DriverAnswer::Error { name: name(e) },
        }
    }

    fn reserve_slots(&mut self, slots: usize) -> Result<(), BackendError> {
        self.slots = Some(DeviceBuf::new(slots * 16)?);
        Ok(())
    }

    fn read_slots(&mut self, slots: usize) -> Result<Vec<(i64, i64)>, BackendError> {
        let Some(buf) = &self.slots else {
            return Ok(Vec::new());
        };
        result::ctx::synchronize().map_err(driver("cuCtxSynchronize"))?;
        let mut raw = vec![0_u64; slots * 2];
        // SAFETY: the buffer holds at least `slots * 16` bytes.
        unsafe { result::memcpy_dtoh_sync(&mut raw, buf.ptr) }.map_err(driver("cuMemcpyDtoH"))?;
        Ok(raw.chunks(2).map(|p| (p[0] as i64, p[1] as i64)).collect())
    }

    fn lab_alloc(&mut self, words: usize) -> Result<(), BackendError> {
        self.lab = None;
        self.lab = Some(Lab {
            input: Pinned::new(words, 0)?,
            output: Pinned::new(words, 0)?,
            device: DeviceBuf::new(words * 4)?,
        });
        Ok(())
    }

    fn lab_input(&mut self) -> &mut [u32] {
        match self.lab.as_mut() {
            Some(l) => l.input.slice_mut(),
            None => &mut [],
        }
    }

    fn lab_output(&mut self) -> &mut [u32] {
        match self.lab.as_mut() {
            Some(l) => l.output.slice_mut(),
            None => &mut [],
        }
    }

    fn copy_in(&mut self, stream: StreamId, range: Range<usize>) -> Result<(), BackendError> {
        let s = self.stream(stream)?;
        let lab = self.lab()?;
        let src = &lab.input.slice()[range.clone()];
        // SAFETY: pinned source and device destination both hold `range`; the source
        // outlives the copy (freed only after a context synchronize).
        unsafe { result::memcpy_htod_async(lab.device.ptr + range.start as u64 * 4, src, s) }
            .map_err(driver("cuMemcpyHtoDAsync"))
    }

    fn compute(
        &mut self,
        stream: StreamId,
        range: Range<usize>,
        iters: u32,
    ) -> Result<(), BackendError> {
        let s = self.stream(stream)?;
        let mut data: sys::CUdeviceptr = self.lab()?.device.ptr + range.start as u64 * 4;
        let mut n = range.len() as u64;
        let mut iters = iters;
        let grid = (range.len().div_ceil(256)).clamp(1, 1 << 20) as u32;
        let mut params = [
            (&mut data as *mut sys::CUdeviceptr).cast::<c_void>(),
            (&mut n as *mut u64).cast::<c_void>(),
            (&mut iters as *mut u32).cast::<c_void>(),
        ];
        self.launch(&self.lcg, grid, 256, s, &mut params)
    }

    fn copy_out(&mut self, stream: StreamId, range: Range<usize>) -> Result<(), BackendError> {
        let s = self.stream(stream)?;
        let lab = self.lab()?;
        let src = lab.device.ptr + range.start as u64 * 4;
        let dst = &mut lab.output.slice_mut()[range];
        // SAFETY: as in `copy_in`, the other way.
        unsafe { result::memcpy_dtoh_async(dst, src, s) }.map_err(driver("cuMemcpyDtoHAsync"))
    }
}

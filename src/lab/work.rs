//! The work a lab submits, behind a trait: a deterministic hash in use, a scripted digest in
//! tests (which can return a wrong digest on purpose).
//!
//! [`HashWork`] hashes a fixed 64 KiB buffer with 64-bit FNV-1a, `passes` times; each pass
//! mixes its index in first, so no pass can be skipped or hoisted. The buffer is filled by a
//! xorshift generator from a fixed seed, so the digest for a given number of passes is the
//! same on every machine. No cryptographic strength is needed: the digest only proves that
//! the worker did the whole computation and handed back its own result.

use std::fmt;

use serde::Serialize;

/// A 64-bit digest of the work's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Digest(pub u64);

impl fmt::Display for Digest {
    /// `0x` and 16 hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:016x}", self.0)
    }
}

impl Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why the work is being computed (tests script digests by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Calibration trial `k`.
    Calibration(usize),
    /// The reference digest, once, on the caller thread.
    Reference,
    /// Run `r` (index in the whole record), on a worker thread.
    Run(usize),
}

/// Deterministic work whose size is a number of passes.
pub trait Work: Send + Sync {
    /// What the work is, for the report (`FNV-1a 64 over a 64 KiB buffer`).
    fn describe(&self) -> String;
    /// Does `passes` passes of the work and returns the digest.
    fn compute(&self, passes: u64, call: Call) -> Digest;
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over a fixed pseudo-random buffer, repeated `passes` times.
///
/// Invariants: the buffer is the same for every instance of the same size.
#[derive(Clone, Debug)]
pub struct HashWork {
    buffer: Vec<u8>,
}

impl HashWork {
    /// The default buffer size: 64 KiB (fits a core's L2 cache, so the work is compute bound).
    pub const DEFAULT_BYTES: usize = 64 * 1024;

    /// A buffer of `bytes` bytes from the fixed seed.
    pub fn new(bytes: usize) -> Self {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let buffer = (0..bytes)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 56) as u8
            })
            .collect();
        HashWork { buffer }
    }

    /// The buffer size in bytes.
    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }
}

impl Default for HashWork {
    fn default() -> Self {
        HashWork::new(HashWork::DEFAULT_BYTES)
    }
}

impl Work for HashWork {
    fn describe(&self) -> String {
        let kib = self.buffer.len() / 1024;
        if kib * 1024 == self.buffer.len() {
            format!("FNV-1a 64 over a fixed {kib} KiB buffer")
        } else {
            format!("FNV-1a 64 over a fixed {}-byte buffer", self.buffer.len())
        }
    }

    fn compute(&self, passes: u64, _call: Call) -> Digest {
        let buffer = std::hint::black_box(self.buffer.as_slice());
        let mut h = FNV_OFFSET;
        for pass in 0..passes {
            h ^= pass;
            h = h.wrapping_mul(FNV_PRIME);
            for &b in buffer {
                h ^= u64::from(b);
                h = h.wrapping_mul(FNV_PRIME);
            }
        }
        Digest(h)
    }
}

/// Test work: returns `digest` for every call, except the runs listed in `wrong`, which
/// return a different digest (a worker that computed the wrong thing).
#[derive(Clone, Debug)]
pub struct ScriptedWork {
    /// The digest every correct computation returns.
    pub digest: Digest,
    /// Run indices that return a wrong digest.
    pub wrong: Vec<usize>,
}

impl Work for ScriptedWork {
    fn describe(&self) -> String {
        "scripted digests (tests)".to_owned()
    }

    fn compute(&self, _passes: u64, call: Call) -> Digest {
        match call {
            Call::Run(r) if self.wrong.contains(&r) => Digest(!self.digest.0),
            _ => self.digest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_work_is_deterministic_and_depends_on_passes() {
        let w = HashWork::new(1024);
        let a = w.compute(3, Call::Reference);
        assert_eq!(a, HashWork::new(1024).compute(3, Call::Run(7)));
        assert_ne!(a, w.compute(4, Call::Reference));
        // A fixed value: the digest must not change between versions or machines.
        assert_eq!(
            HashWork::default().compute(3, Call::Reference).to_string(),
            "0x3527e1ac91bdb1ec"
        );
    }

    #[test]
    fn fnv1a_of_no_bytes_and_no_passes_is_the_offset_basis() {
        assert_eq!(
            HashWork::new(0).compute(0, Call::Reference),
            Digest(FNV_OFFSET)
        );
        assert_eq!(Digest(FNV_OFFSET).to_string(), "0xcbf29ce484222325");
    }
}

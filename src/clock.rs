//! Clocks and timestamps.
//!
//! A clock is a `domain` (what kind of clock: `host`, `device`) plus an `instance` (what
//! fixes its epoch: a boot id, a CUDA context, a process). Two timestamps can be
//! subtracted only when both match; matching units never establish alignment. Every
//! operation here that would mix clocks returns the [`Reason`] it cannot, never a number.

use std::fmt;

use serde::Serialize;

use crate::units::Nanos;
use crate::verdict::Reason;

/// The identity of a clock: its domain and the instance that fixes its epoch.
///
/// Invariants: `domain` and `instance` are non-empty (enforced where cases are validated).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ClockId {
    /// What kind of clock, for example `host` or `device`.
    pub domain: String,
    /// What fixes the epoch: a boot id, a GPU UUID and context, a process.
    pub instance: String,
}

impl ClockId {
    /// A clock of `domain` whose epoch is fixed by `instance`.
    pub fn new(domain: impl Into<String>, instance: impl Into<String>) -> Self {
        ClockId {
            domain: domain.into(),
            instance: instance.into(),
        }
    }

    /// Whether timestamps of `self` and `other` may be compared; if not, the reason.
    ///
    /// # Errors
    /// [`Reason::CrossDomain`] for different domains, [`Reason::CrossInstance`] for the
    /// same domain with different instances.
    pub fn comparable_with(&self, other: &ClockId) -> Result<(), Reason> {
        if self.domain != other.domain {
            Err(Reason::CrossDomain)
        } else if self.instance != other.instance {
            Err(Reason::CrossInstance)
        } else {
            Ok(())
        }
    }
}

impl fmt::Display for ClockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.domain, self.instance)
    }
}

/// A point on one clock: nanoseconds from that clock's (arbitrary) origin.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Timestamp {
    /// The clock this value was read from.
    pub clock: ClockId,
    /// Offset from the clock's origin.
    pub at: Nanos,
}

impl Timestamp {
    /// A timestamp `at` on `clock`.
    pub fn new(clock: ClockId, at: Nanos) -> Self {
        Timestamp { clock, at }
    }

    /// `self - earlier` as a clock-free duration.
    ///
    /// # Errors
    /// [`Reason::CrossDomain`] / [`Reason::CrossInstance`] when the clocks differ;
    /// [`Reason::Overflow`] if the difference does not fit in `i64` nanoseconds.
    pub fn since(&self, earlier: &Timestamp) -> Result<Nanos, Reason> {
        self.clock.comparable_with(&earlier.clock)?;
        self.at.checked_sub(earlier.at).ok_or(Reason::Overflow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_unit_on_two_domains_is_cross_domain() {
        let host = Timestamp::new(ClockId::new("host", "boot-a"), Nanos::new(0));
        let gpu = Timestamp::new(ClockId::new("device", "ctx-1"), Nanos::new(7_000_000));
        assert_eq!(gpu.since(&host), Err(Reason::CrossDomain));
    }

    #[test]
    fn two_boots_are_cross_instance() {
        let a = Timestamp::new(ClockId::new("host", "boot-a"), Nanos::new(0));
        let b = Timestamp::new(ClockId::new("host", "boot-b"), Nanos::new(140_000));
        assert_eq!(b.since(&a), Err(Reason::CrossInstance));
    }

    #[test]
    fn one_clock_subtracts() {
        let c = ClockId::new("host", "boot-a");
        let a = Timestamp::new(c.clone(), Nanos::new(0));
        let b = Timestamp::new(c, Nanos::new(140_000));
        assert_eq!(b.since(&a), Ok(Nanos::new(140_000)));
    }
}

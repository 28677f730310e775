//! Operation counters for the loops whose cost grows with a provider (validation, cycle checks,
//! closures, neighbour paging, index build) or with a call (root checks of document reads). Tests read them to prove a loop stays linear on
//! large generated graphs without timing anything. They exist only in test builds and with the
//! `op-counters` feature; elsewhere `tick` is an empty inline function, so release code pays
//! nothing for them.
//!
//! Counts are per thread: a test counts exactly the work done on its own thread, whatever the
//! other tests running beside it do.

/// The counted loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// One relation endpoint resolved to a capability during validation.
    Endpoint,
    /// One step of the cycle search (a node entered or an edge followed).
    CycleStep,
    /// One `requires` edge followed by a closure.
    ClosureEdge,
    /// One neighbour looked at while locating a cursor or serving a page.
    NeighbourStep,
    /// One term posted while building a lexical index.
    IndexPosting,
    /// One bound alias root checked against the directory and package it was bound to.
    RootCheck,
    /// One whole document hashed for its content ID (a page read's scan).
    DocumentScan,
    /// One database capability record parsed and checked on its own.
    RecordChecked,
}

#[cfg(any(test, feature = "op-counters"))]
mod counting {
    use super::Op;
    use std::cell::Cell;

    const OPS: usize = Op::RecordChecked as usize + 1;

    thread_local! {
        static COUNTS: [Cell<u64>; OPS] = Default::default();
    }

    #[inline]
    pub fn tick(op: Op) {
        COUNTS.with(|c| c[op as usize].set(c[op as usize].get() + 1));
    }

    /// How many times `op` ran on this thread since the last `reset`.
    pub fn count(op: Op) -> u64 {
        COUNTS.with(|c| c[op as usize].get())
    }

    /// Sets every counter of this thread back to zero.
    pub fn reset() {
        COUNTS.with(|c| c.iter().for_each(|cell| cell.set(0)));
    }
}

#[cfg(any(test, feature = "op-counters"))]
pub use counting::{count, reset, tick};

#[cfg(not(any(test, feature = "op-counters")))]
#[inline(always)]
pub fn tick(_: Op) {}

//! Resolution: named capabilities plus the closure of what they require — `resolve` (partial at
//! the budget), `resolveSelection` (all or nothing); `match` resolves its pick the same way.

pub mod closure;
pub mod resolve;
pub mod selection;

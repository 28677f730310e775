//! The two questions `match` answers (SPEC D24): which capabilities fit (`accept`, the default,
//! with an honest `no_match`), or which are the best few (`rank`, for tool search, where a
//! host always wants candidates). Both built-in executors rank alike and differ only in what
//! they keep.

/// Which question a `match` asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The capabilities that fit, or `no_match`; a `no_match` lists the nearest refused.
    Accept,
    /// The best `limit` candidates with any evidence, whatever their score.
    Rank,
}

impl Mode {
    /// The mode as the caller wrote it, or `None` for anything else.
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "accept" => Some(Mode::Accept),
            "rank" => Some(Mode::Rank),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Accept => "accept",
            Mode::Rank => "rank",
        }
    }
}

/// A `no_match` lists at most this many refused candidates as `nearest`.
pub const MAX_NEAREST: usize = 3;

/// What a ranking keeps: at most `limit` candidates, accepted by `min_score` (accept mode) or
/// by any evidence (rank mode, where `min_score` is not asked).
#[derive(Clone, Copy, Debug)]
pub struct Wanted {
    pub limit: usize,
    pub min_score: f64,
    pub mode: Mode,
}

/// Keeps the first `n` of `items` by `order` (only those sorted), cheaply: a candidate list can
/// be as long as the catalog.
pub fn keep_first<T>(
    items: &mut Vec<T>,
    n: usize,
    mut order: impl FnMut(&T, &T) -> std::cmp::Ordering,
) {
    if n == 0 {
        items.clear();
        return;
    }
    if items.len() > n {
        items.select_nth_unstable_by(n - 1, &mut order);
        items.truncate(n);
    }
    items.sort_by(order);
}

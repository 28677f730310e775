//! The closure over `requires`, shared by `resolve` and `match` (partial mode: stop at the
//! budget and say so) and `resolveSelection` (all or nothing).

use crate::error::{Code, GraphError, Result};
use crate::scope::View;
use crate::snapshot::Kind;
use hashbrown::HashMap;
use std::collections::VecDeque;

/// A capability inside a view: (position of its provider in the view, index in the snapshot).
pub type Node = (usize, u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Stop expanding at a budget and report `budget_hit`.
    Partial,
    /// A budget hit fails the call with `CG_RESULT_TOO_LARGE`.
    AllOrNothing,
}

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_nodes: usize,
    pub max_edges: usize,
    /// Budget names for warnings, e.g. `resolve.maxNodes`.
    pub nodes_budget: &'static str,
    pub edges_budget: &'static str,
}

#[derive(Debug, Default)]
pub struct Closure {
    /// Requested roots (in the given order), then added nodes in BFS order.
    pub nodes: Vec<Node>,
    pub requested: usize,
    /// `(from, to)` as positions in `nodes`.
    pub edges: Vec<(usize, usize)>,
    /// The `from` of every edge, grouped by `to` (edge order within a group); node `i`'s group
    /// is `required_by[required_by_at[i]..required_by_at[i + 1]]`.
    required_by: Vec<usize>,
    required_by_at: Vec<usize>,
    /// The budget that stopped expansion (partial mode only): (budget name, limit).
    pub budget_hit: Option<(&'static str, usize)>,
}

impl Closure {
    /// The positions of the nodes whose `requires` reached node `i`, in edge order.
    fn required_by(&self, i: usize) -> &[usize] {
        &self.required_by[self.required_by_at[i]..self.required_by_at[i + 1]]
    }

    /// Appends node `i`'s member `"reason":{"requested":…,"requiredBy":…}`; `required_by`
    /// prints the list of the nodes that required it (given in edge order).
    pub fn write_reason(
        &self,
        out: &mut String,
        i: usize,
        required_by: impl FnOnce(&mut String, &[usize]),
    ) {
        out.push_str(r#""reason":{"requested":"#);
        out.push_str(if i < self.requested { "true" } else { "false" });
        out.push_str(r#","requiredBy":"#);
        required_by(out, self.required_by(i));
        out.push('}');
    }

    /// Groups the edges' sources by target: one counting pass instead of a list per node.
    fn group_required_by(&mut self) {
        let mut at = vec![0usize; self.nodes.len() + 1];
        for &(_, to) in &self.edges {
            at[to + 1] += 1;
        }
        for i in 1..at.len() {
            at[i] += at[i - 1];
        }
        let mut next = at.clone();
        let mut from_of = vec![0usize; self.edges.len()];
        for &(from, to) in &self.edges {
            from_of[next[to]] = from;
            next[to] += 1;
        }
        self.required_by = from_of;
        self.required_by_at = at;
    }
}

/// Breadth-first closure of `roots` (distinct, in order) along `requires`.
pub fn close_over_requires(
    view: &View,
    roots: &[Node],
    limits: Limits,
    mode: Mode,
) -> Result<Closure> {
    let mut c = Closure {
        nodes: roots.to_vec(),
        requested: roots.len(),
        ..Closure::default()
    };
    // Nodes are small integers: a fast fixed-seed hash, not SipHash's.
    let mut position: HashMap<Node, usize, foldhash::fast::FixedState> =
        HashMap::with_capacity_and_hasher(64.max(roots.len() * 4), Default::default());
    position.extend(roots.iter().enumerate().map(|(i, n)| (*n, i)));
    let mut queue: VecDeque<usize> = (0..roots.len()).collect();
    let stop = |c: &mut Closure, budget: &'static str, limit: usize| -> Result<()> {
        match mode {
            Mode::AllOrNothing => Err(GraphError::new(Code::ResultTooLarge)
                .detail("budget", budget)
                .detail("limit", limit)),
            Mode::Partial => {
                c.budget_hit = Some((budget, limit));
                Ok(())
            }
        }
    };
    'bfs: while let Some(from) = queue.pop_front() {
        let (p, node) = c.nodes[from];
        // `requires` never crosses providers, so targets live in the same snapshot.
        for &target in view.snapshot(p).neighbours(node, Kind::Requires) {
            crate::opcount::tick(crate::opcount::Op::ClosureEdge);
            if c.edges.len() >= limits.max_edges {
                stop(&mut c, limits.edges_budget, limits.max_edges)?;
                break 'bfs;
            }
            let to = match position.get(&(p, target)) {
                Some(&i) => i,
                None => {
                    if c.nodes.len() >= limits.max_nodes {
                        stop(&mut c, limits.nodes_budget, limits.max_nodes)?;
                        break 'bfs;
                    }
                    c.nodes.push((p, target));
                    position.insert((p, target), c.nodes.len() - 1);
                    queue.push_back(c.nodes.len() - 1);
                    c.nodes.len() - 1
                }
            };
            c.edges.push((from, to));
        }
    }
    c.group_required_by();
    Ok(c)
}

//! The closure over `requires`, shared by `resolve` and `match` (partial mode: stop at the
//! budget and say so) and `resolveSelection` (all or nothing).

use crate::error::{Code, GraphError, Result};
use crate::scope::View;
use crate::snapshot::Kind;
use std::collections::{HashMap, VecDeque};

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
    /// For each node, the positions of the nodes whose `requires` reached it.
    pub required_by: Vec<Vec<usize>>,
    /// The budget that stopped expansion (partial mode only): (budget name, limit).
    pub budget_hit: Option<(&'static str, usize)>,
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
        required_by: vec![Vec::new(); roots.len()],
        ..Closure::default()
    };
    let mut position: HashMap<Node, usize> =
        roots.iter().enumerate().map(|(i, n)| (*n, i)).collect();
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
                    c.required_by.push(Vec::new());
                    position.insert((p, target), c.nodes.len() - 1);
                    queue.push_back(c.nodes.len() - 1);
                    c.nodes.len() - 1
                }
            };
            c.edges.push((from, to));
            c.required_by[to].push(from);
        }
    }
    Ok(c)
}

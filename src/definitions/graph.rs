//! Provider-wide relation rules, checked once every record is known (forward references are
//! legal): endpoints exist, and `parents`, `specializes` and `requires` are each acyclic.

use super::fields::Origin;
use super::model::{CapabilityRecord, Relation};
use crate::error::{Code, GraphError};

/// Longest cycle listed in full in an error's details, in IDs and in bytes (an error stays
/// within 4 KiB whatever its IDs); a cycle cut short also carries `cycleLength`.
const MAX_CYCLE_IDS_IN_DETAILS: usize = 64;
const MAX_CYCLE_BYTES_IN_DETAILS: usize = 3072;

/// Resolves every endpoint of `records` (sorted by ID) to an index, in relation order.
/// `source_of(i)` gives the record's file and its path inside an inline definition. An
/// endpoint that no record declares is a problem (in relation order); one that `declared`
/// knows but `records` lacks (its record has problems of its own) is left out silently.
pub fn resolve_endpoints<'r>(
    o: &Origin<'r>,
    records: &'r [CapabilityRecord],
    source_of: impl Fn(usize) -> (Option<&'r str>, &'r str),
    declared: impl Fn(&str) -> bool,
) -> (Vec<[Vec<u32>; 4]>, Vec<GraphError>) {
    // Hashing an ID once beats comparing its long shared prefix at every step of a binary search.
    let index: std::collections::HashMap<&str, usize> = records
        .iter()
        .enumerate()
        .map(|(i, r)| (r.texts.capability_id(), i))
        .collect();
    let find = |id: &str| index.get(id).copied();
    let mut problems = Vec::new();
    let mut out = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let mut edges: [Vec<u32>; 4] = Default::default();
        for relation in Relation::ALL {
            let targets = r.relations.of(relation);
            let mut resolved = Vec::with_capacity(targets.clone().count());
            for target in targets {
                crate::opcount::tick(crate::opcount::Op::Endpoint);
                match find(target) {
                    Some(t) => resolved.push(t as u32),
                    None if declared(target) => {}
                    None => {
                        let (file, prefix) = source_of(i);
                        let origin = Origin {
                            file,
                            ..o.with_capability(r.texts.capability_id())
                        };
                        let field = super::fields::join(prefix, relation.as_str());
                        problems.push(
                            origin
                                .fail(Code::RelationInvalid, Some(&field), "missing_endpoint")
                                .detail("endpoint", target),
                        );
                    }
                }
            }
            edges[relation as usize] = resolved;
        }
        out.push(edges);
    }
    (out, problems)
}

/// Iterative three-colour DFS per acyclic relation (roots and edges in ID order, so the
/// reported cycle does not depend on files or layout): the first cycle of each relation.
pub fn check_cycles(
    o: &Origin,
    records: &[CapabilityRecord],
    edges: &[[Vec<u32>; 4]],
) -> Vec<GraphError> {
    let mut problems = Vec::new();
    for relation in Relation::ALL.into_iter().filter(|r| r.must_be_acyclic()) {
        if let Some(cycle) = find_cycle(edges.len(), |n| &edges[n][relation as usize]) {
            let mut bytes = 0;
            let ids: Vec<&str> = cycle
                .iter()
                .take(MAX_CYCLE_IDS_IN_DETAILS)
                .map(|&n| records[n].texts.capability_id())
                .take_while(|id| {
                    bytes += id.len() + 3; // quotes and comma
                    bytes <= MAX_CYCLE_BYTES_IN_DETAILS
                })
                .collect();
            let mut e = GraphError::new(Code::RelationCycle);
            if let Some(p) = o.provider_id {
                e = e.detail("providerId", p);
            }
            let listed = ids.len();
            e = e.detail("relation", relation.as_str()).detail("cycle", ids);
            if listed < cycle.len() {
                e = e.detail("cycleLength", cycle.len());
            }
            problems.push(e);
        }
    }
    problems
}

/// Returns the first cycle found as node indices, closed by repeating its first node.
pub fn find_cycle<'e>(n: usize, next: impl Fn(usize) -> &'e [u32]) -> Option<Vec<usize>> {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let mut colour = vec![WHITE; n];
    // (node, index of the next edge to follow)
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if colour[root] != WHITE {
            continue;
        }
        colour[root] = GREY;
        stack.push((root, 0));
        while let Some(&mut (node, ref mut edge)) = stack.last_mut() {
            crate::opcount::tick(crate::opcount::Op::CycleStep);
            let targets = next(node);
            if *edge == targets.len() {
                colour[node] = BLACK;
                stack.pop();
                continue;
            }
            let target = targets[*edge] as usize;
            *edge += 1;
            match colour[target] {
                WHITE => {
                    colour[target] = GREY;
                    stack.push((target, 0));
                }
                GREY => {
                    let start = stack.iter().position(|&(s, _)| s == target).unwrap_or(0);
                    let mut cycle: Vec<usize> = stack[start..].iter().map(|&(s, _)| s).collect();
                    cycle.push(target);
                    return Some(cycle);
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[&[u32]]) -> Vec<Vec<u32>> {
        edges.iter().map(|e| e.to_vec()).collect()
    }

    #[test]
    fn finds_self_loops_and_longer_cycles() {
        let g = graph(&[&[0]]);
        assert_eq!(find_cycle(1, |n| &g[n]), Some(vec![0, 0]));
        let g = graph(&[&[1], &[2], &[0]]);
        assert_eq!(find_cycle(3, |n| &g[n]), Some(vec![0, 1, 2, 0]));
        let g = graph(&[&[1, 2], &[2], &[]]);
        assert_eq!(find_cycle(3, |n| &g[n]), None);
    }

    #[test]
    fn deep_chains_do_not_recurse() {
        let n = 200_000;
        let g: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                if i + 1 < n {
                    vec![i as u32 + 1]
                } else {
                    vec![]
                }
            })
            .collect();
        assert_eq!(find_cycle(n, |i| &g[i]), None);
    }
}

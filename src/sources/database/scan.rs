//! The bulk relation scan as a read keeps it. A large provider's scan lists about a million
//! edges: kept as the JSON text they came as they would outweigh the records (some 90 bytes an
//! item), so each plain edge between two records read is kept as their positions and its kind
//! (12 bytes). Only a scan holding an item that is not such an edge is kept as text, from the
//! first item on, and then checked exactly as the text always was.

use super::*;

/// The items of a bulk relation scan so far.
#[derive(Debug)]
pub enum ScanItems {
    /// Every item so far `{ from, kind, to }` with both endpoints local IDs of records read
    /// and a known kind: (from, kind, to) as record positions in ID order and an index into
    /// [`Kind::ALL`].
    Edges(Vec<(u32, u32, u32)>),
    /// The items as comma-separated JSON, once one was not such an edge.
    Text(String),
}

/// Heap bytes of a scan's items kept as edges.
fn edge_bytes(edges: &Vec<(u32, u32, u32)>) -> usize {
    edges.capacity() * std::mem::size_of::<(u32, u32, u32)>()
}

impl ScanItems {
    /// Heap bytes held.
    pub(super) fn bytes(&self) -> usize {
        match self {
            ScanItems::Edges(edges) => edge_bytes(edges),
            ScanItems::Text(text) => text.capacity(),
        }
    }
}

impl Default for ScanItems {
    fn default() -> Self {
        ScanItems::Edges(Vec::new())
    }
}

/// The position of `id` among the record IDs read (`ids`, in strictly increasing order when
/// the scan order holds; a read where it does not is refused before its edges are looked at).
fn position(ids: &[Option<Box<str>>], id: &str) -> Option<u32> {
    let i = ids
        .binary_search_by(|probe| probe.as_deref().unwrap_or("").cmp(id))
        .ok()?;
    u32::try_from(i).ok()
}

/// `item` as an edge between records read, if it is exactly a plain one.
fn as_edge(ids: &[Option<Box<str>>], item: &RawValue) -> Option<(u32, u32, u32)> {
    let item = serde_json::from_str::<RelationItem>(item.get()).ok()?;
    let (EndpointItem::Local(from), EndpointItem::Local(to)) = (&item.from, &item.to) else {
        return None;
    };
    let kind = Kind::ALL.iter().position(|k| k.as_str() == item.kind)?;
    Some((position(ids, from)?, kind as u32, position(ids, to)?))
}

/// The JSON text of an edge kept as positions; `id` names the record at a position.
fn edge_text<'a>(edge: (u32, u32, u32), id: impl Fn(u32) -> &'a str) -> Result<String> {
    let (from, kind, to) = edge;
    Ok(format!(
        r#"{{"from":{},"kind":"{}","to":{}}}"#,
        text(&id(from))?,
        Kind::ALL[kind as usize].as_str(),
        text(&id(to))?
    ))
}

impl ScanItems {
    /// Keeps a page of the scan; `ids` are the record IDs read, in the order read.
    pub(super) fn keep(&mut self, ids: &[Option<Box<str>>], page: &[&RawValue]) -> Result<()> {
        for item in page {
            if let ScanItems::Edges(edges) = self {
                if let Some(edge) = as_edge(ids, item) {
                    edges.push(edge);
                    continue;
                }
                // From here on the scan is kept as it came; the edges before are written out
                // as the items they were.
                let mut list = String::new();
                let id = |i: u32| ids[i as usize].as_deref().unwrap_or_default();
                for &edge in edges.iter() {
                    join(&mut list, &edge_text(edge, id)?);
                }
                *self = ScanItems::Text(list);
            }
            if let ScanItems::Text(list) = self {
                join(list, item.get());
            }
        }
        Ok(())
    }

    /// The scan once read whole.
    pub(super) fn finish(self) -> Scanned {
        match self {
            ScanItems::Edges(edges) => Scanned::Edges(edges),
            ScanItems::Text(list) => Scanned::Json(format!("[{list}]")),
        }
    }
}

/// A bulk relation scan read whole: its edges as record positions, or the JSON array it came
/// as (see [`ScanItems`]).
#[derive(Debug)]
pub enum Scanned {
    Edges(Vec<(u32, u32, u32)>),
    Json(String),
}

impl Scanned {
    /// Heap bytes held.
    pub(super) fn bytes(&self) -> usize {
        match self {
            Scanned::Edges(edges) => edge_bytes(edges),
            Scanned::Json(text) => text.capacity(),
        }
    }

    /// The scan as a JSON array of its items; `id` names the record at a position.
    pub(super) fn json<'a>(&self, id: impl Fn(u32) -> &'a str) -> Result<String> {
        match self {
            Scanned::Json(text) => Ok(text.clone()),
            Scanned::Edges(edges) => {
                let mut items = String::new();
                for &edge in edges {
                    join(&mut items, &edge_text(edge, &id)?);
                }
                Ok(format!("[{items}]"))
            }
        }
    }
}

/// Whether the edges kept as positions are exactly the sequence the records declare and imply
/// (as [`relations_text_as_declared`] judges text). A read is validated only with its records
/// in strictly increasing ID order, and validation gives them sorted by ID: a record's position
/// in the read is its index in `v`.
pub(super) fn edges_as_declared(v: &ValidatedProvider, edges: &[(u32, u32, u32)]) -> bool {
    let n = v.capabilities.len();
    let relations = Kind::ALL.len() / 2;
    // The inverse lists, by (capability, relation): each record's sources in ID order.
    let mut starts = vec![0u32; n * relations + 1];
    for targets in &v.edges {
        for (r, list) in targets.iter().enumerate() {
            for &t in list {
                starts[t as usize * relations + r + 1] += 1;
            }
        }
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut sources = vec![0u32; starts[n * relations] as usize];
    let mut filled = starts.clone();
    for (i, targets) in v.edges.iter().enumerate() {
        for (r, list) in targets.iter().enumerate() {
            for &t in list {
                let slot = &mut filled[t as usize * relations + r];
                sources[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
    }
    let mut items = edges.iter();
    for (i, targets) in v.edges.iter().enumerate() {
        for (r, forward) in targets.iter().enumerate() {
            let at = i * relations + r;
            let inverse = &sources[starts[at] as usize..starts[at + 1] as usize];
            for (k, list) in [(2 * r, &forward[..]), (2 * r + 1, inverse)] {
                for &t in list {
                    if items.next() != Some(&(i as u32, k as u32, t)) {
                        return false;
                    }
                }
            }
        }
    }
    items.next().is_none()
}

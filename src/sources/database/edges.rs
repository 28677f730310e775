//! Checks of the edges a read gave (the per-capability streams or the bulk relation scan)
//! against the relations its records declare and imply.

use super::*;

/// Scans come in strictly increasing ID order, each record once.
pub(super) fn in_scan_order(ids: &[Option<Box<str>>]) -> Result<()> {
    if ids
        .windows(2)
        .any(|w| matches!(w, [Some(a), Some(b)] if a >= b))
    {
        return Err(contract("scan_order_or_duplicate"));
    }
    Ok(())
}

/// The streams `{ capabilityId: { kind: [endpoint…] } }` (left-out ones read empty) must list
/// exactly what the records declare or imply, capability by capability in ID order and kind by
/// kind in the order of [`Kind::ALL`]; the first that does not is the error.
pub(super) fn check_stream_map(
    v: &ValidatedProvider,
    provider_id: &str,
    streams: &Map<String, Value>,
    only: Option<&HashSet<&str>>,
) -> Result<()> {
    let wanted: Vec<bool> = v
        .capabilities
        .iter()
        .map(|c| only.is_none_or(|only| only.contains(c.texts.capability_id())))
        .collect();
    let expected = expected_lists(v, &wanted);
    check_stream_lists(
        |i| v.capabilities[i].texts.capability_id(),
        (0..v.capabilities.len()).filter(|&i| wanted[i]),
        |i, kind| &expected[i][kind as usize],
        provider_id,
        streams,
    )
}

/// The streams of capabilities `nodes` (in increasing order; `id(node)` their IDs) against the
/// lists they must be (`expected(node, kind)`, as nodes), capability by capability and kind by
/// kind in the order of [`Kind::ALL`]; the first that differs is the error.
pub(super) fn check_stream_lists<'a>(
    id: impl Fn(usize) -> &'a str,
    nodes: impl Iterator<Item = usize>,
    expected: impl Fn(usize, Kind) -> &'a [u32],
    provider_id: &str,
    streams: &Map<String, Value>,
) -> Result<()> {
    for i in nodes {
        let capability_id = id(i);
        let kinds = streams.get(capability_id);
        for kind in Kind::ALL {
            // Streams read empty are left out (`ReadCollector`); anything else present must
            // be the list.
            let listed = match kinds.and_then(|k| k.get(kind.as_str())) {
                None if kinds.is_none_or(Value::is_object) => Some(&[][..]),
                listed => listed.and_then(Value::as_array).map(Vec::as_slice),
            };
            let mismatch = || {
                contract(&format!("{}_stream_mismatch", kind.as_str()))
                    .detail("capabilityId", capability_id)
            };
            let listed = listed.map(|l| {
                l.iter()
                    .map(|item| endpoint(item, provider_id))
                    .collect::<Option<Vec<&str>>>()
            });
            let Some(listed) = listed else {
                return Err(mismatch());
            };
            let Some(listed) = listed else {
                return Err(
                    contract("neighbor_identity_invalid").detail("capabilityId", capability_id)
                );
            };
            let want = expected(i, kind);
            let same = listed.len() == want.len()
                && listed
                    .iter()
                    .zip(want)
                    .all(|(&got, &w)| got == id(w as usize));
            if !same {
                return Err(mismatch());
            }
        }
    }
    Ok(())
}

/// The eight relation lists of each `wanted` capability (the others' stay empty), as indices
/// in ID order: forward from the records, inverse derived. An incremental read wants only the
/// few its changes touched.
pub(super) fn expected_lists(v: &ValidatedProvider, wanted: &[bool]) -> Vec<[Vec<u32>; 8]> {
    let mut expected: Vec<[Vec<u32>; 8]> = vec![Default::default(); v.capabilities.len()];
    for (i, edges) in v.edges.iter().enumerate() {
        for (r, targets) in edges.iter().enumerate() {
            let (forward, inverse) = (2 * r, 2 * r + 1);
            if wanted[i] {
                expected[i][forward] = targets.clone();
            }
            for &t in targets {
                if wanted[t as usize] {
                    expected[t as usize][inverse].push(i as u32);
                }
            }
        }
    }
    expected
}

/// Whether the bulk relation scan is exactly the sequence the records declare and imply: one
/// pass, nothing built (the scan of a large provider holds a million items). When it is not,
/// [`check_relations`] takes the items apart to name the difference.
pub(super) fn relations_as_declared(
    v: &ValidatedProvider,
    provider_id: &str,
    items: &[Value],
) -> bool {
    let id = |i: usize| v.capabilities[i].texts.capability_id();
    let mut items = items.iter();
    for (i, kinds) in expected_lists(v, &vec![true; v.capabilities.len()])
        .iter()
        .enumerate()
    {
        for (k, targets) in kinds.iter().enumerate() {
            for &t in targets {
                let Some(m) = items.next().and_then(Value::as_object) else {
                    return false;
                };
                let field = |name| m.get(name).and_then(|e| endpoint(e, provider_id));
                let same = m.len() == 3
                    && m.get("kind").and_then(Value::as_str) == Some(Kind::ALL[k].as_str())
                    && field("from") == Some(id(i))
                    && field("to") == Some(id(t as usize));
                if !same {
                    return false;
                }
            }
        }
    }
    items.next().is_none()
}

/// An endpoint of a bulk scan item as read: a local ID, or `{ providerId, capabilityId }`
/// (exactly those two, strings).
pub(super) enum EndpointItem<'a> {
    Local(std::borrow::Cow<'a, str>),
    Qualified(std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>),
}

impl EndpointItem<'_> {
    pub(super) fn local(&self, provider_id: &str) -> Option<&str> {
        match self {
            EndpointItem::Local(id) => Some(id),
            EndpointItem::Qualified(p, id) => (p == provider_id).then_some(&**id),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for EndpointItem<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        use std::borrow::Cow;
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = EndpointItem<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an endpoint")
            }
            fn visit_borrowed_str<E: Error>(
                self,
                s: &'de str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(EndpointItem::Local(Cow::Borrowed(s)))
            }
            fn visit_str<E: Error>(self, s: &str) -> std::result::Result<Self::Value, E> {
                Ok(EndpointItem::Local(Cow::Owned(s.to_owned())))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let (mut provider, mut capability) = (None, None);
                while let Some(key) = m.next_key::<Cow<'a, str>>()? {
                    let slot = match &*key {
                        "providerId" => &mut provider,
                        "capabilityId" => &mut capability,
                        _ => return Err(A::Error::custom("unknown field")),
                    };
                    if slot.replace(m.next_value::<Cow<'a, str>>()?).is_some() {
                        return Err(A::Error::custom("duplicate field"));
                    }
                }
                match (provider, capability) {
                    (Some(p), Some(c)) => Ok(EndpointItem::Qualified(p, c)),
                    _ => Err(A::Error::custom("missing field")),
                }
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A bulk scan item as read: exactly `from`, `kind` and `to`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RelationItem<'a> {
    #[serde(borrow)]
    pub(super) from: EndpointItem<'a>,
    #[serde(borrow)]
    pub(super) kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    pub(super) to: EndpointItem<'a>,
}

/// [`relations_as_declared`] of the bulk scan as JSON text, read item by item as it is
/// compared: nothing is built, and the first item that differs (or is not a plain `{ from,
/// kind, to }`) ends the pass with `false`.
pub(super) fn relations_text_as_declared(
    v: &ValidatedProvider,
    provider_id: &str,
    text: &str,
) -> bool {
    use serde::de::{SeqAccess, Visitor};
    struct Expect<'v> {
        v: &'v ValidatedProvider,
        provider_id: &'v str,
    }
    impl<'de> Visitor<'de> for Expect<'_> {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("the relations")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<bool, A::Error> {
            let id = |i: usize| self.v.capabilities[i].texts.capability_id();
            for (i, kinds) in expected_lists(self.v, &vec![true; self.v.capabilities.len()])
                .iter()
                .enumerate()
            {
                for (k, targets) in kinds.iter().enumerate() {
                    for &t in targets {
                        let Some(item) = seq.next_element::<RelationItem>()? else {
                            return Ok(false);
                        };
                        let same = item.kind == Kind::ALL[k].as_str()
                            && item.from.local(self.provider_id) == Some(id(i))
                            && item.to.local(self.provider_id) == Some(id(t as usize));
                        if !same {
                            return Ok(false);
                        }
                    }
                }
            }
            Ok(seq.next_element::<serde::de::IgnoredAny>()?.is_none())
        }
    }
    use serde::Deserializer;
    let mut d = serde_json::Deserializer::from_str(text);
    let same = (&mut d).deserialize_seq(Expect { v, provider_id });
    matches!(same, Ok(true)) && d.end().is_ok()
}

/// The bulk relation scan must list exactly what the eight streams of every capability would,
/// in one sequence: by capability in ID order, then by kind in the order of [`Kind::ALL`], then
/// by endpoint in ID order. Its items are taken as the streams they form (by capability and
/// kind) and checked as streams are, so a lie the streams could tell fails as it would there;
/// then an item that forms no stream of a record (`neighbor_identity_invalid`, or
/// `<kind>_stream_mismatch` for an edge from a capability not in the provider) and streams out
/// of sequence (`<kind>_stream_mismatch` of the one that comes too late) fail.
pub(super) fn check_relations(
    v: &ValidatedProvider,
    provider_id: &str,
    items: &[Value],
) -> Result<()> {
    if relations_as_declared(v, provider_id, items) {
        return Ok(());
    }
    let id = |i: usize| v.capabilities[i].texts.capability_id();
    let index: std::collections::HashMap<&str, usize> =
        (0..v.capabilities.len()).map(|i| (id(i), i)).collect();
    let mismatch = |k: usize| contract(&format!("{}_stream_mismatch", Kind::ALL[k].as_str()));
    let mut streams = Map::new();
    // The (capability, kind) of each item that forms a stream, in the order listed.
    let mut sequence: Vec<(usize, usize)> = Vec::with_capacity(items.len());
    let mut stray = None;
    for item in items {
        // Exactly `from`, `kind` and `to`; `from` names the item's capability either way.
        let fields = item.as_object().filter(|m| m.len() == 3);
        let field = |name: &str| fields.and_then(|m| m.get(name));
        let from = item.get("from").and_then(|f| endpoint(f, provider_id));
        let record = from.and_then(|f| index.get(f).copied());
        let kind = field("kind")
            .and_then(Value::as_str)
            .and_then(|k| Kind::ALL.iter().position(|kind| kind.as_str() == k));
        match (record, kind, field("to")) {
            (Some(i), Some(k), Some(to)) => {
                sequence.push((i, k));
                let kinds = streams
                    .entry(id(i))
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(list) = kinds
                    .as_object_mut()
                    .map(|m| m.entry(Kind::ALL[k].as_str()).or_insert_with(|| json!([])))
                    .and_then(Value::as_array_mut)
                {
                    list.push(to.clone());
                }
            }
            _ if stray.is_some() => {}
            // An edge of a capability this provider does not have.
            (None, Some(k), Some(to)) if from.is_some() && endpoint(to, provider_id).is_some() => {
                stray = Some(mismatch(k));
            }
            _ => {
                let error = contract("neighbor_identity_invalid");
                stray = Some(match record {
                    Some(i) => error.detail("capabilityId", id(i)),
                    None => error,
                });
            }
        }
    }
    check_stream_map(v, provider_id, &streams, None)?;
    if let Some(error) = stray {
        return Err(error);
    }
    match sequence.windows(2).find(|w| w[1] < w[0]) {
        Some(w) => Err(mismatch(w[1].1).detail("capabilityId", id(w[1].0))),
        None => Ok(()),
    }
}

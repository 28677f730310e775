//! Effective scope (host ∩ integration ∩ request), revision selection (current or previous)
//! and the common result `meta` (SPEC §6.3, §14 D3–D4).

use crate::error::input_invalid as invalid;
use crate::error::{Code, GraphError, Result};
use crate::ids::is_id;
use crate::json::to_json;
use crate::snapshot::revision::composite_revision;
use crate::snapshot::ProviderSnapshot;
use crate::store::StoreState;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServedFrom {
    Current,
    Previous,
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Completeness {
    Complete,
    Truncated,
    Partial,
}

/// The snapshots one call reads: one per provider of its effective scope, in ID order.
pub struct View {
    pub scope: Vec<String>,
    pub served: Vec<(Arc<ProviderSnapshot>, ServedFrom)>,
    pub refresh_failed: bool,
}

impl View {
    pub fn position(&self, provider_id: &str) -> Option<usize> {
        self.scope
            .binary_search_by(|p| p.as_str().cmp(provider_id))
            .ok()
    }

    pub fn snapshot(&self, i: usize) -> &ProviderSnapshot {
        &self.served[i].0
    }
}

/// The effective scope of a call: every configured provider, narrowed by
/// `requestProviderScope` (an array of IDs, each configured) or by a bound facade.
pub fn effective_scope(
    state: &StoreState,
    request: Option<&Value>,
    bound: Option<&str>,
) -> Result<Vec<String>> {
    if let Some(p) = bound {
        if request.is_some() {
            return Err(invalid(
                "requestProviderScope",
                "absent on a provider-bound graph",
            ));
        }
        return Ok(vec![p.to_owned()]);
    }
    let Some(request) = request else {
        return Ok(state.providers.keys().cloned().collect());
    };
    let items = request
        .as_array()
        .ok_or_else(|| invalid("requestProviderScope", "array of provider IDs"))?;
    let mut scope = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let id = item
            .as_str()
            .filter(|s| is_id(s))
            .ok_or_else(|| invalid(&format!("requestProviderScope[{i}]"), "ID"))?;
        scope.push(id.to_owned());
    }
    if scope.iter().any(|p| !state.providers.contains_key(p)) {
        return Err(GraphError::new(Code::ScopeDenied));
    }
    scope.sort_unstable();
    scope.dedup();
    Ok(scope)
}

/// Revisions a call requires, per provider.
pub type Pins = BTreeMap<String, String>;

/// Serves every provider of `scope` from current, or from the snapshot whose revision `pins`
/// requires (current or the retained previous; anything else is `CG_REVISION_MISMATCH`).
pub fn view(state: &StoreState, scope: Vec<String>, pins: &Pins) -> Result<View> {
    let mut served = Vec::with_capacity(scope.len());
    let mut refresh_failed = false;
    for id in &scope {
        let slots = state
            .providers
            .get(id)
            .ok_or_else(|| GraphError::new(Code::ProviderNotFound))?;
        refresh_failed |= slots.refresh_failed;
        let entry = match pins.get(id) {
            None => (slots.current.clone(), ServedFrom::Current),
            Some(rev) if *rev == slots.current.static_revision => {
                (slots.current.clone(), ServedFrom::Current)
            }
            Some(rev) => match &slots.previous {
                Some(prev) if prev.static_revision == *rev => (prev.clone(), ServedFrom::Previous),
                _ => return Err(GraphError::new(Code::RevisionMismatch)),
            },
        };
        served.push(entry);
    }
    Ok(View {
        scope,
        served,
        refresh_failed,
    })
}

/// `meta` as every result carries it; verbs add their own fields to `extra`. Printed by
/// [`Meta::write`]: every answer carries one, so it is written directly rather than through a
/// serialiser's map with a flattened tail.
pub struct Meta {
    pub completeness: Completeness,
    pub warnings: Vec<Value>,
    pub scope: Vec<String>,
    pub served_from: ServedFrom,
    pub composite_static_revision: String,
    pub static_revision: Option<String>,
    pub static_revision_by_provider: Option<BTreeMap<String, String>>,
    pub served_from_by_provider: Option<BTreeMap<String, ServedFrom>>,
    pub refresh_failed: bool,
    pub extra: Map<String, Value>,
}

impl Completeness {
    /// The value as a JSON string, quotes included.
    pub fn json(self) -> &'static str {
        match self {
            Completeness::Complete => r#""complete""#,
            Completeness::Truncated => r#""truncated""#,
            Completeness::Partial => r#""partial""#,
        }
    }
}

impl ServedFrom {
    fn json(self) -> &'static str {
        match self {
            ServedFrom::Current => r#""current""#,
            ServedFrom::Previous => r#""previous""#,
            ServedFrom::Mixed => r#""mixed""#,
        }
    }
}

impl Meta {
    /// Compact JSON: `completeness`, `warnings`, `scope`, `servedFrom`,
    /// `compositeStaticRevision`, then `staticRevision`, `staticRevisionByProvider`,
    /// `servedFromByProvider` and `refreshFailed` when present, then `extra` in insertion order.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(192);
        self.write(&mut out, |_| {});
        out
    }

    /// The meta as a JSON value, for the answers still assembled as one.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.to_json()).unwrap_or_default()
    }

    /// Appends the meta object; `more` appends members after `extra`'s, each led by a comma.
    /// Provider IDs and revisions need no escaping (ID pattern; `s:` and hex digits).
    pub fn write(&self, out: &mut String, more: impl FnOnce(&mut String)) {
        out.push_str(r#"{"completeness":"#);
        out.push_str(self.completeness.json());
        out.push_str(r#","warnings":"#);
        out.push_str(&to_json(&self.warnings));
        out.push_str(r#","scope":["#);
        for (i, p) in self.scope.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_quoted(out, p);
        }
        out.push_str(r#"],"servedFrom":"#);
        out.push_str(self.served_from.json());
        out.push_str(r#","compositeStaticRevision":"#);
        push_quoted(out, &self.composite_static_revision);
        if let Some(r) = &self.static_revision {
            out.push_str(r#","staticRevision":"#);
            push_quoted(out, r);
        }
        if let Some(map) = &self.static_revision_by_provider {
            out.push_str(r#","staticRevisionByProvider":"#);
            write_object(out, map.iter().map(|(p, r)| (p, r.as_str())), push_quoted);
        }
        if let Some(map) = &self.served_from_by_provider {
            out.push_str(r#","servedFromByProvider":"#);
            write_object(out, map.iter().map(|(p, f)| (p, f.json())), |out, v| {
                out.push_str(v)
            });
        }
        if self.refresh_failed {
            out.push_str(r#","refreshFailed":true"#);
        }
        for (key, value) in &self.extra {
            out.push(',');
            out.push_str(&to_json(key));
            out.push(':');
            out.push_str(&to_json(value));
        }
        more(out);
        out.push('}');
    }

    /// Base meta of a view: `staticRevision` for one provider, the by-provider pair for
    /// several (or always, with `by_provider`).
    pub fn of(view: &View, by_provider: bool) -> Meta {
        let revisions = || {
            view.scope
                .iter()
                .zip(&view.served)
                .map(|(id, (s, _))| (id.as_str(), s.static_revision.as_str()))
        };
        let froms: Vec<ServedFrom> = view.served.iter().map(|(_, f)| *f).collect();
        let served_from = match froms.first() {
            Some(first) if froms.iter().any(|f| f != first) => ServedFrom::Mixed,
            Some(first) => *first,
            None => ServedFrom::Current,
        };
        let several = by_provider || view.scope.len() > 1;
        Meta {
            completeness: Completeness::Complete,
            warnings: Vec::new(),
            scope: view.scope.clone(),
            served_from,
            composite_static_revision: composite_revision(revisions()),
            static_revision: (view.scope.len() == 1)
                .then(|| view.served[0].0.static_revision.clone()),
            static_revision_by_provider: several.then(|| {
                revisions()
                    .map(|(a, b)| (a.to_owned(), b.to_owned()))
                    .collect()
            }),
            served_from_by_provider: several.then(|| {
                view.scope
                    .iter()
                    .cloned()
                    .zip(froms.iter().copied())
                    .collect()
            }),
            refresh_failed: view.refresh_failed,
            extra: Map::new(),
        }
    }
}

fn push_quoted(out: &mut String, s: &str) {
    debug_assert!(crate::json::prints_as_is(s));
    out.push('"');
    out.push_str(s);
    out.push('"');
}

fn write_object<'a, V>(
    out: &mut String,
    members: impl Iterator<Item = (&'a String, V)>,
    value: impl Fn(&mut String, V),
) {
    out.push('{');
    for (i, (key, v)) in members.enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_quoted(out, key);
        out.push(':');
        value(out, v);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The member order hosts and the equivalence records rely on, every optional member set.
    #[test]
    fn meta_prints_every_member_in_order() {
        let mut meta = Meta {
            completeness: Completeness::Truncated,
            warnings: vec![serde_json::json!({ "code": "w", "text": "a \"quoted\" word" })],
            scope: vec!["a.one".into(), "b.two".into()],
            served_from: ServedFrom::Mixed,
            composite_static_revision: "s:00aa".into(),
            static_revision: Some("s:11bb".into()),
            static_revision_by_provider: Some(BTreeMap::from([
                ("b.two".into(), "s:22".into()),
                ("a.one".into(), "s:11".into()),
            ])),
            served_from_by_provider: Some(BTreeMap::from([
                ("a.one".into(), ServedFrom::Current),
                ("b.two".into(), ServedFrom::Previous),
            ])),
            refresh_failed: true,
            extra: Map::new(),
        };
        meta.extra
            .insert("view".into(), serde_json::json!({ "n": 1 }));
        meta.extra
            .insert("budgets".into(), serde_json::json!({ "x.max": 2 }));
        let expected = concat!(
            r#"{"completeness":"truncated","warnings":[{"code":"w","text":"a \"quoted\" word"}],"#,
            r#""scope":["a.one","b.two"],"servedFrom":"mixed","compositeStaticRevision":"s:00aa","#,
            r#""staticRevision":"s:11bb","staticRevisionByProvider":{"a.one":"s:11","b.two":"s:22"},"#,
            r#""servedFromByProvider":{"a.one":"current","b.two":"previous"},"refreshFailed":true,"#,
            r#""view":{"n":1},"budgets":{"x.max":2}}"#
        );
        assert_eq!(meta.to_json(), expected);
        assert_eq!(
            meta.to_value(),
            serde_json::from_str::<Value>(expected).unwrap()
        );
        let mut more = String::new();
        meta.write(&mut more, |out| out.push_str(r#","last":0"#));
        assert_eq!(
            more,
            expected.replace(r#"{"x.max":2}}"#, r#"{"x.max":2},"last":0}"#)
        );
    }

    #[test]
    fn meta_leaves_out_absent_members() {
        let meta = Meta {
            completeness: Completeness::Complete,
            warnings: Vec::new(),
            scope: vec!["a.one".into()],
            served_from: ServedFrom::Current,
            composite_static_revision: "s:00".into(),
            static_revision: None,
            static_revision_by_provider: None,
            served_from_by_provider: None,
            refresh_failed: false,
            extra: Map::new(),
        };
        assert_eq!(
            meta.to_json(),
            r#"{"completeness":"complete","warnings":[],"scope":["a.one"],"servedFrom":"current","compositeStaticRevision":"s:00"}"#
        );
    }
}

//! `listProviders`, `getProvider` (with the first page of its specification documents) and
//! `listSpecificationDocuments`.

use super::documents::{doc_page, embedded, DocLimits};
use crate::cursor::Binding;
use crate::definitions::model::AppliesTo;
use crate::error::{Code, GraphError, Result};
use crate::ids::is_id;
use crate::json::to_json;
use crate::query::args::{clamped_integer, invalid, pair, Args};
use crate::query::Call;
use crate::scope::{Completeness, Meta, View};
use crate::snapshot::ProviderSnapshot;
use serde::Serialize;
use serde_json::{json, Value};

const PIN_KEYS: [&str; 3] = [
    "requestProviderScope",
    "requiredStaticRevision",
    "requiredStaticRevisionByProvider",
];

#[derive(Serialize)]
struct SpecificationSummary<'a> {
    #[serde(rename = "specificationId")]
    specification_id: &'a str,
    version: &'a str,
    #[serde(rename = "appliesTo", skip_serializing_if = "Option::is_none")]
    applies_to: Option<&'a AppliesTo>,
    #[serde(rename = "documentCount")]
    document_count: usize,
}

#[derive(Serialize)]
struct ProviderSummary<'a> {
    #[serde(rename = "providerId")]
    provider_id: &'a str,
    name: &'a str,
    version: &'a str,
    #[serde(rename = "authorityKind")]
    authority_kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    specification: Option<SpecificationSummary<'a>>,
    #[serde(rename = "staticRevision")]
    static_revision: &'a str,
}

impl<'a> ProviderSummary<'a> {
    fn new(s: &'a ProviderSnapshot) -> ProviderSummary<'a> {
        let p = &s.provider;
        ProviderSummary {
            provider_id: &p.provider_id,
            name: &p.name,
            version: &p.version,
            authority_kind: s.authority.as_str(),
            specification: p.specification.as_ref().map(|spec| SpecificationSummary {
                specification_id: &spec.specification_id,
                version: &spec.version,
                applies_to: spec.applies_to.as_ref(),
                document_count: spec.documents.len(),
            }),
            static_revision: &s.static_revision,
        }
    }
}

pub fn list_providers(call: &Call, json: &str) -> Result<String> {
    let args = Args::parse(json, &PIN_KEYS)?;
    let view = call.view(&args, None::<std::iter::Empty<&str>>)?;
    let items: Vec<ProviderSummary> = view
        .served
        .iter()
        .map(|(s, _)| ProviderSummary::new(s))
        .collect();
    Ok(format!(
        r#"{{"items":{},"meta":{}}}"#,
        to_json(&items),
        Meta::of(&view, false).to_json()
    ))
}

/// A provider named explicitly: a valid ID → configured → inside this call's scope.
fn provider_target(call: &Call, view: &View, v: Option<&Value>, field: &str) -> Result<usize> {
    let id = v
        .and_then(Value::as_str)
        .filter(|s| is_id(s))
        .ok_or_else(|| invalid(field, "provider ID"))?;
    if !call.state.providers.contains_key(id) {
        return Err(GraphError::new(Code::ProviderNotFound));
    }
    view.position(id)
        .ok_or_else(|| GraphError::new(Code::AccessDenied))
}

fn spec_binding<'a>(s: &'a ProviderSnapshot, filter: &'a str) -> Binding<'a> {
    Binding {
        kind: "specification-documents",
        revision: &s.static_revision,
        filter,
    }
}

fn spec_filter(s: &ProviderSnapshot, limit: u64) -> String {
    json!({ "providerId": s.provider_id(), "limit": limit }).to_string()
}

pub fn get_provider(call: &Call, json: &str) -> Result<String> {
    let (target, query) = pair(json)?;
    let args = Args::from_value(query, &PIN_KEYS)?;
    let view = call.view_of_one(&args, target.as_str())?;
    let p = provider_target(call, &view, Some(&target), "providerId")?;
    let s = view.snapshot(p);
    let budget = &call.budgets.specification;
    let mut meta = Meta::of(&view, false);
    meta.extra.insert(
        "budgets".into(),
        json!({ "specification.maxBytes": budget.max_bytes, "specification.maxItemBytes": budget.max_item_bytes }),
    );
    let summary = to_json(&ProviderSummary::new(s));
    let Some(spec) = &s.provider.specification else {
        return finish_provider(&summary, None, &meta, budget.max_bytes);
    };
    meta.completeness = Completeness::Truncated;
    let fixed = summary.len()
        + meta.to_json().len()
        + r#","specificationDocuments":{"items":,"completeness":"truncated"},"meta":"#.len();
    let filter = spec_filter(s, budget.default_page_size);
    let limits = DocLimits {
        count: budget.default_page_size,
        max_item_bytes: budget.max_item_bytes,
        item_budget: "specification.maxItemBytes",
        max_bytes: budget.max_bytes,
        page_budget: "specification.maxBytes",
    };
    let page = doc_page(
        &spec.documents,
        None,
        &spec_binding(s, &filter),
        &limits,
        fixed,
    )?;
    // The result's completeness is its embedded page's (SPEC §14 D4).
    meta.completeness = page.completeness();
    finish_provider(&summary, Some(embedded(&page)), &meta, budget.max_bytes)
}

fn finish_provider(
    summary: &str,
    documents: Option<String>,
    meta: &Meta,
    max_bytes: u64,
) -> Result<String> {
    // The summary's closing brace is replaced by the extra members.
    let mut out = summary[..summary.len() - 1].to_owned();
    if let Some(d) = documents {
        out.push_str(r#","specificationDocuments":"#);
        out.push_str(&d);
    }
    out.push_str(r#","meta":"#);
    out.push_str(&meta.to_json());
    out.push('}');
    if out.len() as u64 > max_bytes {
        return Err(GraphError::new(Code::ResultTooLarge)
            .detail("budget", "specification.maxBytes")
            .detail("limit", max_bytes));
    }
    Ok(out)
}

pub fn list_specification_documents(call: &Call, json: &str) -> Result<String> {
    let keys = [
        "providerId",
        "cursor",
        "limit",
        "requestProviderScope",
        "requiredStaticRevision",
        "requiredStaticRevisionByProvider",
    ];
    let args = Args::parse(json, &keys)?;
    let target = match (args.get("providerId")?, call.bound) {
        (Some(v), _) => v.clone(),
        (None, Some(p)) => Value::from(p),
        (None, None) => return Err(invalid("providerId", "provider ID")),
    };
    let budget = &call.budgets.specification;
    let limit = match args.get("limit")? {
        None => budget.default_page_size,
        Some(v) => clamped_integer(v, "limit", 1, budget.max_page_size)?,
    };
    let cursor = args.string("cursor")?;
    let view = call.view_of_one(&args, target.as_str())?;
    let p = provider_target(call, &view, Some(&target), "providerId")?;
    let s = view.snapshot(p);
    let mut meta = Meta::of(&view, false);
    meta.extra.insert(
        "budgets".into(),
        json!({ "specification.maxBytes": budget.max_bytes, "specification.maxItemBytes": budget.max_item_bytes }),
    );
    meta.completeness = Completeness::Truncated;
    let provider_json = to_json(&s.provider_id());
    let fixed = r#"{"providerId":,"items":,"completeness":"truncated","meta":}"#.len()
        + provider_json.len()
        + meta.to_json().len();
    let docs = s
        .provider
        .specification
        .as_ref()
        .map_or(&[][..], |spec| &spec.documents[..]);
    let filter = spec_filter(s, limit);
    let limits = DocLimits {
        count: limit,
        max_item_bytes: budget.max_item_bytes,
        item_budget: "specification.maxItemBytes",
        max_bytes: budget.max_bytes,
        page_budget: "specification.maxBytes",
    };
    let page = doc_page(docs, cursor, &spec_binding(s, &filter), &limits, fixed)?;
    meta.completeness = page.completeness();
    let completeness = to_json(&meta.completeness);
    let mut out = format!(
        r#"{{"providerId":{provider_json},"items":{},"completeness":{completeness}"#,
        page.items
    );
    if let Some(c) = &page.next_cursor {
        out.push_str(&format!(r#","nextCursor":"{c}""#));
    }
    out.push_str(&format!(r#","meta":{}}}"#, meta.to_json()));
    crate::query::page::within_budget(out, "specification.maxBytes", budget.max_bytes)
}

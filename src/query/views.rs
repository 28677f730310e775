//! How snapshot data is printed in results. Keys follow the reference's record shapes.

use crate::json::{prints_as_is, to_json};
use crate::snapshot::{Capability, Kind, Plain, ProviderSnapshot};
use serde::Serialize;

#[derive(Serialize, Clone, Copy)]
pub struct CapabilityId<'a> {
    #[serde(rename = "providerId")]
    pub provider_id: &'a str,
    #[serde(rename = "capabilityId")]
    pub capability_id: &'a str,
}

impl<'a> CapabilityId<'a> {
    /// The ID of capability `node` of snapshot `s`.
    pub fn of(s: &'a ProviderSnapshot, node: u32) -> CapabilityId<'a> {
        CapabilityId {
            provider_id: s.provider_id(),
            capability_id: s.capability(node).id(),
        }
    }
}

/// The members of the full static record of one capability (`StaticCapability`), without
/// braces: `id`, `qualifiedId`, `name`, `description`, `whenToUse`, `distinction` when there is
/// one, `examples`, the four declared relations, `knowledge`, `staticRevision`. Written
/// directly, like catalog rows; knowledge references go through their serialiser.
pub fn write_static_members(out: &mut String, s: &ProviderSnapshot, node: u32) {
    let c = s.capability(node);
    write_identity(out, CapabilityId::of(s, node));
    write_texts(out, c);
    write_distinction(out, c);
    write_examples(out, c);
    for (key, kind) in [
        ("parents", Kind::Parents),
        ("specializes", Kind::Specializes),
        ("related", Kind::Related),
        ("requires", Kind::Requires),
    ] {
        out.push_str(",\"");
        out.push_str(key);
        out.push_str("\":");
        write_ids(
            out,
            s.neighbours(node, kind)
                .iter()
                .map(|&t| CapabilityId::of(s, t)),
        );
    }
    out.push_str(r#","knowledge":"#);
    out.push_str(&to_json(&c.knowledge));
    out.push_str(r#","staticRevision":""#);
    out.push_str(&s.static_revision);
    out.push('"');
}

/// One row of the catalog and of neighbour groups (`CatalogRecord`) as compact JSON: `id`,
/// `qualifiedId`, `providerId`, `name`, `description`, `whenToUse`, `staticRevision`, then
/// `distinction` when there is one. Rows are most of what catalog and neighbour pages print,
/// so they are written directly (see [`write_str`]).
pub fn catalog_row(s: &ProviderSnapshot, node: u32) -> String {
    let mut out = String::with_capacity(catalog_row_estimate(s, node));
    write_catalog_row(&mut out, s, node);
    out
}

/// About the bytes of [`catalog_row`] (exact unless a text needs escapes), to size buffers.
pub fn catalog_row_estimate(s: &ProviderSnapshot, node: u32) -> usize {
    let c = s.capability(node);
    let texts = c.name().len()
        + c.description().len()
        + c.when_to_use().len()
        + c.distinction().as_ref().map_or(0, |d| d.len() + 16);
    let ids = 3 * s.provider_id().len() + 2 * c.id().len() + s.static_revision.len();
    texts + ids + 128
}

/// Appends [`catalog_row`] to `out`.
pub fn write_catalog_row(out: &mut String, s: &ProviderSnapshot, node: u32) {
    let c = s.capability(node);
    let provider_id = s.provider_id();
    out.push('{');
    write_identity(out, CapabilityId::of(s, node));
    // IDs and revisions need no escaping (ID pattern; `s:` and hex digits).
    out.push_str(r#","providerId":""#);
    out.push_str(provider_id);
    out.push('"');
    write_texts(out, c);
    out.push_str(r#","staticRevision":""#);
    out.push_str(&s.static_revision);
    out.push('"');
    write_distinction(out, c);
    out.push('}');
}

/// Appends `s` as a JSON string, byte for byte as serde_json prints it; a string with nothing
/// to escape (nearly every one) is copied as it is.
pub fn write_str(out: &mut String, s: &str) {
    write_known(out, s, prints_as_is(s));
}

/// [`write_str`] for a text known to print as it is (a capability's [`Plain`]); `false` only
/// means "may need escapes".
pub fn write_known(out: &mut String, s: &str, as_is: bool) {
    debug_assert!(!as_is || prints_as_is(s));
    if as_is {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&to_json(&s));
    }
}

/// `{ id, staticRevision }`, as `meta.view.capabilities` lists what a result was read from.
#[derive(Serialize)]
pub struct ViewEntry<'a> {
    pub id: CapabilityId<'a>,
    #[serde(rename = "staticRevision")]
    pub static_revision: &'a str,
}

impl<'a> ViewEntry<'a> {
    pub fn new(s: &'a ProviderSnapshot, node: u32) -> ViewEntry<'a> {
        ViewEntry {
            id: CapabilityId::of(s, node),
            static_revision: &s.static_revision,
        }
    }
}

impl ViewEntry<'_> {
    /// Appends `{"id":{…},"staticRevision":"…"}`, as its serialiser prints it.
    pub fn write(&self, out: &mut String) {
        out.push_str(r#"{"id":"#);
        write_id(out, self.id);
        out.push_str(r#","staticRevision":""#);
        out.push_str(self.static_revision);
        out.push_str(r#""}"#);
    }
}

/// Appends the meta member `,"budgets":{…}`: the budgets a verb applied, by name.
pub fn write_budgets_member(out: &mut String, budgets: &[(&str, u64)]) {
    out.push_str(r#","budgets":{"#);
    for (i, (name, limit)) in budgets.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(name);
        out.push_str("\":");
        out.push_str(&limit.to_string());
    }
    out.push('}');
}

/// Appends the meta member `,"view":{"capabilities":[…]}`: what a result was read from.
pub fn write_view_member<'a>(out: &mut String, entries: impl IntoIterator<Item = ViewEntry<'a>>) {
    out.push_str(r#","view":{"capabilities":["#);
    for (i, e) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        e.write(out);
    }
    out.push_str("]}");
}

/// Appends `{"providerId":…,"capabilityId":…}` as compact JSON. Both IDs match `ID_PATTERN`
/// (validated at load), so nothing in them needs escaping: the hot answers made of IDs are
/// written without a serialiser's per-byte escape scan.
pub fn write_id(out: &mut String, id: CapabilityId) {
    debug_assert!(crate::ids::is_id(id.provider_id) && crate::ids::is_id(id.capability_id));
    out.push_str(r#"{"providerId":""#);
    out.push_str(id.provider_id);
    out.push_str(r#"","capabilityId":""#);
    out.push_str(id.capability_id);
    out.push_str(r#""}"#);
}

/// Appends the members `"id":{…},"qualifiedId":"provider::capability"` (no braces).
pub fn write_identity(out: &mut String, id: CapabilityId) {
    out.push_str(r#""id":"#);
    write_id(out, id);
    out.push_str(r#","qualifiedId":""#);
    out.push_str(id.provider_id);
    out.push_str(crate::ids::QUALIFIED_SEPARATOR);
    out.push_str(id.capability_id);
    out.push('"');
}

/// Appends the member `,"key":"text"` (see [`write_known`]).
fn write_text_member(out: &mut String, key: &str, text: &str, as_is: bool) {
    out.push_str(",\"");
    out.push_str(key);
    out.push_str("\":");
    write_known(out, text, as_is);
}

/// Appends a capability's `name`, `description` and `whenToUse` members.
pub fn write_texts(out: &mut String, c: &Capability) {
    write_text_member(out, "name", c.name(), c.plain.has(Plain::NAME));
    write_text_member(
        out,
        "description",
        c.description(),
        c.plain.has(Plain::DESCRIPTION),
    );
    write_text_member(
        out,
        "whenToUse",
        c.when_to_use(),
        c.plain.has(Plain::WHEN_TO_USE),
    );
}

/// Appends a capability's `distinction` member, when it has one.
pub fn write_distinction(out: &mut String, c: &Capability) {
    if let Some(d) = &c.distinction() {
        write_text_member(out, "distinction", d, c.plain.has(Plain::DISTINCTION));
    }
}

/// Appends a capability's `examples` member.
pub fn write_examples(out: &mut String, c: &Capability) {
    out.push_str(r#","examples":["#);
    for (i, e) in c.examples.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_known(out, e, c.plain.has(Plain::EXAMPLES));
    }
    out.push(']');
}

/// Appends a JSON array of IDs (see [`write_id`]).
pub fn write_ids<'a>(out: &mut String, ids: impl IntoIterator<Item = CapabilityId<'a>>) {
    out.push('[');
    for (i, id) in ids.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_id(out, id);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn catalog_rows_carry_every_field_in_record_order() {
        let definition = json!({ "providerId": "acme", "name": "Acme", "version": "1", "capabilities": [
            { "capabilityId": "a.plain", "name": "Plain", "description": "Does \"quoted\" things\n",
              "whenToUse": "Use it.", "distinction": "Not the other one." },
            { "capabilityId": "b.bare", "name": "Bare", "description": "D", "whenToUse": "W" },
        ] });
        let s = ProviderSnapshot::of_inline(&definition);
        let expected = |i: u32| {
            let c = s.capability(i);
            let mut row = json!({
                "id": { "providerId": "acme", "capabilityId": c.id() },
                "qualifiedId": format!("acme::{}", c.id()),
                "providerId": "acme",
                "name": c.name(),
                "description": c.description(),
                "whenToUse": c.when_to_use(),
                "staticRevision": s.static_revision,
            });
            if let Some(d) = &c.distinction() {
                row["distinction"] = json!(d);
            }
            row.to_string()
        };
        for i in 0..2 {
            assert_eq!(catalog_row(&s, i), expected(i));
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut every_byte = String::new();
        for c in (0u32..0x80).chain([0xe9, 0x2028, 0x2029, 0xfeff, 0x1f600]) {
            every_byte.push(char::from_u32(c).unwrap());
        }
        let cases = [
            "",
            "plain words",
            "a \"quoted\" word",
            r"back\slash",
            "tab\there, line\nbreak, bell\u{7}, delete\u{7f}",
            "Ünïcödé and 中文 and \u{2028} separators",
            "</script> & 'single'",
            every_byte.as_str(),
        ];
        for case in cases {
            let mut out = String::new();
            write_str(&mut out, case);
            assert_eq!(out, serde_json::to_string(case).unwrap(), "{case:?}");
        }
    }

    #[test]
    fn view_members_are_written_as_their_serialiser_writes_them() {
        let definition = json!({ "providerId": "acme", "name": "Acme", "version": "1", "capabilities": [
            { "capabilityId": "a.one", "name": "One", "description": "D", "whenToUse": "W" },
            { "capabilityId": "b.two", "name": "Two", "description": "D", "whenToUse": "W" },
        ] });
        let s = ProviderSnapshot::of_inline(&definition);
        let mut out = String::new();
        write_view_member(&mut out, (0..2).map(|n| ViewEntry::new(&s, n)));
        let entries: Vec<ViewEntry> = (0..2).map(|n| ViewEntry::new(&s, n)).collect();
        assert_eq!(
            out,
            format!(r#","view":{}"#, json!({ "capabilities": entries }))
        );
    }

    #[test]
    fn texts_known_at_load_to_need_escapes_are_escaped() {
        let definition = json!({ "providerId": "acme", "name": "Acme", "version": "1", "capabilities": [
            { "capabilityId": "a.one", "name": "One \"1\"", "description": "line\nbreak",
              "whenToUse": "back\\slash", "distinction": "tab\there",
              "examples": ["plain", "\"quoted\""] },
            { "capabilityId": "b.two", "name": "Two", "description": "D", "whenToUse": "W",
              "distinction": "Plain.", "examples": ["plain"] },
        ] });
        let s = ProviderSnapshot::of_inline(&definition);
        for node in 0..2 {
            let c = s.capability(node);
            let mut out = String::new();
            write_texts(&mut out, c);
            write_distinction(&mut out, c);
            write_examples(&mut out, c);
            let expected = json!({
                "name": c.name(), "description": c.description(), "whenToUse": c.when_to_use(),
                "distinction": c.distinction(), "examples": c.examples,
            })
            .to_string();
            assert_eq!(format!("{{{}}}", &out[1..]), expected);
        }
    }

    #[test]
    fn budgets_members_are_written_as_their_serialiser_writes_them() {
        let mut out = String::new();
        write_budgets_member(&mut out, &[("a.maxBytes", 24_576), ("a.maxItems", 0)]);
        let expected = json!({ "a.maxBytes": 24_576, "a.maxItems": 0 });
        assert_eq!(out, format!(r#","budgets":{expected}"#));
    }
}

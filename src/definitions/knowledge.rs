//! Knowledge references: documents, collections and locators (reference/definitions.md §6).
//! Only shapes and locator syntax are checked here; existence and real paths are read-time
//! concerns (SPEC §14 D8).

use super::fields::{array, bounded_text, check_keys, index, join, object, text, Origin};
use super::locale::normalize_locale;
use super::model::{CollectionRef, DocumentKind, DocumentRef, KnowledgeRef, Locator};
use crate::error::GraphError;
use crate::ids::{is_knowledge_id, is_root_alias};
use serde_json::Value;
use std::collections::HashMap;

const TITLE_MAX_BYTES: usize = 256;
const SUMMARY_MAX_BYTES: usize = 2048;
const URL_MAX_BYTES: usize = 2048;

/// Which roots a provider's relative-file locators may name.
pub struct Roots<'a> {
    /// Aliases bound in the provider's `knowledgeRoots`.
    pub aliases: &'a [String],
    /// Whether locators without an alias have a root (an inline provider's missing
    /// `documentRoot` is reported when a document is read, not here).
    pub default_root: bool,
}

/// Lexical rule for relative locator paths: `/`-separated, no empty, `.` or `..` segment, no
/// `\`, `:` or control character, no segment ending in `.` or space or starting with `~`.
pub fn is_safe_relative_path(path: &str) -> bool {
    !path.is_empty()
        && !path
            .chars()
            .any(|c| c == '\\' || c == ':' || c.is_ascii_control())
        && path.split('/').all(|seg| {
            !seg.is_empty()
                && seg != "."
                && seg != ".."
                && !seg.ends_with('.')
                && !seg.ends_with(' ')
                && !seg.starts_with('~')
        })
}

/// `http:`/`https:` URL per the WHATWG parser.
fn parse_http_url(s: &str) -> Option<url::Url> {
    url::Url::parse(s)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
}

fn knowledge_id(o: &Origin, v: &Value, field: &str) -> Result<String, GraphError> {
    let id = text(o, v, field)?;
    if !is_knowledge_id(&id) {
        return Err(o.invalid(field, "knowledge_id_invalid"));
    }
    Ok(id)
}

fn locator(o: &Origin, v: &Value, field: &str, roots: &Roots) -> Result<Locator, GraphError> {
    let map = object(o, v, field)?;
    let kind = map
        .get("type")
        .ok_or_else(|| o.invalid(&join(field, "type"), "required"))?;
    match kind.as_str() {
        Some("relative-file") => {
            check_keys(o, map, &["type", "path", "root"], &["path"], field)?;
            let path_field = join(field, "path");
            let path = match &map["path"] {
                Value::String(s) => s.clone(),
                _ => return Err(o.invalid(&path_field, "path_string_required")),
            };
            if !is_safe_relative_path(&path) {
                return Err(o.invalid(&path_field, "path_invalid"));
            }
            let root = match map.get("root") {
                None => {
                    if !roots.default_root {
                        return Err(o.invalid(&path_field, "knowledge_root_required"));
                    }
                    None
                }
                Some(v) => {
                    let root_field = join(field, "root");
                    let alias = match v.as_str() {
                        Some(a) if is_root_alias(a) => a,
                        _ => return Err(o.invalid(&root_field, "root_alias_invalid")),
                    };
                    if !roots.aliases.iter().any(|a| a == alias) {
                        return Err(o.invalid(&root_field, "root_alias_unbound"));
                    }
                    Some(alias.to_owned())
                }
            };
            Ok(Locator::RelativeFile {
                path,
                root,
                kind: Default::default(),
            })
        }
        Some("http") => {
            check_keys(o, map, &["type", "url"], &["url"], field)?;
            let url_field = join(field, "url");
            let url = text(o, &map["url"], &url_field)?;
            if url.len() > URL_MAX_BYTES || parse_http_url(&url).is_none() {
                return Err(o.invalid(&url_field, "http_url_required"));
            }
            Ok(Locator::Http {
                kind: Default::default(),
                url,
            })
        }
        _ => Err(o.invalid(&join(field, "type"), "locator_type")),
    }
}

/// One document reference; `member` documents must say `kind: "document"` explicitly.
pub fn document(
    o: &Origin,
    v: &Value,
    field: &str,
    roots: &Roots,
) -> Result<DocumentRef, GraphError> {
    let map = object(o, v, field)?;
    const KEYS: [&str; 8] = [
        "kind",
        "knowledgeId",
        "locator",
        "role",
        "locale",
        "title",
        "summary",
        "canonicalUrl",
    ];
    check_keys(
        o,
        map,
        &KEYS,
        &["kind", "knowledgeId", "locator", "role"],
        field,
    )?;
    if map["kind"].as_str() != Some("document") {
        return Err(o.invalid(&join(field, "kind"), "document_required"));
    }
    let knowledge_id = knowledge_id(o, &map["knowledgeId"], &join(field, "knowledgeId"))?;
    let role_field = join(field, "role");
    let role = text(o, &map["role"], &role_field)?;
    if !is_knowledge_id(&role) {
        return Err(o.invalid(&role_field, "role_invalid"));
    }
    let locale = match map.get("locale") {
        None => None,
        Some(v) => {
            let locale_field = join(field, "locale");
            let tag = text(o, v, &locale_field)?;
            Some(normalize_locale(&tag).ok_or_else(|| o.invalid(&locale_field, "locale_invalid"))?)
        }
    };
    let canonical_url = bounded_text(o, map, "canonicalUrl", field, URL_MAX_BYTES)?;
    if let Some(url) = &canonical_url {
        // Display metadata only, so it must already be in the parser's serialised form.
        if parse_http_url(url).is_none_or(|u| u.as_str() != url) {
            return Err(o.invalid(&join(field, "canonicalUrl"), "canonical_url_invalid"));
        }
    }
    Ok(DocumentRef {
        canonical_url,
        kind: DocumentKind,
        knowledge_id,
        locale,
        locator: locator(o, &map["locator"], &join(field, "locator"), roots)?,
        role,
        summary: bounded_text(o, map, "summary", field, SUMMARY_MAX_BYTES)?,
        title: bounded_text(o, map, "title", field, TITLE_MAX_BYTES)?,
    })
}

fn collection(
    o: &Origin,
    v: &Value,
    field: &str,
    roots: &Roots,
) -> Result<CollectionRef, GraphError> {
    let map = object(o, v, field)?;
    const KEYS: [&str; 5] = ["kind", "knowledgeId", "members", "title", "summary"];
    check_keys(o, map, &KEYS, &["kind", "knowledgeId", "members"], field)?;
    let knowledge_id = knowledge_id(o, &map["knowledgeId"], &join(field, "knowledgeId"))?;
    let members_field = join(field, "members");
    let mut members = Vec::new();
    for (i, m) in array(o, &map["members"], &members_field)?
        .iter()
        .enumerate()
    {
        let member = document(o, m, &index(&members_field, i), roots)?;
        if members
            .iter()
            .any(|d: &DocumentRef| d.knowledge_id == member.knowledge_id)
        {
            return Err(o.invalid(&index(&members_field, i), "duplicate_collection_member"));
        }
        members.push(member);
    }
    members.sort_by(|a, b| a.knowledge_id.cmp(&b.knowledge_id));
    Ok(CollectionRef {
        kind: Default::default(),
        knowledge_id,
        members,
        summary: bounded_text(o, map, "summary", field, SUMMARY_MAX_BYTES)?,
        title: bounded_text(o, map, "title", field, TITLE_MAX_BYTES)?,
    })
}

/// A capability's `knowledge` array, sorted by `knowledgeId`, with the per-capability
/// uniqueness rules applied.
pub fn knowledge_list(
    o: &Origin,
    v: &Value,
    field: &str,
    roots: &Roots,
) -> Result<Vec<KnowledgeRef>, GraphError> {
    let mut refs = Vec::new();
    for (i, item) in array(o, v, field)?.iter().enumerate() {
        let item_field = index(field, i);
        let map = object(o, item, &item_field)?;
        let r = match map.get("kind").and_then(Value::as_str) {
            Some("document") => KnowledgeRef::Document(document(o, item, &item_field, roots)?),
            Some("collection") => {
                KnowledgeRef::Collection(collection(o, item, &item_field, roots)?)
            }
            _ => return Err(o.invalid(&join(&item_field, "kind"), "knowledge_kind")),
        };
        if refs
            .iter()
            .any(|x: &KnowledgeRef| x.knowledge_id() == r.knowledge_id())
        {
            return Err(o.invalid(&item_field, "duplicate_knowledge_id"));
        }
        refs.push(r);
    }
    refs.sort_by(|a, b| a.knowledge_id().cmp(b.knowledge_id()));
    let mut ids = KnowledgeIds::default();
    for r in &refs {
        ids.register(o, r, field)?;
    }
    Ok(refs)
}

/// What one knowledge ID stands for across a provider; an ID must always mean the same thing.
#[derive(Default)]
pub struct KnowledgeIds<'r> {
    seen: HashMap<&'r str, Meaning<'r>>,
}

#[derive(PartialEq)]
enum Meaning<'r> {
    Document(&'r DocumentRef),
    Collection(&'r CollectionRef),
}

impl<'r> KnowledgeIds<'r> {
    fn claim(
        &mut self,
        o: &Origin,
        id: &'r str,
        meaning: Meaning<'r>,
        field: &str,
    ) -> Result<(), GraphError> {
        match self.seen.get(id) {
            Some(existing) if *existing != meaning => Err(o
                .invalid(field, "conflicting_knowledge_id")
                .detail("knowledgeId", id)),
            Some(_) => Ok(()),
            None => {
                self.seen.insert(id, meaning);
                Ok(())
            }
        }
    }

    pub fn register_document(
        &mut self,
        o: &Origin,
        d: &'r DocumentRef,
        field: &str,
    ) -> Result<(), GraphError> {
        self.claim(o, &d.knowledge_id, Meaning::Document(d), field)
    }

    /// Registers a reference and, for a collection, each of its members.
    pub fn register(
        &mut self,
        o: &Origin,
        r: &'r KnowledgeRef,
        field: &str,
    ) -> Result<(), GraphError> {
        match r {
            KnowledgeRef::Document(d) => self.register_document(o, d, field),
            KnowledgeRef::Collection(c) => {
                self.claim(o, &c.knowledge_id, Meaning::Collection(c), field)?;
                c.members
                    .iter()
                    .try_for_each(|m| self.register_document(o, m, field))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_follow_the_lexical_rule() {
        for ok in [
            "PROVIDER.md",
            "knowledge/route-http.md",
            "中文 guide.mdx",
            "a/b c/d.md",
        ] {
            assert!(is_safe_relative_path(ok), "{ok}");
        }
        for bad in [
            "",
            "knowledge/../x.md",
            "../x.md",
            "knowledge/.",
            "./PROVIDER.md",
            "/x",
            "//host/x",
            "a\\x",
            "C:/x",
            "a:stream",
            "~/x",
            "a//b",
            "a/",
            "a./b",
            "a /b",
            "a\u{7}b",
        ] {
            assert!(!is_safe_relative_path(bad), "{bad:?}");
        }
    }
}

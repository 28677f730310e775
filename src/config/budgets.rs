//! Budgets: every group, field and default (SPEC §14 D14, reference/core.md §4.1), and the
//! validation of a host's overrides.

use super::ConfigError;
use serde_json::Value;

macro_rules! budgets {
    ($( $group:ident $gname:literal $Group:ident { $( $field:ident $fname:literal = $default:expr ),+ $(,)? } )+) => {
        $(
            #[derive(Clone, Debug, PartialEq)]
            pub struct $Group { $( pub $field: u64, )+ }

            impl Default for $Group {
                fn default() -> Self { $Group { $( $field: $default, )+ } }
            }

            impl $Group {
                fn slot(&mut self, field: &str) -> Option<&mut u64> {
                    match field { $( $fname => Some(&mut self.$field), )+ _ => None }
                }
                const FIELDS: &'static [&'static str] = &[$( $fname ),+];
            }
        )+

        /// Every budget in force for one graph (defaults with the host's overrides).
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct Budgets { $( pub $group: $Group, )+ }

        impl Budgets {
            const GROUPS: &'static [&'static str] = &[$( $gname ),+];

            fn slot(&mut self, group: &str, field: &str) -> Option<Option<&mut u64>> {
                match group { $( $gname => Some(self.$group.slot(field)), )+ _ => None }
            }

            fn fields(group: &str) -> &'static [&'static str] {
                match group { $( $gname => $Group::FIELDS, )+ _ => &[] }
            }
        }
    };
}

budgets! {
    catalog "catalog" Catalog { max_bytes "maxBytes" = 24_576, max_items "maxItems" = 200, max_item_bytes "maxItemBytes" = 2_048 }
    detail "detail" Detail {
        max_capabilities "maxCapabilities" = 20, max_item_bytes "maxItemBytes" = 16_384,
        max_bytes "maxBytes" = 131_072, default_knowledge_page_size "defaultKnowledgePageSize" = 20,
        max_knowledge_page_size "maxKnowledgePageSize" = 100,
    }
    neighbors "neighbors" Neighbors {
        default_page_size "defaultPageSize" = 50, max_page_size "maxPageSize" = 100,
        max_bytes "maxBytes" = 24_576, max_item_bytes "maxItemBytes" = 2_048,
    }
    specification "specification" SpecificationBudget {
        default_page_size "defaultPageSize" = 20, max_page_size "maxPageSize" = 100,
        max_bytes "maxBytes" = 131_072, max_item_bytes "maxItemBytes" = 16_384,
    }
    selection "selection" Selection { max_selected "maxSelected" = 32, max_nodes "maxNodes" = 128, max_edges "maxEdges" = 256 }
    read "read" Read {
        max_bytes "maxBytes" = 32_768, max_documents_per_call "maxDocumentsPerCall" = 8,
        max_selected "maxSelected" = 32, max_filter_values_per_dimension "maxFilterValuesPerDimension" = 128,
        max_response_bytes "maxResponseBytes" = 4_194_304, reader_timeout_ms "readerTimeoutMs" = 10_000,
    }
    retrieve_capabilities "retrieveCapabilities" RetrieveCapabilities {
        max_candidates "maxCandidates" = 20, max_candidate_bytes "maxCandidateBytes" = 512,
        timeout_ms "timeoutMs" = 30_000, max_text_bytes "maxTextBytes" = 4_096,
    }
    query_knowledge "queryKnowledge" QueryKnowledge {
        max_hits "maxHits" = 8, max_snippet_bytes "maxSnippetBytes" = 2_048, max_selected "maxSelected" = 32,
        max_filter_values_per_dimension "maxFilterValuesPerDimension" = 128, max_targets "maxTargets" = 128,
        max_target_bytes "maxTargetBytes" = 131_072, timeout_ms "timeoutMs" = 30_000,
        max_text_bytes "maxTextBytes" = 4_096,
    }
    runtime "runtime" Runtime {
        default_page_size "defaultPageSize" = 50, max_page_size "maxPageSize" = 100, timeout_ms "timeoutMs" = 5_000,
        max_facts_bytes "maxFactsBytes" = 4_096, max_association_bytes "maxAssociationBytes" = 2_048,
    }
    resolve "resolve" Resolve { max_ids "maxIds" = 32, max_nodes "maxNodes" = 128, max_edges "maxEdges" = 256, max_bytes "maxBytes" = 1_048_576 }
    matching "match" Match {
        max_catalog_bytes "maxCatalogBytes" = 262_144, max_intent_bytes "maxIntentBytes" = 4_096,
        default_limit "defaultLimit" = 5, max_limit "maxLimit" = 20, timeout_ms "timeoutMs" = 60_000,
        max_timeout_ms "maxTimeoutMs" = 600_000, max_output_bytes "maxOutputBytes" = 65_536,
        embed_timeout_ms "embedTimeoutMs" = 30_000, embed_batch_size "embedBatchSize" = 32,
        max_embed_text_bytes "maxEmbedTextBytes" = 2_048, max_queued "maxQueued" = 1_024,
    }
    export "export" Export { max_nodes "maxNodes" = 10_000 }
    database "database" Database {
        call_timeout_ms "callTimeoutMs" = 30_000, read_timeout_ms "readTimeoutMs" = 600_000,
        max_records "maxRecords" = 2_000_000, max_bytes "maxBytes" = 2_147_483_648,
    }
}

/// Timers in Node.js overflow above this many milliseconds.
const MAX_TIMER_MS: u64 = (1 << 31) - 1;
/// The most bytes a budget may let one answer, page or host body hold: every answer crosses to
/// JavaScript as one string, V8 caps a string near 2^29 UTF-16 units, and JSON escaping can
/// grow text, so a quarter of a GiB leaves room for what is printed around it.
pub const MAX_ANSWER_BYTES: u64 = 1 << 28;
/// The most items any count budget may allow in one call (pages, closures, candidates).
const MAX_COUNT: u64 = 1_000_000;

/// The highest value a host may give `group.field` (SPEC §14 D20). Deadlines fit a Node.js
/// timer; a database read, which never crosses as one string, is bounded by memory instead.
fn ceiling(group: &str, field: &str) -> u64 {
    match (group, field) {
        ("database", "maxBytes") => 1 << 36,
        ("database", "maxRecords") => 100_000_000,
        ("export", "maxNodes") => 10_000_000,
        // A host embedder's answer for one batch is one Float32Array of batch × dimensions.
        ("match", "embedBatchSize") => 1_024,
        ("match", "maxEmbedTextBytes") => 65_536,
        // Each waiting call holds its request and a promise, never a thread.
        ("match", "maxQueued") => 65_536,
        (_, f) if f.ends_with("imeoutMs") => MAX_TIMER_MS,
        (_, f) if f.ends_with("Bytes") => MAX_ANSWER_BYTES,
        _ => MAX_COUNT,
    }
}

impl Budgets {
    /// Defaults overlaid with `overrides` (`budgets` of the open config, at `budgets`).
    pub fn from_overrides(overrides: Option<&Value>) -> Result<Budgets, ConfigError> {
        let mut budgets = Budgets::default();
        let Some(v) = overrides else {
            return Ok(budgets);
        };
        let groups = super::object(v, "budgets")?;
        for (group, fields) in groups {
            let group_path = format!("budgets.{group}");
            if !Budgets::GROUPS.contains(&group.as_str()) {
                return Err(ConfigError::new(&group_path, &one_of(Budgets::GROUPS)));
            }
            for (field, value) in super::object(fields, &group_path)? {
                let path = format!("{group_path}.{field}");
                let Some(Some(slot)) = budgets.slot(group, field) else {
                    return Err(ConfigError::new(&path, &one_of(Budgets::fields(group))));
                };
                *slot = value
                    .as_u64()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| ConfigError::new(&path, "integer >= 1"))?;
                let max = ceiling(group, field);
                if *slot > max {
                    return Err(ConfigError::new(&path, &format!("integer <= {max}")));
                }
            }
        }
        budgets.check_pairs()?;
        Ok(budgets)
    }

    /// Defaults may not exceed their maxima, and a few budgets bound one another.
    fn check_pairs(&self) -> Result<(), ConfigError> {
        let pairs = [
            (
                "budgets.neighbors.defaultPageSize",
                self.neighbors.default_page_size,
                "budgets.neighbors.maxPageSize",
                self.neighbors.max_page_size,
            ),
            (
                "budgets.detail.defaultKnowledgePageSize",
                self.detail.default_knowledge_page_size,
                "budgets.detail.maxKnowledgePageSize",
                self.detail.max_knowledge_page_size,
            ),
            (
                "budgets.specification.defaultPageSize",
                self.specification.default_page_size,
                "budgets.specification.maxPageSize",
                self.specification.max_page_size,
            ),
            (
                "budgets.runtime.defaultPageSize",
                self.runtime.default_page_size,
                "budgets.runtime.maxPageSize",
                self.runtime.max_page_size,
            ),
            (
                "budgets.match.defaultLimit",
                self.matching.default_limit,
                "budgets.match.maxLimit",
                self.matching.max_limit,
            ),
            (
                "budgets.match.timeoutMs",
                self.matching.timeout_ms,
                "budgets.match.maxTimeoutMs",
                self.matching.max_timeout_ms,
            ),
            // Every requested ID of a resolve is a node of its closure.
            (
                "budgets.resolve.maxIds",
                self.resolve.max_ids,
                "budgets.resolve.maxNodes",
                self.resolve.max_nodes,
            ),
            (
                "budgets.selection.maxSelected",
                self.selection.max_selected,
                "budgets.selection.maxNodes",
                self.selection.max_nodes,
            ),
        ];
        for (path, value, max_path, max) in pairs {
            if value > max {
                return Err(ConfigError::new(path, &format!("integer <= {max_path}")));
            }
        }
        Ok(())
    }
}

fn one_of(names: &[&str]) -> String {
    format!("one of: {}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_hold_the_documented_values() {
        let b = Budgets::default();
        assert_eq!(
            (
                b.resolve.max_ids,
                b.resolve.max_nodes,
                b.resolve.max_edges,
                b.resolve.max_bytes
            ),
            (32, 128, 256, 1_048_576)
        );
        assert_eq!(
            (
                b.matching.default_limit,
                b.matching.max_limit,
                b.matching.timeout_ms
            ),
            (5, 20, 60_000)
        );
        assert_eq!(
            (
                b.matching.embed_timeout_ms,
                b.matching.embed_batch_size,
                b.matching.max_embed_text_bytes
            ),
            (30_000, 32, 2_048)
        );
        for (field, max) in [("embedBatchSize", 1_024), ("maxEmbedTextBytes", 65_536)] {
            let at = json!({ "match": { field: max } });
            assert!(Budgets::from_overrides(Some(&at)).is_ok(), "{field}");
            let over = json!({ "match": { field: max + 1 } });
            assert!(Budgets::from_overrides(Some(&over)).is_err(), "{field}");
        }
        assert_eq!(
            (
                b.catalog.max_bytes,
                b.read.max_response_bytes,
                b.export.max_nodes
            ),
            (24_576, 4_194_304, 10_000)
        );
        assert_eq!(
            (
                b.read.reader_timeout_ms,
                b.retrieve_capabilities.timeout_ms,
                b.retrieve_capabilities.max_text_bytes,
                b.query_knowledge.timeout_ms,
                b.query_knowledge.max_text_bytes,
            ),
            (10_000, 30_000, 4_096, 30_000, 4_096)
        );
        assert_eq!(
            (
                b.database.call_timeout_ms,
                b.database.read_timeout_ms,
                b.database.max_records,
                b.database.max_bytes
            ),
            (30_000, 600_000, 2_000_000, 2_147_483_648)
        );
    }

    #[test]
    fn every_budget_takes_its_ceiling() {
        let mut all = serde_json::Map::new();
        for group in Budgets::GROUPS {
            let fields: serde_json::Map<String, Value> = Budgets::fields(group)
                .iter()
                .map(|f| (f.to_string(), json!(ceiling(group, f))))
                .collect();
            all.insert(group.to_string(), Value::Object(fields));
        }
        let b = Budgets::from_overrides(Some(&Value::Object(all))).unwrap();
        assert_eq!(b.read.max_response_bytes, MAX_ANSWER_BYTES);
        assert_eq!(b.database.max_bytes, 1 << 36);
        assert_eq!(b.read.reader_timeout_ms, MAX_TIMER_MS);
    }

    #[test]
    fn overrides_replace_single_fields() {
        let b = Budgets::from_overrides(Some(
            &json!({"resolve": {"maxNodes": 4, "maxIds": 2}, "catalog": {}}),
        ))
        .unwrap();
        assert_eq!(
            (b.resolve.max_nodes, b.resolve.max_ids, b.resolve.max_edges),
            (4, 2, 256)
        );
    }

    #[test]
    fn bad_overrides_name_their_path() {
        let cases = [
            (json!([]), "budgets", "object"),
            (json!({"nope": {}}), "budgets.nope", "one of: catalog"),
            (
                json!({"catalog": {"maxWhat": 1}}),
                "budgets.catalog.maxWhat",
                "one of: maxBytes, maxItems, maxItemBytes",
            ),
            (
                json!({"catalog": {"maxItems": 0}}),
                "budgets.catalog.maxItems",
                "integer >= 1",
            ),
            (
                json!({"catalog": {"maxItems": 1.5}}),
                "budgets.catalog.maxItems",
                "integer >= 1",
            ),
            (
                json!({"catalog": {"maxItems": "9"}}),
                "budgets.catalog.maxItems",
                "integer >= 1",
            ),
            (json!({"catalog": []}), "budgets.catalog", "object"),
            (
                json!({"neighbors": {"defaultPageSize": 101}}),
                "budgets.neighbors.defaultPageSize",
                "integer <= budgets.neighbors.maxPageSize",
            ),
            (
                json!({"resolve": {"maxNodes": 8}}),
                "budgets.resolve.maxIds",
                "integer <= budgets.resolve.maxNodes",
            ),
            (
                json!({"database": {"callTimeoutMs": 2_147_483_648u64}}),
                "budgets.database.callTimeoutMs",
                "integer <= 2147483647",
            ),
            (
                json!({"read": {"readerTimeoutMs": 2_147_483_648u64}}),
                "budgets.read.readerTimeoutMs",
                "integer <= 2147483647",
            ),
            (
                json!({"read": {"maxResponseBytes": 9_007_199_254_740_991u64}}),
                "budgets.read.maxResponseBytes",
                "integer <= 268435456",
            ),
            (
                json!({"read": {"maxBytes": 268_435_457u64}}),
                "budgets.read.maxBytes",
                "integer <= 268435456",
            ),
            (
                json!({"catalog": {"maxItems": 1_000_001u64}}),
                "budgets.catalog.maxItems",
                "integer <= 1000000",
            ),
            (
                json!({"match": {"timeoutMs": 2_147_483_648u64}}),
                "budgets.match.timeoutMs",
                "integer <= 2147483647",
            ),
        ];
        for (v, path, expected) in cases {
            let e = Budgets::from_overrides(Some(&v)).unwrap_err();
            assert_eq!(e.path, path, "{v}");
            assert!(e.expected.starts_with(expected), "{v}: {}", e.expected);
        }
    }
}

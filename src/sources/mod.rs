//! Provider sources: where definitions come from (inline objects, file trees; database
//! authorities through the JS layer). Each source is read whole and validated into a snapshot.

pub mod file;

use crate::config::{ProviderSource, SourceKind};
use crate::definitions::{validate_provider, RawDefinitions, Roots};
use crate::error::{Code, GraphError, Phase, Result};
use crate::snapshot::{AuthorityKind, DocumentRoots, ProviderSnapshot};
use serde_json::Value;

/// Reads and validates one provider. `definition` replaces an inline provider's definition
/// (reload); an inline source keeps no definition of its own after it loaded.
pub fn load(source: &ProviderSource, definition: Option<&Value>) -> Result<ProviderSnapshot> {
    let aliases: Vec<String> = source
        .knowledge_roots
        .iter()
        .map(|(a, _)| a.clone())
        .collect();
    let roots = |default_root| DocumentRoots {
        default_root,
        aliases: source.knowledge_roots.clone(),
    };
    match &source.kind {
        SourceKind::Inline {
            definition: own,
            document_root,
        } => {
            let definition = definition.unwrap_or(own);
            // An inline provider without `documentRoot` fails when a document is read.
            let rules = Roots {
                aliases: &aliases,
                default_root: true,
            };
            let validated = validate_provider(&RawDefinitions::Inline(definition), None, &rules)?;
            Ok(ProviderSnapshot::build(
                validated,
                AuthorityKind::Inline,
                roots(document_root.clone()),
            ))
        }
        SourceKind::File { root, layout } => {
            let provider_id = source.provider_id.as_deref().unwrap_or_default();
            let config_path = format!("{}.authority.rootDir", source.path);
            let files = file::read_provider_dir(root, *layout, provider_id, &config_path)?;
            let raw = RawDefinitions::Files {
                provider: &files.provider,
                capabilities: files
                    .definitions
                    .iter()
                    .map(|d| (d.file.as_str(), &d.value))
                    .collect(),
            };
            let rules = Roots {
                aliases: &aliases,
                default_root: true,
            };
            let validated = validate_provider(&raw, Some(provider_id), &rules)?;
            Ok(ProviderSnapshot::build(
                validated,
                AuthorityKind::File,
                roots(Some(root.clone())),
            ))
        }
        SourceKind::Database { .. } => Err(GraphError::new(Code::ConfigInvalid)
            .with_phase(Phase::Load)
            .detail("path", format!("{}.authority", source.path))
            .detail(
                "expected",
                "an inline or file source (database authorities are not served yet)",
            )),
    }
}

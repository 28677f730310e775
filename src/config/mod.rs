//! The open configuration (SPEC §4): provider sources, scopes, budgets and the host components
//! the JS layer registered. Every shape error is `CG_CONFIG_INVALID` with the full config path
//! and the expected type (SPEC §14 D7).

pub mod budgets;
pub mod model;

use crate::error::{Code, GraphError, Phase};
use crate::ids::{is_id, is_root_alias};
use crate::json::{is_non_json_marker, SCHEMA_KEY};
pub use budgets::Budgets;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// How a file provider lays out its definitions under its root (`definitionLayout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `*.capability.json` files anywhere in the tree.
    Legacy,
    /// `*.json` files under `capabilities/`.
    Directory,
}

/// A config shape error: where, and what was expected there.
#[derive(Debug, PartialEq)]
pub struct ConfigError {
    pub path: String,
    pub expected: String,
}

impl ConfigError {
    pub fn new(path: &str, expected: &str) -> ConfigError {
        ConfigError {
            path: if path.is_empty() {
                "$".into()
            } else {
                path.into()
            },
            expected: expected.into(),
        }
    }
}

impl From<ConfigError> for GraphError {
    fn from(e: ConfigError) -> GraphError {
        GraphError::new(Code::ConfigInvalid)
            .with_phase(Phase::Config)
            .detail("path", e.path)
            .detail("expected", e.expected)
    }
}

type Result<T> = std::result::Result<T, ConfigError>;

/// Key of the descriptor the JS layer puts where a host object (executor, adapter, reader,
/// retriever) sits in the config: `{"$cgHost": <handle>, "id", "providerId", "methods"}`, or
/// `{"$cgHost": "lexical", "options"}` for the built-in lexical executor.
pub const HOST_KEY: &str = "$cgHost";

/// A host object registered by the JS layer, known here by its handle.
#[derive(Clone, Debug, PartialEq)]
pub struct HostRef {
    pub handle: u32,
    pub id: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExecutorSpec {
    /// The built-in lexical executor; its options are validated where it is built.
    Lexical {
        options: Value,
    },
    /// The semantic executor: its options, the host embedder and its dimensions (if any), and
    /// where the first-party encoder's files are.
    Semantic {
        options: Value,
        embedder: Option<(HostRef, usize)>,
        model: ModelSpec,
    },
    Host(HostRef),
}

/// The first-party encoder's package as the JS layer resolved it.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelSpec {
    /// The package's folder.
    Dir(PathBuf),
    /// Not installed: the package to install.
    Missing(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum KnowledgeRootSpec {
    Directory {
        root_dir: PathBuf,
    },
    Package {
        package_name: String,
        resolve_from: PathBuf,
    },
}

#[derive(Debug)]
pub enum SourceKind {
    Inline {
        definition: Value,
        document_root: Option<PathBuf>,
    },
    File {
        root: PathBuf,
        layout: Layout,
        /// `authority.watch: true`: the host watches the root and reloads on a change.
        watch: bool,
    },
    Database {
        adapter: HostRef,
        /// Whether the graph subscribes to the adapter's `watch`: it offers one and
        /// `authority.watch` is not `false`.
        watch: bool,
    },
}

#[derive(Debug)]
pub struct ProviderSource {
    /// `None` only for an inline definition whose `providerId` is not a valid ID (reported as a
    /// definition error when it loads).
    pub provider_id: Option<String>,
    /// `providers[i]`, for error details.
    pub path: String,
    pub kind: SourceKind,
    pub knowledge_roots: Vec<(String, KnowledgeRootSpec)>,
}

#[derive(Debug)]
pub struct OpenConfig {
    pub providers: Vec<ProviderSource>,
    /// host ∩ integration; every configured provider, sorted.
    pub scope: Vec<String>,
    pub budgets: Budgets,
    pub executor: Option<ExecutorSpec>,
    pub readers: Vec<HostRef>,
    pub runtime_adapters: Vec<(String, HostRef)>,
    pub capability_retriever: Option<HostRef>,
    pub knowledge_retriever: Option<HostRef>,
}

pub(crate) fn object<'v>(v: &'v Value, path: &str) -> Result<&'v Map<String, Value>> {
    match v {
        Value::Object(m) if !is_non_json_marker(v) && !m.contains_key(HOST_KEY) => Ok(m),
        _ => Err(ConfigError::new(path, "object")),
    }
}

fn array<'v>(v: &'v Value, path: &str) -> Result<&'v Vec<Value>> {
    v.as_array().ok_or_else(|| ConfigError::new(path, "array"))
}

fn non_empty_string<'v>(v: &'v Value, path: &str) -> Result<&'v str> {
    v.as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ConfigError::new(path, "non-empty string"))
}

fn id<'v>(v: &'v Value, path: &str) -> Result<&'v str> {
    v.as_str()
        .filter(|s| is_id(s))
        .ok_or_else(|| ConfigError::new(path, "ID"))
}

/// A key's value; a missing key reads as `null`.
fn field<'v>(map: &'v Map<String, Value>, key: &str) -> &'v Value {
    static NULL: Value = Value::Null;
    map.get(key).unwrap_or(&NULL)
}

/// Rejects unknown keys. A missing required key reads as `null`, which the key's own type
/// check reports with the type it expects.
fn check_keys(map: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<()> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(ConfigError::new(
            format!("{path}.{k}").trim_start_matches('.'),
            &format!("one of: {}", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

/// A path as given, made absolute against the current directory once, at open.
fn absolute(s: &str) -> PathBuf {
    std::path::absolute(s).unwrap_or_else(|_| PathBuf::from(s))
}

/// A host descriptor with an `id` and the methods `required`.
fn host(v: &Value, path: &str, required: &[&str]) -> Result<(HostRef, Option<String>)> {
    let expected = || {
        format!(
            "object with a non-empty string id and methods: {}",
            required.join(", ")
        )
    };
    let m = v
        .as_object()
        .filter(|m| m.get(HOST_KEY).is_some_and(Value::is_u64))
        .ok_or_else(|| ConfigError::new(path, &expected()))?;
    let methods: Vec<&str> = m
        .get("methods")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(missing) = required.iter().find(|r| !methods.contains(r)) {
        return Err(ConfigError::new(&format!("{path}.{missing}"), "function"));
    }
    let id = m
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ConfigError::new(&format!("{path}.id"), "non-empty string"))?;
    let handle = m[HOST_KEY].as_u64().unwrap_or_default() as u32;
    let provider_id = m
        .get("providerId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((
        HostRef {
            handle,
            id: id.to_owned(),
        },
        provider_id,
    ))
}

/// Whether a host descriptor lists `method` among its functions.
fn offers(v: &Value, method: &str) -> bool {
    v.get("methods")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|x| x.as_str() == Some(method)))
}

/// An authority's optional `watch` flag.
fn watch_flag(a: &Map<String, Value>, apath: &str) -> Result<Option<bool>> {
    match a.get("watch") {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ConfigError::new(&format!("{apath}.watch"), "boolean")),
    }
}

fn executor(v: &Value) -> Result<ExecutorSpec> {
    if let Some(m) = v.as_object() {
        if m.get(HOST_KEY).and_then(Value::as_str) == Some("lexical") {
            return Ok(ExecutorSpec::Lexical {
                options: m.get("options").cloned().unwrap_or(Value::Null),
            });
        }
        if m.get(HOST_KEY).and_then(Value::as_str) == Some("semantic") {
            return semantic_executor(m);
        }
    }
    Ok(ExecutorSpec::Host(host(v, "executor", &["match"])?.0))
}

fn semantic_executor(m: &Map<String, Value>) -> Result<ExecutorSpec> {
    let embedder = match m.get("embedder") {
        None => None,
        Some(e) => {
            let (h, _) = host(e, "executor.embedder", &["embed"])?;
            if !model::is_model_id(&h.id) {
                return Err(ConfigError::new(
                    "executor.embedder.id",
                    "model ID: segments of letters, digits, '.', '_' or '-' joined by '/', at most 128 bytes",
                ));
            }
            let dims = e
                .get("dimensions")
                .and_then(Value::as_u64)
                .filter(|d| (1..=model::MAX_DIMENSIONS).contains(d))
                .ok_or_else(|| {
                    ConfigError::new(
                        "executor.embedder.dimensions",
                        &format!("integer from 1 to {}", model::MAX_DIMENSIONS),
                    )
                })?;
            Some((h, dims as usize))
        }
    };
    let model = m.get("model");
    let model = match (
        model.and_then(|v| v.get("dir")).and_then(Value::as_str),
        model.and_then(|v| v.get("package")).and_then(Value::as_str),
    ) {
        (Some(dir), _) => ModelSpec::Dir(PathBuf::from(dir)),
        (None, Some(package)) => ModelSpec::Missing(package.to_owned()),
        (None, None) => ModelSpec::Missing(model::MODEL_PACKAGE.to_owned()),
    };
    Ok(ExecutorSpec::Semantic {
        options: m.get("options").cloned().unwrap_or(Value::Null),
        embedder,
        model,
    })
}

fn knowledge_roots(v: Option<&Value>, path: &str) -> Result<Vec<(String, KnowledgeRootSpec)>> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let path = format!("{path}.knowledgeRoots");
    let mut roots = Vec::new();
    for (alias, spec) in object(v, &path)? {
        let p = format!("{path}[{}]", serde_json::Value::from(alias.as_str()));
        if !is_root_alias(alias) {
            return Err(ConfigError::new(
                &p,
                "alias matching ^[A-Za-z][A-Za-z0-9_-]{0,63}$",
            ));
        }
        let m = object(spec, &p)?;
        let spec = match m.get("kind").and_then(Value::as_str) {
            Some("directory") => {
                check_keys(m, &["kind", "rootDir"], &p)?;
                KnowledgeRootSpec::Directory {
                    root_dir: absolute(non_empty_string(
                        field(m, "rootDir"),
                        &format!("{p}.rootDir"),
                    )?),
                }
            }
            Some("package") => {
                check_keys(m, &["kind", "packageName", "resolveFrom"], &p)?;
                let name = non_empty_string(field(m, "packageName"), &format!("{p}.packageName"))?;
                if !is_package_name(name) {
                    return Err(ConfigError::new(
                        &format!("{p}.packageName"),
                        "npm package name",
                    ));
                }
                KnowledgeRootSpec::Package {
                    package_name: name.to_owned(),
                    resolve_from: absolute(non_empty_string(
                        field(m, "resolveFrom"),
                        &format!("{p}.resolveFrom"),
                    )?),
                }
            }
            _ => {
                return Err(ConfigError::new(
                    &format!("{p}.kind"),
                    "one of: directory, package",
                ))
            }
        };
        roots.push((alias.clone(), spec));
    }
    Ok(roots)
}

/// `^(?:@[a-z0-9._-]+/)?[a-z0-9._-]+$` without `.`/`..` parts.
fn is_package_name(name: &str) -> bool {
    let part = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
            })
    };
    match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, n)| part(scope) && part(n)),
        None => part(name),
    }
}

fn provider_source(v: &mut Value, i: usize) -> Result<ProviderSource> {
    let path = format!("providers[{i}]");
    let m = object(v, &path)?;
    if m.contains_key("definition") {
        check_keys(m, &["definition", "documentRoot", "knowledgeRoots"], &path)?;
        object(field(m, "definition"), &format!("{path}.definition"))?;
        let document_root = m
            .get("documentRoot")
            .map(|d| non_empty_string(d, &format!("{path}.documentRoot")).map(absolute))
            .transpose()?;
        let knowledge_roots = knowledge_roots(m.get("knowledgeRoots"), &path)?;
        let definition = v
            .as_object_mut()
            .and_then(|m| m.remove("definition"))
            .unwrap_or_default();
        let provider_id = definition
            .get("providerId")
            .and_then(Value::as_str)
            .filter(|s| is_id(s))
            .map(str::to_owned);
        return Ok(ProviderSource {
            provider_id,
            path,
            kind: SourceKind::Inline {
                definition,
                document_root,
            },
            knowledge_roots,
        });
    }
    check_keys(m, &["providerId", "authority", "knowledgeRoots"], &path)?;
    let provider_id = id(field(m, "providerId"), &format!("{path}.providerId"))?.to_owned();
    let apath = format!("{path}.authority");
    let a = object(field(m, "authority"), &apath)?;
    let kind = match a.get("kind").and_then(Value::as_str) {
        Some("file") => {
            check_keys(a, &["kind", "rootDir", "definitionLayout", "watch"], &apath)?;
            let watch = watch_flag(a, &apath)?.unwrap_or(false);
            let layout = match a.get("definitionLayout").map(Value::as_str) {
                None | Some(Some("legacy")) => Layout::Legacy,
                Some(Some("directory")) => Layout::Directory,
                Some(_) => {
                    return Err(ConfigError::new(
                        &format!("{apath}.definitionLayout"),
                        "one of: legacy, directory",
                    ))
                }
            };
            SourceKind::File {
                root: absolute(non_empty_string(
                    field(a, "rootDir"),
                    &format!("{apath}.rootDir"),
                )?),
                layout,
                watch,
            }
        }
        Some("database") => {
            check_keys(a, &["kind", "adapter", "watch"], &apath)?;
            let opted_out = watch_flag(a, &apath)? == Some(false);
            let adapter = field(a, "adapter");
            let (adapter, _) = host(adapter, &format!("{apath}.adapter"), &["openView"])?;
            SourceKind::Database {
                watch: !opted_out && offers(field(a, "adapter"), "watch"),
                adapter,
            }
        }
        _ => {
            return Err(ConfigError::new(
                &format!("{apath}.kind"),
                "one of: file, database",
            ))
        }
    };
    Ok(ProviderSource {
        provider_id: Some(provider_id),
        knowledge_roots: knowledge_roots(m.get("knowledgeRoots"), &path)?,
        path,
        kind,
    })
}

fn id_set(v: Option<&Value>, path: &str) -> Result<Option<BTreeSet<String>>> {
    let Some(v) = v else { return Ok(None) };
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| id(x, &format!("{path}[{i}]")).map(str::to_owned))
        .collect::<Result<BTreeSet<_>>>()
        .map(Some)
}

const TOP_KEYS: [&str; 10] = [
    "providers",
    "hostAllowedProviders",
    "integrationEnabledProviders",
    "budgets",
    "executor",
    "runtimeAdapters",
    "readers",
    "capabilityRetriever",
    "knowledgeRetriever",
    SCHEMA_KEY,
];

impl OpenConfig {
    /// Parses the wire config the JS layer built (pure JSON plus host descriptors).
    pub fn parse(mut v: Value) -> std::result::Result<OpenConfig, GraphError> {
        Ok(Self::parse_inner(&mut v)?)
    }

    fn parse_inner(v: &mut Value) -> Result<OpenConfig> {
        let m = object(v, "")?;
        check_keys(m, &TOP_KEYS, "")?;
        if let Some(schema) = m.get(SCHEMA_KEY) {
            non_empty_string(schema, SCHEMA_KEY)?;
        }
        let host_allowed = id_set(m.get("hostAllowedProviders"), "hostAllowedProviders")?;
        let integration = id_set(
            m.get("integrationEnabledProviders"),
            "integrationEnabledProviders",
        )?;
        let budgets = Budgets::from_overrides(m.get("budgets"))?;
        let executor = m.get("executor").map(executor).transpose()?;
        let readers = match m.get("readers") {
            None => Vec::new(),
            Some(r) => array(r, "readers")?
                .iter()
                .enumerate()
                .map(|(i, x)| host(x, &format!("readers[{i}]"), &["canRead", "read"]).map(|h| h.0))
                .collect::<Result<_>>()?,
        };
        let mut runtime_adapters: Vec<(String, HostRef)> = Vec::new();
        if let Some(r) = m.get("runtimeAdapters") {
            for (i, x) in array(r, "runtimeAdapters")?.iter().enumerate() {
                let path = format!("runtimeAdapters[{i}]");
                let (h, provider) = host(x, &path, &["query"])?;
                let provider = provider
                    .filter(|p| is_id(p))
                    .ok_or_else(|| ConfigError::new(&format!("{path}.providerId"), "ID"))?;
                if runtime_adapters.iter().any(|(p, _)| *p == provider) {
                    return Err(ConfigError::new(
                        &format!("{path}.providerId"),
                        "one adapter per provider",
                    ));
                }
                runtime_adapters.push((provider, h));
            }
        }
        let retriever = |key: &str| {
            m.get(key)
                .map(|x| host(x, key, &["retrieve"]).map(|h| h.0))
                .transpose()
        };
        let capability_retriever = retriever("capabilityRetriever")?;
        let knowledge_retriever = retriever("knowledgeRetriever")?;

        let raw_providers = v
            .get_mut("providers")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| ConfigError::new("providers", "array"))?;
        let mut providers = Vec::with_capacity(raw_providers.len());
        for (i, p) in raw_providers.iter_mut().enumerate() {
            providers.push(provider_source(p, i)?);
        }

        let mut configured = BTreeSet::new();
        for p in &providers {
            let Some(id) = &p.provider_id else { continue };
            if !configured.insert(id.clone()) {
                return Err(ConfigError::new(&p.path, "unique providerId"));
            }
            let allowed =
                |set: &Option<BTreeSet<String>>| set.as_ref().is_none_or(|s| s.contains(id));
            if !allowed(&host_allowed) || !allowed(&integration) {
                return Err(ConfigError::new(
                    &p.path,
                    "provider inside hostAllowedProviders and integrationEnabledProviders",
                ));
            }
        }
        // Every provider the host and the integration both allow needs a source. With only one
        // list given, the other defaults to the configured set, so nothing can be missing.
        if let (Some(h), Some(i)) = (&host_allowed, &integration) {
            if let Some(missing) = h
                .iter()
                .find(|id| i.contains(*id) && !configured.contains(*id))
            {
                let k = v["hostAllowedProviders"]
                    .as_array()
                    .and_then(|l| l.iter().position(|x| x.as_str() == Some(missing)))
                    .unwrap_or(0);
                return Err(ConfigError::new(
                    &format!("hostAllowedProviders[{k}]"),
                    "configured provider",
                ));
            }
        }
        Ok(OpenConfig {
            scope: configured.into_iter().collect(),
            providers,
            budgets,
            executor,
            readers,
            runtime_adapters,
            capability_retriever,
            knowledge_retriever,
        })
    }
}

//! Helpers shared by the integration tests: configs, definitions, temporary provider trees and
//! error assertions. Everything goes through the public engine API (JSON text in, JSON text out).
#![allow(dead_code)]

use capability_graph::engine::Engine;
use capability_graph::error::GraphError;
use serde_json::{json, Map, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub const SEED: &str = "seed.http";

// ---------------------------------------------------------------------------------------------
// Opening and calling

pub fn open(config: &Value) -> Result<Engine, GraphError> {
    Engine::open(&config.to_string(), None)
}

pub fn open_ok(config: &Value) -> Engine {
    match open(config) {
        Ok(engine) => engine,
        Err(e) => panic!("open failed: {}", e.to_json()),
    }
}

pub fn resolve(engine: &Engine, args: &Value) -> Result<Value, GraphError> {
    resolve_bound(engine, args, None)
}

pub fn resolve_bound(
    engine: &Engine,
    args: &Value,
    bound: Option<&str>,
) -> Result<Value, GraphError> {
    engine
        .resolve(&args.to_string(), bound)
        .map(|s| serde_json::from_str(&s).expect("resolve returns JSON"))
}

pub fn resolve_ok(engine: &Engine, args: &Value) -> Value {
    match resolve(engine, args) {
        Ok(v) => v,
        Err(e) => panic!("resolve({args}) failed: {}", e.to_json()),
    }
}

pub fn reload(engine: &Engine, args: &Value) -> Result<Value, GraphError> {
    engine
        .reload(&args.to_string(), None)
        .map(|s| serde_json::from_str(&s).expect("reload returns JSON"))
}

pub fn reload_ok(engine: &Engine, args: &Value) -> Value {
    match reload(engine, args) {
        Ok(v) => v,
        Err(e) => panic!("reload({args}) was rejected: {}", e.to_json()),
    }
}

/// The current static revision of `provider_id`, as an unchanged reload reports it.
pub fn revision(engine: &Engine, provider_id: &str) -> String {
    let r = reload_ok(engine, &json!({ "providerId": provider_id }));
    r["providers"][0]["staticRevision"]
        .as_str()
        .expect("staticRevision")
        .to_owned()
}

/// Opens `config` and returns the static revision of `provider_id`.
pub fn revision_of(config: &Value, provider_id: &str) -> String {
    let engine = open_ok(config);
    revision(&engine, provider_id)
}

pub fn is_revision(s: &str) -> bool {
    s.len() == 18
        && s.starts_with("s:")
        && s[2..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

// ---------------------------------------------------------------------------------------------
// Error assertions

/// Checks `code`, `phase` and `nextAction` (`None`: absent) of a failed call, that the error's
/// JSON carries no absolute path, and returns the error for detail checks.
#[track_caller]
pub fn assert_err<T>(
    result: Result<T, GraphError>,
    code: &str,
    phase: &str,
    action: Option<&str>,
) -> GraphError {
    let e = match result {
        Ok(_) => panic!("expected {code}/{phase}, got success"),
        Err(e) => e,
    };
    let j = e.to_json_value();
    assert_eq!(j["code"], code, "code of {j}");
    assert_eq!(j["phase"], phase, "phase of {j}");
    match action {
        Some(a) => assert_eq!(j["nextAction"], a, "nextAction of {j}"),
        None => assert!(
            j.get("nextAction").is_none(),
            "no nextAction expected in {j}"
        ),
    }
    assert_no_absolute_path(&e.to_json());
    e
}

/// Checks an error JSON value (a reload entry's `error`, a slot) the same way.
#[track_caller]
pub fn assert_err_json(j: &Value, code: &str, phase: &str, action: Option<&str>) {
    assert_eq!(j["code"], code, "code of {j}");
    assert_eq!(j["phase"], phase, "phase of {j}");
    match action {
        Some(a) => assert_eq!(j["nextAction"], a, "nextAction of {j}"),
        None => assert!(
            j.get("nextAction").is_none(),
            "no nextAction expected in {j}"
        ),
    }
    assert!(j["message"].is_string(), "message of {j}");
    assert_no_absolute_path(&j.to_string());
}

#[track_caller]
pub fn assert_no_absolute_path(json: &str) {
    let tmp = std::env::temp_dir();
    let tmp = tmp.to_string_lossy();
    let tmp = tmp.trim_end_matches('/');
    assert!(!json.contains(tmp), "temp path leaked into {json}");
    assert!(
        !json.contains(env!("CARGO_MANIFEST_DIR")),
        "repository path leaked into {json}"
    );
    assert!(
        !json.contains("/home/") && !json.contains("/work/"),
        "absolute path in {json}"
    );
}

/// The error's details (panics when there are none).
#[track_caller]
pub fn details(e: &GraphError) -> &Map<String, Value> {
    e.details()
        .unwrap_or_else(|| panic!("expected details in {}", e.to_json()))
}

/// `CG_CONFIG_INVALID`, phase `phase`, with `details { path, expected }`.
#[track_caller]
pub fn assert_config_err<T>(
    result: Result<T, GraphError>,
    phase: &str,
    path: &str,
    expected: &str,
) -> GraphError {
    let e = assert_err(result, "CG_CONFIG_INVALID", phase, Some("check_config"));
    let d = details(&e);
    assert_eq!(d["path"], path, "details.path of {}", e.to_json());
    assert_eq!(
        d["expected"],
        expected,
        "details.expected of {}",
        e.to_json()
    );
    e
}

/// `CG_CONFIG_INVALID`, phase `phase`, at `details.path`.
#[track_caller]
pub fn assert_config_path<T>(result: Result<T, GraphError>, phase: &str, path: &str) -> GraphError {
    let e = assert_err(result, "CG_CONFIG_INVALID", phase, Some("check_config"));
    assert_eq!(details(&e)["path"], path, "details.path of {}", e.to_json());
    e
}

/// Like [`assert_config_err`], for an `expected` that begins with `prefix`.
#[track_caller]
pub fn assert_config_err_prefix<T>(
    result: Result<T, GraphError>,
    phase: &str,
    path: &str,
    prefix: &str,
) -> GraphError {
    let e = assert_err(result, "CG_CONFIG_INVALID", phase, Some("check_config"));
    let d = details(&e);
    assert_eq!(d["path"], path, "details.path of {}", e.to_json());
    let expected = d["expected"].as_str().unwrap_or_default();
    assert!(
        expected.starts_with(prefix),
        "details.expected {expected:?} should start with {prefix:?} in {}",
        e.to_json()
    );
    e
}

/// In a [`Def`], a detail that may be present or absent.
pub const ANY: &str = "\u{0}any";

/// Expected definition-error details; `None` fields must be absent, `Some(ANY)` are not checked.
#[derive(Default, Clone, Copy)]
pub struct Def<'a> {
    pub provider: Option<&'a str>,
    pub capability: Option<&'a str>,
    pub field: Option<&'a str>,
    pub file: Option<&'a str>,
    pub reason: &'a str,
}

/// A load-phase definition error (`code` is `CG_DEFINITION_INVALID`, `CG_RELATION_INVALID`, …)
/// with exactly the expected `providerId`, `capabilityId`, `field`, `file` and `reason`.
#[track_caller]
pub fn assert_def_err<T>(result: Result<T, GraphError>, code: &str, want: Def) -> GraphError {
    let e = assert_err(result, code, "load", Some("fix_input"));
    check_def_details(&e.to_json_value(), want);
    e
}

#[track_caller]
pub fn check_def_details(j: &Value, want: Def) {
    let d = &j["details"];
    assert!(d.is_object(), "details expected in {j}");
    let check = |key: &str, value: Option<&str>| match value {
        Some(ANY) => {}
        Some(v) => assert_eq!(d[key], v, "details.{key} of {j}"),
        None => assert!(
            d.get(key).is_none(),
            "details.{key} should be absent in {j}"
        ),
    };
    check("providerId", want.provider);
    check("capabilityId", want.capability);
    check("field", want.field);
    check("file", want.file);
    assert_eq!(d["reason"], want.reason, "details.reason of {j}");
}

// ---------------------------------------------------------------------------------------------
// Definitions and configs

/// A minimal valid capability.
pub fn cap(id: &str) -> Value {
    json!({
        "capabilityId": id,
        "name": format!("Name of {id}"),
        "description": format!("What {id} does."),
        "whenToUse": format!("When {id} is needed."),
    })
}

/// `cap(id)` with extra fields merged in (a `null` value is kept as `null`).
pub fn cap_with(id: &str, extra: Value) -> Value {
    let mut c = cap(id);
    merge(&mut c, extra);
    c
}

pub fn merge(target: &mut Value, extra: Value) {
    let t = target.as_object_mut().expect("object");
    for (k, v) in extra.as_object().expect("object of extra fields") {
        t.insert(k.clone(), v.clone());
    }
}

/// An inline provider definition.
pub fn provider_def(provider_id: &str, capabilities: Vec<Value>) -> Value {
    json!({
        "providerId": provider_id,
        "name": format!("Provider {provider_id}"),
        "version": "1",
        "capabilities": capabilities,
    })
}

/// An open config with one inline provider per definition.
pub fn inline_config(definitions: Vec<Value>) -> Value {
    json!({
        "providers": definitions
            .into_iter()
            .map(|d| json!({ "definition": d }))
            .collect::<Vec<_>>()
    })
}

/// One inline provider `acme` with `capabilities`.
pub fn acme(capabilities: Vec<Value>) -> Value {
    inline_config(vec![provider_def("acme", capabilities)])
}

/// A file provider source.
pub fn file_source(provider_id: &str, root: &Path, layout: &str) -> Value {
    json!({
        "providerId": provider_id,
        "authority": {
            "kind": "file",
            "rootDir": root.to_string_lossy(),
            "definitionLayout": layout,
        }
    })
}

pub fn file_config(provider_id: &str, root: &Path, layout: &str) -> Value {
    json!({ "providers": [file_source(provider_id, root, layout)] })
}

/// A document knowledge reference with a relative-file locator.
pub fn doc(knowledge_id: &str, path: &str) -> Value {
    json!({
        "kind": "document",
        "knowledgeId": knowledge_id,
        "role": "guide",
        "locator": { "type": "relative-file", "path": path },
    })
}

// ---------------------------------------------------------------------------------------------
// The seed provider

pub fn seed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed-provider")
}

/// A fresh copy of the seed provider in a temporary directory.
pub fn seed_copy() -> TempDir {
    let dir = TempDir::new("seed");
    copy_dir(&seed_dir(), dir.path());
    dir
}

pub fn seed_config(root: &Path) -> Value {
    file_config(SEED, root, "directory")
}

/// The seed's `provider.json` and capability files, parsed.
pub fn seed_provider_json() -> Value {
    read_json(&seed_dir().join("provider.json"))
}

pub fn seed_capabilities() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = fs::read_dir(seed_dir().join("capabilities"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                read_json(&e.path()),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The seed as one inline definition.
pub fn seed_inline_definition() -> Value {
    let mut def = seed_provider_json();
    def["capabilities"] = Value::Array(seed_capabilities().into_iter().map(|(_, v)| v).collect());
    def
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Temporary directories

/// A unique directory under the system temp dir, removed on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!(
            "cg-it-{tag}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        fs::create_dir_all(&path).unwrap();
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }

    /// Writes `contents` at `rel`, creating parent directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> &TempDir {
        let p = self.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, contents).unwrap();
        self
    }

    pub fn write_json(&self, rel: &str, v: &Value) -> &TempDir {
        self.write(rel, serde_json::to_vec_pretty(v).unwrap())
    }

    pub fn mkdir(&self, rel: &str) -> &TempDir {
        fs::create_dir_all(self.join(rel)).unwrap();
        self
    }

    pub fn remove(&self, rel: &str) -> &TempDir {
        fs::remove_file(self.join(rel)).unwrap();
        self
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A provider root in directory layout with `provider.json` for `provider_id` and one file per
/// capability (`capabilities/<n>.json`).
pub fn provider_tree(provider_id: &str, capabilities: &[Value]) -> TempDir {
    let dir = TempDir::new("tree");
    dir.write_json(
        "provider.json",
        &json!({ "providerId": provider_id, "name": "Tree", "version": "1" }),
    );
    dir.mkdir("capabilities");
    for (i, c) in capabilities.iter().enumerate() {
        dir.write_json(&format!("capabilities/c{i}.json"), c);
    }
    dir
}

// ---------------------------------------------------------------------------------------------
// Generated inputs

/// xorshift64: deterministic and dependency-free.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

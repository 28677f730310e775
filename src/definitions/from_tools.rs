//! A host's own tools as an inline provider definition (`providerFromTools`): a capability per
//! tool, so `match` can choose the few tools a model sees out of hundreds. Tools come in the
//! shapes hosts hold them in: MCP `tools/list` results, an AI SDK tool set keyed by name,
//! OpenAI Chat Completions and Responses function tools, Anthropic tools.

use crate::definitions::fields::RECORD_MAX_BYTES;
use crate::error::{input_invalid, input_too_large, Result};
use crate::ids::{id_from_name, id_from_name_with_hash, is_id, name_words, NAME_HASH_HEX};
use crate::json::{compact_len, is_blank, is_non_json_marker};
use crate::json::{TOOLS_WALK_MAX_CHARS, TOOLS_WALK_MAX_VALUES};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

/// Most tools in one call.
pub const MAX_TOOLS: usize = 10_000;
/// Longest tool name, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// Longest tool title, in bytes.
pub const MAX_TITLE_BYTES: usize = 1_024;
/// Longest tool description, in bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 32_768;
/// Most parameters (top-level properties of a tool's input schema) read from one tool.
pub const MAX_PARAMETERS: usize = 128;
/// Longest parameter description, in bytes.
pub const MAX_PARAMETER_DESCRIPTION_BYTES: usize = 4_096;
/// Most `enum` values of a parameter that its searchable text names.
pub const ENUM_VALUES_NAMED: usize = 32;
/// Longest `whenToUse` taken from a description's first sentence, in bytes.
const WHEN_TO_USE_BYTES: usize = 512;

const OPTION_KEYS: &[&str] = &["providerId", "name", "version", "tools"];
/// Where each dialect keeps a tool's input schema, in the order they are looked for.
const SCHEMA_KEYS: &[&str] = &["inputSchema", "input_schema", "parameters"];

/// `path` + `.key`, or `["key"]` when the key is not an identifier.
fn key_path(path: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::from(key))
    }
}

/// What the walk refuses past its bounds: the whole value, before any other rule; or a schema
/// object the JS layer converted, walked on its own (`field` its path).
fn check_walk_at(options: &Value, field: &str) -> Result<()> {
    match options
        .get(crate::json::NON_JSON_KEY)
        .and_then(Value::as_str)
    {
        Some("too_many_values") => {
            Err(input_too_large(field, TOOLS_WALK_MAX_VALUES).detail("reason", "argument_values"))
        }
        Some("too_many_chars") => {
            Err(input_too_large(field, TOOLS_WALK_MAX_CHARS).detail("reason", "argument_chars"))
        }
        _ => Ok(()),
    }
}

fn plain_object(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object().filter(|_| !is_non_json_marker(v))
}

/// A tool's optional field: absent and `null` alike are `None` (other SDKs serialise an
/// absent field as `null`).
fn optional<'v>(tool: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    tool.get(key).filter(|v| !v.is_null())
}

/// An optional string of at most `max` bytes; a blank one counts as absent.
fn optional_text<'v>(
    tool: &'v Map<String, Value>,
    key: &str,
    path: &str,
    max: usize,
) -> Result<Option<&'v str>> {
    let Some(v) = optional(tool, key) else {
        return Ok(None);
    };
    let path = key_path(path, key);
    let s = v.as_str().ok_or_else(|| input_invalid(&path, "string"))?;
    if s.len() > max {
        return Err(input_too_large(&path, max as u64));
    }
    Ok((!is_blank(s)).then_some(s))
}

/// One tool as read from its dialect.
struct Tool<'v> {
    name: &'v str,
    /// `tools[i]` or `tools.<name>`.
    path: String,
    title: Option<&'v str>,
    description: Option<&'v str>,
    parameters: Vec<Parameter<'v>>,
}

struct Parameter<'v> {
    name: &'v str,
    description: Option<&'v str>,
    values: Vec<String>,
}

/// Reads one tool. `keyed_name` is its key in a tool set (which then names it).
fn read_tool<'v>(v: &'v Value, path: String, keyed_name: Option<&'v str>) -> Result<Tool<'v>> {
    let tool = plain_object(v).ok_or_else(|| input_invalid(&path, "tool object"))?;
    // Where the tool's own fields are: OpenAI Chat Completions nests them under `function`.
    let (fields, fields_path) = match optional(tool, "type") {
        None => (tool, path.clone()),
        Some(t) => match t.as_str() {
            Some("function") => match optional(tool, "function") {
                Some(f) => {
                    let fp = key_path(&path, "function");
                    (
                        plain_object(f).ok_or_else(|| input_invalid(&fp, "object"))?,
                        fp,
                    )
                }
                None => (tool, path.clone()),
            },
            Some("custom" | "dynamic") => (tool, path.clone()),
            _ => {
                return Err(input_invalid(
                    &key_path(&path, "type"),
                    "absent, function, custom or dynamic (a host's own tool)",
                ))
            }
        },
    };
    let name = match keyed_name {
        Some(name) => name,
        None => {
            let np = key_path(&fields_path, "name");
            fields
                .get("name")
                .and_then(Value::as_str)
                .filter(|s| !is_blank(s))
                .ok_or_else(|| input_invalid(&np, "non-empty string"))?
        }
    };
    if name.len() > MAX_NAME_BYTES {
        let np = if keyed_name.is_some() {
            path.clone()
        } else {
            key_path(&fields_path, "name")
        };
        return Err(input_too_large(&np, MAX_NAME_BYTES as u64));
    }
    let mut title = optional_text(fields, "title", &fields_path, MAX_TITLE_BYTES)?;
    if title.is_none() {
        if let Some(a) = optional(fields, "annotations") {
            let ap = key_path(&fields_path, "annotations");
            let a = plain_object(a).ok_or_else(|| input_invalid(&ap, "object"))?;
            title = optional_text(a, "title", &ap, MAX_TITLE_BYTES)?;
        }
    }
    let description = optional_text(fields, "description", &fields_path, MAX_DESCRIPTION_BYTES)?;
    let parameters = match SCHEMA_KEYS
        .iter()
        .find_map(|k| optional(fields, k).map(|s| (*k, s)))
    {
        None => Vec::new(),
        Some((key, schema)) => read_parameters(schema, &key_path(&fields_path, key))?,
    };
    Ok(Tool {
        name,
        path,
        title,
        description,
        parameters,
    })
}

/// The top-level properties of an input schema, in its order.
fn read_parameters<'v>(schema: &'v Value, path: &str) -> Result<Vec<Parameter<'v>>> {
    check_walk_at(schema, path)?;
    let schema = plain_object(schema).ok_or_else(|| input_invalid(path, "JSON Schema object"))?;
    let Some(properties) = optional(schema, "properties") else {
        return Ok(Vec::new());
    };
    let pp = key_path(path, "properties");
    let properties = plain_object(properties).ok_or_else(|| input_invalid(&pp, "object"))?;
    if properties.len() > MAX_PARAMETERS {
        return Err(input_too_large(&pp, MAX_PARAMETERS as u64));
    }
    let mut out = Vec::with_capacity(properties.len());
    for (name, property) in properties {
        let path = key_path(&pp, name);
        if name.len() > MAX_NAME_BYTES {
            return Err(input_too_large(&path, MAX_NAME_BYTES as u64));
        }
        // A boolean schema (`true`) is valid JSON Schema: the parameter is its name alone.
        let (description, values) = match property {
            Value::Bool(_) => (None, Vec::new()),
            _ => {
                let p = plain_object(property)
                    .ok_or_else(|| input_invalid(&path, "JSON Schema object or boolean"))?;
                let description =
                    optional_text(p, "description", &path, MAX_PARAMETER_DESCRIPTION_BYTES)?;
                let values = match optional(p, "enum") {
                    Some(Value::Array(values)) => values
                        .iter()
                        .filter_map(|v| match v {
                            Value::String(s) if !is_blank(s) && s.len() <= MAX_NAME_BYTES => {
                                Some(s.clone())
                            }
                            Value::Number(n) => Some(n.to_string()),
                            _ => None,
                        })
                        .take(ENUM_VALUES_NAMED)
                        .collect(),
                    _ => Vec::new(),
                };
                (description, values)
            }
        };
        out.push(Parameter {
            name,
            description,
            values,
        });
    }
    Ok(out)
}

/// The first sentence of `text`: up to a line break, or a `.`, `!` or `?` followed by white
/// space and no lower-case letter (`e.g. a file` goes on), at most `WHEN_TO_USE_BYTES`, cut at a
/// character boundary; `None` when that is blank.
fn first_sentence(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let bytes = text.as_bytes();
    let mut end = text.len();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || b == b'\r' {
            end = i;
            break;
        }
        if matches!(b, b'.' | b'!' | b'?') {
            let rest = &bytes[i + 1..];
            let next = rest.iter().position(|c| !c.is_ascii_whitespace());
            let ends = match next {
                None => true,
                Some(0) => false,
                Some(n) => !rest[n].is_ascii_lowercase(),
            };
            if ends {
                end = i + 1;
                break;
            }
        }
    }
    let mut end = end.min(WHEN_TO_USE_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(text[..end].trim_end()).filter(|s| !is_blank(s))
}

/// The capability of one tool: its name (title, else the tool name's words), description,
/// `whenToUse` (the description's first sentence) and one example per parameter.
fn capability(tool: &Tool, id: &str) -> Result<Value> {
    let words = name_words(tool.name).join(" ");
    let spoken = if words.is_empty() {
        tool.name.to_owned()
    } else {
        words
    };
    let name = tool.title.map_or(spoken, str::to_owned);
    let description = tool.description.unwrap_or(&name).to_owned();
    let when_to_use = tool
        .description
        .and_then(first_sentence)
        .map_or_else(|| name.clone(), str::to_owned);
    let examples: Vec<String> = tool
        .parameters
        .iter()
        .map(|p| {
            let words = name_words(p.name).join(" ");
            let mut text = if words.is_empty() {
                p.name.to_owned()
            } else {
                words
            };
            if let Some(d) = p.description {
                text.push_str(": ");
                text.push_str(d);
            }
            if !p.values.is_empty() {
                text.push_str(" (one of: ");
                text.push_str(&p.values.join(", "));
                text.push(')');
            }
            text
        })
        .filter(|e| !is_blank(e))
        .collect();
    let mut record = json!({
        "capabilityId": id,
        "name": name,
        "description": description,
        "whenToUse": when_to_use,
    });
    if !examples.is_empty() {
        record["examples"] = json!(examples);
    }
    if compact_len(&record) > RECORD_MAX_BYTES {
        return Err(input_too_large(&tool.path, RECORD_MAX_BYTES as u64));
    }
    Ok(record)
}

/// The capability ID of every name, in order. A name alone on its ID keeps it; names that share
/// one each append a hash of their own name. Should a hashed ID meet another tool's ID, every
/// hash is made longer. Each step depends on the set of names only, so a tool's ID does not
/// depend on the order of the list.
fn capability_ids(names: &[&str]) -> Option<Vec<String>> {
    let base: Vec<String> = names.iter().map(|n| id_from_name(n)).collect();
    let mut sharing: HashMap<&str, usize> = HashMap::new();
    for id in &base {
        *sharing.entry(id.as_str()).or_default() += 1;
    }
    let mut hex = NAME_HASH_HEX;
    while hex <= 64 {
        let ids: Vec<String> = names
            .iter()
            .zip(&base)
            .map(|(name, id)| {
                if sharing[id.as_str()] > 1 {
                    id_from_name_with_hash(name, hex)
                } else {
                    id.clone()
                }
            })
            .collect();
        let distinct: HashSet<&str> = ids.iter().map(String::as_str).collect();
        if distinct.len() == ids.len() {
            return Some(ids);
        }
        hex *= 2;
    }
    None
}

/// `providerFromTools(options)`: the definition and, in the tools' order, each tool's name and
/// capability ID.
pub fn provider_from_tools(options: &Value) -> Result<Value> {
    check_walk_at(options, "$")?;
    let map = plain_object(options).ok_or_else(|| input_invalid("$", "object"))?;
    if let Some(k) = map.keys().find(|k| !OPTION_KEYS.contains(&k.as_str())) {
        return Err(input_invalid(
            k,
            &format!("one of: {}", OPTION_KEYS.join(", ")),
        ));
    }
    let provider_id = map
        .get("providerId")
        .and_then(Value::as_str)
        .filter(|s| is_id(s))
        .ok_or_else(|| input_invalid("providerId", "ID"))?;
    let text = |key: &str| -> Result<Option<&str>> {
        match map.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .filter(|s| !is_blank(s) && s.len() <= MAX_TITLE_BYTES)
                .map(Some)
                .ok_or_else(|| input_invalid(key, "non-blank string of at most 1024 bytes")),
        }
    };
    let name = text("name")?
        .ok_or_else(|| input_invalid("name", "non-blank string of at most 1024 bytes"))?;
    let version = text("version")?.unwrap_or("1");
    let tools: Vec<Tool> = match map.get("tools") {
        Some(Value::Array(list)) => {
            if list.len() > MAX_TOOLS {
                return Err(input_too_large("tools", MAX_TOOLS as u64));
            }
            list.iter()
                .enumerate()
                .map(|(i, v)| read_tool(v, format!("tools[{i}]"), None))
                .collect::<Result<_>>()?
        }
        Some(v @ Value::Object(set)) if !is_non_json_marker(v) => {
            if set.len() > MAX_TOOLS {
                return Err(input_too_large("tools", MAX_TOOLS as u64));
            }
            set.iter()
                .map(|(k, v)| {
                    if is_blank(k) {
                        return Err(input_invalid(
                            &key_path("tools", k),
                            "a tool set key that names the tool",
                        ));
                    }
                    read_tool(v, key_path("tools", k), Some(k.as_str()))
                })
                .collect::<Result<_>>()?
        }
        _ => {
            return Err(input_invalid(
                "tools",
                "array of tools or a tool set keyed by name",
            ))
        }
    };
    let mut seen = HashSet::with_capacity(tools.len());
    for t in &tools {
        if !seen.insert(t.name) {
            return Err(input_invalid(
                &key_path(&t.path, "name"),
                "a name no other tool has",
            ));
        }
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
    // Unreachable short of a hash collision; refused rather than served wrong.
    let ids = capability_ids(&names)
        .ok_or_else(|| input_invalid("tools", "tool names with distinct capability IDs"))?;
    let capabilities = tools
        .iter()
        .zip(&ids)
        .map(|(t, id)| capability(t, id))
        .collect::<Result<Vec<_>>>()?;
    let mapping: Vec<Value> = names
        .iter()
        .zip(&ids)
        .map(|(name, id)| json!({ "name": name, "capabilityId": id }))
        .collect();
    Ok(json!({
        "definition": {
            "providerId": provider_id,
            "name": name,
            "version": version,
            "capabilities": capabilities,
        },
        "tools": mapping,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn built(tools: Value) -> Value {
        provider_from_tools(
            &json!({ "providerId": "host.tools", "name": "Host tools", "tools": tools }),
        )
        .unwrap_or_else(|e| panic!("{}", e.to_json()))
    }

    fn refused(options: Value) -> Value {
        match provider_from_tools(&options) {
            Ok(v) => panic!("accepted: {v}"),
            Err(e) => e.to_json_value(),
        }
    }

    fn tools_of(options_tools: Value) -> Value {
        json!({ "providerId": "host.tools", "name": "Host tools", "tools": options_tools })
    }

    fn named(names: &[&str]) -> Value {
        Value::Array(names.iter().map(|n| json!({ "name": n })).collect())
    }

    fn pairs(out: &Value) -> Vec<(String, String)> {
        out["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["capabilityId"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn every_dialect_becomes_a_capability() {
        let out = built(json!([
            { "name": "get_weather", "title": "Current weather", "description": "Current weather for a city. Uses a forecast service.",
              "inputSchema": { "type": "object", "properties": {
                  "city": { "type": "string", "description": "City name" },
                  "unit": { "type": "string", "enum": ["celsius", "fahrenheit"] } } } },
            { "type": "function", "function": { "name": "sendEmail", "description": "Send an email.",
              "parameters": { "type": "object", "properties": { "to": { "type": "string" } } } } },
            { "type": "function", "name": "list_files", "description": "List files in a folder.", "parameters": { "type": "object" } },
            { "name": "create_ticket", "description": "Open a support ticket.", "input_schema": { "type": "object",
              "properties": { "priorityLevel": { "description": "How urgent" } } } },
            { "name": "ping" }
        ]));
        assert_eq!(
            pairs(&out),
            [
                ("get_weather", "get_weather"),
                ("sendEmail", "send_email"),
                ("list_files", "list_files"),
                ("create_ticket", "create_ticket"),
                ("ping", "ping"),
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        let d = &out["definition"];
        assert_eq!(d["providerId"], "host.tools");
        assert_eq!(d["name"], "Host tools");
        assert_eq!(d["version"], "1");
        let caps = d["capabilities"].as_array().unwrap();
        assert_eq!(caps[0]["name"], "Current weather");
        assert_eq!(
            caps[0]["description"],
            "Current weather for a city. Uses a forecast service."
        );
        assert_eq!(caps[0]["whenToUse"], "Current weather for a city.");
        assert_eq!(
            caps[0]["examples"],
            json!(["city: City name", "unit (one of: celsius, fahrenheit)"])
        );
        assert_eq!(caps[1]["name"], "send email");
        assert_eq!(caps[1]["examples"], json!(["to"]));
        assert_eq!(caps[3]["examples"], json!(["priority level: How urgent"]));
        // A tool with nothing but a name still makes a valid capability.
        assert_eq!(caps[4]["name"], "ping");
        assert_eq!(caps[4]["description"], "ping");
        assert_eq!(caps[4]["whenToUse"], "ping");
        assert!(caps[4].get("examples").is_none());
        let roots = crate::definitions::Roots {
            aliases: &[],
            default_root: false,
        };
        crate::definitions::validate_provider(d, None, &roots).unwrap();
    }

    #[test]
    fn a_tool_set_keyed_by_name_is_read_like_a_list() {
        let out = built(json!({
            "getWeather": { "description": "Weather.", "inputSchema": { "type": "object" }, "execute": { "$cgNonJson": "function" } },
            "searchDocs": { "type": "dynamic", "description": "Search the docs.", "parameters": { "type": "object",
              "properties": { "query": { "type": "string", "description": "Words to look for" } } } }
        }));
        assert_eq!(
            pairs(&out),
            [("getWeather", "get_weather"), ("searchDocs", "search_docs")]
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        assert_eq!(
            out["definition"]["capabilities"][1]["examples"],
            json!(["query: Words to look for"])
        );
    }

    #[test]
    fn colliding_ids_take_a_hash_of_their_name_whatever_the_order() {
        let names = ["get_weather", "getWeather", "get-weather", "list_files"];
        let a = pairs(&built(named(&names)));
        let mut reversed = names;
        reversed.reverse();
        let b = pairs(&built(named(&reversed)));
        let mut sorted_a = a.clone();
        sorted_a.sort();
        let mut sorted_b = b.clone();
        sorted_b.sort();
        assert_eq!(sorted_a, sorted_b);
        let ids: std::collections::BTreeSet<&str> = a.iter().map(|(_, id)| id.as_str()).collect();
        assert_eq!(ids.len(), 4);
        assert_eq!(a[3].1, "list_files");
        for (name, id) in &a[..3] {
            assert_eq!(
                id,
                &crate::ids::id_from_name_with_hash(name, crate::ids::NAME_HASH_HEX)
            );
        }
        // A tool whose own name looks like another's hashed ID pushes both to longer hashes.
        let taken = crate::ids::id_from_name_with_hash("get_weather", crate::ids::NAME_HASH_HEX);
        let c = pairs(&built(
            json!([{ "name": "get_weather" }, { "name": "getWeather" }, { "name": taken }]),
        ));
        let ids: std::collections::BTreeSet<&str> = c.iter().map(|(_, id)| id.as_str()).collect();
        assert_eq!(ids.len(), 3);
        assert_eq!(c[2].1, taken);
        assert_eq!(
            c[0].1,
            crate::ids::id_from_name_with_hash("get_weather", 16)
        );
    }

    #[test]
    fn bad_tools_are_refused_with_their_path() {
        let cases: Vec<(Value, &str, &str)> = vec![
            (
                json!({ "name": "x", "tools": [] }),
                "CG_INPUT_INVALID",
                "providerId",
            ),
            (
                json!({ "providerId": "Bad", "name": "x", "tools": [] }),
                "CG_INPUT_INVALID",
                "providerId",
            ),
            (
                json!({ "providerId": "p", "name": " ", "tools": [] }),
                "CG_INPUT_INVALID",
                "name",
            ),
            (
                json!({ "providerId": "p", "name": "x", "tools": [], "extra": 1 }),
                "CG_INPUT_INVALID",
                "extra",
            ),
            (
                json!({ "providerId": "p", "name": "x", "version": "", "tools": [] }),
                "CG_INPUT_INVALID",
                "version",
            ),
            (
                json!({ "providerId": "p", "name": "x", "tools": 3 }),
                "CG_INPUT_INVALID",
                "tools",
            ),
            (tools_of(json!([3])), "CG_INPUT_INVALID", "tools[0]"),
            (
                tools_of(json!([{ "description": "no name" }])),
                "CG_INPUT_INVALID",
                "tools[0].name",
            ),
            (
                tools_of(json!([{ "name": "" }])),
                "CG_INPUT_INVALID",
                "tools[0].name",
            ),
            (
                tools_of(json!([{ "name": "a" }, { "name": "a" }])),
                "CG_INPUT_INVALID",
                "tools[1].name",
            ),
            (
                tools_of(json!([{ "name": "a", "description": 5 }])),
                "CG_INPUT_INVALID",
                "tools[0].description",
            ),
            (
                tools_of(json!([{ "name": "a", "title": { "$cgNonJson": "function" } }])),
                "CG_INPUT_INVALID",
                "tools[0].title",
            ),
            (
                tools_of(json!([{ "name": "a", "inputSchema": "object" }])),
                "CG_INPUT_INVALID",
                "tools[0].inputSchema",
            ),
            (
                tools_of(json!({ "a": { "inputSchema": { "$cgNonJson": "class_instance" } } })),
                "CG_INPUT_INVALID",
                "tools.a.inputSchema",
            ),
            (
                tools_of(json!({ "my-tool": { "parameters": { "properties": [] } } })),
                "CG_INPUT_INVALID",
                "tools[\"my-tool\"].parameters.properties",
            ),
            (
                tools_of(
                    json!([{ "name": "a", "input_schema": { "properties": { "q": { "description": 1 } } } }]),
                ),
                "CG_INPUT_INVALID",
                "tools[0].input_schema.properties.q.description",
            ),
            (
                tools_of(json!([{ "type": "function", "function": { "description": "x" } }])),
                "CG_INPUT_INVALID",
                "tools[0].function.name",
            ),
            (
                tools_of(json!([{ "type": "web_search_20250305", "name": "web_search" }])),
                "CG_INPUT_INVALID",
                "tools[0].type",
            ),
            (
                tools_of(json!([{ "name": "x".repeat(257) }])),
                "CG_INPUT_TOO_LARGE",
                "tools[0].name",
            ),
            (
                tools_of(json!([{ "name": "a", "description": "d".repeat(32_769) }])),
                "CG_INPUT_TOO_LARGE",
                "tools[0].description",
            ),
            (
                tools_of(Value::Array(
                    (0..10_001)
                        .map(|i| json!({ "name": format!("t{i}") }))
                        .collect(),
                )),
                "CG_INPUT_TOO_LARGE",
                "tools",
            ),
        ];
        for (options, code, field) in cases {
            let e = refused(options.clone());
            assert_eq!(e["code"], code, "{options}");
            assert_eq!(e["phase"], "query", "{options}");
            assert_eq!(e["details"]["field"], field, "{options}");
        }
        let many: serde_json::Map<String, Value> = (0..129)
            .map(|i| (format!("p{i}"), json!({ "type": "string" })))
            .collect();
        let e = refused(tools_of(
            json!([{ "name": "a", "inputSchema": { "properties": many } }]),
        ));
        assert_eq!(e["code"], "CG_INPUT_TOO_LARGE");
        assert_eq!(e["details"]["field"], "tools[0].inputSchema.properties");
        assert_eq!(e["details"]["limit"], 128);
        // Control characters print six bytes each: a record past the definitions' bound is refused
        // as the tool it came from, before the engine would refuse the definition.
        let params: serde_json::Map<String, Value> = (0..128)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({ "description": "\u{1}".repeat(4096) }),
                )
            })
            .collect();
        let e = refused(tools_of(
            json!([{ "name": "a", "inputSchema": { "properties": params } }]),
        ));
        assert_eq!(e["code"], "CG_INPUT_TOO_LARGE");
        assert_eq!(e["details"]["field"], "tools[0]");
    }

    #[test]
    fn when_to_use_is_the_first_sentence_of_the_description() {
        for (description, when) in [
            ("Send an email. Attachments too.", "Send an email."),
            (
                "Find files, e.g. by name. Or by type.",
                "Find files, e.g. by name.",
            ),
            ("List pods\nwith their status", "List pods"),
            ("Is it up? Ask.", "Is it up?"),
            ("Version 1.2 of the API.", "Version 1.2 of the API."),
            ("\u{feff}\nStill here", "ping"),
        ] {
            let out = built(json!([{ "name": "ping", "description": description }]));
            assert_eq!(
                out["definition"]["capabilities"][0]["whenToUse"], when,
                "{description:?}"
            );
        }
        let long = format!("{}é done.", "a".repeat(WHEN_TO_USE_BYTES - 1));
        let out = built(json!([{ "name": "ping", "description": long }]));
        let when = out["definition"]["capabilities"][0]["whenToUse"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(when, "a".repeat(WHEN_TO_USE_BYTES - 1));
    }

    #[test]
    fn null_optional_fields_of_a_tool_count_as_absent() {
        let out = built(
            json!([{ "name": "a", "title": null, "description": null, "parameters": null, "annotations": null }]),
        );
        assert_eq!(out["definition"]["capabilities"][0]["name"], "a");
    }
}

use super::*;
use serde_json::json;

/// The error of validating `v`, or `None` when it validates.
fn error(v: Value) -> Option<GraphError> {
    let roots = Roots {
        aliases: &[],
        default_root: false,
    };
    DatabaseRead::new(v).validate("p", &roots).err()
}

#[test]
fn a_stopped_read_names_its_reason_and_unknown_reasons_name_none() {
    for reason in STOPPED {
        let e = error(json!({ "failed": { "reason": reason } })).unwrap();
        assert_eq!((e.code(), e.phase()), (Code::ConfigInvalid, Phase::Load));
        assert_eq!(e.details().unwrap()["reason"], reason);
    }
    let e = error(json!({ "failed": { "reason": "/srv/secret" } })).unwrap();
    assert_eq!((e.code(), e.details()), (Code::ConfigInvalid, None));
}

#[test]
fn source_fields_must_not_change_after_open() {
    let provider = json!({ "providerId": "p", "name": "P", "version": "1" });
    let opened = json!({ "provider": provider, "sourceRevision": "r1" });
    for after in [
        json!({ "provider": provider, "sourceRevision": "r2" }),
        json!({ "provider": provider, "sourceRevision": "r1", "knowledgeRootDir": "k" }),
        json!({ "provider": { "providerId": "p", "name": "Q", "version": "1" }, "sourceRevision": "r1" }),
        Value::Null,
    ] {
        let mut v = opened.clone();
        v["capabilities"] = json!([]);
        v["streams"] = json!({});
        v["after"] = after.clone();
        let e = error(v).unwrap();
        assert_eq!(
            (e.code(), e.phase()),
            (Code::RevisionMismatch, Phase::Load),
            "{after}"
        );
        assert_eq!(e.details().unwrap()["reason"], "source_context_changed");
    }
    let mut same = opened.clone();
    same["capabilities"] = json!([]);
    same["streams"] = json!({});
    same["after"] = opened;
    assert!(error(same).is_none());
}

fn context() -> Value {
    json!({
        "provider": { "providerId": "p", "name": "P", "version": "1" },
        "sourceRevision": "r1",
    })
}

/// Reads provider `p` through `c` as the JS layer does: each call the collector names
/// (`{ call, args }`) is answered with the page `answer` gives, until the read is over.
/// The calls made, and how the read ended.
fn drive(c: &mut ReadCollector, answer: impl FnMut(&Value) -> Value) -> (Vec<Value>, Next) {
    drive_offering(c, &["neighbors"], answer)
}

/// [`drive`] for a view that has the relation calls `offers`.
fn drive_offering(
    c: &mut ReadCollector,
    offers: &[&str],
    mut answer: impl FnMut(&Value) -> Value,
) -> (Vec<Value>, Next) {
    let mut opened = context();
    opened["cwd"] = json!("/srv");
    let offers = json!(offers).to_string();
    let mut next = c.begin("p", &opened.to_string(), &offers).unwrap();
    let mut calls = Vec::new();
    while let Next::Ask(call) = next {
        let call: Value = serde_json::from_str(&call).unwrap();
        let page = answer(&call);
        calls.push(call);
        next = c.page(&page.to_string()).unwrap();
    }
    (calls, next)
}

/// An adapter over `records` and `streams` (`{ capabilityId: { kind: [item…] } }`, absent
/// ones empty), serving pages of `size` items with the next index as the cursor.
fn store(records: Vec<Value>, streams: Value, size: usize) -> impl FnMut(&Value) -> Value {
    move |call| {
        let args = call["args"].as_array().unwrap();
        let (list, page) = match call["call"].as_str().unwrap() {
            "scanCapabilities" => (records.clone(), &args[0]),
            "scanRelations" => (bulk(&records, &streams), &args[0]),
            "neighbors" => {
                let (id, kind) = (args[0].as_str().unwrap(), args[1].as_str().unwrap());
                let list = streams[id][kind].as_array().cloned().unwrap_or_default();
                (list, &args[2])
            }
            other => panic!("{other}"),
        };
        let start: usize = page["cursor"].as_str().map_or(0, |c| c.parse().unwrap());
        let end = (start + size).min(list.len());
        let mut out = json!({ "items": list[start..end] });
        if end < list.len() {
            out["nextCursor"] = json!(end.to_string());
        }
        out
    }
}

/// The bulk relation scan of `records` whose streams are `streams`: every stream's items in
/// the documented order (by capability, then kind, then endpoint).
fn bulk(records: &[Value], streams: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for r in records {
        let Some(id) = r["capabilityId"].as_str() else {
            continue;
        };
        for kind in Kind::ALL {
            for to in streams[id][kind.as_str()].as_array().into_iter().flatten() {
                out.push(json!({ "from": id, "kind": kind.as_str(), "to": to }));
            }
        }
    }
    out
}

/// Provider `p` as a collector that read it whole hands it over.
fn finished(mut c: ReadCollector) -> DatabaseRead {
    c.end(&context().to_string()).unwrap();
    handed_over(c)
}

/// Provider `p`'s read as the engine takes it: from the collector's text.
fn handed_over(c: ReadCollector) -> DatabaseRead {
    let mut reads = c.into_reads().unwrap();
    let json = reads.json.unwrap();
    let reads_by_id: BTreeMap<String, &RawValue> = serde_json::from_str(&json).unwrap();
    let texts = reads.texts.remove("p").unwrap_or_default();
    DatabaseRead::from_text(reads_by_id["p"].get(), reads.kept.remove("p"), texts).unwrap()
}

/// The failure recorded for provider `p`.
fn failed(c: ReadCollector) -> Value {
    let json: Value = serde_json::from_str(&c.into_json().unwrap().unwrap()).unwrap();
    json["p"]["failed"].clone()
}

/// The failure of a read through `answer` within `bounds`, which must stop it.
fn stopped(bounds: Database, answer: impl FnMut(&Value) -> Value) -> Value {
    let mut c = ReadCollector::new(&bounds);
    let (_, next) = drive(&mut c, answer);
    assert_eq!(next, Next::Stopped);
    // The read is over: a late page has nothing to join.
    assert_eq!(
        c.page(r#"{"items":[]}"#).err().map(|e| e.code()),
        Some(Code::Internal)
    );
    failed(c)
}

/// An adapter's answer to a call.
type Answer<'a> = dyn FnMut(&Value) -> Value + 'a;

fn reason(r: &str) -> Value {
    json!({ "reason": r })
}

fn rec(id: &str, extra: Value) -> Value {
    let mut r = json!({ "capabilityId": id, "name": id, "description": "D.", "whenToUse": "W." });
    if let (Value::Object(r), Value::Object(extra)) = (&mut r, extra) {
        r.extend(extra);
    }
    r
}

fn roots() -> Roots<'static> {
    Roots {
        aliases: &[],
        default_root: false,
    }
}

/// Three records, `b` and `c` children of `a`.
fn family() -> (Vec<Value>, Value) {
    let records = vec![
        rec("a", json!({})),
        rec("b", json!({ "parents": ["a"] })),
        rec("c", json!({ "parents": ["a"] })),
    ];
    let streams = json!({
        "a": { "children": ["b", "c"] },
        "b": { "parents": ["a"] },
        "c": { "parents": ["a"] },
    });
    (records, streams)
}

#[test]
fn the_collector_names_every_call_of_a_read_in_order() {
    let (records, streams) = family();
    let mut c = ReadCollector::default();
    let (calls, next) = drive(&mut c, store(records, streams.clone(), 1));
    assert_eq!(next, Next::Done);
    let scan = |cursor: Option<&str>| {
        let mut page = json!({ "limit": 1000, "maxBytes": 262_144 });
        if let Some(c) = cursor {
            page["cursor"] = json!(c);
        }
        json!({ "call": "scanCapabilities", "args": [page], "bound": page_bound(1000) })
    };
    assert_eq!(calls[..3], [scan(None), scan(Some("1")), scan(Some("2"))]);
    // Then the eight streams of each record in turn, every page of each.
    let neighbors = |id: &str, kind: &str, cursor: Option<&str>| {
        let mut page = json!({ "limit": 100 });
        if let Some(c) = cursor {
            page["cursor"] = json!(c);
        }
        json!({ "call": "neighbors", "args": [id, kind, page], "bound": page_bound(100) })
    };
    let mut expected = Vec::new();
    for id in ["a", "b", "c"] {
        for kind in Kind::ALL {
            expected.push(neighbors(id, kind.as_str(), None));
            if (id, kind) == ("a", Kind::Children) {
                expected.push(neighbors(id, kind.as_str(), Some("1")));
            }
        }
    }
    assert_eq!(calls[3..], expected[..]);
    let v = finished(c).validate("p", &roots()).unwrap();
    assert_eq!(v.capabilities.len(), 3);

    // A record without a string ID has no streams to read (validation rejects it).
    let mut c = ReadCollector::default();
    let records = vec![rec("a", json!({})), json!({ "capabilityId": 7 })];
    let (calls, next) = drive(&mut c, store(records, json!({}), 100));
    assert_eq!(next, Next::Done);
    assert_eq!(calls.len(), 1 + 8);
    assert!(calls[1..].iter().all(|c| c["args"][0] == "a"));
}

#[test]
fn pages_gathered_one_at_a_time_validate_like_a_whole_read() {
    let (records, mut streams) = family();
    let read = |streams: &Value| {
        let mut c = ReadCollector::default();
        let (_, next) = drive(&mut c, store(records.clone(), streams.clone(), 2));
        assert_eq!(next, Next::Done);
        finished(c)
    };
    let whole = read(&streams);
    assert_eq!(whole.knowledge_root(), None);
    assert_eq!(whole.validate("p", &roots()).unwrap().capabilities.len(), 3);

    // A stream missing an edge the records declare is still caught.
    streams["a"]["children"] = json!(["b"]);
    let e = read(&streams).validate("p", &roots()).err().unwrap();
    assert_eq!(e.code(), Code::AdapterContractInvalid);
    assert_eq!(e.details().unwrap()["reason"], "children_stream_mismatch");

    // Nothing read from a database: nothing to hand over.
    assert_eq!(ReadCollector::default().into_json().unwrap(), None);
}

#[test]
fn what_a_read_holds_grows_with_its_records_and_a_whole_read_is_told_apart() {
    let records: Vec<Value> = (0..50)
        .map(|i| rec(&format!("c{i:02}"), json!({})))
        .collect();
    let text: usize = records.iter().map(|r| r.to_string().len()).sum();
    let mut c = ReadCollector::default();
    assert_eq!(c.held_bytes(), 0);
    let (_, next) = drive(&mut c, store(records.clone(), json!({}), 10));
    assert_eq!(next, Next::Done);
    c.end(&context().to_string()).unwrap();
    assert!(c.held_bytes() >= text, "{} < {text}", c.held_bytes());
    assert!(c.into_reads().unwrap().any_read_whole());
    // A view naming the snapshot's state is not read: nothing whole, nothing held.
    let mut c = ReadCollector::default()
        .knowing(BTreeMap::from([("p".to_owned(), identity_of(&context()))]));
    let next = c.begin("p", &context().to_string(), "[]").unwrap();
    assert_eq!(next, Next::Unchanged);
    assert!(c.held_bytes() < 1024);
    assert!(!c.into_reads().unwrap().any_read_whole());
}

#[test]
fn records_stay_within_max_records() {
    let (records, streams) = family();
    let bounds = |max_records| Database {
        max_records,
        ..Database::default()
    };
    let mut c = ReadCollector::new(&bounds(3));
    assert_eq!(
        drive(&mut c, store(records.clone(), streams.clone(), 2)).1,
        Next::Done
    );
    // Counted across pages: the second page goes past the bound.
    let failure = stopped(bounds(2), store(records, streams, 2));
    assert_eq!(failure, reason("database_too_many_records"));

    // The bounds come as `databaseSources` gives them.
    let c = ReadCollector::with_budgets(
        r#"{"callTimeoutMs":1,"readTimeoutMs":2,"maxRecords":3,"maxBytes":4}"#,
    )
    .unwrap();
    assert_eq!((c.max_records, c.max_bytes), (3, 4));
    assert!(ReadCollector::with_budgets(r#"{"maxRecords":3}"#).is_err());
}

#[test]
fn all_json_read_counts_against_max_bytes() {
    let (records, streams) = family();
    // The provider record, every record and every stream item, as the JSON they came as.
    let provider = context()["provider"].to_string().len();
    let items: usize = records.iter().map(|r| r.to_string().len()).sum();
    let endpoints = 4 * r#""a""#.len();
    let total = (provider + items + endpoints) as u64;
    let bounds = |max_bytes| Database {
        max_bytes,
        ..Database::default()
    };
    let mut c = ReadCollector::new(&bounds(total));
    assert_eq!(
        drive(&mut c, store(records.clone(), streams.clone(), 2)).1,
        Next::Done
    );
    let failure = stopped(bounds(total - 1), store(records, streams, 2));
    assert_eq!(failure, reason("database_too_many_bytes"));
}

#[test]
fn a_page_over_its_limit_or_whose_cursor_does_not_advance_is_an_invalid_store_page() {
    let (records, streams) = family();
    let is_scan = |call: &Value| call["call"] == "scanCapabilities";
    let many = |n: usize| json!(vec![json!("a"); n]);
    let mut cursors = ["1", "2", "1"].into_iter();
    let cases: Vec<Box<Answer<'_>>> = vec![
        Box::new(|_| json!({ "items": vec![rec("a", json!({})); SCAN_PAGE_LIMIT + 1] })),
        // A stream page over its limit, however many records there are.
        Box::new(|call| {
            if is_scan(call) {
                json!({ "items": [rec("a", json!({}))] })
            } else {
                json!({ "items": many(PAGE_LIMIT + 1) })
            }
        }),
        Box::new(|_| json!({ "items": [], "nextCursor": "x" })),
        // The cursor asked with, one seen earlier in the list, an empty one.
        Box::new(|call| {
            let cursor = call["args"][0]["cursor"]
                .as_str()
                .unwrap_or("first")
                .to_owned();
            json!({ "items": [rec("a", json!({}))], "nextCursor": cursor })
        }),
        Box::new(move |_| json!({ "items": [rec("a", json!({}))], "nextCursor": cursors.next() })),
        Box::new(|_| json!({ "items": [rec("a", json!({}))], "nextCursor": "" })),
    ];
    for (i, answer) in cases.into_iter().enumerate() {
        let failure = stopped(Database::default(), answer);
        assert_eq!(failure, reason("invalid_store_page"), "case {i}");
    }
    // Every list has cursors of its own: the same strings in the next list are new ones.
    let mut c = ReadCollector::default();
    assert_eq!(drive(&mut c, store(records, streams, 1)).1, Next::Done);
}

#[test]
fn a_stream_never_lists_more_items_than_there_are_records() {
    let (records, mut streams) = family();
    // As many as there are records is not this rule's concern (validation's, later).
    streams["a"]["related"] = json!(["a", "b", "c"]);
    let mut c = ReadCollector::default();
    assert_eq!(
        drive(&mut c, store(records.clone(), streams.clone(), 2)).1,
        Next::Done
    );
    // Counted across the stream's pages.
    streams["a"]["related"] = json!(["a", "b", "c", "c"]);
    let failure = stopped(Database::default(), store(records, streams, 2));
    assert_eq!(failure, reason("neighbor_stream_unbounded"));
}

#[test]
fn a_page_without_an_items_array_or_with_a_cursor_not_a_string_breaks_the_contract() {
    let contract = json!({ "code": "CG_ADAPTER_CONTRACT_INVALID" });
    for page in [
        json!({}),
        json!({ "items": "x" }),
        json!({ "items": { "$cgNonJson": "class_instance" } }),
        json!({ "items": [rec("a", json!({}))], "nextCursor": 7 }),
        json!({ "items": [rec("a", json!({}))], "nextCursor": { "$cgNonJson": "function" } }),
    ] {
        let failure = stopped(Database::default(), |_| page.clone());
        assert_eq!(failure, contract, "{page}");
    }
    let e = error(json!({ "failed": contract })).unwrap();
    assert_eq!(
        (e.code(), e.phase(), e.details()),
        (Code::AdapterContractInvalid, Phase::Load, None)
    );
    // A null cursor marks the last page.
    let mut c = ReadCollector::default();
    let (_, next) = drive(&mut c, |_| json!({ "items": [], "nextCursor": null }));
    assert_eq!(next, Next::Done);
}

#[test]
fn a_later_failure_of_the_same_provider_replaces_what_was_recorded() {
    // Stopped by a page rule, then past the read deadline while the view closed.
    let mut c = ReadCollector::default();
    let (_, next) = drive(&mut c, |_| json!({ "items": [], "nextCursor": "x" }));
    assert_eq!(next, Next::Stopped);
    c.fail("p", r#"{"reason":"database_read_timeout"}"#)
        .unwrap();
    assert_eq!(failed(c), reason("database_read_timeout"));
    // Read whole, then past the deadline.
    let mut c = ReadCollector::default();
    assert_eq!(drive(&mut c, store(vec![], json!({}), 1)).1, Next::Done);
    c.end(&context().to_string()).unwrap();
    c.fail("p", r#"{"reason":"database_read_timeout"}"#)
        .unwrap();
    assert_eq!(failed(c), reason("database_read_timeout"));
    // Another provider's failure is its own.
    let mut c = ReadCollector::default();
    c.fail("q", r#"{"code":null}"#).unwrap();
    c.fail("p", r#"{"reason":"invalid_store_page"}"#).unwrap();
    let json: Value = serde_json::from_str(&c.into_json().unwrap().unwrap()).unwrap();
    assert_eq!(json["q"]["failed"], json!({ "code": null }));
    let e = DatabaseRead::new(json["p"].clone())
        .validate("p", &roots())
        .err()
        .unwrap();
    assert_eq!(e.details().unwrap()["reason"], "invalid_store_page");
}

#[test]
fn a_read_ends_only_once_every_list_was_read() {
    let (records, streams) = family();
    let mut c = ReadCollector::default();
    let mut answer = store(records, streams, 100);
    let Next::Ask(first) = c
        .begin("p", &context().to_string(), r#"["neighbors"]"#)
        .unwrap()
    else {
        panic!("a read starts with a scan");
    };
    let page = answer(&serde_json::from_str(&first).unwrap());
    assert!(matches!(c.page(&page.to_string()).unwrap(), Next::Ask(_)));
    let e = c.end(&context().to_string()).err().unwrap();
    assert_eq!(e.code(), Code::Internal);
}

/// How a read through a view with the relation calls `offers` over `records` and `streams`
/// (the bulk scan derived from them unless `relations` is given) ends: its calls, and its
/// validation.
fn read_offering(
    offers: &[&str],
    records: &[Value],
    streams: &Value,
    relations: Option<Vec<Value>>,
) -> (Vec<Value>, Result<ValidatedProvider>) {
    let mut inner = store(records.to_vec(), streams.clone(), 2);
    let answer = move |call: &Value| match (call["call"].as_str(), &relations) {
        (Some("scanRelations"), Some(items)) => {
            let cursor = call["args"][0]["cursor"].as_str();
            let start: usize = cursor.map_or(0, |c| c.parse().unwrap());
            let end = (start + 2).min(items.len());
            let mut out = json!({ "items": items[start..end] });
            if end < items.len() {
                out["nextCursor"] = json!(end.to_string());
            }
            out
        }
        _ => inner(call),
    };
    let mut c = ReadCollector::default();
    let (calls, next) = drive_offering(&mut c, offers, answer);
    assert_eq!(next, Next::Done);
    (calls, finished(c).validate("p", &roots()))
}

#[test]
fn edges_come_from_the_bulk_scan_the_streams_or_the_records_by_what_the_view_offers() {
    let (records, streams) = family();
    let names = |calls: &[Value]| -> Vec<String> {
        calls
            .iter()
            .map(|c| c["call"].as_str().unwrap().to_owned())
            .collect()
    };
    // The bulk scan, when the view has it, whatever else it has: pages of up to
    // RELATION_PAGE_LIMIT items, after the records.
    let (calls, bulk) = read_offering(&["neighbors", "scanRelations"], &records, &streams, None);
    let mut expected = vec!["scanCapabilities".to_owned(); 2];
    expected.extend(vec!["scanRelations".to_owned(); 2]);
    assert_eq!(names(&calls), expected);
    assert_eq!(
        calls[2],
        json!({ "call": "scanRelations", "args": [{ "limit": RELATION_PAGE_LIMIT, "maxBytes": RELATION_PAGE_MAX_BYTES }], "bound": page_bound(RELATION_PAGE_LIMIT) })
    );
    assert_eq!(calls[3]["args"][0]["cursor"], "2");
    // Without it, every stream of every record; with neither, the records only.
    let (calls, each) = read_offering(&["neighbors"], &records, &streams, None);
    assert_eq!(calls.len(), 2 + 3 * 8);
    let (calls, own) = read_offering(&[], &records, &streams, None);
    assert_eq!(names(&calls), vec!["scanCapabilities".to_owned(); 2]);
    // The same definitions, whichever way their edges came.
    let revision = |v: Result<ValidatedProvider>| {
        crate::snapshot::ProviderSnapshot::build(
            v.unwrap(),
            crate::snapshot::AuthorityKind::Database,
            Default::default(),
        )
        .static_revision
    };
    let bulk = revision(bulk);
    assert_eq!(bulk, revision(each));
    assert_eq!(bulk, revision(own));
    // Records-only still rejects a relation the records declare to nowhere.
    let mut dangling = records.clone();
    dangling[0]["requires"] = json!(["ghost"]);
    let (_, v) = read_offering(&[], &dangling, &streams, None);
    assert_eq!(v.err().unwrap().code(), Code::RelationInvalid);
}

#[test]
fn a_bulk_scan_that_lies_fails_as_the_same_lie_in_the_streams_does() {
    let (records, streams) = family();
    let error = |v: Result<ValidatedProvider>| {
        let e = v.err().expect("the read is refused");
        assert_eq!(
            (e.code(), e.phase()),
            (Code::AdapterContractInvalid, Phase::Load)
        );
        e.details().cloned()
    };
    let other = json!({ "providerId": "q", "capabilityId": "b" });
    type Tamper = Box<dyn Fn(&mut Value)>;
    let lies: Vec<(&str, Tamper)> = vec![
        ("missing", Box::new(|s| s["a"]["children"] = json!(["b"]))),
        ("extra", Box::new(|s| s["b"]["related"] = json!(["c"]))),
        (
            "reordered",
            Box::new(|s| s["a"]["children"] = json!(["c", "b"])),
        ),
        (
            "duplicated",
            Box::new(|s| s["a"]["children"] = json!(["b", "b", "c"])),
        ),
        (
            "unknown endpoint",
            Box::new(|s| s["b"]["parents"] = json!(["z"])),
        ),
        (
            "another provider's",
            Box::new(move |s| s["c"]["parents"] = json!([other.clone()])),
        ),
    ];
    for (lie, tamper) in lies {
        let mut told = streams.clone();
        tamper(&mut told);
        let (_, each) = read_offering(&["neighbors"], &records, &told, None);
        let relations = Some(bulk(&records, &told));
        let (_, scanned) = read_offering(&["scanRelations"], &records, &streams, relations);
        let (each, scanned) = (error(each), error(scanned));
        assert!(each.is_some(), "{lie}");
        assert_eq!(scanned, each, "{lie}");
    }
    // Out of order across capabilities or kinds: named by the first list that differs.
    let mut swapped = bulk(&records, &streams);
    let last = swapped.len() - 1;
    swapped.swap(0, last);
    let (_, v) = read_offering(&["scanRelations"], &records, &streams, Some(swapped));
    let details = error(v).unwrap();
    assert_eq!(
        (details["reason"].as_str(), details["capabilityId"].as_str()),
        (Some("children_stream_mismatch"), Some("a"))
    );
    // Items that are not `{ from, kind, to }` with one of the eight kinds.
    for item in [
        json!({ "from": "a", "kind": "cousins", "to": "b" }),
        json!({ "from": "a", "to": "b" }),
        json!({ "from": "a", "kind": "children", "to": { "providerId": "p" } }),
        json!("a"),
    ] {
        let mut items = bulk(&records, &streams);
        items.insert(0, item.clone());
        let (_, v) = read_offering(&["scanRelations"], &records, &streams, Some(items));
        let details = error(v).unwrap();
        assert_eq!(details["reason"], "neighbor_identity_invalid", "{item}");
        // Named by its capability, when it names one.
        let named = item.get("from").map(|_| json!("a"));
        assert_eq!(details.get("capabilityId"), named.as_ref(), "{item}");
    }
    // An edge of a capability the provider does not have.
    let mut items = bulk(&records, &streams);
    items.push(json!({ "from": "z", "kind": "requires", "to": "a" }));
    let (_, v) = read_offering(&["scanRelations"], &records, &streams, Some(items));
    assert_eq!(
        Value::Object(error(v).unwrap()),
        json!({ "reason": "requires_stream_mismatch" })
    );
}

#[test]
fn a_bulk_scan_is_judged_alike_whether_its_endpoints_are_local_ids_or_qualified() {
    // Plain edges are kept as record positions; from the first item that is not one (here a
    // qualified endpoint) the scan is kept as the text it came as, the edges before written
    // out as the items they were.
    let (records, streams) = family();
    let plain = bulk(&records, &streams);
    let mut mixed = plain.clone();
    mixed[2]["to"] = json!({ "providerId": "p", "capabilityId": "a" });
    let outcome = |items: Vec<Value>| {
        let (_, v) = read_offering(&["scanRelations"], &records, &streams, Some(items));
        v.map(|v| v.edges)
            .map_err(|e| (e.code(), e.details().cloned()))
    };
    assert!(outcome(plain.clone()).is_ok());
    assert_eq!(outcome(mixed.clone()), outcome(plain.clone()));
    // A lie before the switch and one after it fail exactly as in plain edges.
    for (at, lie) in [
        (0, json!({ "from": "a", "kind": "children", "to": "c" })),
        (3, json!({ "from": "c", "kind": "parents", "to": "b" })),
    ] {
        let (mut told, mut plain_told) = (mixed.clone(), plain.clone());
        told[at] = lie.clone();
        plain_told[at] = lie;
        let refused = outcome(told);
        assert!(refused.is_err(), "{at}");
        assert_eq!(refused, outcome(plain_told), "{at}");
    }
}

#[test]
fn a_bulk_scan_stays_within_the_page_rules_and_bounds() {
    let (records, streams) = family();
    let bulk_view = |relations: Value| {
        let mut records_page = store(records.clone(), streams.clone(), 100);
        move |call: &Value| {
            if call["call"] == "scanRelations" {
                relations.clone()
            } else {
                records_page(call)
            }
        }
    };
    let read = |bounds: Database, answer: Box<Answer<'_>>| {
        let mut c = ReadCollector::new(&bounds);
        let (_, next) = drive_offering(&mut c, &["scanRelations"], answer);
        (next, c)
    };
    let edge = json!({ "from": "a", "kind": "children", "to": "b" });
    let (next, c) = read(
        Database::default(),
        Box::new(bulk_view(
            json!({ "items": vec![edge.clone(); RELATION_PAGE_LIMIT + 1] }),
        )),
    );
    assert_eq!(
        (next, failed(c)),
        (Next::Stopped, reason("invalid_store_page"))
    );
    // Two declared relations: the fifth item is one too many. Nothing more is asked for,
    // and the read is refused as the streams would be.
    let mut all = bulk(&records, &streams);
    all.push(edge.clone());
    let endless = |call: &Value| {
        let start: usize = call["args"][0]["cursor"]
            .as_str()
            .map_or(0, |c| c.parse().unwrap());
        let item = all.get(start).cloned().unwrap_or(edge.clone());
        json!({ "items": [item], "nextCursor": (start + 1).to_string() })
    };
    let mut c = ReadCollector::default();
    let mut records_page = store(records.clone(), streams.clone(), 100);
    let (calls, next) = drive_offering(&mut c, &["scanRelations"], |call: &Value| {
        if call["call"] == "scanRelations" {
            endless(call)
        } else {
            records_page(call)
        }
    });
    assert_eq!((calls.len(), next), (1 + 5, Next::Done));
    let e = finished(c).validate("p", &roots()).err().unwrap();
    assert_eq!(e.code(), Code::AdapterContractInvalid);
    assert_eq!(e.details().unwrap()["reason"], "children_stream_mismatch");
    let (next, c) = read(
        Database::default(),
        Box::new(bulk_view(
            json!({ "items": [edge.clone()], "nextCursor": "" }),
        )),
    );
    assert_eq!(
        (next, failed(c)),
        (Next::Stopped, reason("invalid_store_page"))
    );
    // Its items count against maxBytes like every other JSON read.
    let all = bulk(&records, &streams);
    let whole = context()["provider"].to_string().len()
        + records.iter().map(|r| r.to_string().len()).sum::<usize>()
        + all.iter().map(|i| i.to_string().len()).sum::<usize>();
    let bounds = |max_bytes| Database {
        max_bytes: max_bytes as u64,
        ..Database::default()
    };
    let (next, _) = read(bounds(whole), Box::new(bulk_view(json!({ "items": all }))));
    assert_eq!(next, Next::Done);
    let (next, c) = read(
        bounds(whole - 1),
        Box::new(bulk_view(json!({ "items": all }))),
    );
    assert_eq!(
        (next, failed(c)),
        (Next::Stopped, reason("database_too_many_bytes"))
    );
}

#[test]
fn a_view_naming_the_state_the_current_snapshot_was_read_from_is_not_read() {
    let (records, streams) = family();
    let mut c = ReadCollector::default();
    drive(&mut c, store(records.clone(), streams.clone(), 100));
    let identity = finished(c).identity();
    assert_eq!(
        identity,
        json!({ "provider": context()["provider"], "sourceRevision": "r1", "knowledgeRoot": null })
    );
    let known = |identity: &Value| {
        ReadCollector::default().knowing(BTreeMap::from([("p".to_owned(), identity.clone())]))
    };
    let mut c = known(&identity);
    let (calls, next) = drive(&mut c, |_| panic!("nothing is read"));
    assert_eq!((calls.len(), next), (0, Next::Unchanged));
    let json: Value = serde_json::from_str(&c.into_json().unwrap().unwrap()).unwrap();
    assert_eq!(
        DatabaseRead::new(json["p"].clone()).unchanged(),
        Some(&identity)
    );
    // Another revision, provider record or document root is read whole.
    for field in ["sourceRevision", "provider", "knowledgeRoot"] {
        let mut other = identity.clone();
        other[field] = json!("changed");
        let mut c = known(&other);
        let (calls, next) = drive(&mut c, store(records.clone(), streams.clone(), 100));
        assert_eq!(next, Next::Done, "{field}");
        assert_eq!(calls.len(), 1 + 3 * 8, "{field}");
    }
    // A relative root names another directory from another working directory.
    let at = |cwd: &str| identity_of(&json!({ "knowledgeRootDir": "docs", "cwd": cwd }));
    assert_ne!(at("/srv/a"), at("/srv/b"));
    assert_eq!(at("/srv/a")["knowledgeRoot"], "/srv/a/docs");
}

/// A read of `p` at source revision `revision` through a view with the calls `offers`,
/// by a collector that knows the state and records of an earlier read (`known`): the calls
/// made, how the read ended and what it gave.
fn read_at(
    revision: &str,
    offers: &[&str],
    known: Option<&(Value, Arc<KeptRecords>)>,
    answer: impl FnMut(&Value) -> Value,
) -> (Vec<Value>, Next, Option<DatabaseRead>) {
    let (calls, next, read) = read_within(&Database::default(), revision, offers, known, answer);
    (calls, next, read.ok())
}

/// [`read_at`] within `bounds`; a stopped read gives its failure.
fn read_within(
    bounds: &Database,
    revision: &str,
    offers: &[&str],
    known: Option<&(Value, Arc<KeptRecords>)>,
    mut answer: impl FnMut(&Value) -> Value,
) -> (Vec<Value>, Next, std::result::Result<DatabaseRead, Value>) {
    let mut c = ReadCollector::new(bounds);
    if let Some((identity, kept)) = known {
        c = c
            .knowing(BTreeMap::from([("p".to_owned(), identity.clone())]))
            .knowing_records(BTreeMap::from([("p".to_owned(), kept.clone())]));
    }
    let mut opened = context();
    opened["sourceRevision"] = json!(revision);
    let after = opened.clone();
    opened["cwd"] = json!("/srv");
    let mut next = c
        .begin("p", &opened.to_string(), &json!(offers).to_string())
        .unwrap();
    let mut calls = Vec::new();
    while let Next::Ask(call) = next {
        let call: Value = serde_json::from_str(&call).unwrap();
        let page = answer(&call);
        calls.push(call);
        next = c.page(&page.to_string()).unwrap();
    }
    if next != Next::Done {
        return (calls, next, Err(failed(c)));
    }
    c.end(&after.to_string()).unwrap();
    (calls, Next::Done, Ok(handed_over(c)))
}

/// `changes` served as pages of `size` items (the cursor is the next index); the other
/// calls by `rest`.
fn with_changes(
    changes: Vec<Value>,
    size: usize,
    mut rest: impl FnMut(&Value) -> Value,
) -> impl FnMut(&Value) -> Value {
    move |call| {
        if call["call"] != "changedSince" {
            return rest(call);
        }
        assert_eq!(call["args"][0], "r1", "asked since the snapshot's revision");
        let start: usize = call["args"][1]["cursor"]
            .as_str()
            .map_or(0, |c| c.parse().unwrap());
        let end = (start + size).min(changes.len());
        let mut out = json!({ "items": changes[start..end] });
        if end < changes.len() {
            out["nextCursor"] = json!(end.to_string());
        }
        out
    }
}

fn names(calls: &[Value]) -> Vec<&str> {
    calls.iter().map(|c| c["call"].as_str().unwrap()).collect()
}

/// Records and their streams.
type Definitions = (Vec<Value>, Value);

/// Before: `a`, `b` and `c` (children of `a`) and `d`. After: `b` renamed and no longer a
/// child, `c` removed, `e` added, related to `d`.
fn before_and_after() -> (Definitions, Definitions, Vec<Value>) {
    let (mut records, mut streams) = family();
    records.push(rec("d", json!({})));
    streams["d"] = json!({});
    let b = rec("b", json!({ "name": "B, renamed" }));
    let e = rec("e", json!({ "related": ["d"] }));
    let after = vec![records[0].clone(), b.clone(), records[3].clone(), e.clone()];
    let after_streams = json!({ "d": { "relatedBy": ["e"] }, "e": { "related": ["d"] } });
    let changes = vec![
        json!({ "capabilityId": "b", "record": b }),
        json!({ "capabilityId": "c", "removed": true }),
        json!({ "capabilityId": "e", "record": e }),
    ];
    ((records, streams), (after, after_streams), changes)
}

fn revision_of(read: &DatabaseRead) -> String {
    let v = read.validate("p", &roots()).unwrap();
    crate::snapshot::ProviderSnapshot::build(
        v,
        crate::snapshot::AuthorityKind::Database,
        Default::default(),
    )
    .static_revision
}

#[test]
fn a_view_offering_changed_since_is_read_for_the_changes_only_and_gives_what_a_full_read_gives() {
    let ((records, streams), (after, after_streams), changes) = before_and_after();
    let offers = ["neighbors", "changedSince"];
    let (_, _, first) = read_at("r1", &offers, None, store(records, streams, 100));
    let before = built(&first.unwrap()).unwrap();
    let known = before.known();
    // The changes, in pages of two; then the streams of what they touched: b and e
    // themselves, a (b's and c's parent before) and d (e's relation now).
    let answer = with_changes(changes, 2, store(after.clone(), after_streams.clone(), 100));
    let (calls, next, incremental) = read_at("r2", &offers, Some(&known), answer);
    assert_eq!(next, Next::Done);
    let mut expected = vec!["changedSince"; 2];
    expected.extend(vec!["neighbors"; 4 * 8]);
    assert_eq!(names(&calls), expected);
    let streamed: HashSet<&str> = calls[2..]
        .iter()
        .map(|c| c["args"][0].as_str().unwrap())
        .collect();
    assert_eq!(streamed, HashSet::from(["a", "b", "d", "e"]));
    assert_eq!(
        calls[0]["args"],
        json!(["r1", { "limit": SCAN_PAGE_LIMIT, "maxBytes": PAGE_MAX_BYTES }])
    );
    // The same snapshot as a full read of the definitions now, and the same records kept
    // with it.
    let incremental = incremental.unwrap();
    let (_, _, full) = read_at("r2", &offers, None, store(after, after_streams, 100));
    let full = full.unwrap();
    let snapshot = incremental
        .snapshot_after("p", &roots(), Some(before.current()), Default::default())
        .unwrap();
    assert_eq!(snapshot.static_revision, revision_of(&full));
    assert_eq!(incremental.identity(), full.identity());
    let kept = incremental.kept().unwrap().published(&snapshot).unwrap();
    let whole = full
        .kept()
        .unwrap()
        .published(&built(&full).unwrap())
        .unwrap();
    assert_eq!(
        (kept.records, kept.targets, kept.bounds),
        (whole.records, whole.targets, whole.bounds)
    );
}

#[test]
fn a_view_that_cannot_tell_what_changed_is_read_whole() {
    let ((records, streams), (after, after_streams), _) = before_and_after();
    let offers = ["scanRelations", "changedSince"];
    let (calls, _, first) = read_at("r1", &offers, None, store(records, streams, 100));
    assert_eq!(names(&calls), ["scanCapabilities", "scanRelations"]);
    let first = first.unwrap();
    let known = (first.identity(), first.kept().unwrap());
    let mut rest = store(after.clone(), after_streams.clone(), 100);
    let answer = |call: &Value| match call["call"].as_str() {
        Some("changedSince") => json!({ "unknown": true }),
        _ => rest(call),
    };
    let (calls, _, read) = read_at("r2", &offers, Some(&known), answer);
    assert_eq!(
        names(&calls),
        ["changedSince", "scanCapabilities", "scanRelations"]
    );
    let (_, _, full) = read_at("r2", &offers, None, store(after, after_streams, 100));
    assert_eq!(revision_of(&read.unwrap()), revision_of(&full.unwrap()));
    // A view without changedSince keeps nothing; a forced reload knows nothing: both read
    // whole.
    let (records, streams) = family();
    let (_, _, plain) = read_at("r1", &["scanRelations"], None, store(records, streams, 9));
    assert!(plain.unwrap().kept().is_none());
}

#[test]
fn changes_are_checked_like_scans_and_the_streams_they_touch_like_every_stream() {
    let ((records, streams), (after, after_streams), changes) = before_and_after();
    let (_, _, first) = read_at(
        "r1",
        &["neighbors", "changedSince"],
        None,
        store(records, streams, 100),
    );
    let before = built(&first.unwrap()).unwrap();
    let known = before.known();
    let refused = |offers: &[&str], changes: Vec<Value>, streams: &Value| {
        let answer = with_changes(changes, 100, store(after.clone(), streams.clone(), 100));
        let (_, next, read) = read_at("r2", offers, Some(&known), answer);
        assert_eq!(next, Next::Done);
        let e = read
            .unwrap()
            .validate_after("p", &roots(), Some(before.current()))
            .err()
            .expect("refused");
        assert_eq!(
            (e.code(), e.phase()),
            (Code::AdapterContractInvalid, Phase::Load)
        );
        e.details().cloned().unwrap()
    };
    let offers = ["neighbors", "changedSince"];
    let mut reordered = changes.clone();
    reordered.swap(0, 2);
    let mut repeated = changes.clone();
    repeated.insert(1, changes[0].clone());
    for (lie, list, reason) in [
        ("reordered", reordered, "change_order_or_duplicate"),
        ("repeated", repeated, "change_order_or_duplicate"),
        (
            "another record's",
            vec![json!({ "capabilityId": "b", "record": rec("z", json!({})) })],
            "change_item_invalid",
        ),
        (
            "neither",
            vec![json!({ "capabilityId": "b" })],
            "change_item_invalid",
        ),
        (
            "both",
            vec![json!({ "capabilityId": "c", "removed": true, "record": rec("c", json!({})) })],
            "change_item_invalid",
        ),
        (
            "not removed",
            vec![json!({ "capabilityId": "c", "removed": false })],
            "change_item_invalid",
        ),
        ("not an object", vec![json!("b")], "change_item_invalid"),
    ] {
        assert_eq!(
            refused(&offers, list, &after_streams)["reason"],
            reason,
            "{lie}"
        );
    }
    // A touched stream that lies fails as it would in a full read.
    let mut stale = after_streams.clone();
    stale["a"] = json!({ "children": ["b"] });
    let details = refused(&offers, changes.clone(), &stale);
    assert_eq!(
        (details["reason"].as_str(), details["capabilityId"].as_str()),
        (Some("children_stream_mismatch"), Some("a"))
    );
    // The changes count against maxRecords, and so does the provider they give.
    for (max_records, changes) in [(2, changes.clone()), (3, changes[..1].to_vec())] {
        let bounds = Database {
            max_records,
            ..Database::default()
        };
        let answer = with_changes(changes, 100, |_| unreachable!());
        let (_, next, read) = read_within(&bounds, "r2", &offers, Some(&known), answer);
        assert_eq!(
            (next, read.err()),
            (Next::Stopped, Some(reason("database_too_many_records")))
        );
    }
    // A page rule is a page rule: `unknown` beside items, or past the first page.
    let unknown_pages = [
        vec![json!({ "items": [], "unknown": true })],
        vec![
            json!({ "items": [changes[0]], "nextCursor": "1" }),
            json!({ "unknown": true }),
        ],
    ];
    for pages in unknown_pages {
        let mut pages = pages.into_iter();
        let (_, next, read) =
            read_within(&Database::default(), "r2", &offers, Some(&known), |_| {
                pages.next().unwrap()
            });
        assert_eq!(
            (next, read.err()),
            (
                Next::Stopped,
                Some(json!({ "code": "CG_ADAPTER_CONTRACT_INVALID" }))
            )
        );
    }
}

#[test]
fn a_page_given_as_json_text_is_judged_as_its_items_are() {
    let (records, streams) = family();
    // Every page of the read handed over as text: the same read as the items give.
    let read = |as_text: &dyn Fn(&Value) -> (String, Option<String>)| {
        let mut c = ReadCollector::default();
        let mut answer = store(records.clone(), streams.clone(), 2);
        let mut opened = context();
        opened["cwd"] = json!("/srv");
        let mut next = c
            .begin("p", &opened.to_string(), r#"["scanRelations"]"#)
            .unwrap();
        while let Next::Ask(call) = next {
            let (page, text) = as_text(&answer(&serde_json::from_str(&call).unwrap()));
            next = c.page_of(&page, text.as_deref()).unwrap();
        }
        (next, c)
    };
    let split = |page: &Value| {
        let mut rest = page.clone();
        let items = rest.as_object_mut().unwrap().remove("items").unwrap();
        (
            rest.to_string(),
            Some(serde_json::to_string_pretty(&items).unwrap()),
        )
    };
    let (next, c) = read(&split);
    assert_eq!(next, Next::Done);
    let (_, whole) = read(&|page: &Value| (page.to_string(), None));
    assert_eq!(revision_of(&finished(c)), revision_of(&finished(whole)));
    // Text that is not one JSON array, or text beside items, breaks the contract.
    for (page, text) in [
        (json!({}), "[{\"capabilityId\": \"a\"}"),
        (json!({}), "{\"capabilityId\": \"a\"}"),
        (json!({}), "[\"\\ud800\"]"),
        (json!({ "items": [] }), "[]"),
    ] {
        let mut c = ReadCollector::default();
        let mut opened = context();
        opened["cwd"] = json!("/srv");
        c.begin("p", &opened.to_string(), "[]").unwrap();
        let next = c.page_of(&page.to_string(), Some(text)).unwrap();
        assert_eq!(next, Next::Stopped, "{text}");
        assert_eq!(
            failed(c),
            json!({ "code": "CG_ADAPTER_CONTRACT_INVALID" }),
            "{text}"
        );
    }
}

#[test]
fn a_bulk_scan_read_as_text_is_compared_item_by_item_and_any_doubt_goes_the_long_way() {
    let (records, streams) = family();
    let v = validate_provider(
        &json!({ "providerId": "p", "name": "P", "version": "1", "capabilities": records }),
        Some("p"),
        &roots(),
    )
    .unwrap();
    let text = |items: &[Value]| json!(items).to_string();
    let scan = bulk(&records, &streams);
    assert!(relations_text_as_declared(&v, "p", &text(&scan)));
    // Qualified endpoints of this provider and escaped text are the same items.
    let mut qualified = scan.clone();
    qualified[0]["to"] = json!({ "capabilityId": "b", "providerId": "p" });
    assert!(relations_text_as_declared(&v, "p", &text(&qualified)));
    let escaped = text(&scan).replacen("\"a\"", "\"\\u0061\"", 1);
    assert!(escaped.contains("\\u0061"));
    assert!(relations_text_as_declared(&v, "p", &escaped));
    // Anything else is not taken as declared here (check_relations then names it).
    let mut other = scan.clone();
    other[0]["to"] = json!({ "capabilityId": "b", "providerId": "q" });
    let mut extra_key = scan.clone();
    extra_key[0]["note"] = json!(1);
    let mut extra_endpoint_key = scan.clone();
    extra_endpoint_key[0]["to"] = json!({ "capabilityId": "b", "providerId": "p", "x": 1 });
    let mut longer = scan.clone();
    longer.push(scan[0].clone());
    for items in [
        other,
        extra_key,
        extra_endpoint_key,
        longer,
        scan[1..].to_vec(),
    ] {
        assert!(
            !relations_text_as_declared(&v, "p", &text(&items)),
            "{items:?}"
        );
    }
    let duplicated_key = text(&scan).replacen("\"kind\"", "\"from\":\"a\",\"kind\"", 1);
    assert!(!relations_text_as_declared(&v, "p", &duplicated_key));
    assert!(!relations_text_as_declared(
        &v,
        "p",
        &format!("{} x", text(&scan))
    ));
}

/// Records with every relation kind, some capabilities named by several others.
fn web() -> Vec<Value> {
    vec![
        rec("a", json!({})),
        rec("a.b", json!({ "parents": ["a"], "related": ["c"] })),
        rec(
            "ab",
            json!({ "specializes": ["a"], "requires": ["c", "a.b"] }),
        ),
        rec("c", json!({ "parents": ["a"], "related": ["a.b", "ab"] })),
        rec(
            "d",
            json!({ "specializes": ["c"], "requires": ["a", "ab", "c"] }),
        ),
    ]
}

#[test]
fn a_bulk_scan_as_text_is_the_declared_edges_however_it_is_spaced_and_nothing_else() {
    let records = web();
    let v = validate_provider(
        &json!({ "providerId": "p", "name": "P", "version": "1", "capabilities": records }),
        Some("p"),
        &roots(),
    )
    .unwrap();
    let expected = expected_lists(&v, &vec![true; v.capabilities.len()]);
    let id = |i: usize| v.capabilities[i].texts.capability_id();
    let items: Vec<Value> = (0..v.capabilities.len())
        .flat_map(|i| (0..8).map(move |k| (i, k)))
        .flat_map(|(i, k)| {
            expected[i][k]
                .iter()
                .map(move |&t| json!({ "from": id(i), "kind": Kind::ALL[k].as_str(), "to": id(t as usize) }))
        })
        .collect();
    let printed = json!(items).to_string();
    assert!(printed.starts_with(r#"[{"from":"a","kind":"children","to":"a.b"},"#));
    assert!(relations_text_as_declared(&v, "p", &printed));
    // The same items spaced, in another key order, or with qualified endpoints.
    let spaced = serde_json::to_string_pretty(&items).unwrap();
    let reordered = printed.replace(
        r#"{"from":"a","kind":"children","to":"a.b"}"#,
        r#"{"to":"a.b","kind":"children","from":"a"}"#,
    );
    let qualified = printed.replacen(
        r#""to":"a.b""#,
        r#""to":{"providerId":"p","capabilityId":"a.b"}"#,
        1,
    );
    for text in [&spaced, &reordered, &qualified] {
        assert_ne!(text, &printed);
        assert!(relations_text_as_declared(&v, "p", text), "{text}");
    }
    // A difference, printed alike, is none of the declared edges: an endpoint one ID is a
    // prefix of ("a" of "a.b", "ab"), one edge left out, one more, two swapped, one given twice.
    let mut swapped = items.clone();
    swapped.swap(0, 1);
    let mut twice = items.clone();
    twice.insert(1, items[0].clone());
    let mut extra = items.clone();
    extra.push(json!({ "from": "d", "kind": "requiredBy", "to": "a" }));
    let prefix = printed.replacen(r#""to":"a.b""#, r#""to":"a""#, 1);
    for text in [
        prefix,
        json!(items[1..]).to_string(),
        json!(items[..items.len() - 1]).to_string(),
        json!(extra).to_string(),
        json!(swapped).to_string(),
        json!(twice).to_string(),
        format!("{printed} "),
        printed.replacen('[', "[ ", 1),
        String::from("[]"),
    ] {
        let same = text.replace(' ', "") == printed;
        assert_eq!(relations_text_as_declared(&v, "p", &text), same, "{text}");
    }
}

#[test]
fn a_relative_root_is_taken_from_the_directory_at_open() {
    let r = DatabaseRead::new(json!({ "knowledgeRootDir": "docs", "cwd": "/srv/host" }));
    assert_eq!(r.knowledge_root(), Some(PathBuf::from("/srv/host/docs")));
    let abs = DatabaseRead::new(json!({ "knowledgeRootDir": "/abs", "cwd": "/srv/host" }));
    assert_eq!(abs.knowledge_root(), Some(PathBuf::from("/abs")));
}

/// A snapshot and what the source keeps with it, as the engine holds them.
struct Built {
    snapshot: crate::snapshot::ProviderSnapshot,
    kept: Option<KeptRead>,
}

impl Built {
    /// The snapshot as a read against it sees it.
    fn current(&self) -> Current<'_> {
        Current {
            snapshot: &self.snapshot,
            kept: self.kept.as_ref(),
        }
    }

    /// What a reload tells the collector: the state of the source the snapshot was read in and
    /// the records kept with it.
    fn known(&self) -> (Value, Arc<KeptRecords>) {
        let kept = self.kept.clone().expect("the records are kept");
        ((*kept.identity).clone(), kept.records)
    }
}

impl std::ops::Deref for Built {
    type Target = crate::snapshot::ProviderSnapshot;
    fn deref(&self) -> &Self::Target {
        &self.snapshot
    }
}

/// The snapshot built from `read` and what it keeps with it (`identity` and the records it
/// keeps as they are published).
fn kept_with(
    snapshot: crate::snapshot::ProviderSnapshot,
    identity: Value,
    records: Option<KeptRecords>,
) -> Built {
    let kept = records.map(|records| KeptRead {
        records: Arc::new(records),
        identity: Arc::new(identity),
    });
    Built { snapshot, kept }
}

/// A snapshot built from `read`, keeping its records as the engine does.
fn built(read: &DatabaseRead) -> std::result::Result<Built, Value> {
    let v = read
        .validate_after("p", &roots(), None)
        .map_err(|e| e.to_json_value())?;
    let s = crate::snapshot::ProviderSnapshot::build(
        v,
        crate::snapshot::AuthorityKind::Database,
        Default::default(),
    );
    // Kept as a published snapshot keeps them: without their text.
    let records = read.kept().and_then(|k| k.published(&s));
    Ok(kept_with(s, read.identity(), records))
}

/// Twenty records `c00`… (each a child of `c00`, `c05` requiring `c04`, `c07` related to
/// `c06`), read whole, and its snapshot.
fn twenty() -> (Vec<Value>, Built) {
    let records: Vec<Value> = (0..20)
        .map(|i| {
            let mut extra = json!({});
            if i > 0 {
                extra["parents"] = json!(["c00"]);
            }
            if i == 5 {
                extra["requires"] = json!(["c04"]);
            }
            if i == 7 {
                extra["related"] = json!(["c06"]);
            }
            rec(&format!("c{i:02}"), extra)
        })
        .collect();
    let (_, _, first) = read_at(
        "r1",
        &["changedSince"],
        None,
        store(records.clone(), json!({}), 100),
    );
    let snapshot = built(&first.unwrap()).unwrap();
    (records, snapshot)
}

#[test]
fn an_incremental_read_validates_only_the_changed_records_and_refuses_what_a_full_read_refuses() {
    use crate::opcount::{count, reset, Op};
    let (records, before) = twenty();
    let known = before.known();
    let full_of = |after: &[Value]| {
        let (_, _, read) = read_at(
            "r2",
            &["changedSince"],
            None,
            store(after.to_vec(), json!({}), 100),
        );
        built(&read.unwrap()).map(|s| s.snapshot.static_revision)
    };
    let renamed = rec("c03", json!({ "parents": ["c00"], "name": "Renamed" }));
    let mut cases: Vec<(&str, Vec<Value>)> = vec![
        (
            "a renamed record",
            vec![json!({ "capabilityId": "c03", "record": renamed })],
        ),
        (
            "an added record",
            vec![
                json!({ "capabilityId": "c30", "record": rec("c30", json!({ "specializes": ["c02"] })) }),
            ],
        ),
        // c05 (unchanged) requires c04.
        (
            "a removed capability an unchanged one requires",
            vec![json!({ "capabilityId": "c04", "removed": true })],
        ),
        // Every other record (unchanged) is a child of c00.
        (
            "a removed parent",
            vec![json!({ "capabilityId": "c00", "removed": true })],
        ),
        (
            "a changed record naming a capability that does not exist",
            vec![
                json!({ "capabilityId": "c09", "record": rec("c09", json!({ "related": ["nowhere"] })) }),
            ],
        ),
        // c00 becomes a child of c01, itself a child of c00 (unchanged).
        (
            "a changed record closing a cycle",
            vec![
                json!({ "capabilityId": "c00", "record": rec("c00", json!({ "parents": ["c01"] })) }),
            ],
        ),
        (
            "a changed record invalid of its own",
            vec![json!({ "capabilityId": "c08", "record": { "capabilityId": "c08", "name": "" } })],
        ),
        (
            "a changed record with a key no record has",
            vec![json!({ "capabilityId": "c08", "record": rec("c08", json!({ "tags": [] })) })],
        ),
    ];
    // No change can duplicate an ID: each replaces the record of its own ID, and a list
    // naming an ID twice is refused as it is read (`change_order_or_duplicate`).
    cases.push(("two changes at once", vec![
        json!({ "capabilityId": "c02", "removed": true }),
        json!({ "capabilityId": "c11", "record": rec("c11", json!({ "parents": ["c00"], "specializes": ["c12"] })) }),
    ]));
    for (case, changes) in cases {
        // What the definitions are after the changes, read whole.
        let mut after: BTreeMap<String, Value> = records
            .iter()
            .map(|r| (r["capabilityId"].as_str().unwrap().to_owned(), r.clone()))
            .collect();
        for c in &changes {
            let id = c["capabilityId"].as_str().unwrap().to_owned();
            match c.get("record") {
                Some(r) => after.insert(id, r.clone()),
                None => after.remove(&id),
            };
        }
        let after: Vec<Value> = after.into_values().collect();
        let full = full_of(&after);
        let answer = with_changes(changes.clone(), 10, store(Vec::new(), json!({}), 100));
        let (_, next, read) = read_at("r2", &["changedSince"], Some(&known), answer);
        assert_eq!(next, Next::Done, "{case}");
        let read = read.unwrap();
        reset();
        let incremental = read
            .validate_after("p", &roots(), Some(before.current()))
            .map(|v| {
                crate::snapshot::ProviderSnapshot::build(
                    v,
                    crate::snapshot::AuthorityKind::Database,
                    Default::default(),
                )
                .static_revision
            })
            .map_err(|e| e.to_json_value());
        // Only the records the changes list are parsed and checked one by one; the
        // provider-wide rules still run over the whole candidate.
        let listed = changes.iter().filter(|c| c.get("record").is_some()).count();
        assert_eq!(count(Op::RecordChecked), listed as u64, "{case}");
        assert_eq!(incremental, full, "{case}");
    }
}

#[test]
fn what_changed_is_read_only_against_the_snapshot_and_document_root_it_was_kept_with() {
    let (records, before) = twenty();
    let known = before.known();
    let changes = vec![json!({ "capabilityId": "c03", "removed": true })];
    let answer = with_changes(changes, 10, store(Vec::new(), json!({}), 100));
    let (_, _, read) = read_at("r2", &["changedSince"], Some(&known), answer);
    let read = read.unwrap();
    // The records it took unchanged are the snapshot's: it validates against that one only.
    read.validate_after("p", &roots(), Some(before.current()))
        .unwrap();
    let (_, other) = twenty();
    let refused = read
        .validate_after("p", &roots(), Some(other.current()))
        .err()
        .unwrap();
    assert_eq!(
        (refused.code(), refused.phase(), refused.next_action()),
        (
            Code::Internal,
            Phase::Load,
            Some(crate::error::NextAction::ContactAdmin)
        )
    );
    // A view naming another document root is read whole: records checked under the old one
    // are checked again.
    let mut moved = known.clone();
    moved.0["knowledgeRoot"] = json!("/elsewhere");
    let (calls, next, read) = read_at(
        "r2",
        &["changedSince"],
        Some(&moved),
        store(records, json!({}), 100),
    );
    assert_eq!(next, Next::Done);
    assert_eq!(names(&calls), ["scanCapabilities"]);
    assert_eq!(
        read.unwrap()
            .validate("p", &roots())
            .unwrap()
            .capabilities
            .len(),
        20
    );
}

/// Whether two snapshots serve the same: the static revision, the provider, every
/// capability's fields and every relation list.
fn same_snapshot(
    a: &crate::snapshot::ProviderSnapshot,
    b: &crate::snapshot::ProviderSnapshot,
) -> bool {
    use crate::snapshot::Kind;
    let n = a.capabilities.len();
    a.static_revision == b.static_revision
        && a.provider == b.provider
        && n == b.capabilities.len()
        && (0..n as u32).all(|i| {
            let (x, y) = (a.capability(i), b.capability(i));
            (
                x.id(),
                x.name(),
                x.description(),
                x.when_to_use(),
                x.distinction(),
            ) == (
                y.id(),
                y.name(),
                y.description(),
                y.when_to_use(),
                y.distinction(),
            ) && x.examples == y.examples
                && x.knowledge == y.knowledge
                && Kind::ALL
                    .iter()
                    .all(|&k| a.neighbours(i, k) == b.neighbours(i, k))
                && a.find(x.id()) == Some(i)
        })
}

fn document(id: &str, url: &str) -> Value {
    json!({ "kind": "document", "knowledgeId": id, "role": "guide", "locator": { "type": "http", "url": url } })
}

#[test]
fn an_incremental_read_that_only_rewrites_records_shares_the_others_and_gives_the_full_read_s_snapshot(
) {
    use crate::opcount::{count, reset, Op};
    // Twenty records (see `twenty`), c10 referring to a document.
    let (mut records, _) = twenty();
    records[10]["knowledge"] = json!([document("k1", "https://example.com/a")]);
    let (_, _, first) = read_at(
        "r1",
        &["changedSince"],
        None,
        store(records.clone(), json!({}), 100),
    );
    let before = built(&first.unwrap()).unwrap();
    let known = before.known();
    let change = |id: &str, extra: Value| json!({ "capabilityId": id, "record": rec(id, extra) });
    let k1 = json!([document("k1", "https://example.com/a")]);
    // Each case: its changes, and whether the other records are shared with the snapshot
    // before (the read only rewrote records and the candidate passes).
    let cases: Vec<(&str, Vec<Value>, bool)> = vec![
        (
            "a renamed record",
            vec![change(
                "c03",
                json!({ "parents": ["c00"], "name": "Renamed" }),
            )],
            true,
        ),
        (
            "records whose relations change",
            vec![
                change("c05", json!({ "parents": ["c00"] })),
                change(
                    "c09",
                    json!({ "parents": ["c00"], "requires": ["c08", "c19"], "related": ["c07"] }),
                ),
                change("c12", json!({ "specializes": ["c11"] })),
            ],
            true,
        ),
        (
            "a record keeping its knowledge",
            vec![change(
                "c10",
                json!({ "parents": ["c00"], "name": "Ten", "knowledge": k1 }),
            )],
            true,
        ),
        (
            "a record whose knowledge changes",
            vec![change(
                "c11",
                json!({ "parents": ["c00"], "knowledge": [document("k2", "https://example.com/b")] }),
            )],
            false,
        ),
        (
            "a record giving a knowledge ID another meaning",
            vec![change(
                "c11",
                json!({ "parents": ["c00"], "knowledge": [document("k1", "https://example.com/b")] }),
            )],
            false,
        ),
        (
            "a record closing a cycle",
            vec![change("c00", json!({ "parents": ["c01"] }))],
            false,
        ),
        (
            "a record requiring itself",
            vec![change(
                "c04",
                json!({ "parents": ["c00"], "requires": ["c04"] }),
            )],
            false,
        ),
        (
            "a record naming a capability that does not exist",
            vec![change("c09", json!({ "related": ["nowhere"] }))],
            false,
        ),
        (
            "a record invalid of its own",
            vec![json!({ "capabilityId": "c08", "record": { "capabilityId": "c08", "name": "" } })],
            false,
        ),
        ("an added record", vec![change("c30", json!({}))], false),
        (
            "a removed record",
            vec![json!({ "capabilityId": "c19", "removed": true })],
            false,
        ),
    ];
    for (case, changes, shared) in cases {
        let mut after: BTreeMap<String, Value> = records
            .iter()
            .map(|r| (r["capabilityId"].as_str().unwrap().to_owned(), r.clone()))
            .collect();
        for c in &changes {
            let id = c["capabilityId"].as_str().unwrap().to_owned();
            match c.get("record") {
                Some(r) => after.insert(id, r.clone()),
                None => after.remove(&id),
            };
        }
        let after: Vec<Value> = after.into_values().collect();
        let (_, _, full) = read_at("r2", &["changedSince"], None, store(after, json!({}), 100));
        let full = built(&full.unwrap());
        let answer = with_changes(changes.clone(), 10, store(Vec::new(), json!({}), 100));
        let (_, _, read) = read_at("r2", &["changedSince"], Some(&known), answer);
        reset();
        let incremental = read
            .unwrap()
            .snapshot_after("p", &roots(), Some(before.current()), Default::default())
            .map_err(|e| e.to_json_value());
        // Only the listed records are checked one by one; a read that turns out not to be a
        // mere rewrite checks them again as it validates the whole candidate.
        let listed = changes.iter().filter(|c| c.get("record").is_some()).count() as u64;
        let checked = count(Op::RecordChecked);
        assert!(
            checked == listed || (!shared && checked <= 2 * listed),
            "{case}"
        );
        match (&incremental, &full) {
            (Ok(incremental), Ok(full)) => {
                assert!(same_snapshot(incremental, full), "{case}");
                let unchanged = Arc::ptr_eq(&incremental.capabilities[1], &before.capabilities[1]);
                assert_eq!(unchanged, shared, "{case}");
            }
            (Err(incremental), Err(full)) => {
                assert!(!shared, "{case}");
                assert_eq!(incremental, full, "{case}");
            }
            _ => panic!(
                "{case}: {incremental:?} / {:?}",
                full.as_ref().map(|s| &s.static_revision)
            ),
        }
    }
}

#[test]
fn a_rewritten_record_s_touched_streams_are_checked_against_the_snapshot_it_gives() {
    let (records, streams) = family();
    let offers = ["neighbors", "changedSince"];
    let (_, _, first) = read_at(
        "r1",
        &offers,
        None,
        store(records.clone(), streams.clone(), 100),
    );
    let before = built(&first.unwrap()).unwrap();
    let known = before.known();
    // b renamed, still a child of a: only b's streams are read again (a's lists stay).
    let b = rec("b", json!({ "parents": ["a"], "name": "B, renamed" }));
    let after = vec![records[0].clone(), b.clone(), records[2].clone()];
    let changes = vec![json!({ "capabilityId": "b", "record": b })];
    let read = |streams: &Value| {
        let answer = with_changes(
            changes.clone(),
            10,
            store(after.clone(), streams.clone(), 100),
        );
        let (calls, next, read) = read_at("r2", &offers, Some(&known), answer);
        assert_eq!((names(&calls).len(), next), (1 + 8, Next::Done));
        assert!(calls[1..].iter().all(|c| c["args"][0] == "b"));
        read.unwrap()
    };
    let truthful = read(&streams)
        .snapshot_after("p", &roots(), Some(before.current()), Default::default())
        .unwrap();
    let (_, _, full) = read_at(
        "r2",
        &offers,
        None,
        store(after.clone(), streams.clone(), 100),
    );
    assert!(same_snapshot(&truthful, &built(&full.unwrap()).unwrap()));
    assert!(Arc::ptr_eq(
        &truthful.capabilities[2],
        &before.capabilities[2]
    ));
    // A touched stream that lies fails as it does when the whole candidate is validated.
    let mut stale = streams.clone();
    stale["b"] = json!({ "parents": [] });
    let lying = read(&stale);
    let e = lying
        .snapshot_after("p", &roots(), Some(before.current()), Default::default())
        .expect_err("refused");
    let whole = lying
        .validate_after("p", &roots(), Some(before.current()))
        .err()
        .expect("refused");
    assert_eq!(e.to_json_value(), whole.to_json_value());
    assert_eq!(
        (e.code(), e.phase(), e.details().unwrap()["reason"].as_str()),
        (
            Code::AdapterContractInvalid,
            Phase::Load,
            Some("parents_stream_mismatch")
        )
    );
}

#[test]
fn published_records_name_the_relations_their_text_declared() {
    let (records, _) = twenty();
    let (_, _, read) = read_at(
        "r1",
        &["changedSince"],
        None,
        store(records, json!({}), 100),
    );
    let read = read.unwrap();
    let as_read = read.kept().unwrap();
    let published = as_read.published(&built(&read).unwrap()).unwrap();
    assert!(published.text.is_empty());
    for i in 0..20 {
        assert_eq!(published.record(i), "");
        assert_eq!(published.targets_of(i), as_read.targets_of(i), "record {i}");
    }
    let named = |i: usize, r: usize| {
        let mut ids: Vec<String> = published.targets_of(i)[r].iter().cloned().collect();
        ids.sort();
        ids
    };
    assert_eq!(named(5, 0), ["c00"]);
    assert_eq!(named(5, 3), ["c04"]);
    assert_eq!(named(7, 2), ["c06"]);
    assert!(named(0, 0).is_empty());
    // Not the snapshot of these records: nothing is kept.
    let (_, _, other) = read_at(
        "r1",
        &["changedSince"],
        None,
        store(vec![rec("x", json!({}))], json!({}), 100),
    );
    assert!(as_read
        .published(&built(&other.unwrap()).unwrap())
        .is_none());
}

#[test]
fn a_published_snapshot_keeps_its_records_without_their_text_and_each_reload_only_what_it_read() {
    let (records, first) = twenty();
    let kept = first.kept.clone().unwrap().records;
    assert!(kept.text.is_empty() && kept.records.len() == 20);
    let (mut snapshot, mut now) = (first, records);
    // Forty reloads, each renaming one of four records, each read against the snapshot before
    // it: each one's records before publishing are its own text and the snapshot's records,
    // and the snapshot it gives is the one a whole read gives.
    for round in 0..40usize {
        let i = round % 4;
        now[i]["name"] = json!(format!("Renamed {round}"));
        let renamed = now[i].clone();
        let known = snapshot.known();
        let changes =
            json!({ "items": [{ "capabilityId": renamed["capabilityId"], "record": renamed }] });
        let revision = format!("r{}", round + 2);
        let (_, next, read) = read_at(&revision, &["changedSince"], Some(&known), |_| {
            changes.clone()
        });
        assert_eq!(next, Next::Done);
        let read = read.unwrap();
        let kept = read.kept().unwrap();
        // The one record it read, as a JSON array.
        assert_eq!(kept.text, format!("[{renamed}]"), "{round}");
        assert!(!kept.whole, "{round}");
        let next = read
            .snapshot_after("p", &roots(), Some(snapshot.current()), Default::default())
            .unwrap();
        let (_, _, whole) = read_at(
            &revision,
            &["changedSince"],
            None,
            store(now.clone(), json!({}), 100),
        );
        assert_eq!(
            next.static_revision,
            revision_of(&whole.unwrap()),
            "{round}"
        );
        let published = kept.published(&next).unwrap();
        assert!(published.text.is_empty(), "{round}");
        snapshot = kept_with(next, read.identity(), Some(published));
    }
}

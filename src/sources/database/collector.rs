//! The [`ReadCollector`]: it leads a read call by call and judges every page as it arrives.

use super::*;

/// A change a view's `changedSince` lists: `{ capabilityId, record }` (changed or added) or
/// `{ capabilityId, removed: true }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChangeItem<'a> {
    #[serde(rename = "capabilityId")]
    pub(super) capability_id: String,
    #[serde(borrow, default)]
    pub(super) record: Option<&'a RawValue>,
    #[serde(default)]
    pub(super) removed: Option<bool>,
}

/// The changes of an incremental read so far, and the records they apply to.
pub(super) struct Changes {
    pub(super) base: Arc<KeptRecords>,
    /// The source revision the changes are asked since.
    pub(super) since: String,
    /// By capability ID in strictly increasing order: its record now, or `None` (removed).
    pub(super) items: Vec<(Box<str>, Option<String>)>,
}

/// The local IDs of the relations a record declares (string entries, or `{ capabilityId }`),
/// by relation (parents, specializes, related, requires); none for a record that is no JSON
/// object.
pub(super) fn targets(record: &str) -> [HashSet<String>; 4] {
    let Ok(head) = serde_json::from_str::<RecordHead>(record) else {
        return Default::default();
    };
    [head.parents, head.specializes, head.related, head.requires].map(|list| {
        list.and_then(|raw| serde_json::from_str::<Vec<Value>>(raw.get()).ok())
            .into_iter()
            .flatten()
            .filter_map(|t| match t {
                Value::String(id) => Some(id),
                Value::Object(mut m) => match m.remove("capabilityId") {
                    Some(Value::String(id)) => Some(id),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    })
}

/// The items a page is asked for (`limit`); a page holding more breaks the page rules.
pub const PAGE_LIMIT: usize = 100;
/// The items a page of the capability records or of the changes is asked for: the byte
/// budget of a page (`maxBytes`) is what bounds it, so a scan takes few round trips.
pub const SCAN_PAGE_LIMIT: usize = 1_000;
/// The items a page of the bulk relation scan is asked for: its items are small (some 90
/// bytes of JSON), and every page costs the database a query and the JS layer a hand-over
/// however few items it holds.
pub const RELATION_PAGE_LIMIT: usize = 10_000;
/// The most characters of JSON any page may print as, whatever it was asked for (far over every
/// page's `maxBytes`, which one record alone may pass): the JS layer stops walking a page there,
/// and checks a page's item count against its `limit` before walking it (the `bound` of each
/// call), so a page far over either is refused before it is walked.
pub const PAGE_MAX_CHARS: u64 = crate::json::ARGUMENT_MAX_CHARS;
/// The bytes of JSON a scan page is asked for at most (`maxBytes`).
pub const PAGE_MAX_BYTES: u64 = 262_144;
/// The bytes of JSON a page of the bulk relation scan is asked for at most (`maxBytes`): room
/// for [`RELATION_PAGE_LIMIT`] items of IDs of some 40 characters.
pub const RELATION_PAGE_MAX_BYTES: u64 = 1_048_576;

/// The reads of one open or reload, gathered page by page as the JS layer receives them from
/// each database authority's adapter: the JS layer never holds more than one page. The
/// collector leads each read: it names the adapter call to make next and judges every page
/// against the page rules and the bounds of `budgets.database` (records, bytes of JSON); a read
/// that breaks one is recorded as failed at once and ends. The pages are kept as JSON text
/// (records, the bulk relation scan or the non-empty relation streams), which becomes the
/// [`DatabaseRead`] of each provider.
pub struct ReadCollector {
    pub(super) max_records: u64,
    pub(super) max_bytes: u64,
    /// By provider ID, the state its current snapshot was read from (see [`identity_of`]): a
    /// view naming it again is not read.
    pub(super) known: BTreeMap<String, Value>,
    /// By provider ID, the records its current snapshot was read from, when it kept them: a
    /// view offering `changedSince` is then asked what changed since, and only that is read.
    pub(super) records: BTreeMap<String, Arc<KeptRecords>>,
    /// (provider ID, the read as JSON) of each provider read so far.
    pub(super) done: Vec<(String, String)>,
    /// The records to keep with each snapshot, by provider ID.
    pub(super) kept: BTreeMap<String, Arc<KeptRecords>>,
    /// By provider ID, the records (unless kept) and the bulk relation scan of each read, as
    /// JSON arrays.
    pub(super) texts: BTreeMap<String, ReadTexts>,
    pub(super) current: Option<Pending>,
    /// The semantic executor's model and dimensions: views offering `vectors()` are asked
    /// for its entries (see [`super::vectors`]).
    pub(super) vectors_model: Option<(String, usize)>,
    /// By provider ID, the vectors its view offered.
    pub(super) vectors: BTreeMap<String, crate::matching::semantic::file::Offered>,
    pub(super) vector_read: Option<super::vectors::VectorRead>,
}

/// A read's records (`None` when they were kept) as a JSON array, and its bulk relation scan.
pub(super) type ReadTexts = (Option<String>, Option<Scanned>);

impl Default for ReadCollector {
    fn default() -> Self {
        ReadCollector::new(&Database::default())
    }
}

/// What the JS layer does next for the provider being read.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Calls the view: `{ call, args }` (JSON), the method and its arguments.
    Ask(String),
    /// Every list was read: the read ends.
    Done,
    /// The view names the state the current snapshot was read from: nothing is read, and the
    /// read is over (recorded as unchanged).
    Unchanged,
    /// A bound or page rule stopped the read; its failure is recorded.
    Stopped,
}

/// A list of the provider being read: its capability records, its bulk relation scan, or the
/// `kind` (index into [`Kind::ALL`]) relation stream of record `index`, or the changes since
/// the source revision the current snapshot was read from (`changedSince`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum List {
    Scan,
    Changes,
    Relations,
    Stream { index: usize, kind: usize },
}

impl List {
    /// The items a page of this list is asked for, and may hold.
    pub(super) fn limit(self) -> usize {
        match self {
            List::Relations => RELATION_PAGE_LIMIT,
            List::Scan | List::Changes => SCAN_PAGE_LIMIT,
            List::Stream { .. } => PAGE_LIMIT,
        }
    }
}

/// A provider being read.
pub(super) struct Pending {
    pub(super) provider_id: String,
    /// The view's source fields and working directory at open, as a JSON object.
    pub(super) context: String,
    /// The capability records so far, comma-separated JSON.
    pub(super) records: String,
    /// Each record's capability ID, if a string: the records whose streams are read.
    pub(super) ids: Vec<Option<Box<str>>>,
    /// The relations the records declare (forward ones; each implies one inverse edge).
    pub(super) declared: u64,
    /// Where the edges come from, by what the view offers.
    pub(super) edges: Edges,
    /// The items of the bulk relation scan so far.
    pub(super) relations: ScanItems,
    /// `"capabilityId":{kind:[…]}` entries, comma-separated, for capabilities with a non-empty
    /// stream.
    pub(super) streams: String,
    /// The streams of the capability being read (its index, non-empty kinds and their items).
    pub(super) node: Option<(u32, Vec<Stream>)>,
    /// Bytes of JSON read so far: the provider record, every record and stream item.
    pub(super) bytes: u64,
    /// The list being read; `None` once every list was read.
    pub(super) list: Option<List>,
    /// Items of that list so far.
    pub(super) listed: usize,
    /// The cursor to ask that list with next, and every cursor it gave (a cursor seen before
    /// would read the same pages again, without end).
    pub(super) cursor: Option<String>,
    pub(super) cursors: HashSet<String>,
    /// Whether the view offers `changedSince`: the records are then kept with the snapshot,
    /// each one's span in `records` and declared relations in `spans` (no span: an incremental
    /// read took the record unchanged from the current snapshot).
    pub(super) keep: bool,
    pub(super) spans: Vec<(Option<(usize, usize)>, u32)>,
    /// Whether the view offers `neighbors`: an incremental read checks the streams of the
    /// capabilities the change touched.
    pub(super) offers_streams: bool,
    /// The changes of an incremental read, until they are applied to the records.
    pub(super) changes: Option<Changes>,
    /// Of an incremental read, which records' streams are read: those the change touched.
    pub(super) only: Option<Vec<bool>>,
    /// The contract rule a change list broke, if any: the read ends there and is refused.
    pub(super) violation: Option<&'static str>,
    /// Of an incremental read, the records its changes were applied to, and which records were
    /// taken from them unchanged (see [`KeptRecords::reused`]).
    pub(super) base: Option<Weak<KeptRecords>>,
    pub(super) reused: Vec<bool>,
    /// Whether the view offers `vectors()`.
    pub(super) offers_vectors: bool,
    /// Of an incremental read, the IDs of the records its changes wrote: the only ones whose
    /// vectors it asks for.
    pub(super) changed: Option<Vec<Box<str>>>,
}

/// A relation stream read so far: its kind and items.
pub(super) type Stream = (String, Vec<Value>);

/// A page as the JS layer hands it over: the page's `items` and `nextCursor`, when it had them.
#[derive(Deserialize)]
pub(super) struct WirePage<'a> {
    #[serde(borrow, default)]
    pub(super) items: Option<&'a RawValue>,
    #[serde(rename = "nextCursor", default)]
    pub(super) next_cursor: Option<Value>,
    #[serde(default)]
    pub(super) unknown: Option<Value>,
}

/// A record's capability ID and relation fields, read without building the rest of it.
#[derive(Deserialize)]
pub(super) struct RecordHead<'a> {
    #[serde(rename = "capabilityId")]
    pub(super) capability_id: Value,
    #[serde(borrow, default)]
    pub(super) parents: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) specializes: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) related: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) requires: Option<&'a RawValue>,
}

impl RecordHead<'_> {
    /// The relations the record declares: the entries of its relation arrays (validation
    /// judges them later).
    pub(super) fn declared(&self) -> u64 {
        [self.parents, self.specializes, self.related, self.requires]
            .into_iter()
            .flatten()
            .map(|raw| {
                serde_json::from_str::<Vec<serde::de::IgnoredAny>>(raw.get())
                    .map_or(0, |l| l.len() as u64)
            })
            .sum()
    }
}

pub(super) fn internal<E>(_: E) -> GraphError {
    GraphError::new(Code::Internal)
}

pub(super) fn text(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(internal)
}

/// Appends `item` to the comma-separated JSON `list`.
pub(super) fn join(list: &mut String, item: &str) {
    if !list.is_empty() {
        list.push(',');
    }
    list.push_str(item);
}

impl Pending {
    pub(super) fn flush_node(&mut self) -> Result<()> {
        let Some((index, kinds)) = self.node.take() else {
            return Ok(());
        };
        let Some(Some(id)) = self.ids.get(index as usize) else {
            return Err(GraphError::new(Code::Internal));
        };
        if kinds.is_empty() {
            return Ok(());
        }
        let map: Map<String, Value> = kinds
            .into_iter()
            .map(|(k, v)| (k, Value::Array(v)))
            .collect();
        if !self.streams.is_empty() {
            self.streams.push(',');
        }
        self.streams.push_str(&text(&id.as_ref())?);
        self.streams.push(':');
        self.streams.push_str(&text(&map)?);
        Ok(())
    }

    /// Keeps a page of capability records.
    pub(super) fn keep_records(&mut self, page: &[&RawValue]) {
        for record in page {
            let head = serde_json::from_str::<RecordHead>(record.get()).ok();
            let declared = head.as_ref().map_or(0, RecordHead::declared);
            let id = head.and_then(|r| r.capability_id.as_str().map(Box::from));
            self.keep_record(record.get(), id, declared);
        }
    }

    pub(super) fn keep_record(&mut self, record: &str, id: Option<Box<str>>, declared: u64) {
        self.declared += declared;
        self.ids.push(id);
        join(&mut self.records, record);
        if self.keep {
            let start = self.records.len() - record.len();
            let declared = u32::try_from(declared).unwrap_or(u32::MAX);
            self.spans.push((Some((start, record.len())), declared));
        }
    }

    /// Keeps a page of the changes: each item once, in strictly increasing ID order, a record
    /// of the ID it is listed under or a removal. Answers the rule an item broke.
    pub(super) fn keep_changes(
        &mut self,
        page: &[&RawValue],
    ) -> std::result::Result<(), &'static str> {
        let changes = self.changes.as_mut().ok_or("change_list_invalid")?;
        for item in page {
            let item = serde_json::from_str::<ChangeItem>(item.get())
                .map_err(|_| "change_item_invalid")?;
            let record = match (item.record, item.removed) {
                (Some(record), None) => {
                    let head = serde_json::from_str::<RecordHead>(record.get()).ok();
                    if head.as_ref().and_then(|h| h.capability_id.as_str())
                        != Some(item.capability_id.as_str())
                    {
                        return Err("change_item_invalid");
                    }
                    Some(record.get().to_owned())
                }
                (None, Some(true)) => None,
                _ => return Err("change_item_invalid"),
            };
            if changes
                .items
                .last()
                .is_some_and(|(last, _)| **last >= *item.capability_id)
            {
                return Err("change_order_or_duplicate");
            }
            changes.items.push((item.capability_id.into(), record));
        }
        Ok(())
    }

    /// Applies the changes to the records they were asked against: the records read now are
    /// those a full read would give, in ID order. The capabilities a change touched (a changed
    /// or added one, and those whose lists it changes: named by one of its relations before and
    /// not after, or after and not before) have their streams read, when the view has them.
    pub(super) fn apply_changes(&mut self) -> Result<()> {
        let Some(changes) = self.changes.take() else {
            return Err(GraphError::new(Code::Internal));
        };
        let base = &changes.base;
        let mut touched: HashSet<String> = HashSet::new();
        // A capability named the same way before and after keeps its lists: only the
        // differences are touched.
        let mut touch = |before: Option<[HashSet<String>; 4]>, after: Option<&str>, id: &str| {
            let after = after.map(targets);
            for r in 0..4 {
                let empty = HashSet::new();
                let old = before.as_ref().map_or(&empty, |t| &t[r]);
                let new = after.as_ref().map_or(&empty, |t| &t[r]);
                touched.extend(old.symmetric_difference(new).cloned());
            }
            if after.is_some() {
                touched.insert(id.to_owned());
            }
        };
        let mut b = 0;
        // The records taken unchanged are the current snapshot's, validated: no text.
        let keep_base = |p: &mut Pending, b: usize| {
            let r = &base.records[b];
            p.declared += u64::from(r.declared);
            p.ids.push(Some(r.id.clone()));
            p.spans.push((None, r.declared));
            p.reused.push(true);
        };
        for (id, record) in &changes.items {
            while b < base.records.len() && base.records[b].id < *id {
                keep_base(self, b);
                b += 1;
            }
            let before = (b < base.records.len() && base.records[b].id == *id).then(|| {
                b += 1;
                base.targets_of(b - 1)
            });
            touch(before, record.as_deref(), id);
            if let Some(record) = record {
                self.changed.get_or_insert_with(Vec::new).push(id.clone());
                let declared =
                    serde_json::from_str::<RecordHead>(record).map_or(0, |h| h.declared());
                self.keep_record(record, Some(id.clone()), declared);
                self.reused.push(false);
            }
        }
        while b < base.records.len() {
            keep_base(self, b);
            b += 1;
        }
        self.base = Some(Arc::downgrade(base));
        self.changed.get_or_insert_with(Vec::new);
        if self.offers_streams {
            self.edges = Edges::Streams;
            let mask = self
                .ids
                .iter()
                .map(|id| id.as_deref().is_some_and(|id| touched.contains(id)))
                .collect();
            self.only = Some(mask);
        }
        Ok(())
    }

    /// Keeps a page of the bulk relation scan.
    pub(super) fn keep_relations(&mut self, page: &[&RawValue]) -> Result<()> {
        // The scan holds at most one item past twice the declared relations: room for all of
        // them at once, so the list is never grown by copying (within a bound a lying record
        // cannot stretch).
        if let ScanItems::Edges(edges) = &mut self.relations {
            if edges.capacity() == 0 {
                let room = self.declared.saturating_mul(2).saturating_add(1);
                edges.reserve_exact(usize::try_from(room).unwrap_or(0).min(1 << 22));
            }
        }
        self.relations.keep(&self.ids, page)
    }

    /// Keeps a page of the `kind` stream of record `index`; records are read in order, each
    /// one's kinds in order.
    pub(super) fn keep_stream(
        &mut self,
        index: usize,
        kind: &str,
        page: &[&RawValue],
    ) -> Result<()> {
        let index = u32::try_from(index).map_err(internal)?;
        if self.node.as_ref().is_some_and(|(i, _)| *i != index) {
            self.flush_node()?;
        }
        let (_, kinds) = self.node.get_or_insert_with(|| (index, Vec::new()));
        if page.is_empty() {
            return Ok(());
        }
        let items = page
            .iter()
            .map(|item| serde_json::from_str(item.get()))
            .collect::<serde_json::Result<Vec<Value>>>()
            .map_err(internal)?;
        match kinds.last_mut() {
            Some((k, listed)) if k == kind => listed.extend(items),
            _ => kinds.push((kind.to_owned(), items)),
        }
        Ok(())
    }

    /// Moves on to the next list: after the records, the bulk relation scan or the first
    /// stream of the first record with a string ID (by what the view offers); after a stream,
    /// the next one, of this record or the next with a string ID; none after the last.
    pub(super) fn advance(&mut self) {
        self.listed = 0;
        self.cursor = None;
        self.cursors.clear();
        let from = match self.list {
            Some(List::Stream { index, kind }) if kind + 1 < Kind::ALL.len() => {
                self.list = Some(List::Stream {
                    index,
                    kind: kind + 1,
                });
                return;
            }
            Some(List::Stream { index, .. }) => index + 1,
            Some(List::Scan | List::Changes) if self.edges == Edges::Streams => 0,
            Some(List::Scan | List::Changes) if self.edges == Edges::Scan => {
                self.list = Some(List::Relations);
                return;
            }
            Some(List::Scan | List::Changes | List::Relations) => {
                self.list = None;
                return;
            }
            None => return,
        };
        let only = self.only.as_deref();
        self.list = (from..self.ids.len())
            .find(|&i| self.ids[i].is_some() && only.is_none_or(|m| m[i]))
            .map(|index| List::Stream { index, kind: 0 });
    }

    /// The call that reads the next page of the current list.
    pub(super) fn next(&self) -> Result<Next> {
        let Some(list) = self.list else {
            return Ok(Next::Done);
        };
        let mut page = Map::new();
        page.insert("limit".into(), list.limit().into());
        let (call, mut args) = match list {
            List::Scan => {
                page.insert("maxBytes".into(), PAGE_MAX_BYTES.into());
                ("scanCapabilities", Vec::new())
            }
            List::Relations => {
                page.insert("maxBytes".into(), RELATION_PAGE_MAX_BYTES.into());
                ("scanRelations", Vec::new())
            }
            List::Changes => {
                let since = self.changes.as_ref().map(|c| c.since.as_str());
                let since = since.ok_or_else(|| GraphError::new(Code::Internal))?;
                page.insert("maxBytes".into(), PAGE_MAX_BYTES.into());
                ("changedSince", vec![Value::from(since)])
            }
            List::Stream { index, kind } => {
                let Some(Some(id)) = self.ids.get(index) else {
                    return Err(GraphError::new(Code::Internal));
                };
                let kind = Kind::ALL[kind].as_str();
                (
                    "neighbors",
                    vec![Value::from(id.as_ref()), Value::from(kind)],
                )
            }
        };
        if let Some(cursor) = &self.cursor {
            page.insert("cursor".into(), cursor.as_str().into());
        }
        args.push(Value::Object(page));
        Ok(Next::Ask(text(&serde_json::json!({
            "call": call,
            "args": args,
            "bound": page_bound(list.limit()),
        }))?))
    }
}

/// The bound the JS layer holds a page to before walking it (see [`PAGE_MAX_CHARS`]).
pub(super) fn page_bound(limit: usize) -> Value {
    serde_json::json!({ "items": limit, "chars": PAGE_MAX_CHARS })
}

impl ReadCollector {
    /// A collector for reads within `bounds` (`budgets.database`).
    pub fn new(bounds: &Database) -> ReadCollector {
        ReadCollector {
            max_records: bounds.max_records,
            max_bytes: bounds.max_bytes,
            known: BTreeMap::new(),
            records: BTreeMap::new(),
            done: Vec::new(),
            kept: BTreeMap::new(),
            texts: BTreeMap::new(),
            current: None,
            vectors_model: None,
            vectors: BTreeMap::new(),
            vector_read: None,
        }
    }

    /// A collector for reads within `budgets` (JSON with `maxRecords` and `maxBytes`, as
    /// `database_sources` gives them).
    pub fn with_budgets(budgets: &str) -> Result<ReadCollector> {
        let budgets: Value = serde_json::from_str(budgets).map_err(internal)?;
        let field = |name: &str| budgets.get(name).and_then(Value::as_u64);
        match (field("maxRecords"), field("maxBytes")) {
            (Some(max_records), Some(max_bytes)) => {
                // The semantic executor's model, `databaseSources` names beside the bounds.
                let vectors = budgets.get("vectors").and_then(|v| {
                    let model = v.get("modelId")?.as_str()?.to_owned();
                    Some((model, usize::try_from(v.get("dimensions")?.as_u64()?).ok()?))
                });
                let collector = ReadCollector::new(&Database {
                    max_records,
                    max_bytes,
                    ..Database::default()
                });
                Ok(collector.wanting_vectors(vectors))
            }
            _ => Err(GraphError::new(Code::Internal)),
        }
    }

    /// The collector of a reload: `known` holds, by provider ID, the state each current
    /// snapshot was read from ([`DatabaseRead::identity`]); a view that names it again is not
    /// read ([`Next::Unchanged`]).
    pub fn knowing(mut self, known: BTreeMap<String, Value>) -> ReadCollector {
        self.known = known;
        self
    }

    /// The collector of a reload that also knows, by provider ID, the records each current
    /// snapshot was read from (kept when its view offered `changedSince`).
    pub fn knowing_records(mut self, records: BTreeMap<String, Arc<KeptRecords>>) -> ReadCollector {
        self.records = records;
        self
    }

    pub(super) fn pending(&mut self) -> Result<&mut Pending> {
        self.current
            .as_mut()
            .ok_or_else(|| GraphError::new(Code::Internal))
    }

    /// A read of `provider_id` starts; `context` is the view's source fields and the working
    /// directory, as a JSON object, and `offers` the names of the view's relation calls it has
    /// (`scanRelations`, `neighbors`; JSON array). Answers the first call to make, or that the
    /// view names the state the current snapshot was read from: then nothing is read.
    ///
    /// The edges are read through `scanRelations` when the view has it, else through
    /// `neighbors`, else not at all (the records' relations are the edges). A view offering
    /// `changedSince` whose provider's current snapshot kept its records is asked first what
    /// changed since the revision that snapshot was read from.
    pub fn begin(&mut self, provider_id: &str, context: &str, offers: &str) -> Result<Next> {
        let offers: Vec<String> = serde_json::from_str(offers).map_err(internal)?;
        let offers = |call: &str| offers.iter().any(|o| o == call);
        let keep = offers("changedSince");
        let edges = if offers("scanRelations") {
            Edges::Scan
        } else if offers("neighbors") {
            Edges::Streams
        } else {
            Edges::Records
        };
        let opened: Value = serde_json::from_str(context).map_err(internal)?;
        let identity = identity_of(&opened);
        let known = self.known.get(provider_id);
        if let Some(known) = known {
            if identity == *known {
                self.current = None;
                let read = text(&serde_json::json!({ "unchanged": identity }))?;
                self.done.push((provider_id.to_owned(), read));
                return Ok(Next::Unchanged);
            }
        }
        // The provider record counts against the bytes of the read, as the JSON it came as.
        let fields: BTreeMap<String, &RawValue> =
            serde_json::from_str(context).map_err(internal)?;
        let bytes = fields.get("provider").map_or(0, |p| p.get().len() as u64);
        let since = known
            .and_then(|k| k.get("sourceRevision"))
            .and_then(Value::as_str);
        // What changed is read only under the document root the current snapshot was read
        // with: records checked under another are checked again, which takes their text.
        let same_root = known.map(|k| &k["knowledgeRoot"]) == Some(&identity["knowledgeRoot"]);
        let changes = match (keep && same_root, since, self.records.get(provider_id)) {
            (true, Some(since), Some(base)) => Some(Changes {
                base: base.clone(),
                since: since.to_owned(),
                items: Vec::new(),
            }),
            _ => None,
        };
        let pending = Pending {
            provider_id: provider_id.to_owned(),
            context: context.to_owned(),
            records: String::new(),
            ids: Vec::new(),
            declared: 0,
            edges,
            relations: ScanItems::default(),
            streams: String::new(),
            node: None,
            bytes,
            list: Some(if changes.is_some() {
                List::Changes
            } else {
                List::Scan
            }),
            listed: 0,
            cursor: None,
            cursors: HashSet::new(),
            keep,
            spans: Vec::new(),
            offers_streams: offers("neighbors"),
            changes,
            only: None,
            violation: None,
            base: None,
            reused: Vec::new(),
            offers_vectors: offers("vectors"),
            changed: None,
        };
        self.vector_read = None;
        let next = pending.next();
        self.current = Some(pending);
        next
    }

    /// One page of the current list, `{ items, nextCursor }` as the view answered them (absent
    /// when the page had none). Answers the call to make next, or that the read is over.
    ///
    /// A page must hold an array of at most the items it was asked for ([`SCAN_PAGE_LIMIT`]
    /// for records and changes, [`RELATION_PAGE_LIMIT`] for the bulk relation scan,
    /// [`PAGE_LIMIT`] for a stream); a page with a cursor must hold one
    /// item at least, and its cursor must be a string the list did not give before — otherwise
    /// the list would never end (`invalid_store_page`). The records stay within `maxRecords`,
    /// all JSON read within `maxBytes`, and a relation stream never lists more items than there
    /// are records (`neighbor_stream_unbounded`). The bulk relation scan ends at the first item
    /// past twice the relations the records declare (each declared edge and its inverse): the
    /// list then differs from the records, which validation reports as the streams' difference.
    ///
    /// The changes (`changedSince`) are judged like records (`maxRecords`, `maxBytes`); a first
    /// page `{ unknown: true }` turns the read into a full one. Once they are all read they are
    /// applied to the kept records, and the records then stay within `maxRecords`.
    pub fn page(&mut self, page: &str) -> Result<Next> {
        self.page_of(page, None)
    }

    /// [`ReadCollector::page`] of a page that gave its items as JSON text (`itemsJson`: one
    /// JSON array, parsed here instead of walked item by item in JavaScript); `page` then holds
    /// no `items`. The text must be a JSON array, like `items`; it is judged exactly as they are.
    pub fn page_of(&mut self, page: &str, items_json: Option<&str>) -> Result<Next> {
        if self.reading_vectors() {
            return self.vectors_page(page, items_json);
        }
        let page: WirePage = serde_json::from_str(page).map_err(internal)?;
        // A page the JS layer found over its bound before walking it: more items than its
        // limit breaks the page rules, far more text than any page may hold the contract.
        match page.items.map(RawValue::get) {
            Some(crate::json::TOO_MANY_VALUES) => return self.stop_for("invalid_store_page"),
            Some(crate::json::TOO_MANY_CHARS) => {
                return self
                    .stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }))
            }
            _ => {}
        }
        // Text given as one array is parsed into its items once, which also proves it JSON.
        let given = match items_json {
            Some(_) if page.items.is_some() => {
                return self
                    .stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }));
            }
            Some(json) => {
                // Scanning a value as raw text lets an escaped lone surrogate through, which no
                // walked item can hold: text with escapes is parsed whole once.
                let escapes = json.contains("\\u");
                let items = serde_json::from_str::<Vec<&RawValue>>(json)
                    .ok()
                    .filter(|_| !escapes || serde_json::from_str::<Value>(json).is_ok());
                if items.is_none() {
                    return self.stop(
                        serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }),
                    );
                }
                items
            }
            None => None,
        };
        if let Some(unknown) = &page.unknown {
            let p = self.pending()?;
            let first = p.list == Some(List::Changes) && p.listed == 0 && p.cursor.is_none();
            let no_items = given.is_none() && page.items.is_none();
            if *unknown == Value::Bool(true) && first && no_items {
                // The view cannot tell what changed: the provider is read whole.
                p.changes = None;
                p.list = Some(List::Scan);
                return p.next();
            }
            if *unknown != Value::Bool(false) {
                return self
                    .stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }));
            }
        }
        let Some(items) = given.or_else(|| {
            page.items
                .and_then(|raw| serde_json::from_str::<Vec<&RawValue>>(raw.get()).ok())
        }) else {
            return self.stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }));
        };
        let (max_records, max_bytes) = (self.max_records, self.max_bytes);
        let list = self
            .pending()?
            .list
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        if items.len() > list.limit() {
            return self.stop_for("invalid_store_page");
        }
        let p = self.pending()?;
        let n = items.len();
        let over = match list {
            List::Scan => {
                ((p.ids.len() + n) as u64 > max_records).then_some("database_too_many_records")
            }
            List::Changes => {
                let listed = p.changes.as_ref().map_or(0, |c| c.items.len());
                ((listed + n) as u64 > max_records).then_some("database_too_many_records")
            }
            List::Stream { .. } => {
                (p.listed + n > p.ids.len()).then_some("neighbor_stream_unbounded")
            }
            List::Relations => None,
        };
        if let Some(reason) = over {
            return self.stop_for(reason);
        }
        p.bytes = items.iter().fold(p.bytes, |sum, item| {
            sum.saturating_add(item.get().len() as u64)
        });
        if p.bytes > max_bytes {
            return self.stop_for("database_too_many_bytes");
        }
        // The bulk scan lists each declared edge and its inverse: an item past twice the
        // declared relations is one too many, and the list as kept so far (that item
        // included) already differs from the records where it first does. Nothing more is
        // read; validation names that difference.
        let room = p.declared.saturating_mul(2);
        if list == List::Relations && (p.listed + n) as u64 > room {
            let keep = usize::try_from(room + 1).map_or(n, |r| (r - p.listed).min(n));
            p.keep_relations(&items[..keep])?;
            p.listed += keep;
            p.list = None;
            return p.next();
        }
        match list {
            List::Scan => p.keep_records(&items),
            List::Changes => {
                if let Err(rule) = p.keep_changes(&items) {
                    // Nothing more is read; validation refuses the read for that rule.
                    p.violation = Some(rule);
                    p.changes = None;
                    p.list = None;
                    return p.next();
                }
            }
            List::Relations => p.keep_relations(&items)?,
            List::Stream { index, kind } => {
                p.keep_stream(index, Kind::ALL[kind].as_str(), &items)?
            }
        }
        p.listed += n;
        match page.next_cursor {
            None if list == List::Changes => {
                p.apply_changes()?;
                if p.ids.len() as u64 > max_records {
                    return self.stop_for("database_too_many_records");
                }
                let p = self.pending()?;
                p.advance();
                p.next()
            }
            None => {
                p.advance();
                p.next()
            }
            Some(_) if n == 0 => self.stop_for("invalid_store_page"),
            Some(Value::String(cursor)) => {
                if cursor.is_empty() || !p.cursors.insert(cursor.clone()) {
                    return self.stop_for("invalid_store_page");
                }
                p.cursor = Some(cursor);
                p.next()
            }
            Some(_) => {
                self.stop(serde_json::json!({ "code": Code::AdapterContractInvalid.as_str() }))
            }
        }
    }

    /// Ends the current read as failed for `reason`.
    pub(super) fn stop_for(&mut self, reason: &str) -> Result<Next> {
        debug_assert!(STOPPED.contains(&reason));
        self.stop(serde_json::json!({ "reason": reason }))
    }

    /// Ends the current read as failed (`{ code }` or `{ reason }`).
    pub(super) fn stop(&mut self, failed: Value) -> Result<Next> {
        let p = self
            .current
            .take()
            .ok_or_else(|| GraphError::new(Code::Internal))?;
        self.record_failure(p.provider_id, &failed)?;
        Ok(Next::Stopped)
    }

    /// The read finished (every list read); `after` is the view's source fields as read after
    /// the scans. Answers the first `vectors()` call, when the view's vectors are wanted
    /// (see [`super::vectors`]), else that the read is over.
    pub fn end(&mut self, after: &str) -> Result<Next> {
        let after: Value = serde_json::from_str(after).map_err(internal)?;
        if self.pending()?.list.is_some() {
            return Err(GraphError::new(Code::Internal));
        }
        let Some(mut p) = self.current.take() else {
            return Err(GraphError::new(Code::Internal));
        };
        p.flush_node()?;
        let next = self.start_vectors(&p)?;
        // `{…context, "edges": …, "streams": {…}, "after": …}`; the records and the bulk
        // relation scan go beside it as JSON arrays, never copied into it.
        let context = p.context.trim_end();
        let mut read = String::with_capacity(context.len() + p.streams.len() + 64);
        read.push_str(&context[..context.len() - 1]);
        if !crate::json::is_blank(&context[1..context.len() - 1]) {
            read.push(',');
        }
        read.push_str(r#""edges":"#);
        read.push_str(&text(&p.edges.as_str())?);
        if p.edges == Edges::Streams {
            read.push_str(r#","streams":{"#);
            read.push_str(&p.streams);
            read.push('}');
        }
        if let Some(only) = &p.only {
            let ids: Vec<&str> = (p.ids.iter().zip(only))
                .filter_map(|(id, &read)| id.as_deref().filter(|_| read))
                .collect();
            read.push_str(r#","streamsOf":"#);
            read.push_str(&text(&ids)?);
        }
        if let Some(rule) = p.violation {
            read.push_str(r#","violation":"#);
            read.push_str(&text(&rule)?);
        }
        read.push_str(r#","after":"#);
        read.push_str(&text(&after)?);
        read.push('}');
        let bracket = |mut list: String| {
            list.insert(0, '[');
            list.push(']');
            list
        };
        let text = bracket(std::mem::take(&mut p.records));
        let relations = (p.edges == Edges::Scan).then(|| std::mem::take(&mut p.relations).finish());
        // Spans of the list past its opening bracket.
        let spans: Vec<(Option<(usize, usize)>, u32)> = p
            .spans
            .iter()
            .map(|&(span, declared)| (span.map(|(start, len)| (start + 1, len)), declared))
            .collect();
        // Every record's text is in the list unless an incremental read took some unchanged.
        let whole = spans.iter().all(|(span, _)| span.is_some());
        let keeps = p.keep && p.violation.is_none() && spans.len() == p.ids.len();
        let listed = p
            .ids
            .into_iter()
            .zip(&spans)
            .map(|(id, &(span, declared))| {
                Some(Kept {
                    span,
                    id: id?,
                    declared,
                })
            })
            .collect::<Option<Vec<_>>>();
        let records = match listed {
            Some(records) if keeps => {
                let reused = if p.base.is_some() {
                    std::mem::take(&mut p.reused)
                } else {
                    Vec::new()
                };
                let kept = KeptRecords {
                    text,
                    whole,
                    records,
                    base: p.base.take().unwrap_or_default(),
                    reused,
                    ..KeptRecords::default()
                };
                self.kept.insert(p.provider_id.clone(), Arc::new(kept));
                None
            }
            // Not kept: the records go as one JSON array.
            _ if whole => Some(text),
            // An incremental read a change list broke (refused for that rule): the records it
            // took unchanged are the snapshot's, and no list is needed.
            _ => None,
        };
        self.texts
            .insert(p.provider_id.clone(), (records, relations));
        self.done.push((p.provider_id, read));
        Ok(next)
    }

    /// The read of `provider_id` failed: `failed` is `{ code }` or `{ reason }` (JSON). A read
    /// that failed past its deadline after it had ended, or been stopped, fails for that.
    pub fn fail(&mut self, provider_id: &str, failed: &str) -> Result<()> {
        let failed: Value = serde_json::from_str(failed).map_err(internal)?;
        if self.fail_vectors(provider_id, &failed)? {
            return Ok(());
        }
        self.current = None;
        self.record_failure(provider_id.to_owned(), &failed)
    }

    pub(super) fn record_failure(&mut self, provider_id: String, failed: &Value) -> Result<()> {
        self.kept.remove(&provider_id);
        self.texts.remove(&provider_id);
        self.vectors.remove(&provider_id);
        let read = text(&serde_json::json!({ "failed": failed }))?;
        match self.done.last_mut() {
            Some((id, earlier)) if *id == provider_id => *earlier = read,
            _ => self.done.push((provider_id, read)),
        }
        Ok(())
    }

    /// Every read, as the JSON object by provider ID the engine takes; `None` when no database
    /// authority was read.
    pub fn into_json(self) -> Result<Option<String>> {
        let mut reads = self.into_reads()?;
        let Some(json) = reads.json.take() else {
            return Ok(None);
        };
        let heads: BTreeMap<String, Box<RawValue>> =
            serde_json::from_str(&json).map_err(internal)?;
        let mut out = Map::new();
        for (id, head) in heads {
            let mut read: Value = serde_json::from_str(head.get()).map_err(internal)?;
            let (records, relations) = reads.texts.remove(&id).unwrap_or_default();
            let records = records.or_else(|| {
                let kept = reads.kept.get(&id)?;
                kept.whole_text().map(str::to_owned)
            });
            let relations = match (relations, &records) {
                // An edge names records by position, in the order read.
                (Some(scan), Some(records)) => {
                    let list: Vec<&RawValue> = serde_json::from_str(records).map_err(internal)?;
                    let ids: Vec<String> = list
                        .iter()
                        .map(|r| {
                            let head = serde_json::from_str::<RecordHead>(r.get()).ok();
                            let id = head.as_ref().and_then(|h| h.capability_id.as_str());
                            id.unwrap_or_default().to_owned()
                        })
                        .collect();
                    Some(scan.json(|i| ids[i as usize].as_str())?)
                }
                _ => None,
            };
            for (field, list) in [("capabilities", records), ("relations", relations)] {
                if let (Some(list), Some(read)) = (list, read.as_object_mut()) {
                    read.insert(field.into(), serde_json::from_str(&list).map_err(internal)?);
                }
            }
            out.insert(id, read);
        }
        Ok(Some(Value::Object(out).to_string()))
    }

    /// About how many heap bytes the reads gathered so far hold: their records' text, which
    /// grows with the provider, and the lists read beside it. The JS layer reports it to
    /// JavaScript's collector as memory this object keeps alive, after every page: so it costs
    /// the same however much was read (no walk over the records).
    pub fn held_bytes(&self) -> usize {
        let pending = self.current.as_ref().map_or(0, |p| {
            p.records.capacity()
                + p.ids.capacity() * std::mem::size_of::<Option<Box<str>>>()
                + p.spans.capacity() * std::mem::size_of::<(Option<(usize, usize)>, u32)>()
                + p.relations.bytes()
                + p.streams.capacity()
        });
        // The text each kept read holds (an incremental read: only the records it read).
        let kept: usize = self.kept.values().map(|k| k.text.capacity()).sum();
        let texts: usize = self
            .texts
            .values()
            .map(|(records, scan)| {
                records.as_ref().map_or(0, String::capacity)
                    + scan.as_ref().map_or(0, Scanned::bytes)
            })
            .sum();
        pending + kept + texts + self.done.iter().map(|(_, read)| read.len()).sum::<usize>()
    }

    /// Every read (as JSON by provider ID, without its records and bulk relation scan), the
    /// records to keep with each snapshot, and the records and relation scans as JSON arrays.
    pub fn into_reads(self) -> Result<DatabaseReads> {
        if self.done.is_empty() {
            return Ok(DatabaseReads::default());
        }
        let mut out = String::from("{");
        for (i, (id, read)) in self.done.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&text(id)?);
            out.push(':');
            out.push_str(read);
        }
        out.push('}');
        Ok(DatabaseReads {
            json: Some(out),
            kept: self.kept,
            texts: self.texts,
            vectors: self.vectors,
        })
    }
}

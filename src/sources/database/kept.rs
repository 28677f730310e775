//! What a read keeps and hands over: the records kept with a snapshot for incremental reads,
//! and the reads of one open or reload.

use super::*;

/// The capability records of a read, kept with its snapshot when the view offers
/// `changedSince`: an incremental read takes every record it does not read again from here, so
/// the candidate it validates is exactly the one a full read would give. A read's records come
/// as JSON text; once its snapshot is built they are kept as that snapshot holds them
/// ([`KeptRecords::published`]): IDs and declared relations, no text, since the snapshot holds
/// each record validated and an incremental read takes the records it did not read from there.
#[derive(Debug, Default)]
pub struct KeptRecords {
    /// The JSON array of the records this read read: all of them (a whole read), or those its
    /// changes wrote (an incremental one); empty once published.
    pub(super) text: String,
    /// Whether `text` holds every record, in order.
    pub(super) whole: bool,
    /// Each record in ID order (see [`Kept`]).
    pub(super) records: Vec<Kept>,
    /// Of records an incremental read gave: the records its changes were applied to (not kept
    /// alive by these), and by position which records were taken from them unchanged (empty
    /// when the read was whole). The snapshot built from those holds them validated: they are
    /// taken from it instead of being parsed and checked one by one again.
    pub(super) base: Weak<KeptRecords>,
    pub(super) reused: Vec<bool>,
    /// Of published records, the local relations each declares as record positions: those of
    /// record `i` by relation (parents, specializes, related, requires) are
    /// `targets[bounds[4 * i + r]..bounds[4 * i + r + 1]]`.
    pub(super) targets: Vec<u32>,
    pub(super) bounds: Vec<u32>,
}

/// One kept record: its span in [`KeptRecords::text`] (none when its text is not kept: the
/// snapshot the record was taken from holds it), its capability ID and how many relations it
/// declares.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Kept {
    pub(super) span: Option<(usize, usize)>,
    pub(super) id: Box<str>,
    pub(super) declared: u32,
}

impl KeptRecords {
    /// Heap bytes held.
    pub fn bytes(&self) -> usize {
        self.text.capacity()
            + self.reused.capacity()
            + self.records.capacity() * std::mem::size_of::<Kept>()
            + self.records.iter().map(|r| r.id.len()).sum::<usize>()
            + (self.targets.capacity() + self.bounds.capacity()) * std::mem::size_of::<u32>()
    }

    /// Record `i`'s text; empty when it is not kept.
    pub(super) fn record(&self, i: usize) -> &str {
        self.records[i]
            .span
            .map_or("", |(start, len)| &self.text[start..start + len])
    }

    /// The records as one JSON array, when this holds every one's text.
    pub(super) fn whole_text(&self) -> Option<&str> {
        self.whole.then_some(self.text.as_str())
    }

    /// The local IDs of the relations record `i` declares, by relation (parents, specializes,
    /// related, requires): from its text, or once published from the positions kept.
    pub(super) fn targets_of(&self, i: usize) -> [HashSet<String>; 4] {
        if self.records[i].span.is_some() {
            return super::collector::targets(self.record(i));
        }
        std::array::from_fn(|r| match self.bounds.get(4 * i + r..4 * i + r + 2) {
            Some(&[from, to]) => self.targets[from as usize..to as usize]
                .iter()
                .map(|&t| self.records[t as usize].id.to_string())
                .collect(),
            _ => HashSet::new(),
        })
    }

    /// These records as `snapshot`, built from them, holds them: each record's ID, declared
    /// relations and, instead of its text, the positions of the capabilities they name; the
    /// records an incremental read took from a base are no longer told apart. `None` when the
    /// snapshot does not hold exactly these records in this order (nothing is kept then, and
    /// the next reload reads whole).
    pub fn published(&self, snapshot: &ProviderSnapshot) -> Option<KeptRecords> {
        const DECLARED: [Kind; 4] = [
            Kind::Parents,
            Kind::Specializes,
            Kind::Related,
            Kind::Requires,
        ];
        let n = self.records.len();
        if n != snapshot.capabilities.len()
            || (0..n).any(|i| snapshot.capability(i as u32).id() != &*self.records[i].id)
        {
            return None;
        }
        let mut targets =
            Vec::with_capacity(self.records.iter().map(|k| k.declared as usize).sum());
        let mut bounds = Vec::with_capacity(4 * n + 1);
        bounds.push(0);
        for i in 0..n as u32 {
            for kind in DECLARED {
                targets.extend_from_slice(snapshot.neighbours(i, kind));
                bounds.push(u32::try_from(targets.len()).ok()?);
            }
        }
        let records = self
            .records
            .iter()
            .map(|k| Kept {
                span: None,
                ..k.clone()
            })
            .collect();
        Some(KeptRecords {
            records,
            targets,
            bounds,
            ..KeptRecords::default()
        })
    }
}

/// What the database source keeps with a published snapshot between reloads, beside it and not
/// in it (SPEC D28): the records it was built from ([`KeptRecords::published`]) and the state of
/// the source they were read in (`DatabaseRead::identity`), whose document root an incremental
/// read must share to take records from the snapshot.
#[derive(Clone, Debug)]
pub struct KeptRead {
    pub records: Arc<KeptRecords>,
    pub identity: Arc<Value>,
}

/// A provider's current snapshot as a read against it sees it: the snapshot, and what the
/// source kept with it.
#[derive(Clone, Copy, Debug)]
pub struct Current<'a> {
    pub snapshot: &'a ProviderSnapshot,
    pub kept: Option<&'a KeptRead>,
}

/// One graph's [`KeptRead`]s, by snapshot. Only a current snapshot is read against: one that
/// stops being current lets its records go (`remove`), and those of snapshots that are gone
/// are dropped (`prune`).
pub type KeptReads = crate::snapshot::side::SideTable<KeptRead>;

/// What the JS layer gathered for one open or reload: the reads as JSON by provider ID (`None`
/// when no database authority was read), and the records to keep with each snapshot.
#[derive(Debug, Default)]
pub struct DatabaseReads {
    pub json: Option<String>,
    pub kept: BTreeMap<String, Arc<KeptRecords>>,
    /// By provider ID, the records (unless kept) as a JSON array, and the bulk relation scan.
    pub texts: BTreeMap<String, (Option<String>, Option<Scanned>)>,
    /// By provider ID, the vectors its view offered (`vectors()`).
    pub vectors: BTreeMap<String, crate::matching::semantic::file::Offered>,
}

impl DatabaseReads {
    /// Whether a provider was read whole: its records' text is about to be validated into a
    /// snapshot's worth of memory, and what the read freed is worth handing back first.
    pub fn any_read_whole(&self) -> bool {
        self.texts.values().any(|(records, _)| records.is_some())
            || self.kept.values().any(|k| k.whole)
    }

    /// Reads given as JSON only (nothing kept).
    pub fn of_json(json: Option<&str>) -> DatabaseReads {
        DatabaseReads {
            json: json.map(str::to_owned),
            ..DatabaseReads::default()
        }
    }
}

//! What a read keeps and hands over: the records kept with a snapshot for incremental reads,
//! and the reads of one open or reload.

use super::*;

/// The capability records of a read as they came (JSON text), kept with its snapshot when the
/// view offers `changedSince`: an incremental read takes every record it does not read again
/// from here, so the candidate it validates is exactly the one a full read would give.
#[derive(Debug, Default)]
pub struct KeptRecords {
    /// The records' JSON, comma-separated.
    pub(super) text: String,
    /// Each record in ID order: its span of `text`, its capability ID and the relations it
    /// declares.
    pub(super) records: Vec<(usize, usize, Box<str>, u32)>,
    /// Of records an incremental read gave: the records its changes were applied to (not kept
    /// alive by these), and by position which records were taken from them unchanged (empty
    /// when the read was whole). The snapshot built from those holds them validated: they are
    /// taken from it instead of being parsed and checked one by one again.
    pub(super) base: Weak<KeptRecords>,
    pub(super) reused: Vec<bool>,
}

impl KeptRecords {
    /// Heap bytes held.
    pub fn bytes(&self) -> usize {
        self.text.capacity()
            + self.reused.capacity()
            + self.records.capacity() * std::mem::size_of::<(usize, usize, Box<str>, u32)>()
            + self.records.iter().map(|r| r.2.len()).sum::<usize>()
    }

    pub(super) fn record(&self, i: usize) -> &str {
        let (start, len, _, _) = self.records[i];
        &self.text[start..start + len]
    }
}

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
    /// Reads given as JSON only (nothing kept).
    pub fn of_json(json: Option<&str>) -> DatabaseReads {
        DatabaseReads {
            json: json.map(str::to_owned),
            ..DatabaseReads::default()
        }
    }
}

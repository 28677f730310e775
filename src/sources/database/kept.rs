//! What a read keeps and hands over: the records kept with a snapshot for incremental reads,
//! and the reads of one open or reload.

use super::*;

/// The capability records of a read as they came (JSON text), kept with its snapshot when the
/// view offers `changedSince`: an incremental read takes every record it does not read again
/// from here, so the candidate it validates is exactly the one a full read would give.
#[derive(Debug, Default)]
pub struct KeptRecords {
    /// The texts the records are spans of. A whole read's is the JSON array of its records; an
    /// incremental read shares the texts of the records it took unchanged instead of copying
    /// them, and adds one of the records it read.
    pub(super) texts: Vec<Arc<String>>,
    /// Whether `texts` is one text, the JSON array of the records in order.
    pub(super) whole: bool,
    /// Each record in ID order (see [`Kept`]).
    pub(super) records: Vec<Kept>,
    /// Of records an incremental read gave: the records its changes were applied to (not kept
    /// alive by these), and by position which records were taken from them unchanged (empty
    /// when the read was whole). The snapshot built from those holds them validated: they are
    /// taken from it instead of being parsed and checked one by one again.
    pub(super) base: Weak<KeptRecords>,
    pub(super) reused: Vec<bool>,
}

/// One kept record: the text that holds it and its span there, its capability ID and the
/// relations it declares.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Kept {
    pub(super) text: u32,
    pub(super) start: usize,
    pub(super) len: usize,
    pub(super) id: Box<str>,
    pub(super) declared: u32,
}

/// Texts an incremental read keeps sharing at most; past that, the small ones are copied into
/// one, so a long run of reloads does not chain thousands of texts.
const MAX_TEXTS: usize = 8;

impl KeptRecords {
    /// Heap bytes held.
    pub fn bytes(&self) -> usize {
        self.texts.iter().map(|t| t.capacity()).sum::<usize>()
            + self.reused.capacity()
            + self.records.capacity() * std::mem::size_of::<Kept>()
            + self.records.iter().map(|r| r.id.len()).sum::<usize>()
    }

    pub(super) fn record(&self, i: usize) -> &str {
        let k = &self.records[i];
        &self.texts[k.text as usize][k.start..k.start + k.len]
    }

    /// The records as one JSON array, as a whole read of them gives it.
    pub(super) fn whole_text(&self) -> std::borrow::Cow<'_, str> {
        if self.whole {
            if let [text] = &self.texts[..] {
                return std::borrow::Cow::Borrowed(text.as_str());
            }
        }
        let mut list =
            String::with_capacity(self.records.iter().map(|r| r.len + 1).sum::<usize>() + 2);
        list.push('[');
        for i in 0..self.records.len() {
            if i > 0 {
                list.push(',');
            }
            list.push_str(self.record(i));
        }
        list.push(']');
        std::borrow::Cow::Owned(list)
    }

    /// Keeps sharing a text only while most of it is records still kept, and at most
    /// [`MAX_TEXTS`] of them (the largest stays): the records of the others are copied into one
    /// new text. What this holds beyond its records stays a fraction of them.
    pub(super) fn compact(&mut self) {
        let n = self.texts.len();
        if n <= 1 {
            return;
        }
        let mut live = vec![0usize; n];
        for r in &self.records {
            live[r.text as usize] += r.len;
        }
        let largest = (0..n).max_by_key(|&t| self.texts[t].len()).unwrap_or(0);
        let stays: Vec<bool> = (0..n)
            .map(|t| 4 * live[t] >= 3 * self.texts[t].len() && (t == largest || n <= MAX_TEXTS))
            .collect();
        if stays.iter().all(|&s| s) {
            return;
        }
        let mut index = vec![u32::MAX; n];
        let mut texts = Vec::with_capacity(n);
        for t in (0..n).filter(|&t| stays[t]) {
            index[t] = texts.len() as u32;
            texts.push(self.texts[t].clone());
        }
        let copied = texts.len() as u32;
        let mut text = String::with_capacity((0..n).filter(|&t| !stays[t]).map(|t| live[t]).sum());
        for r in &mut self.records {
            let t = r.text as usize;
            if stays[t] {
                r.text = index[t];
            } else {
                let start = text.len();
                text.push_str(&self.texts[t][r.start..r.start + r.len]);
                (r.text, r.start) = (copied, start);
            }
        }
        texts.push(Arc::new(text));
        self.texts = texts;
        self.whole = false;
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

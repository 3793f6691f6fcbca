//! The service-address search index. `AddressIndex` is what the API needs (type-ahead on the
//! beginning of an address, exact street lookups); `FstIndex` implements it with a finite-state
//! transducer set over normalized address texts.
//!
//! Why an FST built in memory at start: the keys (normalized text, ZIP, ESI ID) compress to a
//! fraction of their raw size, a prefix or Levenshtein automaton walks only the matching part
//! of the set, and building from the sorted keys is a single pass. Rebuilding from the address
//! table on start keeps one source of truth (the table, on either engine) and nothing on disk to
//! go stale; an import swaps in a new index when it is done.

use fst::{automaton::Levenshtein, Automaton, IntoStreamer, Set, Streamer};

use crate::{
    domain::address::{normalize_prefix, partial_unit_prefix, search_text, suffix_completion},
    store::{
        self,
        market::{SearchEntry, ServiceAddressRow},
        Db,
    },
};

/// Separates the parts of a key; below every character of a normalized text.
const SEP: u8 = 0x01;
/// Queries shorter than this are matched exactly (a typo budget on 3 letters matches anything).
const MIN_FUZZY_CHARS: usize = 5;
/// With a ZIP filter, give up after this many keys of other ZIPs (keeps p99 bounded).
const MAX_SCANNED: usize = 50_000;

/// One entry found by the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexHit {
    /// The normalized search text.
    pub text: String,
    pub postal_code: String,
    pub esi_id: String,
}

pub trait AddressIndex: Send + Sync {
    /// Entries whose address begins with `query`; when none does, entries within one typo (a
    /// letter wrong, missing, extra, or two neighbours swapped). At most `limit`.
    fn type_ahead(&self, query: &str, postal_code: Option<&str>, limit: usize) -> Vec<IndexHit>;

    /// Entries whose normalized street line is `street` (with any unit, or exactly `unit`).
    fn street(&self, street: &str, unit: Option<&str>) -> Vec<IndexHit>;

    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Two sets of the same entries: by address text (`text SEP zip SEP esi`) for type-ahead, and
/// by ZIP first (`zip SEP text SEP esi`) so that a search within a ZIP walks only that ZIP.
pub struct FstIndex {
    set: Set<Vec<u8>>,
    by_zip: Set<Vec<u8>>,
}

fn key(text: &str, postal_code: &str, esi_id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(text.len() + postal_code.len() + esi_id.len() + 2);
    k.extend_from_slice(text.as_bytes());
    k.push(SEP);
    k.extend_from_slice(postal_code.as_bytes());
    k.push(SEP);
    k.extend_from_slice(esi_id.as_bytes());
    k
}

fn parse_key(k: &[u8]) -> Option<IndexHit> {
    let s = std::str::from_utf8(k).ok()?;
    let mut parts = s.split(char::from(SEP));
    Some(IndexHit {
        text: parts.next()?.to_owned(),
        postal_code: parts.next()?.to_owned(),
        esi_id: parts.next()?.to_owned(),
    })
}

impl FstIndex {
    pub fn empty() -> Self {
        FstIndex {
            set: Set::default(),
            by_zip: Set::default(),
        }
    }

    /// Builds the index from keys (`entry_key`) in any order.
    pub fn from_keys(mut keys: Vec<Vec<u8>>) -> anyhow::Result<Self> {
        keys.sort_unstable();
        keys.dedup();
        let set = Set::from_iter(keys.iter())?;
        // The same keys with the ZIP moved to the front, rotated in place (no second copy).
        for k in &mut keys {
            let Some(first) = k.iter().position(|b| *b == SEP) else {
                continue;
            };
            let Some(second) = k[first + 1..].iter().position(|b| *b == SEP) else {
                continue;
            };
            k[..first + 1 + second + 1].rotate_left(first + 1);
        }
        keys.sort_unstable();
        Ok(FstIndex {
            set,
            by_zip: Set::from_iter(keys)?,
        })
    }

    /// The key of a directory entry.
    pub fn entry_key(row: &ServiceAddressRow) -> Vec<u8> {
        key(
            &search_text(&row.address_1, row.address_2.as_deref()),
            &row.postal_code,
            &row.esi_id,
        )
    }

    fn search_entry_key((esi_id, address_1, address_2, postal_code): &SearchEntry) -> Vec<u8> {
        key(
            &search_text(address_1, address_2.as_deref()),
            postal_code,
            esi_id,
        )
    }

    /// Bytes of the FSTs themselves.
    pub fn size_bytes(&self) -> usize {
        self.set.as_fst().size() + self.by_zip.as_fst().size()
    }

    /// Exact-prefix matches inside one ZIP.
    fn in_zip(&self, zip: &str, prefix: &str, limit: usize, out: &mut Vec<IndexHit>) {
        let mut wanted = Vec::with_capacity(zip.len() + 1 + prefix.len());
        wanted.extend_from_slice(zip.as_bytes());
        wanted.push(SEP);
        wanted.extend_from_slice(prefix.as_bytes());
        let mut upper = wanted.clone();
        upper.push(0xFF);
        let mut stream = self.by_zip.range().ge(&wanted).lt(&upper).into_stream();
        while let Some(k) = stream.next() {
            if out.len() >= limit {
                break;
            }
            let Ok(s) = std::str::from_utf8(k) else {
                continue;
            };
            let mut parts = s.split(char::from(SEP));
            let (Some(zip), Some(text), Some(esi)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if !out.iter().any(|h| h.esi_id == esi) {
                out.push(IndexHit {
                    text: text.to_owned(),
                    postal_code: zip.to_owned(),
                    esi_id: esi.to_owned(),
                });
            }
        }
    }

    fn collect<A: Automaton>(
        &self,
        aut: A,
        postal_code: Option<&str>,
        limit: usize,
        out: &mut Vec<IndexHit>,
    ) {
        let mut stream = self.set.search(aut).into_stream();
        let mut scanned = 0;
        while let Some(k) = stream.next() {
            if out.len() >= limit || scanned >= MAX_SCANNED {
                break;
            }
            scanned += 1;
            let Some(hit) = parse_key(k) else { continue };
            if postal_code.is_some_and(|z| z != hit.postal_code) {
                continue;
            }
            if !out.iter().any(|h| h.esi_id == hit.esi_id) {
                out.push(hit);
            }
        }
    }
}

impl AddressIndex for FstIndex {
    fn type_ahead(&self, query: &str, postal_code: Option<&str>, limit: usize) -> Vec<IndexHit> {
        let q = normalize_prefix(query);
        let q = q.trim_end();
        let mut out = Vec::new();
        if q.is_empty() || limit == 0 {
            return out;
        }
        let exact = |prefix: &str, out: &mut Vec<IndexHit>| match postal_code {
            Some(zip) => self.in_zip(zip, prefix, limit, out),
            None => self.collect(
                fst::automaton::Str::new(prefix).starts_with(),
                None,
                limit,
                out,
            ),
        };
        exact(q, &mut out);
        // As typed first; then reading an unfinished last word as a street suffix or a unit.
        for alternative in [suffix_completion(q), partial_unit_prefix(q)]
            .into_iter()
            .flatten()
        {
            if !out.is_empty() {
                break;
            }
            exact(&alternative, &mut out);
        }
        // Typos are forgiven only when nothing matches as typed, so that a correct query is
        // never padded with near misses (the neighbour's unit).
        if out.is_empty() && q.chars().count() >= MIN_FUZZY_CHARS {
            // One edit (a letter wrong, missing or extra) by automaton; two letters swapped,
            // the commonest slip, by trying each swap as an exact prefix (cheaper than a
            // two-edit automaton, whose construction alone costs milliseconds).
            if let Ok(lev) = Levenshtein::new(q, 1) {
                self.collect(lev.starts_with(), postal_code, limit, &mut out);
            }
            let chars: Vec<char> = q.chars().collect();
            for i in 0..chars.len().saturating_sub(1) {
                if out.len() >= limit {
                    break;
                }
                if chars[i] == chars[i + 1] {
                    continue;
                }
                let mut swapped = chars.clone();
                swapped.swap(i, i + 1);
                let swapped: String = swapped.into_iter().collect();
                match postal_code {
                    Some(zip) => self.in_zip(zip, &swapped, limit, &mut out),
                    None => self.collect(
                        fst::automaton::Str::new(&swapped).starts_with(),
                        None,
                        limit,
                        &mut out,
                    ),
                }
            }
        }
        out
    }

    fn street(&self, street: &str, unit: Option<&str>) -> Vec<IndexHit> {
        let mut out = Vec::new();
        if street.is_empty() {
            return out;
        }
        let mut stream = self
            .set
            .search(fst::automaton::Str::new(street).starts_with())
            .into_stream();
        let with_unit = format!("{street} #");
        while let Some(k) = stream.next() {
            let Some(hit) = parse_key(k) else { continue };
            let matches = match unit {
                Some(u) => hit.text == format!("{street} {u}"),
                None => hit.text == street || hit.text.starts_with(&with_unit),
            };
            if matches {
                out.push(hit);
            }
        }
        out
    }

    fn len(&self) -> usize {
        self.set.len()
    }
}

/// Rows read per page while building from the table.
const BUILD_PAGE: i64 = 50_000;

/// Builds the index from the whole address table (keyset pages; the FST itself is built on
/// a blocking thread).
pub async fn build_from_db(db: &Db) -> anyhow::Result<FstIndex> {
    let mut keys = Vec::new();
    let mut after = String::new();
    loop {
        let page = store::market::search_entries_after(db, &after, BUILD_PAGE).await?;
        let Some(last) = page.last() else { break };
        after.clone_from(&last.0);
        keys.extend(page.iter().map(FstIndex::search_entry_key));
        if page.len() < BUILD_PAGE as usize {
            break;
        }
    }
    tokio::task::spawn_blocking(move || FstIndex::from_keys(keys)).await?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(esi: &str, a1: &str, a2: Option<&str>, zip: &str) -> ServiceAddressRow {
        ServiceAddressRow {
            esi_id: esi.into(),
            address_1: a1.into(),
            address_2: a2.map(str::to_owned),
            city: "DALLAS".into(),
            state: "TX".into(),
            postal_code: zip.into(),
            tdu: "ONCOR".into(),
            premise_type: "residential".into(),
            status: "active".into(),
        }
    }

    fn index() -> FstIndex {
        let rows = [
            row("10443720000000001", "123 MAIN ST", Some("APT 4"), "75201"),
            row("10443720000000002", "123 MAIN ST", Some("APT 5"), "75201"),
            row("10443720000000003", "123 MAINE AVE", None, "75202"),
            row("10443720000000004", "77 PECAN DR", None, "75203"),
            row("10443720000000005", "123 MAIN ST", None, "76102"),
        ];
        FstIndex::from_keys(rows.iter().map(FstIndex::entry_key).collect()).unwrap()
    }

    fn ids(hits: &[IndexHit]) -> Vec<&str> {
        let mut v: Vec<&str> = hits.iter().map(|h| &h.esi_id[13..]).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn type_ahead_matches_beginnings_units_and_typos() {
        let i = index();
        assert_eq!(
            ids(&i.type_ahead("123 main", None, 10)),
            ["0001", "0002", "0003", "0005"]
        );
        assert_eq!(ids(&i.type_ahead("123 Main Street #4", None, 10)), ["0001"]);
        assert_eq!(ids(&i.type_ahead("123 main st apt 4", None, 10)), ["0001"]);
        assert_eq!(
            ids(&i.type_ahead("123 main st apar", None, 10)),
            ["0001", "0002"]
        );
        assert_eq!(ids(&i.type_ahead("77 pecna", None, 10)), ["0004"]);
        assert_eq!(ids(&i.type_ahead("77 pexan d", None, 10)), ["0004"]);
        assert_eq!(ids(&i.type_ahead("123 main", Some("76102"), 10)), ["0005"]);
        assert_eq!(i.type_ahead("123 main", None, 2).len(), 2);
        assert!(i.type_ahead("  ", None, 10).is_empty());
        assert!(i.type_ahead("9 elm", None, 10).is_empty());
    }

    #[test]
    fn street_lookups_are_exact() {
        let i = index();
        assert_eq!(
            ids(&i.street("123 MAIN ST", None)),
            ["0001", "0002", "0005"]
        );
        assert_eq!(ids(&i.street("123 MAIN ST", Some("# 5"))), ["0002"]);
        assert!(i.street("123 MAI", None).is_empty());
    }
}

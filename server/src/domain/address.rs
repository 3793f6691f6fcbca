//! Address normalization for search: upper case, punctuation dropped, USPS street suffixes
//! and directionals abbreviated (Publication 28), every unit designator ("APT", "UNIT", "STE",
//! "#", ...) written as `#`. Two spellings of one address normalize to the same text.

/// USPS standard suffix abbreviations (long and common forms to the standard one).
const SUFFIXES: &[(&str, &str)] = &[
    ("ALLEY", "ALY"),
    ("AVENUE", "AVE"),
    ("AV", "AVE"),
    ("AVEN", "AVE"),
    ("BEND", "BND"),
    ("BOULEVARD", "BLVD"),
    ("BOUL", "BLVD"),
    ("CIRCLE", "CIR"),
    ("COURT", "CT"),
    ("COVE", "CV"),
    ("CREEK", "CRK"),
    ("CROSSING", "XING"),
    ("DRIVE", "DR"),
    ("DRV", "DR"),
    ("EXPRESSWAY", "EXPY"),
    ("FREEWAY", "FWY"),
    ("GLEN", "GLN"),
    ("HEIGHTS", "HTS"),
    ("HIGHWAY", "HWY"),
    ("HOLLOW", "HOLW"),
    ("LANE", "LN"),
    ("LOOP", "LOOP"),
    ("MEADOWS", "MDWS"),
    ("PARKWAY", "PKWY"),
    ("PASS", "PASS"),
    ("PATH", "PATH"),
    ("PLACE", "PL"),
    ("PLAZA", "PLZ"),
    ("POINT", "PT"),
    ("RIDGE", "RDG"),
    ("ROAD", "RD"),
    ("SQUARE", "SQ"),
    ("STREET", "ST"),
    ("STR", "ST"),
    ("TERRACE", "TER"),
    ("TRACE", "TRCE"),
    ("TRAIL", "TRL"),
    ("VIEW", "VW"),
    ("VILLAGE", "VLG"),
    ("WAY", "WAY"),
];

const DIRECTIONALS: &[(&str, &str)] = &[
    ("NORTH", "N"),
    ("SOUTH", "S"),
    ("EAST", "E"),
    ("WEST", "W"),
    ("NORTHEAST", "NE"),
    ("NORTHWEST", "NW"),
    ("SOUTHEAST", "SE"),
    ("SOUTHWEST", "SW"),
];

/// Words that introduce a unit number.
const UNIT_DESIGNATORS: &[&str] = &[
    "APT",
    "APARTMENT",
    "UNIT",
    "STE",
    "SUITE",
    "NO",
    "NUM",
    "NUMBER",
    "RM",
    "ROOM",
    "LOT",
    "#",
];

fn lookup(table: &[(&str, &'static str)], word: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == word).map(|(_, v)| *v)
}

fn tokens(raw: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(raw.len() + 4);
    for c in raw.chars() {
        if c == '#' {
            spaced.push_str(" # ");
        } else if c.is_ascii_alphanumeric() {
            spaced.push(c.to_ascii_uppercase());
        } else {
            spaced.push(' ');
        }
    }
    spaced.split_whitespace().map(str::to_owned).collect()
}

fn canonical(word: &str, is_first: bool) -> String {
    if UNIT_DESIGNATORS.contains(&word) {
        return "#".to_owned();
    }
    // A house number never changes; "N" after it is a directional either way.
    if is_first {
        return word.to_owned();
    }
    lookup(SUFFIXES, word)
        .or_else(|| lookup(DIRECTIONALS, word))
        .map_or_else(|| word.to_owned(), str::to_owned)
}

/// The normalized form of a complete address line (or of `address_1` and `address_2` joined).
pub fn normalize(raw: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for (i, t) in tokens(raw).iter().enumerate() {
        let c = canonical(t, i == 0);
        // "APT #4" and "# 4" are the same unit.
        if c == "#" && out.last().is_some_and(|l| l == "#") {
            continue;
        }
        out.push(c);
    }
    out.join(" ")
}

/// The normalized form of what a user has typed so far (a trailing space when the last word
/// is finished).
pub fn normalize_prefix(raw: &str) -> String {
    let finished = raw.ends_with(|c: char| c.is_whitespace() || c == ',');
    let normalized = normalize(raw);
    if finished && !normalized.is_empty() {
        format!("{normalized} ")
    } else {
        normalized
    }
}

/// When the last word of a normalized prefix begins exactly one long suffix form ("STRE" of
/// "STREET"), the prefix with that suffix's abbreviation instead, so that type-ahead keeps
/// matching while the user spells the suffix out. A fallback: the word may as well begin a
/// street name ("PAR" of "PARKVIEW").
pub fn suffix_completion(normalized: &str) -> Option<String> {
    let (rest, last) = normalized.trim_end().rsplit_once(' ')?;
    if last.len() < 3 || lookup(SUFFIXES, last).is_some() {
        return None;
    }
    let completions: Vec<&str> = SUFFIXES
        .iter()
        .filter(|(long, short)| long.len() > 4 && long.starts_with(last) && *short != last)
        .map(|(_, short)| *short)
        .collect();
    match completions.as_slice() {
        [only] => Some(format!("{rest} {only}")),
        _ => None,
    }
}

/// Long unit designators a user may be halfway through typing.
const UNIT_WORDS: &[&str] = &["APARTMENT", "UNIT", "SUITE", "ROOM", "NUMBER"];

/// When the last, unfinished word of a normalized prefix begins a unit designator ("AP",
/// "UNI"), the prefix with that word read as the unit marker (`123 MAIN ST #`).
pub fn partial_unit_prefix(normalized: &str) -> Option<String> {
    if normalized.ends_with(' ') {
        return None;
    }
    let (rest, last) = normalized.rsplit_once(' ')?;
    let partial = rest.split(' ').count() >= 3
        && UNIT_WORDS.iter().any(|w| w.starts_with(last) && *w != last);
    partial.then(|| format!("{rest} #"))
}

/// The normalized unit of an `address_2` ("APT 4", "#4", "Unit 4" all give "# 4").
pub fn normalize_unit(raw: &str) -> String {
    let n = normalize(raw);
    if n.is_empty() || n.starts_with('#') {
        n
    } else {
        format!("# {n}")
    }
}

/// The search text of a directory entry: street line, then its unit.
pub fn search_text(address_1: &str, address_2: Option<&str>) -> String {
    match address_2.map(normalize_unit).filter(|u| !u.is_empty()) {
        Some(unit) => format!("{} {unit}", normalize(address_1)),
        None => normalize(address_1),
    }
}

/// A service address on one line, as a notice prints it: "123 Main St Apt 4, Austin, TX 78701"
/// (a blank second line left out).
pub fn one_line(
    address_1: &str,
    address_2: Option<&str>,
    city: &str,
    state: &str,
    postal_code: &str,
) -> String {
    let unit = address_2
        .filter(|a| !a.is_empty())
        .map(|a| format!(" {a}"))
        .unwrap_or_default();
    format!("{address_1}{unit}, {city}, {state} {postal_code}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_leaves_a_blank_unit_out() {
        assert_eq!(
            one_line("123 Main St", Some("Apt 4"), "Austin", "TX", "78701"),
            "123 Main St Apt 4, Austin, TX 78701"
        );
        assert_eq!(
            one_line("123 Main St", Some(""), "Austin", "TX", "78701"),
            "123 Main St, Austin, TX 78701"
        );
        assert_eq!(
            one_line("123 Main St", None, "Austin", "TX", "78701"),
            "123 Main St, Austin, TX 78701"
        );
    }

    #[test]
    fn spellings_of_one_address_normalize_alike() {
        let a = search_text("123 Main Street", Some("#4"));
        assert_eq!(a, "123 MAIN ST # 4");
        assert_eq!(normalize("123 main st apt 4"), a);
        assert_eq!(normalize("123 MAIN ST., Apartment #4"), a);
        assert_eq!(normalize("123 Main St Unit 4"), a);
        assert_eq!(
            normalize("4500 North Central Expressway"),
            "4500 N CENTRAL EXPY"
        );
        assert_eq!(search_text("9 Oak Ln", Some("Apt B")), "9 OAK LN # B");
        assert_eq!(search_text("9 Oak Ln", Some(" ")), "9 OAK LN");
    }

    #[test]
    fn unfinished_words_complete_to_suffixes() {
        let complete = |s: &str| suffix_completion(&normalize_prefix(s));
        assert_eq!(complete("123 Main Stre").as_deref(), Some("123 MAIN ST"));
        assert_eq!(complete("123 Main Avenu").as_deref(), Some("123 MAIN AVE"));
        assert_eq!(complete("123 Main St"), None);
        assert_eq!(complete("123 Ma"), None);
        assert_eq!(complete("12"), None);
        assert_eq!(normalize_prefix("123 Main St "), "123 MAIN ST ");
        assert_eq!(normalize_prefix("123 Main Stre"), "123 MAIN STRE");
    }

    #[test]
    fn half_typed_unit_designators_become_the_unit_marker() {
        assert_eq!(
            partial_unit_prefix(&normalize_prefix("123 Main St Ap")).as_deref(),
            Some("123 MAIN ST #")
        );
        assert_eq!(
            partial_unit_prefix(&normalize_prefix("123 Main St Uni")).as_deref(),
            Some("123 MAIN ST #")
        );
        assert_eq!(partial_unit_prefix(&normalize_prefix("123 Ap")), None);
        assert_eq!(partial_unit_prefix(&normalize_prefix("123 Main St ")), None);
        assert_eq!(
            partial_unit_prefix(&normalize_prefix("123 Main St Unit")),
            None
        );
    }
}

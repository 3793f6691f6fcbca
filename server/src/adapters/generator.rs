//! A deterministic generator of realistic Texas service addresses for sandboxes and
//! benchmarks: real city/ZIP pairs of each utility's territory (from the `zip_tdus` table,
//! weighted by each utility's share of the ZIP), plausible street names and numbers, duplexes
//! and apartment buildings with one meter per unit, and unique ESI IDs with the prefix and
//! length of their utility. The same seed always yields the same directory.

use rand::{distributions::WeightedIndex, prelude::Distribution, Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::store::market::{EsiPrefixRow, ServiceAddressRow, ZipTduRow};

const STREETS: &[&str] = &[
    "MAIN",
    "OAK",
    "ELM",
    "PECAN",
    "LIVE OAK",
    "BLUEBONNET",
    "MESQUITE",
    "CEDAR",
    "MAGNOLIA",
    "WILLOW",
    "HICKORY",
    "POST OAK",
    "BRAZOS",
    "TRINITY",
    "SABINE",
    "COLORADO",
    "GUADALUPE",
    "LAMAR",
    "TRAVIS",
    "HOUSTON",
    "AUSTIN",
    "CROCKETT",
    "BOWIE",
    "SAN JACINTO",
    "WASHINGTON",
    "JEFFERSON",
    "LINCOLN",
    "FRANKLIN",
    "MCKINNEY",
    "PRESTON",
    "GREENVILLE",
    "BELMONT",
    "WESTHEIMER",
    "RICHMOND",
    "MONTROSE",
    "YALE",
    "HEIGHTS",
    "SHEPHERD",
    "KIRBY",
    "BISSONNET",
    "OCEAN",
    "SHORELINE",
    "ALAMEDA",
    "STAPLES",
    "EVERHART",
    "WEBER",
    "AIRLINE",
    "SARATOGA",
    "SUNSET",
    "CANYON",
    "RIDGECREST",
    "MEADOWBROOK",
    "WOODLAND",
    "PARKVIEW",
    "LAKESIDE",
    "HIGHLAND",
    "COUNTRY CLUB",
    "ROLLING HILLS",
    "INDIAN TRAIL",
    "QUAIL RUN",
    "DOVE CREEK",
    "COTTONWOOD",
    "SYCAMORE",
    "JUNIPER",
    "PRIMROSE",
    "INDIAN PAINTBRUSH",
    "YUCCA",
    "PRAIRIE",
    "RANCH",
    "CATTLEMAN",
    "HARVEST",
    "MILL",
    "RAILROAD",
    "COMMERCE",
    "INDUSTRIAL",
    "CHURCH",
    "SCHOOL",
    "COLLEGE",
    "UNIVERSITY",
    "MARKET",
    "CAMP BOWIE",
    "HULEN",
    "BERRY",
    "ROSEDALE",
];

const SUFFIXES: &[&str] = &[
    "ST", "ST", "ST", "AVE", "AVE", "DR", "DR", "LN", "RD", "BLVD", "CT", "CIR", "PKWY", "WAY",
    "TRL", "PL", "CV",
];

const DIRECTIONALS: &[&str] = &["N", "S", "E", "W"];

/// Reference data the generator draws from.
pub struct GeneratorInput {
    pub zips: Vec<ZipTduRow>,
    pub prefixes: Vec<EsiPrefixRow>,
}

/// An endless, deterministic stream of directory entries.
pub struct AddressGenerator {
    rng: ChaCha8Rng,
    zips: Vec<ZipTduRow>,
    zip_pick: WeightedIndex<i64>,
    prefixes: Vec<EsiPrefixRow>,
    offset: u64,
    counter: u64,
    pending: Vec<ServiceAddressRow>,
}

/// Multiplier of the ESI ID scramble: odd and not a multiple of 5, hence invertible modulo
/// every power of ten, so distinct counters always give distinct numbers.
const SCRAMBLE: u64 = 6_364_136_223_846_793;

impl AddressGenerator {
    pub fn new(input: GeneratorInput, seed: u64) -> anyhow::Result<Self> {
        let zips: Vec<ZipTduRow> = input
            .zips
            .into_iter()
            .filter(|z| input.prefixes.iter().any(|p| p.tdu == z.tdu))
            .filter(|z| z.likelihood > 0)
            .collect();
        anyhow::ensure!(
            !zips.is_empty(),
            "no ZIP code of an open utility to draw from"
        );
        let zip_pick = WeightedIndex::new(zips.iter().map(|z| z.likelihood))?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let offset = rng.gen::<u64>();
        Ok(AddressGenerator {
            rng,
            zips,
            zip_pick,
            prefixes: input.prefixes,
            offset,
            counter: 0,
            pending: Vec::new(),
        })
    }

    fn esi_id(&mut self, tdu: &str) -> String {
        let candidates: Vec<&EsiPrefixRow> =
            self.prefixes.iter().filter(|p| p.tdu == tdu).collect();
        let total: i64 = candidates.iter().map(|p| p.weight.max(1)).sum();
        let mut pick = self.rng.gen_range(0..total.max(1));
        let mut chosen = candidates[0];
        for p in &candidates {
            if pick < p.weight.max(1) {
                chosen = p;
                break;
            }
            pick -= p.weight.max(1);
        }
        let body_len = u32::try_from(chosen.esi_id_length - 7).unwrap_or(10);
        let modulus = 10u128.pow(body_len.min(30));
        let body =
            (u128::from(self.counter) * u128::from(SCRAMBLE) + u128::from(self.offset)) % modulus;
        self.counter += 1;
        format!(
            "{}{:0width$}",
            chosen.prefix,
            body,
            width = body_len as usize
        )
    }

    fn street_line(&mut self) -> String {
        let number = match self.rng.gen_range(0..10) {
            0..=5 => self.rng.gen_range(100..9_999),
            6..=8 => self.rng.gen_range(10_000..19_999),
            _ => self.rng.gen_range(1..99),
        };
        let name = STREETS[self.rng.gen_range(0..STREETS.len())];
        let suffix = SUFFIXES[self.rng.gen_range(0..SUFFIXES.len())];
        if self.rng.gen_bool(0.15) {
            let dir = DIRECTIONALS[self.rng.gen_range(0..DIRECTIONALS.len())];
            format!("{number} {dir} {name} {suffix}")
        } else {
            format!("{number} {name} {suffix}")
        }
    }

    /// One premise: a house, a duplex or an apartment building, one entry per meter.
    fn premise(&mut self) {
        let zip = self.zips[self.zip_pick.sample(&mut self.rng)].clone();
        let line = self.street_line();
        let kind = self.rng.gen_range(0..100);
        let units: Vec<Option<String>> = match kind {
            0..=79 => vec![None],
            80..=89 => vec![Some("UNIT A".to_owned()), Some("UNIT B".to_owned())],
            _ => {
                let floors = self.rng.gen_range(1..=4);
                let per_floor = self.rng.gen_range(2..=8);
                (1..=floors)
                    .flat_map(|f| (1..=per_floor).map(move |u| Some(format!("APT {f}{u:02}"))))
                    .collect()
            }
        };
        let premise_type = match kind {
            0..=79 => "residential",
            80..=89 => "duplex",
            _ => "apartment",
        };
        for unit in units {
            let status = if self.rng.gen_bool(0.03) {
                "de_energized"
            } else {
                "active"
            };
            let esi_id = self.esi_id(&zip.tdu);
            self.pending.push(ServiceAddressRow {
                esi_id,
                address_1: line.clone(),
                address_2: unit,
                city: zip.city.to_uppercase(),
                state: "TX".to_owned(),
                postal_code: zip.postal_code.clone(),
                tdu: zip.tdu.clone(),
                premise_type: premise_type.to_owned(),
                status: status.to_owned(),
            });
        }
        // Entries come out in the order they were made.
        self.pending.reverse();
    }
}

impl Iterator for AddressGenerator {
    type Item = ServiceAddressRow;

    fn next(&mut self) -> Option<ServiceAddressRow> {
        if self.pending.is_empty() {
            self.premise();
        }
        self.pending.pop()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn input() -> GeneratorInput {
        let z = |zip: &str, tdu: &str, city: &str, l| ZipTduRow {
            postal_code: zip.into(),
            tdu: tdu.into(),
            city: city.into(),
            likelihood: l,
        };
        let p = |prefix: &str, tdu: &str, len, weight| EsiPrefixRow {
            prefix: prefix.into(),
            tdu: tdu.into(),
            esi_id_length: len,
            weight,
        };
        GeneratorInput {
            zips: vec![
                z("75201", "ONCOR", "Dallas", 100),
                z("77002", "CENTERPOINT", "Houston", 100),
                z("79401", "LPL", "Lubbock", 100),
            ],
            prefixes: vec![
                p("1044372", "ONCOR", 17, 95),
                p("1017699", "ONCOR", 17, 5),
                p("1008901", "CENTERPOINT", 22, 100),
            ],
        }
    }

    #[test]
    fn generation_is_deterministic_unique_and_well_formed() {
        let a: Vec<_> = AddressGenerator::new(input(), 7)
            .unwrap()
            .take(3000)
            .collect();
        let b: Vec<_> = AddressGenerator::new(input(), 7)
            .unwrap()
            .take(3000)
            .collect();
        assert_eq!(a, b);
        let c: Vec<_> = AddressGenerator::new(input(), 8)
            .unwrap()
            .take(10)
            .collect();
        assert_ne!(a[..10], c[..]);
        let ids: HashSet<_> = a.iter().map(|r| r.esi_id.as_str()).collect();
        assert_eq!(ids.len(), a.len());
        for r in &a {
            match r.tdu.as_str() {
                "ONCOR" => {
                    assert_eq!(r.esi_id.len(), 17);
                    assert!(r.esi_id.starts_with("1044372") || r.esi_id.starts_with("1017699"));
                    assert_eq!(r.postal_code, "75201");
                    assert_eq!(r.city, "DALLAS");
                }
                "CENTERPOINT" => {
                    assert_eq!(r.esi_id.len(), 22);
                    assert!(r.esi_id.starts_with("1008901"));
                }
                other => panic!("utility without a prefix: {other}"),
            }
        }
        assert!(a.iter().any(|r| r.premise_type == "apartment"));
        assert!(a.iter().any(|r| r.premise_type == "duplex"));
        // Several meters at one street line.
        let first_apartment = a.iter().find(|r| r.premise_type == "apartment").unwrap();
        let same_building = a
            .iter()
            .filter(|r| {
                r.address_1 == first_apartment.address_1
                    && r.postal_code == first_apartment.postal_code
            })
            .count();
        assert!(same_building >= 2);
    }
}

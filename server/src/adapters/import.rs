//! Reading the utilities' ESI ID extract (ESI ID, address, address overflow, city, state,
//! ZIP, TDU, premise type, status; comma- or pipe-separated, as the utilities publish it) into
//! directory entries. Headers are matched loosely ("ESI ID", "ESIID", "ZIPCODE"...); ZIP+4
//! written as nine digits is shortened; the ESI ID's prefix decides the utility, and a TDU
//! column that names another one rejects the row (a DUNS number is not checked).

use std::io::Read;

use crate::{
    domain::market::{tdu_for_esi_id, EsiId, EsiPrefix, ZipCode},
    store::market::ServiceAddressRow,
};

/// Which column holds which field.
struct Columns {
    esi_id: usize,
    address: usize,
    overflow: Option<usize>,
    city: usize,
    state: Option<usize>,
    zip: usize,
    tdu: Option<usize>,
    premise_type: Option<usize>,
    status: Option<usize>,
}

fn squash(h: &str) -> String {
    h.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase()
}

fn columns(headers: &csv::StringRecord) -> anyhow::Result<Columns> {
    let find = |names: &[&str]| {
        headers
            .iter()
            .position(|h| names.contains(&squash(h).as_str()))
    };
    let need = |names: &[&str]| {
        find(names).ok_or_else(|| anyhow::anyhow!("the extract has no {} column", names[0]))
    };
    Ok(Columns {
        esi_id: need(&["esiid", "esi"])?,
        address: need(&["address", "address1", "serviceaddress"])?,
        overflow: find(&["addressoverflow", "address2", "overflow"]),
        city: need(&["city"])?,
        state: find(&["state"]),
        zip: need(&["zip", "zipcode", "postalcode"])?,
        tdu: find(&["tdu", "tdsp", "utility", "duns"]),
        premise_type: find(&["premisetype", "premise"]),
        status: find(&["status", "metastatus"]),
    })
}

/// A rejected line and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub line: u64,
    pub reason: String,
}

/// Reads the extract; calls `row` for every line, with the entry or the reason it was refused.
pub fn read_extract<R: Read>(
    input: R,
    prefixes: &[EsiPrefix],
    mut row: impl FnMut(Result<ServiceAddressRow, Rejected>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut input = std::io::BufReader::new(input);
    let header = std::io::BufRead::fill_buf(&mut input)?;
    let first_line = header.split(|b| *b == b'\n').next().unwrap_or_default();
    let delimiter = if first_line.contains(&b'|') {
        b'|'
    } else {
        b','
    };
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(input);
    let cols = columns(reader.headers()?)?;
    for (i, record) in reader.records().enumerate() {
        let line = i as u64 + 2;
        let reject = |reason: &str| Rejected {
            line,
            reason: reason.to_owned(),
        };
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                row(Err(reject(&format!("unreadable: {e}"))))?;
                continue;
            }
        };
        let get = |c: Option<usize>| {
            c.and_then(|c| record.get(c))
                .map(str::trim)
                .filter(|v| !v.is_empty())
        };
        let result = (|| {
            let esi = get(Some(cols.esi_id))
                .and_then(EsiId::parse)
                .ok_or_else(|| reject("ESI ID is not 17 or 22 digits"))?;
            let tdu = tdu_for_esi_id(&esi, prefixes)
                .ok_or_else(|| reject("ESI ID prefix names no utility open to retail choice"))?;
            if let Some(named) = get(cols.tdu) {
                let named = squash(named);
                let ours = squash(tdu);
                if !named.is_empty()
                    && !named.chars().all(|c| c.is_ascii_digit())
                    && !named.starts_with(&ours[..ours.len().min(3)])
                {
                    return Err(reject("TDU column disagrees with the ESI ID prefix"));
                }
            }
            let address_1 = get(Some(cols.address)).ok_or_else(|| reject("address is empty"))?;
            let city = get(Some(cols.city)).ok_or_else(|| reject("city is empty"))?;
            let zip = get(Some(cols.zip))
                .map(|z| {
                    if z.len() == 9 && z.bytes().all(|b| b.is_ascii_digit()) {
                        &z[..5]
                    } else {
                        z
                    }
                })
                .and_then(|z| ZipCode::parse("zip", z).ok())
                .ok_or_else(|| reject("ZIP is not a ZIP code"))?;
            Ok(ServiceAddressRow {
                esi_id: esi.as_str().to_owned(),
                address_1: address_1.to_uppercase(),
                address_2: get(cols.overflow).map(str::to_uppercase),
                city: city.to_uppercase(),
                state: get(cols.state).unwrap_or("TX").to_uppercase(),
                postal_code: zip.as_str().to_owned(),
                tdu: tdu.to_owned(),
                premise_type: get(cols.premise_type)
                    .unwrap_or("residential")
                    .to_lowercase(),
                status: get(cols.status).unwrap_or("active").to_lowercase(),
            })
        })();
        row(result)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_extract_and_rejects_bad_lines() {
        let csv = "ESI ID,Address,Address Overflow,City,State,ZIP Code,TDU,Premise Type,Status\n\
            10443720000000001,100 Main St,Apt 2,Dallas,TX,75201,ONCOR,Residential,Active\n\
            1044372,1 Short Id,,Dallas,TX,75201,ONCOR,Residential,Active\n\
            10443720000000002,2 Main St,,Dallas,TX,7520,ONCOR,Residential,Active\n\
            10443720000000003,3 Main St,,Dallas,TX,75201,CENTERPOINT,Residential,Active\n\
            99999990000000004,4 Main St,,Dallas,TX,75201,,Residential,Active\n";
        let prefixes = [EsiPrefix {
            prefix: "1044372".into(),
            tdu: "ONCOR".into(),
            esi_id_length: 17,
        }];
        let mut ok = Vec::new();
        let mut bad = Vec::new();
        read_extract(csv.as_bytes(), &prefixes, |r| {
            match r {
                Ok(row) => ok.push(row),
                Err(e) => bad.push(e.line),
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].address_2.as_deref(), Some("APT 2"));
        assert_eq!(ok[0].city, "DALLAS");
        assert_eq!(bad, [3, 4, 5, 6]);
    }

    #[test]
    fn reads_pipe_separated_extracts_with_nine_digit_zips() {
        let extract =
            "ESIID|ADDRESS|ADDRESS_OVERFLOW|CITY|STATE|ZIPCODE|DUNS|PREMISE_TYPE|STATUS\n\
            10443720000000001|100 MAIN ST||DALLAS|TX|752011234|1039940674000|Residential|Active\n";
        let prefixes = [EsiPrefix {
            prefix: "1044372".into(),
            tdu: "ONCOR".into(),
            esi_id_length: 17,
        }];
        let mut ok = Vec::new();
        read_extract(extract.as_bytes(), &prefixes, |r| {
            ok.push(r.unwrap());
            Ok(())
        })
        .unwrap();
        assert_eq!(ok[0].postal_code, "75201");
        assert_eq!(ok[0].address_2, None);
        assert_eq!(ok[0].tdu, "ONCOR");
    }
}

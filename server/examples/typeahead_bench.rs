//! Type-ahead benchmark over a generated directory (default 7.5 million addresses):
//! index build time, resident memory, and per-query latency on one core.
//!
//! ```text
//! cargo run --release -p server --example typeahead_bench -- [ADDRESSES] [QUERIES]
//! ```
//!
//! The reference data (ZIP codes, ESI ID prefixes) comes from the migrations, applied to a
//! throwaway SQLite database; the addresses are generated in memory with the directory's own
//! generator, keyed and indexed exactly as the server does on start.
//!
//! With `BENCH_DATABASE_URL` set, the index is instead built the way a server starts: read from
//! that database's address table (fill it first with `switchboard market generate`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use server::{
    adapters::{
        directory::{AddressIndex, FstIndex},
        generator::{AddressGenerator, GeneratorInput},
    },
    store::{self, Db},
};

fn resident_mb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// What a person types: the beginning of an address, sometimes with a slip of the finger.
fn query(rng: &mut ChaCha8Rng, line: &str, unit: Option<&str>) -> String {
    let full = match unit {
        Some(u) if rng.gen_bool(0.5) => format!("{line} {u}"),
        _ => line.to_owned(),
    };
    let chars: Vec<char> = full.chars().collect();
    let len = rng.gen_range(3..=chars.len().max(3)).min(chars.len());
    let mut typed: Vec<char> = chars[..len].to_vec();
    // One query in five carries a typo: two neighbouring letters swapped, or one replaced.
    if typed.len() > 8 && rng.gen_bool(0.2) {
        let i = rng.gen_range(4..typed.len() - 1);
        if rng.gen_bool(0.5) {
            typed.swap(i, i + 1);
        } else {
            typed[i] = 'q';
        }
    }
    let text: String = typed.into_iter().collect();
    if rng.gen_bool(0.5) {
        text.to_lowercase()
    } else {
        text
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let addresses: usize = args.next().map_or(Ok(7_500_000), |a| a.parse())?;
    let queries: usize = args.next().map_or(Ok(20_000), |a| a.parse())?;

    let dir = tempfile::tempdir()?;
    let db = Db::connect(
        &format!("sqlite:{}", dir.path().join("ref.db").display()),
        2,
    )
    .await?;
    db.migrate().await?;
    let input = GeneratorInput {
        zips: store::market::all_zip_tdus(&db).await?,
        prefixes: store::market::esi_prefixes(&db).await?,
    };
    db.close().await;

    if let Ok(url) = std::env::var("BENCH_DATABASE_URL") {
        let db = Db::connect(&url, 2).await?;
        let started = Instant::now();
        let index = server::adapters::directory::build_from_db(&db).await?;
        println!(
            "index built from the database in {:.1} s: {} entries, FSTs {:.0} MB, resident {:.0} MB, peak {:.0} MB",
            started.elapsed().as_secs_f64(),
            index.len(),
            index.size_bytes() as f64 / 1_048_576.0,
            resident_mb("VmRSS:"),
            resident_mb("VmHWM:")
        );
        let samples = store::market::service_addresses_after(&db, "", 100_000).await?;
        let samples: Vec<_> = samples
            .into_iter()
            .map(|r| (r.address_1, r.address_2))
            .collect();
        db.close().await;
        return measure(&index, &samples, queries);
    }
    println!("addresses: {addresses}");
    let started = Instant::now();
    let mut keys = Vec::with_capacity(addresses);
    let mut samples = Vec::new();
    let mut pick = ChaCha8Rng::seed_from_u64(42);
    for row in AddressGenerator::new(input, 1)?.take(addresses) {
        keys.push(FstIndex::entry_key(&row));
        if pick.gen_ratio(1, 200) && samples.len() < queries {
            samples.push((row.address_1, row.address_2));
        }
    }
    let generated = started.elapsed();
    let rss_keys = resident_mb("VmRSS:");
    let build_started = Instant::now();
    let index = FstIndex::from_keys(keys)?;
    let built = build_started.elapsed();
    println!(
        "generate + key: {:.1} s; index build (sort + FST): {:.1} s; entries {}; FST {:.0} MB",
        generated.as_secs_f64(),
        built.as_secs_f64(),
        index.len(),
        index.size_bytes() as f64 / 1_048_576.0
    );
    println!(
        "resident: {:.0} MB with the keys in memory, {:.0} MB after the build, peak {:.0} MB",
        rss_keys,
        resident_mb("VmRSS:"),
        resident_mb("VmHWM:")
    );

    measure(&index, &samples, queries)
}

fn measure(
    index: &FstIndex,
    samples: &[(String, Option<String>)],
    queries: usize,
) -> anyhow::Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let typed: Vec<String> = (0..queries)
        .map(|i| {
            let (line, unit) = &samples[i % samples.len()];
            query(&mut rng, line, unit.as_deref())
        })
        .collect();
    // Warm up the caches the way a running server would be.
    for q in typed.iter().take(1000) {
        std::hint::black_box(index.type_ahead(q, None, 10));
    }
    let mut times = Vec::with_capacity(typed.len());
    let mut empty = 0;
    for q in &typed {
        let t = Instant::now();
        let hits = index.type_ahead(q, None, 10);
        times.push(t.elapsed());
        if hits.is_empty() {
            empty += 1;
            if empty <= 5 {
                println!("  nothing for {q:?}");
            }
        }
    }
    times.sort_unstable();
    println!(
        "type-ahead, {} queries on one core: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms; {} found nothing",
        times.len(),
        percentile(&times, 0.50).as_secs_f64() * 1e3,
        percentile(&times, 0.90).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
        times.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        empty
    );
    Ok(())
}

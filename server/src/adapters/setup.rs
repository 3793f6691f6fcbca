//! Filling the directory (generated or imported) and (re)building its index, for the first
//! start and the `switchboard market` commands. Progress goes to an indicatif bar (hidden when
//! nobody watches).

use std::{path::Path, sync::Arc, time::Instant};

use indicatif::ProgressBar;

use super::{
    directory::{self, AddressIndex},
    generator::{AddressGenerator, GeneratorInput},
    import::read_extract,
    Adapters,
};
use crate::{
    config::MarketConfig,
    store::{self, market::ServiceAddressRow, Db},
};

/// Rows written per transaction: large enough to amortize commits, small enough to keep the
/// SQLite writer available to requests meanwhile.
const COMMIT_EVERY: usize = 20_000;

/// What a fill did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FillSummary {
    pub read: u64,
    pub written: u64,
    /// Generated entries whose ESI ID was already present (kept as they were).
    pub skipped: u64,
    pub rejected: u64,
    /// The first few rejected lines and why.
    pub rejections: Vec<String>,
    pub seconds: f64,
}

async fn write_batch(db: &Db, rows: &[ServiceAddressRow], replace: bool) -> anyhow::Result<u64> {
    let mut tx = db.begin().await?;
    let n = store::market::upsert_service_addresses(&mut tx, rows, replace).await?;
    tx.commit().await?;
    Ok(n)
}

/// Generates `count` addresses from `seed` into the directory.
pub async fn generate(
    db: &Db,
    count: u64,
    seed: u64,
    progress: &ProgressBar,
) -> anyhow::Result<FillSummary> {
    let started = Instant::now();
    let input = GeneratorInput {
        zips: store::market::all_zip_tdus(db).await?,
        prefixes: store::market::esi_prefixes(db).await?,
    };
    let mut generator = AddressGenerator::new(input, seed)?;
    progress.set_length(count);
    let mut summary = FillSummary::default();
    let mut batch = Vec::with_capacity(COMMIT_EVERY);
    while summary.read < count {
        let take = (count - summary.read).min(COMMIT_EVERY as u64) as usize;
        batch.clear();
        batch.extend(generator.by_ref().take(take));
        let written = write_batch(db, &batch, false).await?;
        summary.read += batch.len() as u64;
        summary.written += written;
        summary.skipped += batch.len() as u64 - written;
        progress.inc(batch.len() as u64);
    }
    progress.finish();
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Imports an ESI ID extract (CSV); existing ESI IDs are updated.
pub async fn import(db: &Db, path: &Path, progress: &ProgressBar) -> anyhow::Result<FillSummary> {
    let started = Instant::now();
    let prefixes = store::market::esi_prefix_rules(db).await?;
    progress.set_length(std::fs::metadata(path)?.len());
    // The CSV reader is synchronous: parse on a blocking thread, write batches from here.
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Vec<_>>(4);
    let file = std::fs::File::open(path)?;
    let bar = progress.clone();
    let reader = tokio::task::spawn_blocking(move || {
        let mut batch = Vec::with_capacity(COMMIT_EVERY);
        let counted = bar.wrap_read(file);
        read_extract(counted, &prefixes, |row| {
            batch.push(row);
            if batch.len() >= COMMIT_EVERY {
                sender
                    .blocking_send(std::mem::take(&mut batch))
                    .map_err(|_| anyhow::anyhow!("import stopped"))?;
            }
            Ok(())
        })?;
        if !batch.is_empty() {
            sender
                .blocking_send(batch)
                .map_err(|_| anyhow::anyhow!("import stopped"))?;
        }
        anyhow::Ok(())
    });
    let mut summary = FillSummary::default();
    while let Some(batch) = receiver.recv().await {
        let mut rows = Vec::with_capacity(batch.len());
        for r in batch {
            summary.read += 1;
            match r {
                Ok(row) => rows.push(row),
                Err(rejected) => {
                    summary.rejected += 1;
                    if summary.rejections.len() < 10 {
                        summary
                            .rejections
                            .push(format!("line {}: {}", rejected.line, rejected.reason));
                    }
                }
            }
        }
        summary.written += write_batch(db, &rows, true).await?;
    }
    reader.await??;
    progress.finish();
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Rebuilds the index from the table and puts it in use.
pub async fn rebuild_index(db: &Db, market: &Adapters) -> anyhow::Result<usize> {
    let started = Instant::now();
    let index = directory::build_from_db(db).await?;
    let entries = index.len();
    tracing::info!(
        entries,
        fst_bytes = index.size_bytes(),
        seconds = started.elapsed().as_secs_f64(),
        "address index built"
    );
    market.set_index(Arc::new(index));
    Ok(entries)
}

/// On start: a fresh install gets the default directory; then the index is built.
pub async fn prepare_directory(
    db: &Db,
    config: &MarketConfig,
    market: &Adapters,
) -> anyhow::Result<()> {
    if config.default_directory_size > 0 && store::market::count_service_addresses(db).await? == 0 {
        let summary = generate(
            db,
            config.default_directory_size,
            config.default_directory_seed,
            &ProgressBar::hidden(),
        )
        .await?;
        tracing::info!(
            addresses = summary.written,
            seconds = summary.seconds,
            "generated the default address directory"
        );
    }
    rebuild_index(db, market).await?;
    Ok(())
}

//! The outside world behind traits, each with a realistic simulator that the sandbox and the
//! tests use: the credit bureau (`credit`), the card processor (`payments`), the utility
//! (`utility`); the service-address directory with its search index
//! (`directory`), the generator of a realistic sandbox directory (`generator`), the import of
//! the utilities' ESI ID extract (`import`) and the filling and indexing of it on start and
//! from the command line (`setup`).

pub mod credit;
pub mod directory;
pub mod generator;
pub mod import;
pub mod payments;
pub mod setup;
pub mod utility;

use std::sync::{Arc, RwLock};

use directory::{AddressIndex, FstIndex};

/// What handlers reach of the outside world: the address index in use (swapped whole on
/// rebuild), and this server's HTTP client of the card processor.
#[derive(Clone)]
pub struct Adapters {
    index: Arc<RwLock<Arc<dyn AddressIndex>>>,
    pub processor_http: reqwest::Client,
}

impl Default for Adapters {
    fn default() -> Self {
        Adapters {
            index: Arc::new(RwLock::new(Arc::new(FstIndex::empty()))),
            processor_http: payments::http_client(),
        }
    }
}

impl Adapters {
    pub fn index(&self) -> Arc<dyn AddressIndex> {
        match self.index.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn set_index(&self, index: Arc<dyn AddressIndex>) {
        match self.index.write() {
            Ok(mut guard) => *guard = index,
            Err(poisoned) => *poisoned.into_inner() = index,
        }
    }
}

//! The outside world behind traits. This issue brings the service-address directory: its
//! search index (`directory`), the generator of a realistic sandbox directory (`generator`)
//! and the import of the utilities' ESI ID extract (`import`).

pub mod directory;
pub mod generator;
pub mod import;
pub mod setup;

use std::sync::{Arc, RwLock};

use directory::{AddressIndex, FstIndex};

/// What handlers reach of the market: the address index in use (swapped whole on rebuild).
#[derive(Clone)]
pub struct Market {
    index: Arc<RwLock<Arc<dyn AddressIndex>>>,
}

impl Default for Market {
    fn default() -> Self {
        Market {
            index: Arc::new(RwLock::new(Arc::new(FstIndex::empty()))),
        }
    }
}

impl Market {
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

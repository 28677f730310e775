//! Current and previous snapshot per provider. Publication swaps in a new immutable state, so a
//! query that pinned the old one keeps reading it, and nothing half-built is ever visible.

use crate::error::{Code, GraphError, Result};
use crate::snapshot::ProviderSnapshot;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

#[derive(Clone, Debug)]
pub struct ProviderSlots {
    pub current: Arc<ProviderSnapshot>,
    pub previous: Option<Arc<ProviderSnapshot>>,
    /// The provider's latest reload failed; `current` is the last good snapshot.
    pub refresh_failed: bool,
    /// For a database provider, the state of its source (`DatabaseRead::identity`) last read
    /// into definitions `current` holds: a reload whose view names it again reads nothing.
    pub source: Option<Arc<serde_json::Value>>,
}

/// Everything a query needs, pinned at its start. Keys are provider IDs in code-unit order.
#[derive(Debug, Default)]
pub struct StoreState {
    pub providers: BTreeMap<String, ProviderSlots>,
}

impl StoreState {
    pub fn snapshots(&self) -> Vec<Arc<ProviderSnapshot>> {
        self.providers
            .values()
            .flat_map(|slots| std::iter::once(&slots.current).chain(&slots.previous))
            .cloned()
            .collect()
    }
}

#[derive(Debug, Default)]
pub struct Store {
    /// `None` once closed.
    state: RwLock<Option<Arc<StoreState>>>,
    /// Reloads are serial.
    reload: Mutex<()>,
}

fn closed() -> GraphError {
    GraphError::new(Code::GraphClosed)
}

impl Store {
    pub fn new(initial: StoreState) -> Store {
        Store {
            state: RwLock::new(Some(Arc::new(initial))),
            reload: Mutex::new(()),
        }
    }

    /// The state a query reads from for its whole run.
    pub fn pin(&self) -> Result<Arc<StoreState>> {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(closed)
    }

    /// Holds the reload lock for the duration of `f`.
    pub fn serialized<T>(&self, f: impl FnOnce() -> T) -> T {
        let _guard = self.reload.lock().unwrap_or_else(|e| e.into_inner());
        f()
    }

    /// Replaces one provider's slots (under the reload lock). Fails only after `close()`.
    pub fn update(
        &self,
        provider_id: &str,
        f: impl FnOnce(&ProviderSlots) -> ProviderSlots,
    ) -> Result<()> {
        let mut guard = self.state.write().unwrap_or_else(|e| e.into_inner());
        let state = guard.as_ref().ok_or_else(closed)?;
        let Some(slots) = state.providers.get(provider_id) else {
            return Err(GraphError::new(Code::ProviderNotFound));
        };
        let mut providers = state.providers.clone();
        providers.insert(provider_id.to_owned(), f(slots));
        *guard = Some(Arc::new(StoreState { providers }));
        Ok(())
    }

    /// Takes the store's state out (for the caller to release where it likes); queries still
    /// running keep their pins until they finish, and a reload still running finds the store
    /// closed when it tries to publish.
    pub fn close(&self) -> Option<Arc<StoreState>> {
        self.state.write().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// The current snapshot of each provider.
    pub fn current_snapshots(&self) -> Vec<Arc<ProviderSnapshot>> {
        self.pin()
            .map(|s| s.providers.values().map(|p| p.current.clone()).collect())
            .unwrap_or_default()
    }

    /// Every snapshot the current state serves: current and previous of each provider.
    pub fn snapshots(&self) -> Vec<Arc<ProviderSnapshot>> {
        self.pin().map(|s| s.snapshots()).unwrap_or_default()
    }

    pub fn is_closed(&self) -> bool {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }
}

//! [`Mutex::lock`] that recovers the guard from a poisoned lock: the snapshot and views are plain
//! data, and a panicked network task must not freeze the window.

use std::sync::{Mutex, MutexGuard, PoisonError};

pub(crate) trait Recover<T> {
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T> Recover<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

//! The confirmation a GitHub write needs: a person answers it on a connected UI client (kind
//! `github_write`), through the confirm flow of [`crate::ui`]. Who may skip it is the caller's
//! rule (REST on loopback does); everyone else comes through here.

use super::GhError;
use crate::ui::{ConfirmRequest, Ui};

/// Asks the person at a UI client whether `requester` may do `what`; refuses when they decline,
/// when nobody can answer, or when nobody answers in time.
pub(crate) async fn confirm_write(ui: &Ui, requester: String, what: String) -> Result<(), GhError> {
    let request =
        ConfirmRequest { title: "GitHub write".into(), message: what.clone(), requester, kind: "github_write" };
    let outcome = ui.confirm(request).await;
    if outcome.confirmed() {
        return Ok(());
    }
    let reason = outcome.reason().unwrap_or("not confirmed");
    Err(GhError::NotConfirmed(format!("{what}: refused, it needs a person's confirmation ({reason})")))
}

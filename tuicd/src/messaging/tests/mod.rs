//! Behaviour tests of the messaging core through its public handle, with a fake [`Liveness`].
//! (`wake.rs`, `mailbox.rs` and `injection.rs` here are the unit tests of those modules.)

mod children_reaper;
mod edge_cases;
mod identities;
mod mail_flow;
mod stress;
mod supervise;
mod support;
mod waits;

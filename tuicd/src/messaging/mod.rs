//! Inter-agent messaging core: identities, inboxes, waits, the delivery lease, orchestrator wake,
//! PTY framing and spawned-children bookkeeping. IO-free: no sockets, no PTYs, no MCP. The MCP
//! `agent` actions (register, list_peers, send, inbox, wait) are thin adapters over [`Messaging`];
//! the PTY, SSE and agent-state layers feed it facts through [`Liveness`] and take deliveries out.
//!
//! # Shape
//! [`Messaging`] is a cheap handle (`Arc` around one std `Mutex`, held for microseconds, never
//! across `.await`). Time comes from an injected [`Clock`] (`SystemClock`, or `ManualClock` in tests).
//! Transports are MCP protocol sessions ([`TransportId`]); identities are `tuic_session` UUIDs.
//!
//! # API (wire names kept from the reference)
//! Identity:
//! - `bind_transport(&transport, tuic_session, &live) -> Result<RegisterOutcome>`: step 0, the
//!   `x-tuic-session` header at initialize. Vacant → bound; live owner → joined as sibling (a second
//!   bridge in one PTY is routable, ownership is not traded); stale owner → reclaimed.
//! - `register(&transport, RegisterRequest { tuic_session, name, project, orchestrator, replaces },
//!   &live) -> Result<RegisterOutcome>`: rename/project/role; headerless callers get a stable
//!   generated UUID per transport; ranking (a live-PTY identity outranks one without: repair moves
//!   unread mail and retires the old identity; wandering off a terminal is refused naming the
//!   identity to use); `replaces=<old>` migrates from an unreachable identity or reports
//!   `mail_stranded` + `identity_warning` for a reachable one. Reports `superseded_identity`,
//!   `mail_migrated`, `mail_stranded`, `identity_warning`, `mail_wake`, `linked_children`.
//! - `list_peers(project, &live) -> Vec<PeerEntry>`; `identity_of(&transport) -> Option<Uuid>`.
//! - `reap_transport(&transport, &live) -> ReapOutcome` and `sweep_unrouted(&live)`: an identity
//!   survives its transport while it owns a live PTY or parents a live session
//!   ([`peer_identity_is_reapable`]); retained ids are logged.
//!
//! Mail:
//! - `send(&sender, to, content, &live) -> Result<SendOutcome>`: `to` is a tuic_session, PTY id or
//!   alias; 64 KB cap; the recipient check, append and wake-owner assignment share the one lock
//!   with retire. `delivery_path` comes from the pure [`delivery::decide`].
//! - `inbox(&reader, InboxQuery { since, limit }) -> Result<InboxPage>`: stored read cursor when
//!   `since` is omitted; explicit `since` overrides without rewinding; `since=0` replays;
//!   `next_since` always; `missed_count` when FIFO eviction took unread mail.
//! - `wait(&waiter, since, timeout_ms).await -> Result<WaitOutcome>`: sleeps on a `Notify`
//!   (subscribe, then check), default 60 s, at/above 300000 ms runs 295000 ms ([`effective_wait`]).
//!
//! Delivery lease: every message has one wake-up owner ([`mailbox::WakeOwner`]): an active waiter,
//! the terminal route (SSE push or PTY injection), the orchestrator wake machine, or none. A wait
//! that times out does its last check and releases the lease in one critical section; a cancelled
//! wait (dropped future) hands unobserved waiter-owned mail back to the terminal route. The
//! delivery task loops on `deliveries_notify()` / `pending_deliveries()` / `take_deliveries(id)`:
//! `payloads` go to the channel push or the recipient's [`injection::InjectionQueue`];
//! `wake_pending` means "call `claim_wake(id)`" (also on every idle/completed transition).
//!
//! Orchestrators: `claim_wake(id, &live) -> Option<WakeNotice>` on idle/completed transitions,
//! `report_wake(id, attempt, WakeResult)`, `busy_to_idle_edge(id)`; the pure machine is
//! [`wake::WakeState`] (payload-free notice, lifecycle summary ≤ 240 chars, 5 s expiry, one retry,
//! budget re-armed by a new busy-to-idle edge).
//!
//! Terminals: [`injection::frame_for_terminal`] and [`injection::InjectionQueue`] (one FIFO with
//! user commands, at most one release per idle transition).
//!
//! Children: `record_spawn(Option<&caller>, child, name) -> SpawnLink`, `child_lifecycle(child, ChildState,
//! &live) -> Option<SendOutcome>`, `parent_of(child)`; a pending parent is linked by its register.
//! [`child_prompt_instruction`] is the parent id and send instruction for the child's prompt.
//!
//! # Decisions beyond the seed
//! - Carry-over (repair, `replaces`) moves only unread mail: mail already observed under the old
//!   identity would otherwise come back from the next `wait` as a duplicate.
//! - `replaces` also leaves mail in place when the old identity still has a live connection, not
//!   only a live PTY: knowing a UUID is not enough to empty a connected peer's inbox.
//! - Framed terminal lines turn every control character (newline, ESC) into a space.
//! - Lock order: the messaging lock is taken first and [`Liveness`] implementations only read
//!   leaf state, so nothing here can deadlock with the session registry.

mod children;
pub(crate) mod clock;
pub(crate) mod delivery;
mod handle;
mod identity;
pub(crate) mod injection;
mod liveness;
mod mail;
pub(crate) mod mailbox;
mod reaper;
pub(crate) mod supervise;
pub(crate) mod types;
pub(crate) mod wait;
pub(crate) mod wake;

pub(crate) use children::{ChildState, SpawnLink, child_prompt_instruction};
pub(crate) use clock::SystemClock;
pub(crate) use delivery::DeliveryPath;
pub(crate) use handle::Messaging;
pub(crate) use liveness::{AgentKind, Lifecycle, Liveness, TerminalFacts, TerminalRef};
pub(crate) use types::{
    AgentMessage, Attach, InboxQuery, MessagingError, RegisterOutcome, RegisterRequest, TransportId, check_peer_name,
};
pub(crate) use wake::WakeResult;

#[cfg(test)]
mod tests;

//! What another layer attaches to every session from outside: the session core calls an
//! [`Attachment`] with each output batch and the screen after it, with the bytes of each write,
//! and at its end, and reads its view of the session's state. The composition root installs the
//! [`AttachFactory`] on the registry; the attached layer reaches its own type back through
//! [`Session::attachment`](super::Session::attachment).

use std::any::Any;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use super::owner::Announcer;

/// The hooks of one session. Each is called from the session's own tasks: keep them short and
/// never wait on a client in them.
pub(crate) trait Attachment: Any + Send + Sync {
    /// One batch the screen follower applied, and the screen after it (called under the screen
    /// lock); `cursor` is the raw output cursor just past `bytes`.
    fn on_output(&self, bytes: &[u8], cursor: u64, screen: &crate::agent::Screen<'_>);
    /// Bytes a writer queued for the child (called under the session's writer lock).
    fn on_input(&self, bytes: &[u8]);
    /// The session is ending: called by the teardown before it announces the exit, so nothing
    /// the attachment announces follows the session's end.
    fn on_end(&self);
    /// The session is a tombstone now; `session-closed` goes out right after.
    fn on_retired(&self, exit_code: Option<i32>);
    /// The attached engine's view of the session now (for `SessionInfo.state` and `shell_state`).
    fn status(&self) -> crate::agent::AgentStatus;
}

/// What a new session tells the factory about itself.
pub(crate) struct AttachContext<'a> {
    pub session_id: &'a str,
    pub tuic_session: &'a str,
    pub agent_type: Option<&'a str>,
    /// The program the session runs.
    pub program: &'a str,
    /// The child's process id.
    pub child: Option<u32>,
    /// A duplicate of the PTY master, for the attachment to keep or drop.
    pub pty: Option<OwnedFd>,
    /// Sends events on the session's broadcasts (after every output chunk already sent).
    pub announcer: Announcer,
}

/// Builds the attachment of each new session.
pub(crate) type AttachFactory = Arc<dyn Fn(AttachContext<'_>) -> Arc<dyn Attachment> + Send + Sync>;

impl dyn Attachment {
    /// The attachment as its concrete type, when it is one.
    pub(crate) fn downcast_ref<T: Attachment>(&self) -> Option<&T> {
        (self as &dyn Any).downcast_ref()
    }
}

//! One run of the agent process: its pipes, the requests in flight, and the reader that journals
//! every line the agent writes. A connection's generation ends when the process does; the next
//! one (`reconnect`) is a new process with its own ids.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};

use super::AcpError;
use crate::child_stderr::Tail;
use crate::jsonl::{Line, Outgoing, leading_id, line_of, read_line_bounded, write_loop};
use crate::limits::{ACP_MESSAGE_MAX_BYTES, ACP_WRITE_QUEUE};
use crate::lock::Recover;

pub(super) type Answer = Result<Value, AcpError>;
/// Where the reader hands each line, on its own task, in the order the agent wrote them.
pub(super) type Sink = Arc<dyn Fn(Incoming) + Send + Sync>;
type Pending = Mutex<HashMap<u64, oneshot::Sender<Answer>>>;

/// What to start: the command is read from the settings at each launch, never from a request.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Where the agent's stderr is kept (rotated), if anywhere.
    pub stderr_log: Option<PathBuf>,
}

impl Launch {
    pub(crate) fn command_line(&self) -> Vec<String> {
        std::iter::once(self.program.clone()).chain(self.args.iter().cloned()).collect()
    }
}

#[derive(Debug)]
pub(super) struct Generation {
    pub number: u64,
    pub pid: Option<u32>,
    writer: mpsc::Sender<Outgoing>,
    pending: Pending,
    next_id: AtomicU64,
    pgid: Option<rustix::process::Pid>,
    pub tail: Arc<Tail>,
    /// Set by `kill` so the exit is reported as killed rather than as a signal.
    pub killed: AtomicBool,
}

/// What the reader hands the connection.
#[derive(Debug)]
pub(super) enum Incoming {
    /// A JSON-RPC message: a notification, a request of the agent's, or a response to a request of
    /// tuicd's not waited for here (those resolve their waiter, and come too, for the journal).
    Message(Value),
    /// A line that is not a JSON-RPC object, or is over the size bound.
    Invalid { reason: String, bytes: usize, head: String },
}

impl Generation {
    /// Starts the process. `sink` gets every line it writes (before a waiting request sees its
    /// answer); when its stdout closes, the returned `ended` resolves with its exit described.
    pub(super) fn spawn(
        number: u64,
        launch: &Launch,
        sink: Sink,
    ) -> Result<(Arc<Self>, oneshot::Receiver<String>), AcpError> {
        let mut cmd = Command::new(&launch.program);
        cmd.args(&launch.args)
            .current_dir(&launch.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| {
            AcpError::Launch(format!("cannot start the ACP agent {:?} (ego_executable): {e}", launch.program))
        })?;
        let pid = child.id();
        let pgid = pid.and_then(|id| rustix::process::Pid::from_raw(id as i32));
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(AcpError::Launch("the agent's pipes were not created".into()));
        };
        let (writer, outgoing) = mpsc::channel(ACP_WRITE_QUEUE);
        let tail = Arc::new(Tail::default());
        let generation = Arc::new(Self {
            number,
            pid,
            writer,
            pending: Mutex::default(),
            next_id: AtomicU64::new(1),
            pgid,
            tail: tail.clone(),
            killed: AtomicBool::new(false),
        });
        tokio::spawn(write_loop(stdin, outgoing));
        let name = format!("acp generation {number}");
        tokio::spawn(crate::child_stderr::stderr_loop("acp", name, stderr, launch.stderr_log.clone(), tail));
        let (ended_tx, ended) = oneshot::channel();
        tokio::spawn({
            let generation = generation.clone();
            async move {
                generation.read_loop(BufReader::new(stdout), &sink).await;
                let exit = generation.reap(child).await;
                let _ = ended_tx.send(exit);
            }
        });
        Ok((generation, ended))
    }

    /// Reads stdout until it closes. The agent waits on its own full pipe while `sink` works, so
    /// a flood is paced by the daemon rather than queued in it.
    async fn read_loop(&self, mut stdout: BufReader<tokio::process::ChildStdout>, sink: &Sink) {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line_bounded(&mut stdout, &mut buf, ACP_MESSAGE_MAX_BYTES).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong(total)) => {
                    let id = leading_id(&buf);
                    sink(Incoming::Invalid {
                        reason: format!("over the size limit of {ACP_MESSAGE_MAX_BYTES} bytes"),
                        bytes: total,
                        head: head_of(&buf),
                    });
                    if let Some(tx) = id.and_then(|id| self.pending.locked().remove(&id)) {
                        let _ = tx.send(Err(AcpError::Protocol(format!(
                            "the agent answered with a message of {total} bytes, over the limit of {ACP_MESSAGE_MAX_BYTES}"
                        ))));
                    }
                }
                Ok(Line::Complete) => self.dispatch(&buf, sink),
            }
        }
        let waiting: Vec<_> = self.pending.locked().drain().collect();
        for (_, tx) in waiting {
            let _ = tx.send(Err(AcpError::Closed("the agent exited before answering".into())));
        }
    }

    fn dispatch(&self, line: &[u8], sink: &Sink) {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let message = match serde_json::from_slice::<Value>(text) {
            Ok(message @ Value::Object(_)) if message.get("jsonrpc").and_then(Value::as_str) == Some("2.0") => message,
            Ok(_) => {
                let reason = "not a JSON-RPC 2.0 object".to_owned();
                sink(Incoming::Invalid { reason, bytes: text.len(), head: head_of(text) });
                return;
            }
            Err(e) => {
                let reason = format!("not JSON: {e}");
                sink(Incoming::Invalid { reason, bytes: text.len(), head: head_of(text) });
                return;
            }
        };
        // A response to a request of tuicd's: journaled first, then handed to its waiter, so the
        // waiter finds it in the journal.
        let answer_to = match (message.get("id"), message.get("method")) {
            (Some(id), None) => id.as_u64(),
            _ => None,
        };
        let waiter = answer_to.and_then(|id| self.pending.locked().remove(&id));
        let answer = waiter.as_ref().map(|_| answer_of(&message));
        sink(Incoming::Message(message));
        if let (Some(tx), Some(answer)) = (waiter, answer) {
            let _ = tx.send(answer);
        }
    }

    /// Waits for the process to exit (its stdout has closed) and names how it ended. A process
    /// that closed stdout but lives on is killed after a grace.
    async fn reap(&self, mut child: Child) -> String {
        let status = match tokio::time::timeout(crate::limits::ACP_EXIT_GRACE, child.wait()).await {
            Ok(status) => status.ok(),
            Err(_) => {
                self.kill_group();
                let _ = child.start_kill();
                child.wait().await.ok()
            }
        };
        // Whatever the agent started in its group goes with it.
        self.kill_group();
        if self.killed.load(Ordering::Relaxed) {
            return "killed".into();
        }
        let words = self.tail.text(crate::limits::UPSTREAM_STDERR_CLOSE_WAIT).await;
        let how = match status {
            Some(status) => match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
                (Some(code), _) => format!("exited with code {code}"),
                (None, Some(signal)) => format!("ended by signal {signal}"),
                _ => "exited".into(),
            },
            None => "exited (its status could not be read)".into(),
        };
        match words {
            Some(words) if !how.ends_with("code 0") => format!("{how}; its last words: {words}"),
            _ => how,
        }
    }

    /// Sends a request and waits up to `timeout` for its answer. `before_send` runs with the
    /// request's id and message before it is written (the connection journals it there, so
    /// the journal shows a request before any answer to it).
    pub(super) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
        before_send: impl FnOnce(u64, &Value),
    ) -> Answer {
        let (id, rx) = self.send_request(method, params, before_send).await?;
        let answer = match timeout {
            Some(limit) => match tokio::time::timeout(limit, rx).await {
                Ok(answer) => answer,
                Err(_) => {
                    self.pending.locked().remove(&id);
                    return Err(AcpError::Timeout(format!(
                        "the agent did not answer {method} within {} s",
                        limit.as_secs()
                    )));
                }
            },
            None => rx.await,
        };
        answer.unwrap_or_else(|_| Err(AcpError::Closed(format!("the agent exited before answering {method}"))))
    }

    /// Writes a request and returns its id and the receiver of its answer.
    pub(super) async fn send_request(
        &self,
        method: &str,
        params: Value,
        before_send: impl FnOnce(u64, &Value),
    ) -> Result<(u64, oneshot::Receiver<Answer>), AcpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.locked().insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        before_send(id, &message);
        if self.writer.send(Outgoing::Line(line_of(&message))).await.is_err() {
            self.pending.locked().remove(&id);
            return Err(AcpError::Closed("the agent is not running".into()));
        }
        Ok((id, rx))
    }

    /// Writes a notification or a response (never waits on a full queue: an agent that stops
    /// reading its stdin has its answers dropped, and says so by never going on).
    pub(super) fn send(&self, message: &Value) -> Result<(), AcpError> {
        self.writer.try_send(Outgoing::Line(line_of(message))).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => {
                AcpError::Closed("the agent is not reading its stdin (its queue is full)".into())
            }
            mpsc::error::TrySendError::Closed(_) => AcpError::Closed("the agent is not running".into()),
        })
    }

    /// Closes the agent's stdin.
    pub(super) fn close_stdin(&self) {
        let _ = self.writer.try_send(Outgoing::Close);
    }

    pub(super) fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
        self.kill_group();
    }

    fn kill_group(&self) {
        if let Some(pgid) = self.pgid {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for Generation {
    fn drop(&mut self) {
        // The agent's own children (node → claude) share its group; kill_on_drop reaches only it.
        self.kill_group();
    }
}

/// A JSON-RPC response as its waiter sees it: its `result`, or its error.
fn answer_of(message: &Value) -> Answer {
    if let Some(error) = message.get("error") {
        return Err(AcpError::Rpc {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
            message: error.get("message").and_then(Value::as_str).unwrap_or("(no message)").to_owned(),
            data: error.get("data").cloned(),
        });
    }
    match message.get("result") {
        Some(result) => Ok(result.clone()),
        None => Err(AcpError::Protocol("a response with neither result nor error".into())),
    }
}

fn head_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned()
}

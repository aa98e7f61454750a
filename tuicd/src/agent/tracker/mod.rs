//! [`AgentTracker`]: the per-session state machine. It folds output bytes, screens, input bytes
//! and clock ticks into `shell_state` / `agent_state` and returns what changed as events.
//!
//! Sources, strongest first: OSC 7770 hook states (a hook `busy` is never overridden by
//! silence), the CLI's own announcements (OSC 7501, its window title read through the adapter),
//! OSC 133 prompt/command markers (plain shells), the adapter's screen reading (question >
//! working > a ready composer that stays stable), output movement, and silence.
//!
//! A hook state or an announcement speaks for the turn it was said in: once a line is submitted
//! (a new turn epoch), an idle said before it proves nothing, and the weaker sources decide until
//! the agent says something new.

mod apply;
mod completion;
mod readiness;

use std::time::Instant;

use super::adapters::Adapter;
use super::event::{AgentEvent, AgentState, AgentStatus, ChoicePrompt, ComposerState, Intent, ShellState};
use super::input_line::InputLineBuffer;
use super::markers::{Announced, HookState, MarkerParser};
use super::screen::{self, Screen, Verdict};
use crate::limits::{AGENT_IDLE, AGENT_READY_CONFIRM, AGENT_UNRECOGNISED, INPUT_ECHO_WINDOW, SHELL_IDLE};
use completion::Completion;
pub(crate) use readiness::Readiness;

/// Recent intent texts; a screen still showing an older intent line must not bring it back.
const INTENT_HISTORY: usize = 8;

/// Why a submit must not write now (checked before the first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubmitRefusal {
    /// A confident question or approval is open.
    AwaitingInput,
    /// The last rows look like a question, but not confidently enough to report `awaiting_input`.
    QuestionSuspected,
    /// The agent is working or starting.
    Busy,
    /// Idle by silence only: no marker or stable ready prompt proves it.
    Unconfirmed,
    /// Someone has typed into the composer.
    ComposerNotEmpty(ComposerState),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum QuestionSource {
    Hook,
    Screen,
    /// The CLI announced it is blocked on the person (OSC 7501, its title).
    Announced,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct OpenQuestion {
    prompt_text: String,
    choice: Option<ChoicePrompt>,
    source: QuestionSource,
}

/// One per session. See the module docs of [`crate::agent`] for the calling contract.
#[derive(Debug)]
pub(crate) struct AgentTracker {
    adapter: Option<&'static Adapter>,
    markers: MarkerParser,
    input: InputLineBuffer,
    turn_epoch: u64,
    /// The latest hook state and the turn epoch it was said in.
    hook: Option<(HookState, u64)>,
    /// The CLI's latest announcement and the turn epoch it was said in.
    announced: Option<(Announced, u64)>,
    /// A dialog was answered since the latest announcement: an idle said while the dialog was up
    /// (Claude Code's title stays idle under its permission dialog) is not the idle after it.
    answered_since_announced: bool,
    /// The turn epoch in which the agent was last seen starting work.
    started_epoch: Option<u64>,
    /// The composer's text as the screen last showed it, and when.
    screen_composer: Option<(String, Instant)>,
    last_input: Option<Instant>,
    /// The first output of the current agent, and whether anything it showed or said was
    /// recognised since (see [`AgentState::Unknown`]).
    first_output: Option<Instant>,
    recognised: bool,
    /// The program exited (`Some`), with its code once known.
    exit: Option<Option<i32>>,
    /// Spawned with an initial prompt whose turn (opened at or after this epoch: 0 for a prompt
    /// in argv, 1 for one typed in once the CLI is ready) has not been seen starting yet.
    first_turn_pending: Option<u64>,
    /// OSC 133 state, for sessions without an agent.
    shell_integration: Option<ShellState>,
    last_output: Option<Instant>,
    last_key: Option<Instant>,
    /// Screens arrive: movement comes from screen diffs, not raw bytes.
    screens_seen: bool,
    /// The non-chrome rows of the last screen.
    content_rows: Vec<String>,
    verdict: Verdict,
    ready_since: Option<Instant>,
    question: Option<OpenQuestion>,
    /// A row on the last lines that looks like a question no confident form matched.
    suspected_question: Option<String>,
    completion: Completion,
    intent: Option<Intent>,
    intent_history: Vec<String>,
    progress: Option<u8>,
    last_exit_code: Option<i32>,
    background_work: bool,
    shell: Option<ShellState>,
    readiness: Readiness,
    agent_state: Option<AgentState>,
}

impl AgentTracker {
    /// A tracker for a session running `adapter`'s agent (it starts in `starting`), or a plain
    /// shell (`None`: no `agent_state`, only `shell_state`, markers and intent).
    pub(crate) fn new(adapter: Option<&'static Adapter>) -> Self {
        Self {
            adapter,
            markers: MarkerParser::new(),
            input: InputLineBuffer::new(),
            turn_epoch: 0,
            hook: None,
            announced: None,
            answered_since_announced: false,
            started_epoch: None,
            screen_composer: None,
            last_input: None,
            first_turn_pending: None,
            first_output: None,
            recognised: false,
            exit: None,
            shell_integration: None,
            last_output: None,
            last_key: None,
            screens_seen: false,
            content_rows: Vec::new(),
            verdict: Verdict::Unknown,
            ready_since: None,
            question: None,
            suspected_question: None,
            completion: Completion::default(),
            intent: None,
            intent_history: Vec::new(),
            progress: None,
            last_exit_code: None,
            background_work: false,
            shell: None,
            readiness: Readiness::Unconfirmed,
            agent_state: adapter.map(|_| AgentState::Starting),
        }
    }

    pub(crate) fn adapter(&self) -> Option<&'static Adapter> {
        self.adapter
    }

    /// The foreground process changed to another agent (or back to the shell, `None`). What was
    /// read through the old adapter is dropped; the new agent starts in `starting`. Leaving an
    /// agent publishes no event (there is no `agent_state` to publish): read [`Self::snapshot`].
    pub(crate) fn set_adapter(&mut self, adapter: Option<&'static Adapter>, now: Instant) -> Vec<AgentEvent> {
        if adapter.map(|a| a.id) == self.adapter.map(|a| a.id) {
            return Vec::new();
        }
        self.adapter = adapter;
        self.hook = None;
        self.announced = None;
        self.screen_composer = None;
        self.first_output = None;
        self.recognised = false;
        self.verdict = Verdict::Unknown;
        self.ready_since = None;
        self.content_rows.clear();
        self.question = None;
        self.suspected_question = None;
        self.agent_state = adapter.map(|_| AgentState::Starting);
        let mut events = Vec::new();
        self.settle(now, &mut events);
        events
    }

    /// Raw bytes the child wrote, in order, as they were read.
    pub(crate) fn on_output(&mut self, bytes: &[u8], now: Instant) -> Vec<AgentEvent> {
        self.first_output.get_or_insert(now);
        let mut found = Vec::new();
        let stats = self.markers.feed(bytes, &mut found);
        let mut events = Vec::new();
        for marker in found {
            self.apply_marker(marker, &mut events);
        }
        if stats.printable > 0 && !self.screens_seen {
            self.moved(now);
        }
        self.settle(now, &mut events);
        events
    }

    /// The screen after the latest output was applied to the terminal model.
    pub(crate) fn on_screen(&mut self, screen: &Screen<'_>, now: Instant) -> Vec<AgentEvent> {
        self.screens_seen = true;
        let mut events = Vec::new();
        let content: Vec<String> = match self.adapter {
            Some(adapter) => screen.rows.iter().filter(|row| !screen::is_chrome(adapter, row)).cloned().collect(),
            None => screen.rows.iter().map(|row| row.trim_end().to_owned()).collect(),
        };
        if content != self.content_rows {
            self.content_rows = content;
            self.moved(now);
        }
        let found = screen::markers(screen.rows);
        if let Some(items) = self.completion.on_screen_markers(found.suggests, self.turn_epoch) {
            events.push(AgentEvent::Suggest { items });
        }
        if let Some(intent) = found.intent.filter(|i| !self.intent_history.contains(&i.text)) {
            self.set_intent(intent, &mut events);
        }
        if let Some(adapter) = self.adapter {
            self.read_screen(adapter, screen, now, &mut events);
        }
        self.settle(now, &mut events);
        events
    }

    /// Bytes any writer sent to the PTY. A submitted non-empty line opens a new turn. While a
    /// dialog is on screen the keys answer it and never reach the composer.
    pub(crate) fn on_input(&mut self, bytes: &[u8], now: Instant) -> Vec<AgentEvent> {
        let mut events = Vec::new();
        self.last_input = Some(now);
        let source = self.question.as_ref().map(|q| q.source.clone());
        if source == Some(QuestionSource::Hook) {
            self.question = None;
        }
        let answers_dialog = matches!(source, Some(QuestionSource::Screen | QuestionSource::Announced));
        self.answered_since_announced |= source.is_some();
        let submitted = if answers_dialog { Vec::new() } else { self.input.feed(bytes) };
        self.last_key = if submitted.is_empty() { Some(now) } else { None };
        for line in submitted {
            self.open_turn(now);
            events.push(AgentEvent::UserInput { chars: line.content.chars().count(), turn_epoch: self.turn_epoch });
        }
        self.settle(now, &mut events);
        events
    }

    /// Advances the silence timers; call every [`crate::limits::AGENT_TICK_INTERVAL`].
    pub(crate) fn tick(&mut self, now: Instant) -> Vec<AgentEvent> {
        let mut events = Vec::new();
        self.settle(now, &mut events);
        events
    }

    /// The result of the latest descendant-process probe (see [`super::background`]).
    pub(crate) fn set_background_work(&mut self, alive: bool, now: Instant) -> Vec<AgentEvent> {
        self.background_work = alive;
        let mut events = Vec::new();
        self.settle(now, &mut events);
        events
    }

    pub(crate) fn turn_epoch(&self) -> u64 {
        self.turn_epoch
    }

    /// The composer: what the screen shows when it was read after the latest keystroke echoed,
    /// else what the writers typed (text the screen shows counts either way: a CLI puts a
    /// cancelled prompt back after Ctrl-C, and a dropped Enter leaves the text in place).
    pub(crate) fn composer_state(&self) -> ComposerState {
        let typed = self.input.state();
        match &self.screen_composer {
            Some((text, _)) if !text.is_empty() => ComposerState::Partial,
            Some((_, at))
                if self.last_input.is_none_or(|key| at.saturating_duration_since(key) >= INPUT_ECHO_WINDOW) =>
            {
                ComposerState::Empty
            }
            _ => typed,
        }
    }

    /// The composer's text as the screen shows it, when the adapter can read it.
    pub(crate) fn screen_composer_text(&self) -> Option<&str> {
        self.screen_composer.as_ref().map(|(text, _)| text.as_str())
    }

    /// Whether the agent was seen starting work (an announcement, a hook, a working screen)
    /// since the latest submitted line opened the current turn.
    pub(crate) fn turn_started(&self) -> bool {
        self.started_epoch == Some(self.turn_epoch)
    }

    /// The program ended. One that never showed anything its adapter recognises is `unknown`
    /// (it crashed at start, or is not the CLI the adapter knows), never `starting` forever.
    pub(crate) fn on_exit(&mut self, exit_code: Option<i32>, now: Instant) {
        self.exit = Some(exit_code.or(self.exit.flatten()));
        self.settle(now, &mut Vec::new());
    }

    /// The agent was spawned with an initial prompt: a waiter for idle waits for that turn to
    /// start and end, not for the ready prompt the CLI shows before it (see [`Self::first_turn_pending`]).
    pub(crate) fn expect_first_turn(&mut self, typed: bool) {
        self.first_turn_pending = Some(u64::from(typed));
    }

    /// The initial prompt's turn has not been seen starting (cleared by any start, or by
    /// [`Self::give_up_first_turn`] when the prompt was never delivered).
    pub(crate) fn first_turn_pending(&self) -> bool {
        self.first_turn_pending.is_some()
    }

    pub(crate) fn give_up_first_turn(&mut self) {
        self.first_turn_pending = None;
    }

    /// The latest submitted line never reached the agent (its Enter was dropped): what the agent
    /// said before it speaks for now again, and the typed composer is what the screen shows.
    pub(crate) fn abandon_turn(&mut self, now: Instant) -> Vec<AgentEvent> {
        let epoch = self.turn_epoch;
        if let Some((_, said)) = &mut self.hook {
            *said = epoch;
        }
        if let Some((_, said)) = &mut self.announced {
            *said = epoch;
        }
        let mut events = Vec::new();
        self.settle(now, &mut events);
        events
    }

    /// The one definition of a confirmed idle (see [`Readiness`]).
    pub(crate) fn readiness(&self) -> Readiness {
        self.readiness
    }

    /// Whether `session action=submit` (and so typed delivery) may write now: a confirmed idle
    /// with an empty composer.
    pub(crate) fn check_submit(&self) -> Result<(), SubmitRefusal> {
        match self.readiness {
            Readiness::ConfirmedIdle => {}
            Readiness::Question { confident: true } => return Err(SubmitRefusal::AwaitingInput),
            Readiness::Question { confident: false } => return Err(SubmitRefusal::QuestionSuspected),
            Readiness::Busy => return Err(SubmitRefusal::Busy),
            Readiness::Unconfirmed => return Err(SubmitRefusal::Unconfirmed),
        }
        match self.composer_state() {
            ComposerState::Empty => Ok(()),
            other => Err(SubmitRefusal::ComposerNotEmpty(other)),
        }
    }

    /// The canonical agent state alone (cheaper than [`Self::snapshot`]).
    pub(crate) fn snapshot_state(&self) -> Option<AgentState> {
        self.agent_state
    }

    pub(crate) fn snapshot(&self) -> AgentStatus {
        let question = self.question.as_ref();
        let suspected = self.suspected_question.as_ref().filter(|_| question.is_none());
        AgentStatus {
            agent_type: self.adapter.map(|a| a.id),
            shell_state: self.shell,
            agent_state: self.agent_state,
            awaiting_input: question.is_some(),
            question_text: question
                .map(|q| q.prompt_text.clone())
                .or_else(|| suspected.cloned())
                .filter(|t| !t.is_empty()),
            question_confident: question.is_some(),
            choice_prompt: question.and_then(|q| q.choice.clone()),
            background_work: self.background_work,
            idle_confirmed: self.readiness == Readiness::ConfirmedIdle,
            turn_epoch: self.turn_epoch,
            agent_intent: self.intent.as_ref().map(|i| i.text.clone()),
            intent_title: self.intent.as_ref().and_then(|i| i.title.clone()),
            suggested_actions: self.completion.suggestions(self.turn_epoch).map(<[String]>::to_vec),
            progress: self.progress,
            last_exit_code: self.last_exit_code,
            composer_state: self.composer_state(),
            state_reason: (self.agent_state == Some(AgentState::Unknown)).then(|| {
                let name = self.adapter.map_or("the agent", |a| a.name);
                match self.exit {
                    Some(code) => format!(
                        "{name} exited{} before it showed anything tuicd recognises (a crash at start, or not the CLI its adapter knows)",
                        code.map(|c| format!(" with code {c}")).unwrap_or_default()
                    ),
                    None => format!(
                        "nothing {name} shows or announces matches a known screen (ready prompt, working indicator, dialog) after {} s; its version may be newer than tuicd's rules",
                        AGENT_UNRECOGNISED.as_secs()
                    ),
                }
            }),
        }
    }

    /// A submitted line starts work: until the agent shows a ready prompt again (stable) or
    /// falls silent, it is working, so a wait for idle right after a submit does not return on
    /// the prompt that was on screen before the Enter.
    fn open_turn(&mut self, now: Instant) {
        self.turn_epoch += 1;
        self.last_output = Some(now);
        self.ready_since = None;
        self.completion.begin_turn();
        if self.question.as_ref().is_some_and(|q| q.source == QuestionSource::Hook) {
            self.question = None;
        }
    }

    fn moved(&mut self, now: Instant) {
        let echo = self.last_key.is_some_and(|key| now.saturating_duration_since(key) < INPUT_ECHO_WINDOW);
        if echo && self.shell != Some(ShellState::Busy) {
            return;
        }
        self.last_output = Some(now);
        self.ready_since = None;
    }

    /// `shell_state`, and whether an idle is confirmed rather than inferred from silence.
    fn derive_shell(&self, now: Instant) -> (Option<ShellState>, bool) {
        if let Some((hook, said)) = self.hook
            && said == self.turn_epoch
        {
            return match hook {
                HookState::Busy => (Some(ShellState::Busy), false),
                HookState::Idle | HookState::Awaiting => (Some(ShellState::Idle), true),
            };
        }
        if let Some(announced) = self.fresh_announcement() {
            return match announced {
                Announced::Working => (Some(ShellState::Busy), false),
                // A working indicator still on screen wins over an announced idle: Claude Code's
                // title turns idle a frame before it draws a permission dialog, mid-turn.
                Announced::Idle if self.verdict == Verdict::Working => (Some(ShellState::Busy), false),
                Announced::Idle | Announced::Blocked => (Some(ShellState::Idle), true),
            };
        }
        if self.adapter.is_none()
            && let Some(state) = self.shell_integration
        {
            return (Some(state), state == ShellState::Idle);
        }
        if self.adapter.is_some() {
            match self.verdict {
                Verdict::Working => return (Some(ShellState::Busy), false),
                Verdict::Question(_) => return (Some(ShellState::Idle), true),
                Verdict::Ready
                    if self.ready_since.is_some_and(|t| now.saturating_duration_since(t) >= AGENT_READY_CONFIRM) =>
                {
                    return (Some(ShellState::Idle), true);
                }
                _ => {}
            }
        }
        let quiet_after = if self.adapter.is_some() { AGENT_IDLE } else { SHELL_IDLE };
        match self.last_output {
            None => (self.shell, false),
            Some(at) if now.saturating_duration_since(at) < quiet_after => (Some(ShellState::Busy), false),
            Some(_) => (Some(ShellState::Idle), false),
        }
    }

    fn derive_agent(&self, shell: Option<ShellState>) -> Option<AgentState> {
        self.adapter?;
        Some(if self.question.is_some() {
            AgentState::AwaitingInput
        } else if self.background_work {
            AgentState::Working
        } else if self.completion.is_completed(self.turn_epoch) {
            AgentState::Completed
        } else {
            match shell {
                Some(ShellState::Busy) => AgentState::Working,
                Some(ShellState::Idle) => AgentState::Idle,
                None => AgentState::Starting,
            }
        })
    }

    /// The CLI's announcement, when it was said in the current turn.
    fn fresh_announcement(&self) -> Option<Announced> {
        self.announced
            .filter(|(announced, said)| {
                *said == self.turn_epoch && !(self.answered_since_announced && *announced == Announced::Idle)
            })
            .map(|(announced, _)| announced)
    }

    fn settle(&mut self, now: Instant, events: &mut Vec<AgentEvent>) {
        self.reconcile_announced_question(events);
        if self.turn_started() && self.first_turn_pending.is_some_and(|from| self.turn_epoch >= from) {
            self.first_turn_pending = None;
        }
        let (mut shell, proven) = self.derive_shell(now);
        if self.adapter.is_some() && self.completion.is_completed(self.turn_epoch) && !self.background_work {
            shell = Some(ShellState::Idle);
        }
        if shell != self.shell {
            self.shell = shell;
            if let Some(state) = shell {
                events.push(AgentEvent::ShellState { state, agent_type: self.adapter.map(|a| a.id) });
            }
        }
        let unrecognised = !self.recognised
            && self.question.is_none()
            && (self.exit.is_some()
                || self.first_output.is_some_and(|at| now.saturating_duration_since(at) >= AGENT_UNRECOGNISED));
        let agent_state =
            if unrecognised && self.adapter.is_some() { Some(AgentState::Unknown) } else { self.derive_agent(shell) };
        self.readiness = self.derive_readiness(shell, agent_state, proven);
        if agent_state != self.agent_state {
            self.agent_state = agent_state;
            if let Some(state) = agent_state {
                events.push(AgentEvent::AgentState {
                    state,
                    turn_epoch: self.turn_epoch,
                    background_work: self.background_work,
                });
            }
        }
    }
}

#[cfg(test)]
mod scenarios;
#[cfg(test)]
mod tests;

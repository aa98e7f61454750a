use std::time::{Duration, Instant};

use super::*;
use crate::agent::adapters::by_id;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn rows(text: &[&str]) -> Vec<String> {
    text.iter().map(|r| r.to_string()).collect()
}

fn show(tracker: &mut AgentTracker, lines: &[&str], now: Instant) -> Vec<AgentEvent> {
    let rows = rows(lines);
    let cursor = (lines.len().saturating_sub(1) as u16, 2);
    tracker.on_screen(&Screen { rows: &rows, cursor, alternate: false }, now)
}

fn agent_states(events: &[AgentEvent]) -> Vec<AgentState> {
    events
        .iter()
        .filter_map(|e| if let AgentEvent::AgentState { state, .. } = e { Some(*state) } else { None })
        .collect()
}

const CLAUDE_WORKING: &[&str] =
    &["⏺ Reading the code", "", "✢ Reading files… (3s · esc to interrupt)", "", "> ", "  ? for shortcuts"];
const CLAUDE_DONE: &[&str] =
    &["⏺ Fixed the bug.", "⏺ suggest: [ Run the tests | Open a PR ]", "", "> ", "  ? for shortcuts"];
const CLAUDE_READY: &[&str] = &["⏺ Fixed the bug.", "", "> ", "  ? for shortcuts"];

#[test]
fn shell_state_is_omitted_until_the_first_observation() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    assert!(tracker.tick(t0 + ms(10_000)).is_empty());
    assert!(tracker.on_output(b"\x1b[?25l", t0 + ms(10_001)).is_empty(), "no printable output yet");
    let status = tracker.snapshot();
    assert_eq!((status.shell_state, status.agent_state), (None, Some(AgentState::Starting)));
    let events = tracker.on_output(b"Welcome to Claude Code", t0 + ms(10_002));
    assert_eq!(agent_states(&events), vec![AgentState::Working]);
}

#[test]
fn a_working_spinner_stays_working_through_any_silence() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    let events = show(&mut tracker, CLAUDE_WORKING, t0);
    assert!(events.contains(&AgentEvent::ShellState { state: ShellState::Busy, agent_type: Some("claude") }));
    assert_eq!(agent_states(&events), vec![AgentState::Working]);
    assert!(tracker.tick(t0 + ms(60_000)).is_empty());
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Working));
}

#[test]
fn a_ready_prompt_confirms_idle_only_after_it_stays_stable() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    show(&mut tracker, CLAUDE_WORKING, t0);
    show(&mut tracker, CLAUDE_READY, t0 + ms(100));
    tracker.tick(t0 + ms(1000));
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Working), "moved 0.9 s ago");
    assert_eq!(tracker.check_submit(), Err(SubmitRefusal::Busy));
    let events = tracker.tick(t0 + ms(100) + AGENT_READY_CONFIRM);
    assert_eq!(agent_states(&events), vec![AgentState::Idle]);
    assert!(tracker.snapshot().idle_confirmed);
    assert_eq!(tracker.check_submit(), Ok(()));
}

#[test]
fn silence_without_a_ready_prompt_is_idle_but_not_confirmed() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    show(&mut tracker, &["Some output", "more output"], t0);
    tracker.tick(t0 + AGENT_IDLE);
    let status = tracker.snapshot();
    assert_eq!(status.agent_state, Some(AgentState::Idle));
    assert!(!status.idle_confirmed);
    assert_eq!(tracker.check_submit(), Err(SubmitRefusal::Unconfirmed));
}

#[test]
fn only_the_end_of_task_marker_completes_and_a_stale_one_never_completes_the_next_turn() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    show(&mut tracker, CLAUDE_WORKING, t0);
    let events = show(&mut tracker, CLAUDE_DONE, t0 + ms(100));
    assert!(events.contains(&AgentEvent::Suggest { items: vec!["Run the tests".into(), "Open a PR".into()] }));
    assert_eq!(agent_states(&events), vec![AgentState::Completed]);
    assert_eq!(tracker.snapshot().suggested_actions.unwrap().len(), 2);

    let events = tracker.on_input(b"now add docs\r", t0 + ms(5000));
    assert!(events.contains(&AgentEvent::UserInput { chars: "now add docs".len(), turn_epoch: 1 }));
    assert_eq!(agent_states(&events), vec![AgentState::Working], "a submitted line starts work at once");
    assert_eq!(tracker.check_submit(), Err(SubmitRefusal::Busy));
    // The old marker is still on screen, and the agent has not started yet.
    show(&mut tracker, &[CLAUDE_DONE, &["> now add docs"]].concat(), t0 + ms(5050));
    tracker.tick(t0 + ms(20_000));
    let status = tracker.snapshot();
    assert_eq!(status.turn_epoch, 1);
    assert_ne!(status.agent_state, Some(AgentState::Completed));
    assert_eq!(status.suggested_actions, None);
}

#[test]
fn a_quiet_ready_prompt_without_the_marker_stays_idle() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    show(&mut tracker, CLAUDE_READY, t0);
    tracker.tick(t0 + ms(600_000));
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Idle));
}

#[test]
fn a_stream_marker_completes_the_turn_it_arrived_in() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("aider"));
    tracker.on_input(b"fix it\r", t0);
    tracker.on_output(b"Applied edit to app.py\r\n", t0 + ms(10));
    let events = tracker.on_output(b"suggest: [ Run tests | Commit ]\r\n", t0 + ms(20));
    assert_eq!(agent_states(&events), vec![AgentState::Completed]);
    assert_eq!(tracker.snapshot().turn_epoch, 1);
}

#[test]
fn a_numbered_dialog_sets_awaiting_input_until_it_is_gone() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    show(&mut tracker, CLAUDE_WORKING, t0);
    let dialog = [
        " Bash command",
        "   cargo test",
        " Do you want to proceed?",
        " ❯ 1. Yes",
        "   2. No, and tell Claude what to do differently (esc)",
    ];
    let events = show(&mut tracker, &dialog, t0 + ms(50));
    assert!(events.contains(&AgentEvent::Question { prompt_text: "Do you want to proceed?".into(), confident: true }));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ChoicePrompt(c) if c.options.len() == 2)));
    assert_eq!(agent_states(&events), vec![AgentState::AwaitingInput]);
    assert_eq!(tracker.check_submit(), Err(SubmitRefusal::AwaitingInput));
    assert!(show(&mut tracker, &dialog, t0 + ms(100)).is_empty(), "the same dialog is reported once");
    tracker.on_input(b"1", t0 + ms(200));
    assert_eq!(tracker.composer_state(), ComposerState::Empty, "the key answered the dialog, not the composer");
    assert_eq!(tracker.turn_epoch(), 0);
    let events = show(&mut tracker, CLAUDE_WORKING, t0 + ms(300));
    assert_eq!(agent_states(&events), vec![AgentState::Working]);
    assert!(!tracker.snapshot().awaiting_input);
}

#[test]
fn hook_markers_outrank_silence_and_the_screen() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    tracker.on_output(b"\x1b]7770;state=busy\x07", t0);
    show(&mut tracker, CLAUDE_READY, t0);
    tracker.tick(t0 + ms(60_000));
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Working));
    let events = tracker.on_output(b"\x1b]7770;state=awaiting;question=Deploy to prod?\x07", t0 + ms(60_100));
    assert!(events.contains(&AgentEvent::Question { prompt_text: "Deploy to prod?".into(), confident: true }));
    assert_eq!(tracker.snapshot().question_text.as_deref(), Some("Deploy to prod?"));
    tracker.on_input(b"y\r", t0 + ms(61_000));
    assert!(!tracker.snapshot().awaiting_input, "answering clears a hook question");
    tracker.on_output(b"\x1b]7770;state=idle\x07", t0 + ms(61_100));
    let status = tracker.snapshot();
    assert_eq!(status.agent_state, Some(AgentState::Idle));
    assert!(status.idle_confirmed);
}

#[test]
fn background_work_keeps_a_quiet_agent_working() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    show(&mut tracker, CLAUDE_READY, t0);
    tracker.tick(t0 + ms(5000));
    let events = tracker.set_background_work(true, t0 + ms(5001));
    assert_eq!(agent_states(&events), vec![AgentState::Working]);
    let events = tracker.set_background_work(false, t0 + ms(9000));
    assert_eq!(agent_states(&events), vec![AgentState::Idle]);
}

#[test]
fn keystroke_echo_is_not_the_agent_starting_work() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(None);
    tracker.on_output(b"\x1b]133;A\x07$ ", t0);
    tracker.on_output(b"\x1b]133;B\x07", t0);
    assert_eq!(tracker.snapshot().shell_state, Some(ShellState::Idle));
    tracker.on_input(b"l", t0 + ms(10));
    tracker.on_output(b"l", t0 + ms(12));
    assert_eq!(tracker.snapshot().shell_state, Some(ShellState::Idle));
    assert_eq!(tracker.composer_state(), ComposerState::Partial);
    assert_eq!(tracker.check_submit(), Err(SubmitRefusal::ComposerNotEmpty(ComposerState::Partial)));
}

#[test]
fn a_plain_shell_follows_osc_133_and_records_the_exit_code() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(None);
    let events = tracker.on_output(b"\x1b]133;C\x07building...\r\n", t0);
    assert_eq!(events, vec![AgentEvent::ShellState { state: ShellState::Busy, agent_type: None }]);
    tracker.tick(t0 + ms(30_000));
    assert_eq!(tracker.snapshot().shell_state, Some(ShellState::Busy), "a running command is busy however quiet");
    let events = tracker.on_output(b"\x1b]133;D;2\x07\x1b]133;A\x07$ ", t0 + ms(30_001));
    assert!(events.contains(&AgentEvent::CommandFinished { exit_code: Some(2) }));
    assert_eq!(tracker.snapshot().last_exit_code, Some(2));
    assert_eq!(tracker.snapshot().agent_state, None);
}

#[test]
fn a_plain_shell_without_markers_goes_idle_after_half_a_second() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(None);
    tracker.on_output(b"hello\r\n", t0);
    assert!(tracker.tick(t0 + SHELL_IDLE - ms(1)).is_empty());
    let events = tracker.tick(t0 + SHELL_IDLE);
    assert_eq!(events, vec![AgentEvent::ShellState { state: ShellState::Idle, agent_type: None }]);
}

#[test]
fn intent_comes_from_markers_and_an_old_screen_line_does_not_bring_it_back() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    show(&mut tracker, &["⏺ intent: Reading the auth module (Auth)"], t0);
    assert_eq!(tracker.snapshot().agent_intent.as_deref(), Some("Reading the auth module"));
    let events = tracker.on_output(b"\x1b]7770;intent=Writing tests;title=Tests\x07", t0 + ms(10));
    assert_eq!(events[0], AgentEvent::Intent(Intent { text: "Writing tests".into(), title: Some("Tests".into()) }));
    let events = show(&mut tracker, &["⏺ intent: Reading the auth module (Auth)", "more"], t0 + ms(20));
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Intent(_))));
    assert_eq!(tracker.snapshot().intent_title.as_deref(), Some("Tests"));
}

#[test]
fn progress_markers_are_reported_and_cleared() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(None);
    tracker.on_output(b"\x1b]9;4;1;40\x07", t0);
    assert_eq!(tracker.snapshot().progress, Some(40));
    tracker.on_output(b"\x1b]9;4;0;0\x07", t0);
    assert_eq!(tracker.snapshot().progress, None);
}

#[test]
fn the_snapshot_omits_what_is_absent() {
    let tracker = AgentTracker::new(None);
    let json = serde_json::to_value(tracker.snapshot()).unwrap();
    assert_eq!(json, serde_json::json!({"awaiting_input": false, "turn_epoch": 0, "composer_state": "empty"}));
}

#[test]
fn a_repainted_transcript_does_not_complete_the_next_turn() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    tracker.on_output("⏺ suggest: [ Run tests | Open PR ]\r\n".as_bytes(), t0);
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Completed));
    tracker.on_input(b"add docs\r", t0 + ms(1000));
    // A resize: Claude Code clears the screen and prints the whole transcript again.
    let repaint = "\x1b[2J\x1b[3J\x1b[H> fix it\r\n⏺ suggest: [ Run tests | Open PR ]\r\n> add docs\r\n";
    tracker.on_output(repaint.as_bytes(), t0 + ms(2000));
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Working));
    // The explicit OSC marker is never a repaint: the same items complete the new turn.
    let events = tracker.on_output(b"\x1b]7770;suggest=Run tests|Open PR\x07", t0 + ms(3000));
    assert_eq!(agent_states(&events), vec![AgentState::Completed]);
    assert_eq!(tracker.snapshot().turn_epoch, 1);
}

#[test]
fn an_agent_started_from_a_shell_is_tracked_from_then_on() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(None);
    tracker.on_output(b"\x1b]133;A\x07$ ", t0);
    tracker.on_input(b"claude\r", t0 + ms(100));
    tracker.on_output(b"\x1b]133;C\x07", t0 + ms(150));
    // The submitted command line is activity, so the agent is working from the moment it is known.
    let events = tracker.set_adapter(by_id("claude"), t0 + ms(200));
    assert_eq!(agent_states(&events), vec![AgentState::Working]);
    show(&mut tracker, CLAUDE_READY, t0 + ms(300));
    let events = tracker.tick(t0 + ms(300) + AGENT_READY_CONFIRM);
    assert_eq!(agent_states(&events), vec![AgentState::Idle]);
    assert_eq!(tracker.snapshot().agent_type, Some("claude"));
    tracker.set_adapter(None, t0 + ms(400));
    assert_eq!(tracker.snapshot().agent_state, None);
}

#[test]
fn a_submitted_line_is_published_by_its_length_never_its_text() {
    let mut tracker = AgentTracker::new(by_id("codex"));
    let paste = format!("\x1b[200~{}\x1b[201~\r", "x".repeat(10_000));
    let events = tracker.on_input(paste.as_bytes(), Instant::now());
    assert_eq!(events[0], AgentEvent::UserInput { chars: 10_000, turn_epoch: 1 });
    let mut shell = AgentTracker::new(None);
    let events = shell.on_input(b"hunter2-secret\r", Instant::now());
    let published = serde_json::to_string(&events).unwrap();
    assert!(!published.contains("hunter2"), "{published}");
}

#[test]
fn the_end_of_task_marker_confirms_idle_at_once() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    show(&mut tracker, CLAUDE_WORKING, t0);
    show(&mut tracker, CLAUDE_DONE, t0 + ms(100));
    let status = tracker.snapshot();
    assert_eq!(status.agent_state, Some(AgentState::Completed));
    assert!(status.idle_confirmed, "completed is a confirmed idle");
    assert_eq!(tracker.readiness(), Readiness::ConfirmedIdle);
    assert_eq!(tracker.check_submit(), Ok(()), "submit agrees with status the moment it says completed");
}

#[test]
fn background_work_is_never_a_confirmed_idle() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    tracker.on_output(b"\x1b]7770;state=idle\x07", t0);
    show(&mut tracker, CLAUDE_DONE, t0);
    tracker.set_background_work(true, t0 + ms(100));
    let status = tracker.snapshot();
    assert_eq!(status.agent_state, Some(AgentState::Working));
    assert!(!status.idle_confirmed, "working and idle_confirmed side by side");
    assert!(!tracker.readiness().settled(), "wait until=idle must not return mid-turn");
    assert_eq!(tracker.check_submit(), Err(SubmitRefusal::Busy));
    tracker.set_background_work(false, t0 + ms(3000));
    assert_eq!(tracker.readiness(), Readiness::ConfirmedIdle);
}

#[test]
fn a_question_that_is_only_suspected_holds_typing_but_is_not_awaiting_input() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    tracker.on_output(b"\x1b]7770;state=idle\x07", t0);
    show(&mut tracker, &["Built 3 crates", "Shall I also run the tests?"], t0);
    tracker.tick(t0 + ms(5000));
    let status = tracker.snapshot();
    assert_eq!(status.agent_state, Some(AgentState::Idle));
    assert!(!status.awaiting_input && !status.question_confident && !status.idle_confirmed);
    assert_eq!(status.question_text.as_deref(), Some("Shall I also run the tests?"));
    assert_eq!(tracker.check_submit(), Err(SubmitRefusal::QuestionSuspected));
    assert!(tracker.readiness().settled(), "a waiter wakes: the agent waits for an answer");
    // The question goes away: typing may go in again.
    show(&mut tracker, &["Built 3 crates", "Shall I also run the tests?", "answer=no", "> "], t0 + ms(6000));
    tracker.tick(t0 + ms(9000));
    assert_eq!(tracker.check_submit(), Ok(()));
}

#[test]
fn a_screen_no_rule_knows_is_unknown_with_the_reason_not_working_forever() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("codex"));
    tracker.on_output(b"Welcome to a screen from the future\r\n", t0);
    show(&mut tracker, &["Welcome to a screen from the future", "Pick a planet:"], t0);
    let moving = ["Welcome to a screen from the future", "Loading  /"];
    show(&mut tracker, &moving, t0 + ms(10_000));
    let events = tracker.tick(t0 + ms(20_001));
    assert_eq!(agent_states(&events), vec![AgentState::Unknown]);
    let status = tracker.snapshot();
    assert!(status.state_reason.unwrap().contains("Codex"));
    assert!(!tracker.readiness().settled(), "a wait for idle does not return on it");
    let events = show(&mut tracker, &["› Ask Codex to do anything", "", "  GPT-5.5 low · /repo"], t0 + ms(21_000));
    assert!(!agent_states(&events).contains(&AgentState::Unknown));
    assert_eq!(tracker.snapshot().state_reason, None, "a known screen ends it");
}

#[test]
fn an_announcement_from_before_the_submit_says_nothing_about_the_new_turn() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("codex"));
    tracker.on_output(b"\x1b]7501;state=idle:app=codex\x1b\\", t0);
    show(&mut tracker, &["› Ask Codex to do anything"], t0);
    assert!(tracker.snapshot().idle_confirmed, "the CLI's own idle confirms at once");
    tracker.on_input(b"\x1b[200~fix it\x1b[201~\r", t0 + ms(100));
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Working), "not the stale idle");
    assert!(!tracker.turn_started());
    tracker.on_output(b"\x1b]7501;state=working:app=codex\x1b\\", t0 + ms(150));
    assert!(tracker.turn_started());
    tracker.on_output(b"\x1b]7501;state=blocked:app=codex:kind=permission\x1b\\", t0 + ms(900));
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::AwaitingInput));
    tracker.on_output(b"\x1b]7501;state=done:app=codex\x1b\\", t0 + ms(2000));
    let status = tracker.snapshot();
    assert_eq!((status.agent_state, status.idle_confirmed), (Some(AgentState::Idle), true));
}

#[test]
fn a_title_spinner_is_work_and_an_unchanged_word_is_no_news() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    tracker.on_output("\x1b]0;✳ Claude Code\x07".as_bytes(), t0);
    tracker.on_input(b"hello\r", t0 + ms(10));
    tracker.on_output("\x1b]0;⠂ Claude Code\x07".as_bytes(), t0 + ms(300));
    tracker.on_output("\x1b]0;⠐ Claude Code\x07".as_bytes(), t0 + ms(1300));
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Working));
    tracker.on_output("\x1b]0;✳ Claude Code\x07".as_bytes(), t0 + ms(2000));
    assert!(tracker.snapshot().idle_confirmed, "idle at once, not after the screen settles");
}

#[test]
fn a_cancelled_prompt_put_back_in_the_composer_holds_typing() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    let composer = ["─────", "❯\u{a0}write the essay", "─────", "  ● high · /effort"];
    show(&mut tracker, &composer, t0);
    tracker.tick(t0 + ms(3000));
    assert_eq!(tracker.composer_state(), ComposerState::Partial);
    assert_eq!(tracker.check_submit(), Err(SubmitRefusal::ComposerNotEmpty(ComposerState::Partial)));
    tracker.on_input(b"\x1b", t0 + ms(3100));
    tracker.on_input(b"\x1b", t0 + ms(3200));
    show(&mut tracker, &["─────", "❯\u{a0}", "─────", "  ? for shortcuts"], t0 + ms(3300));
    tracker.tick(t0 + ms(6000));
    assert_eq!(tracker.composer_state(), ComposerState::Empty, "the screen is read after the keys echoed");
    assert!(tracker.check_submit().is_ok());
}

#[test]
fn a_cli_that_exits_before_showing_anything_known_is_unknown_with_its_exit_code() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    tracker.on_output(b"error: unknown option --frobnicate\r\n", t0);
    show(&mut tracker, &["error: unknown option --frobnicate"], t0);
    tracker.on_exit(None, t0 + ms(50));
    tracker.on_exit(Some(1), t0 + ms(60));
    let status = tracker.snapshot();
    assert_eq!(status.agent_state, Some(AgentState::Unknown));
    assert!(status.state_reason.unwrap().contains("exited with code 1"), "not starting forever");
}

#[test]
fn answering_a_dialog_under_an_idle_title_is_not_idle() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    tracker.on_output("\x1b]0;✳ Claude Code\x07".as_bytes(), t0);
    tracker.on_input(b"run it\r", t0 + ms(10));
    tracker.on_output("\x1b]0;⠂ Claude Code\x07".as_bytes(), t0 + ms(300));
    // Claude Code's title goes back to idle while its permission dialog is up.
    tracker.on_output("\x1b]0;✳ Claude Code\x07".as_bytes(), t0 + ms(600));
    let dialog = [" Do you want to proceed?", " ❯ 1. Yes", "   2. No", " Esc to cancel"];
    show(&mut tracker, &dialog, t0 + ms(650));
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::AwaitingInput));
    tracker.on_input(b"1", t0 + ms(2000));
    show(&mut tracker, &["● Bash(touch marker)", "  ⎿  Running…", "❯\u{a0}"], t0 + ms(2010));
    let status = tracker.snapshot();
    assert!(!status.idle_confirmed, "the title's idle from under the dialog is stale: {status:?}");
    tracker.on_output("\x1b]0;⠐ Claude Code\x07".as_bytes(), t0 + ms(2060));
    tracker.on_output("\x1b]0;✳ Claude Code\x07".as_bytes(), t0 + ms(4000));
    assert!(tracker.snapshot().idle_confirmed, "a new idle after the work is");
}

#[test]
fn an_announced_idle_under_a_working_indicator_is_still_work() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    tracker.on_output("\x1b]0;✳ Claude Code\x07".as_bytes(), t0);
    tracker.on_input(b"list the sessions\r", t0 + ms(10));
    tracker.on_output("\x1b]0;⠂ Claude Code\x07".as_bytes(), t0 + ms(100));
    let working = ["● mcp__tuic__session", "────", "❯\u{a0}", "────", "  esc to interrupt · ← for agents"];
    show(&mut tracker, &working, t0 + ms(110));
    // The title turns idle a frame before the permission dialog is drawn.
    tracker.on_output("\x1b]0;✳ Claude Code\x07".as_bytes(), t0 + ms(200));
    let status = tracker.snapshot();
    assert_eq!((status.agent_state, status.idle_confirmed), (Some(AgentState::Working), false));
}

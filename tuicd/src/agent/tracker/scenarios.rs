//! Whole scenarios through the tracker: a scripted fake agent, volume, latency, noise.

use std::time::{Duration, Instant};

use super::*;
use crate::agent::adapters::by_id;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn show(tracker: &mut AgentTracker, lines: &[&str], now: Instant) -> Vec<AgentEvent> {
    let rows: Vec<String> = lines.iter().map(|r| r.to_string()).collect();
    let cursor = (lines.len().saturating_sub(1) as u16, 2);
    tracker.on_screen(&Screen { rows: &rows, cursor, alternate: false }, now)
}

#[test]
fn ten_megabytes_of_agent_output_pass_through_the_tracker() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    let chunk = "\x1b[2K\x1b[1A\x1b[2K\x1b[G✢ Reading files… (12s · esc to interrupt)\r\n\
                 ⏺ Bash(cargo test)\r\n  ⎿  test checkout::applies_discount ... \x1b[32mok\x1b[0m\r\n\
                 \x1b]0;✳ Claude Code\x07intent: Running the tests\r\n";
    let started = Instant::now();
    let mut fed = 0;
    let mut now = t0;
    while fed < 10 * 1024 * 1024 {
        tracker.on_output(chunk.as_bytes(), now);
        fed += chunk.len();
        now += ms(1);
    }
    let events = tracker.on_output(b"suggest: [ a | b ]\r\n", now);
    assert!(events.contains(&AgentEvent::Suggest { items: vec!["a".into(), "b".into()] }));
    eprintln!("10 MiB through AgentTracker::on_output in {:?}", started.elapsed());
}

/// A scripted fake agent: starts, takes a task, asks a numbered question, finishes with the
/// marker, takes the next task and ends it without one. Every published event is checked.
#[test]
fn a_fake_agent_turn_cycle_publishes_each_change_once() {
    let t0 = Instant::now();
    let at = |n: u64| t0 + ms(n);
    let mut tracker = AgentTracker::new(by_id("claude"));
    let mut published = Vec::new();
    let banner = ["✻ Welcome to Claude Code!", "", "> ", "  ? for shortcuts"];
    published.extend(show(&mut tracker, &banner, at(0)));
    published.extend(tracker.tick(at(1600)));
    assert_eq!(tracker.check_submit(), Ok(()), "ready prompt stable: a deferred prompt may go in");
    published.extend(tracker.on_input(b"\x15\x1b[200~fix the bug\x1b[201~", at(2000)));
    published.extend(tracker.on_input(b"\r", at(2050)));
    published.extend(tracker.on_output("⏺ intent: Fixing the bug (Bug)\r\n".as_bytes(), at(2100)));
    published.extend(show(
        &mut tracker,
        &["⏺ intent: Fixing the bug (Bug)", "✢ Thinking… (1s · esc to interrupt)", "> "],
        at(2100),
    ));
    let dialog = [" Do you want to proceed?", " ❯ 1. Yes", "   2. No (esc)"];
    published.extend(show(&mut tracker, &dialog, at(3000)));
    published.extend(tracker.on_input(b"1", at(4000)));
    published.extend(show(&mut tracker, &["⏺ Ran it", "✢ Thinking… (3s · esc to interrupt)", "> "], at(4100)));
    published.extend(tracker.on_output("⏺ suggest: [ Run tests | Open PR ]\r\n".as_bytes(), at(5000)));
    published.extend(show(&mut tracker, &["⏺ Ran it", "⏺ suggest: [ Run tests | Open PR ]", "> "], at(5000)));
    published.extend(tracker.tick(at(7000)));
    published.extend(tracker.on_input(b"and the docs\r", at(8000)));
    published.extend(show(
        &mut tracker,
        &["⏺ suggest: [ Run tests | Open PR ]", "⏺ Updated the docs.", "> "],
        at(9000),
    ));
    published.extend(tracker.tick(at(12_000)));

    let busy = AgentEvent::ShellState { state: ShellState::Busy, agent_type: Some("claude") };
    let idle = AgentEvent::ShellState { state: ShellState::Idle, agent_type: Some("claude") };
    let state = |state, turn_epoch| AgentEvent::AgentState { state, turn_epoch, background_work: false };
    let expected = vec![
        busy.clone(),
        state(AgentState::Working, 0),
        idle.clone(),
        state(AgentState::Idle, 0),
        AgentEvent::UserInput { chars: "fix the bug".len(), turn_epoch: 1 },
        busy.clone(),
        state(AgentState::Working, 1),
        AgentEvent::Intent(Intent { text: "Fixing the bug".into(), title: Some("Bug".into()) }),
        AgentEvent::Question { prompt_text: "Do you want to proceed?".into(), confident: true },
        AgentEvent::ChoicePrompt(tracker_choice(&dialog)),
        idle.clone(),
        state(AgentState::AwaitingInput, 1),
        busy.clone(),
        state(AgentState::Working, 1),
        AgentEvent::Suggest { items: vec!["Run tests".into(), "Open PR".into()] },
        idle.clone(),
        state(AgentState::Completed, 1),
        AgentEvent::UserInput { chars: "and the docs".len(), turn_epoch: 2 },
        busy,
        state(AgentState::Working, 2),
        idle,
        state(AgentState::Idle, 2),
    ];
    assert_eq!(published, expected);
}

fn tracker_choice(rows: &[&str]) -> crate::agent::event::ChoicePrompt {
    crate::agent::screen::numbered_choice(rows).unwrap()
}

#[test]
fn marker_to_event_latency_in_the_engine() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("codex"));
    let mut samples = Vec::with_capacity(10_000);
    for i in 0..10_000u64 {
        let state = if i % 2 == 0 { "busy" } else { "idle" };
        let chunk = format!("output line {i}\r\n\x1b]7770;state={state}\x07");
        let started = Instant::now();
        let events = tracker.on_output(chunk.as_bytes(), t0 + ms(i));
        samples.push(started.elapsed());
        assert!(events.iter().any(|e| matches!(e, AgentEvent::ShellState { .. })));
    }
    samples.sort();
    eprintln!("marker to event in the engine: p50 {:?}, p99 {:?}", samples[5_000], samples[9_900]);
}

#[test]
fn arbitrary_bytes_never_panic_and_stay_bounded() {
    // xorshift: deterministic noise without a dependency.
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    let alphabet = b"\x1b[]0123456789;ABCDJKHmsuggestintent:|\x07\\\r\n\x08\x15\x03 \xe2\x8f\xba~P_";
    for round in 0..2_000u64 {
        let len = (next() % 300) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
        tracker.on_output(&bytes, t0 + ms(round));
        tracker.on_input(&bytes, t0 + ms(round));
        let text = String::from_utf8_lossy(&bytes);
        let rows: Vec<String> = text.split('\n').map(str::to_owned).collect();
        tracker.on_screen(&Screen { rows: &rows, cursor: (0, 0), alternate: false }, t0 + ms(round));
    }
    tracker.tick(t0 + ms(10_000));
    assert!(tracker.input.text().len() <= crate::limits::INPUT_LINE_MAX_BYTES);
}

#[test]
fn screen_reading_cost_for_a_full_screen() {
    let t0 = Instant::now();
    let mut tracker = AgentTracker::new(by_id("claude"));
    let mut rows: Vec<String> = (0..48).map(|i| format!("⏺ line {i} {}", "text ".repeat(38))).collect();
    rows.extend(["✶ Percolating… (34s · esc to interrupt)".to_owned(), "> ".to_owned()]);
    let mut samples = Vec::with_capacity(2_000);
    for i in 0..2_000u64 {
        rows[(i % 48) as usize] = format!("⏺ changed {i}");
        let started = Instant::now();
        tracker.on_screen(&Screen { rows: &rows, cursor: (49, 2), alternate: false }, t0 + ms(i));
        samples.push(started.elapsed());
    }
    assert_eq!(tracker.snapshot().agent_state, Some(AgentState::Working));
    samples.sort();
    eprintln!("on_screen, 50 rows x 200 columns: p50 {:?}, p99 {:?}", samples[1_000], samples[1_980]);
}

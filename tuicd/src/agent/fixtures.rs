//! Replays the recorded screens under `tuicd/tests/fixtures/agents/` through the real tracker
//! (format: `tuicd/tests/fixtures/agents/README.md`).

use std::path::Path;
use std::time::{Duration, Instant};

use super::adapters::by_id;
use super::{AgentState, AgentTracker, ComposerState, Readiness, Screen};

#[derive(Debug, Default)]
struct Fixture {
    expect: Option<AgentState>,
    question: Option<String>,
    options: Option<usize>,
    intent: Option<String>,
    confirmed: Option<bool>,
    hold: Option<bool>,
    composer: Option<ComposerState>,
    cursor: Option<(u16, u16)>,
    alternate: bool,
    new_turn: bool,
    stream: bool,
    body: Vec<String>,
}

fn parse(path: &Path) -> Fixture {
    let text = std::fs::read_to_string(path).unwrap();
    let (header, body) = text.split_once("\n---\n").unwrap_or_else(|| panic!("{}: no `---` line", path.display()));
    let mut fixture = Fixture { body: body.lines().map(str::to_owned).collect(), ..Fixture::default() };
    for line in header.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (key, value) =
            line.split_once(':').unwrap_or_else(|| panic!("{}: bad header line {line:?}", path.display()));
        let value = value.split(" #").next().unwrap_or(value).trim();
        match key.trim() {
            "expect" => fixture.expect = Some(state(value)),
            "question" => fixture.question = Some(value.to_owned()),
            "options" => fixture.options = Some(value.parse().unwrap()),
            "intent" => fixture.intent = Some(value.to_owned()),
            "confirmed" => fixture.confirmed = Some(value == "true"),
            "hold" => fixture.hold = Some(value == "true"),
            "composer" => fixture.composer = Some(composer(value)),
            "cursor" => {
                let (row, col) = value.split_once(' ').unwrap();
                fixture.cursor = Some((row.parse().unwrap(), col.parse().unwrap()));
            }
            "alternate" => fixture.alternate = value == "true",
            "new_turn" => fixture.new_turn = value == "true",
            "mode" => fixture.stream = value == "stream",
            other => panic!("{}: unknown header key {other:?}", path.display()),
        }
    }
    fixture
}

fn state(value: &str) -> AgentState {
    match value {
        "starting" => AgentState::Starting,
        "working" => AgentState::Working,
        "awaiting_input" => AgentState::AwaitingInput,
        "idle" => AgentState::Idle,
        "completed" => AgentState::Completed,
        other => panic!("unknown state {other:?}"),
    }
}

fn composer(value: &str) -> ComposerState {
    match value {
        "empty" => ComposerState::Empty,
        "partial" => ComposerState::Partial,
        "unknown" => ComposerState::Unknown,
        other => panic!("unknown composer state {other:?}"),
    }
}

fn unescape(line: &str) -> String {
    line.replace("\\\\", "\u{0}").replace("\\e", "\x1b").replace("\\a", "\x07").replace('\u{0}', "\\")
}

/// Replays one fixture and returns the tracker at the end.
fn replay(agent: &str, fixture: &Fixture) -> AgentTracker {
    let adapter = by_id(agent).unwrap_or_else(|| panic!("no adapter {agent:?}"));
    let mut tracker = AgentTracker::new(Some(adapter));
    let t0 = Instant::now();
    let later = t0 + Duration::from_secs(5);
    if fixture.stream {
        let bytes = fixture.body.iter().map(|l| unescape(l)).collect::<Vec<_>>().join("\r\n");
        tracker.on_output(bytes.as_bytes(), t0);
        tracker.tick(later);
        return tracker;
    }
    let last = fixture.body.iter().rposition(|r| !r.trim().is_empty()).unwrap_or(0);
    let cursor = fixture.cursor.unwrap_or((last as u16, 0));
    let screen = Screen { rows: &fixture.body, cursor, alternate: fixture.alternate };
    tracker.on_screen(&screen, t0);
    if fixture.new_turn {
        tracker.on_input(b"next task\r", t0 + Duration::from_secs(1));
        tracker.on_screen(&screen, t0 + Duration::from_millis(1100));
    }
    tracker.on_screen(&screen, later);
    tracker.tick(later);
    tracker
}

include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/agents/files.rs"));

#[test]
fn every_recorded_screen_gives_its_expected_state() {
    let files = fixture_files();
    assert!(files.len() >= 20, "fixtures went missing: {}", files.len());
    let mut failures = Vec::new();
    for (agent, path) in &files {
        let fixture = parse(path);
        let tracker = replay(agent, &fixture);
        let status = tracker.snapshot();
        let name = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display();
        if fixture.expect.is_some() && status.agent_state != fixture.expect {
            failures.push(format!("{name}: agent_state {:?}, expected {:?}", status.agent_state, fixture.expect));
        }
        if fixture.question.is_some() && status.question_text != fixture.question {
            failures.push(format!("{name}: question {:?}, expected {:?}", status.question_text, fixture.question));
        }
        let options = status.choice_prompt.as_ref().map(|c| c.options.len());
        if fixture.options.is_some() && options != fixture.options {
            failures.push(format!("{name}: {options:?} options, expected {:?}", fixture.options));
        }
        if fixture.intent.is_some() && status.agent_intent != fixture.intent {
            failures.push(format!("{name}: intent {:?}, expected {:?}", status.agent_intent, fixture.intent));
        }
        if fixture.confirmed.is_some_and(|c| c != status.idle_confirmed) {
            failures
                .push(format!("{name}: idle_confirmed {}, expected {:?}", status.idle_confirmed, fixture.confirmed));
        }
        if fixture.composer.is_some_and(|c| c != tracker.composer_state()) {
            failures.push(format!("{name}: composer {:?}, expected {:?}", tracker.composer_state(), fixture.composer));
        }
        let held = tracker.check_submit().is_err();
        if fixture.hold.is_some_and(|h| h != held) {
            failures.push(format!("{name}: typing held {held}, expected {:?}", fixture.hold));
        }
        failures.extend(disagreement(&tracker).map(|d| format!("{name}: {d}")));
        if fixture.expect != Some(AgentState::AwaitingInput) && status.awaiting_input {
            failures.push(format!("{name}: a question was detected where there is none"));
        }
    }
    assert!(failures.is_empty(), "{} of {} fixtures failed:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// Where the consumers of "confirmed idle" read one screen differently: status
/// (`idle_confirmed`), submit and typed delivery (`check_submit`), lifecycle mail (the edge's
/// `confirmed_idle`, read from [`Readiness`]) and `wait until=idle` ([`Readiness::settled`]).
fn disagreement(tracker: &AgentTracker) -> Option<String> {
    let status = tracker.snapshot();
    let readiness = tracker.readiness();
    let confirmed = readiness == Readiness::ConfirmedIdle;
    let submit = tracker.check_submit().is_ok();
    let question = matches!(readiness, Readiness::Question { .. });
    let waited = readiness.settled();
    // Text in the composer holds typing without making the agent any less idle.
    let composer_empty = tracker.composer_state() == ComposerState::Empty;
    let agrees = status.idle_confirmed == confirmed
        && submit == (confirmed && composer_empty)
        && waited == (confirmed || question)
        && (!confirmed || matches!(status.agent_state, Some(AgentState::Idle | AgentState::Completed)))
        && status.awaiting_input == (readiness == Readiness::Question { confident: true });
    (!agrees).then(|| {
        format!(
            "consumers disagree: idle_confirmed {}, readiness {readiness:?}, submit ok {submit}, agent_state {:?}",
            status.idle_confirmed, status.agent_state
        )
    })
}

#[test]
fn every_agent_with_screen_rules_has_positive_and_negative_fixtures() {
    let files = fixture_files();
    for adapter in super::adapters::ADAPTERS.iter().filter(|a| !a.working.is_empty()) {
        let states: Vec<AgentState> =
            files.iter().filter(|(agent, _)| agent == adapter.id).filter_map(|(_, path)| parse(path).expect).collect();
        for needed in [AgentState::Working, AgentState::Idle, AgentState::AwaitingInput] {
            assert!(states.contains(&needed), "{}: no fixture expecting {needed:?}", adapter.id);
        }
    }
}

/// One recorded session: `<version>-session.tcap` (every byte that crossed the PTY, with its
/// time) and `<version>-session.labels` (its size, then the truth at each step of the recording:
/// what the model server's log and the recorder's own steps say the agent was doing).
struct Recording {
    agent: String,
    path: std::path::PathBuf,
    rows: u16,
    cols: u16,
    labels: Vec<serde_json::Value>,
}

fn recordings() -> Vec<Recording> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    let mut found = Vec::new();
    for (agent, path) in fixture_files().into_iter().map(|(a, p)| (a, p.parent().unwrap().to_owned())) {
        for entry in std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()) {
            if entry.extension().is_some_and(|e| e == "labels") && !found.iter().any(|r: &Recording| r.path == entry) {
                let text = std::fs::read_to_string(&entry).unwrap();
                let mut lines = text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
                let meta = lines.next().unwrap();
                let size = |key: &str| u16::try_from(meta[key].as_u64().unwrap()).unwrap();
                found.push(Recording {
                    agent: agent.clone(),
                    path: entry.clone(),
                    rows: size("rows"),
                    cols: size("cols"),
                    labels: lines.collect(),
                });
            }
        }
    }
    assert!(root.exists());
    found
}

/// Feeds the capture's records up to `until_us` through vt100 and the tracker, as the session does.
fn feed_until(
    records: &mut std::iter::Peekable<std::vec::IntoIter<crate::tcap::Record>>,
    until_us: u64,
    parser: &mut vt100::Parser,
    tracker: &mut AgentTracker,
    t0: Instant,
    cols: u16,
) {
    use crate::tcap::Direction;
    while let Some(record) = records.next_if(|r| r.micros <= until_us) {
        let now = t0 + Duration::from_micros(record.micros);
        match record.direction {
            Direction::Input => {
                tracker.on_input(&record.data, now);
            }
            Direction::Output => {
                parser.process(&record.data);
                tracker.on_output(&record.data, now);
                let screen = parser.screen();
                let rows: Vec<String> = screen.rows(0, cols).map(|r| r.trim_end().to_owned()).collect();
                let view =
                    Screen { rows: &rows, cursor: screen.cursor_position(), alternate: screen.alternate_screen() };
                tracker.on_screen(&view, now);
            }
        }
    }
}

#[test]
fn every_recorded_session_gives_the_true_state_at_each_labelled_step() {
    let recordings = recordings();
    assert!(recordings.len() >= 3, "the real-CLI recordings went missing: {}", recordings.len());
    let mut failures = Vec::new();
    for recording in &recordings {
        let tcap = recording.path.with_extension("tcap");
        let mut records = crate::tcap::read_file(&tcap).unwrap().into_iter().peekable();
        let adapter = by_id(&recording.agent).unwrap();
        let mut tracker = AgentTracker::new(Some(adapter));
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let mut parser = vt100::Parser::new(nz(recording.rows), nz(recording.cols), 0);
        let t0 = Instant::now();
        let name = recording.path.file_name().unwrap().to_string_lossy().into_owned();
        for label in &recording.labels {
            let at = label["at_us"].as_u64().unwrap();
            feed_until(&mut records, at, &mut parser, &mut tracker, t0, recording.cols);
            tracker.tick(t0 + Duration::from_micros(at));
            let status = tracker.snapshot();
            let step = label["step"].as_str().unwrap();
            let expect = state(label["expect"].as_str().unwrap());
            if status.agent_state != Some(expect) {
                failures.push(format!("{name} {step}: agent_state {:?}, the truth is {expect:?}", status.agent_state));
            }
            if let Some(confirmed) = label["confirmed"].as_bool()
                && confirmed != status.idle_confirmed
            {
                failures
                    .push(format!("{name} {step}: idle_confirmed {}, the truth is {confirmed}", status.idle_confirmed));
            }
            if let Some(question) = label["question"].as_str()
                && status.question_text.as_deref() != Some(question)
            {
                failures.push(format!("{name} {step}: question {:?}, the truth is {question:?}", status.question_text));
            }
            if let Some(text) = label["composer"].as_str()
                && composer(text) != tracker.composer_state()
            {
                failures.push(format!("{name} {step}: composer {:?}, the truth is {text}", tracker.composer_state()));
            }
        }
    }
    assert!(failures.is_empty(), "{} labelled steps failed:\n{}", failures.len(), failures.join("\n"));
}

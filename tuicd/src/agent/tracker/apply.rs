//! How markers and screen readings change the tracker's observations (no state derivation here:
//! that stays in `settle`).

use std::time::Instant;

use super::super::adapters::Adapter;
use super::super::event::{AgentEvent, Intent};
use super::super::markers::{Announced, HookState, Marker};
use super::super::screen::{self, Screen, Verdict};
use super::{AgentTracker, INTENT_HISTORY, OpenQuestion, QuestionSource};
use crate::agent::ShellState;

impl AgentTracker {
    pub(super) fn apply_marker(&mut self, marker: Marker, events: &mut Vec<AgentEvent>) {
        match marker {
            Marker::Prompt => self.shell_integration = Some(ShellState::Idle),
            Marker::CommandStart => {}
            Marker::CommandExecuted => self.shell_integration = Some(ShellState::Busy),
            Marker::CommandFinished(exit_code) => {
                self.shell_integration = Some(ShellState::Idle);
                self.last_exit_code = exit_code.or(self.last_exit_code);
                events.push(AgentEvent::CommandFinished { exit_code });
            }
            Marker::Hook { state, question } => {
                self.recognised = true;
                self.hook = Some((state, self.turn_epoch));
                if state != HookState::Idle {
                    self.started_epoch = Some(self.turn_epoch);
                }
                if state == HookState::Awaiting {
                    let prompt_text = question.unwrap_or_default();
                    events.push(AgentEvent::Question { prompt_text: prompt_text.clone(), confident: true });
                    self.question = Some(OpenQuestion { prompt_text, choice: None, source: QuestionSource::Hook });
                } else if self.question.as_ref().is_some_and(|q| q.source == QuestionSource::Hook) {
                    self.question = None;
                }
            }
            Marker::Suggest(items) => {
                if let Some(items) = self.completion.on_explicit_marker(items, self.turn_epoch) {
                    events.push(AgentEvent::Suggest { items });
                }
            }
            Marker::TextSuggest(items) => {
                if let Some(items) = self.completion.on_stream_text_marker(items, self.turn_epoch) {
                    events.push(AgentEvent::Suggest { items });
                }
            }
            Marker::Intent(intent) => self.set_intent(intent, events),
            // A repainted old `intent:` line must not bring that intent back.
            Marker::TextIntent(intent) => {
                if !self.intent_history.contains(&intent.text) {
                    self.set_intent(intent, events);
                }
            }
            Marker::Progress { state, value } => {
                self.progress = (state != 0).then_some(value);
                events.push(AgentEvent::Progress { state, value });
            }
            Marker::Title(title) => {
                // A title no rule knows (a program's own title, a renamed session) leaves the last
                // announcement standing only for adapters that announce nothing through titles.
                if let Some(adapter) = self.adapter
                    && !adapter.titles.is_empty()
                {
                    match adapter.title_state(&title) {
                        Some(announced) => self.announce(announced),
                        None => self.announced = None,
                    }
                }
            }
            Marker::Announce(announced) => self.announce(announced),
        }
    }

    /// The CLI said it is working, idle or blocked. The same word again is no news: a
    /// spinner title repainted each frame must not refresh an announcement from an older turn.
    fn announce(&mut self, announced: Announced) {
        self.recognised = true;
        if self.announced.is_some_and(|(same, _)| same == announced) {
            return;
        }
        self.announced = Some((announced, self.turn_epoch));
        self.answered_since_announced = false;
        if announced != Announced::Idle {
            self.started_epoch = Some(self.turn_epoch);
        }
    }

    /// An announced block is a question; when the screen shows no confident one, its text is the
    /// row that looks like a question, if any. It closes when the announcement moves on.
    pub(super) fn reconcile_announced_question(&mut self, events: &mut Vec<AgentEvent>) {
        let blocked = self.fresh_announcement() == Some(Announced::Blocked);
        match &self.question {
            None if blocked => {
                let prompt_text = self.suspected_question.clone().unwrap_or_default();
                events.push(AgentEvent::Question { prompt_text: prompt_text.clone(), confident: true });
                self.question = Some(OpenQuestion { prompt_text, choice: None, source: QuestionSource::Announced });
            }
            Some(open) if open.source == QuestionSource::Announced && !blocked => self.question = None,
            _ => {}
        }
    }

    pub(super) fn set_intent(&mut self, intent: Intent, events: &mut Vec<AgentEvent>) {
        if self.intent.as_ref() == Some(&intent) {
            return;
        }
        self.intent_history.retain(|text| *text != intent.text);
        if self.intent_history.len() == INTENT_HISTORY {
            self.intent_history.remove(0);
        }
        self.intent_history.push(intent.text.clone());
        self.intent = Some(intent.clone());
        events.push(AgentEvent::Intent(intent));
    }

    pub(super) fn read_screen(
        &mut self,
        adapter: &Adapter,
        screen: &Screen<'_>,
        now: Instant,
        events: &mut Vec<AgentEvent>,
    ) {
        let verdict = screen::read(adapter, screen);
        if adapter.composer.is_some() {
            let rows: Vec<&str> = screen.rows.iter().map(String::as_str).collect();
            self.screen_composer = adapter.composer_text(&rows).map(|text| (text, now));
        }
        if verdict == Verdict::Working {
            self.started_epoch = Some(self.turn_epoch);
        }
        self.recognised |= verdict != Verdict::Unknown;
        match &verdict {
            Verdict::Question(asked) => {
                let open = OpenQuestion {
                    prompt_text: asked.prompt_text.clone(),
                    choice: Some(asked.choice.clone()),
                    source: QuestionSource::Screen,
                };
                if self.question.as_ref() != Some(&open) {
                    events.push(AgentEvent::Question { prompt_text: open.prompt_text.clone(), confident: true });
                    if !asked.choice.options.is_empty() {
                        events.push(AgentEvent::ChoicePrompt(asked.choice.clone()));
                    }
                    self.question = Some(open);
                }
            }
            _ if self.question.as_ref().is_some_and(|q| q.source == QuestionSource::Screen) => self.question = None,
            // An announced block with no dialog drawn yet takes the dialog's text once it shows.
            _ if self
                .question
                .as_ref()
                .is_some_and(|q| q.source == QuestionSource::Announced && q.prompt_text.is_empty()) =>
            {
                if let Some(text) = screen::suspected_question(adapter, screen) {
                    self.question =
                        Some(OpenQuestion { prompt_text: text, choice: None, source: QuestionSource::Announced });
                }
            }
            _ => {}
        }
        self.suspected_question = match &verdict {
            Verdict::Question(_) => None,
            _ => screen::suspected_question(adapter, screen),
        };
        self.ready_since = match verdict {
            Verdict::Ready => Some(self.ready_since.unwrap_or(now)),
            _ => None,
        };
        self.verdict = verdict;
    }
}

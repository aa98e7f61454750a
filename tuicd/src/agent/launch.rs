//! The pure part of `agent action=spawn`: the argv to run and how the prompt gets in, and the
//! `pty_description` the new session shows. The prompt is always delivered:
//!
//! - args containing `{prompt}` are authoritative: the prompt is substituted there, nowhere else;
//! - otherwise a configured run-config argv gets the prompt as its final positional argument;
//! - otherwise a prefill-only TUI ([`PromptDelivery::Deferred`]) gets it through the PTY after
//!   its ready prompt shows (the session injects it with the submit plan), and any other CLI gets
//!   it as the final positional argument.
//!
//! A structured `model` is appended with the adapter's model flag before the prompt.

use super::adapters::{Adapter, PromptDelivery};
use crate::limits::PTY_DESCRIPTION_MAX_CHARS;

const PROMPT_PLACEHOLDER: &str = "{prompt}";

/// Where the argv came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgvSource {
    /// The caller's `args` for a known binary.
    Caller,
    /// A configured run-config command line: never converted to deferred delivery.
    RunConfig,
}

/// The `pty_description` parameter as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DescriptionParam<'a> {
    /// Omitted: derive one from the prompt.
    Absent,
    /// `null` or `""`: keep the session descriptionless.
    Clear,
    Set(&'a str),
}

/// What to launch and what to do with the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    pub args: Vec<String>,
    /// Inject this through the PTY once the agent is confirmed idle at its ready prompt.
    pub deferred_prompt: Option<String>,
    /// A model was asked for but this agent has no known model flag; it was not passed.
    pub model_ignored: bool,
}

/// The argv (after the program) and prompt delivery for one spawn.
pub fn plan(
    adapter: Option<&Adapter>,
    args: &[String],
    prompt: &str,
    model: Option<&str>,
    source: ArgvSource,
) -> LaunchPlan {
    let mut planned: Vec<String> = args.to_vec();
    let mut model_ignored = false;
    if let Some(model) = model.filter(|m| !m.trim().is_empty()) {
        match adapter.and_then(|a| a.model_flag) {
            Some(flag) => planned.extend([flag.to_owned(), model.to_owned()]),
            None => model_ignored = true,
        }
    }
    if planned.iter().any(|arg| arg.contains(PROMPT_PLACEHOLDER)) {
        let args = planned.into_iter().map(|arg| arg.replace(PROMPT_PLACEHOLDER, prompt)).collect();
        return LaunchPlan { args, deferred_prompt: None, model_ignored };
    }
    let deferred =
        source == ArgvSource::Caller && adapter.is_some_and(|a| a.prompt_delivery == PromptDelivery::Deferred);
    if deferred {
        return LaunchPlan { args: planned, deferred_prompt: Some(prompt.to_owned()), model_ignored };
    }
    if !prompt.is_empty() {
        planned.push(prompt.to_owned());
    }
    LaunchPlan { args: planned, deferred_prompt: None, model_ignored }
}

/// The description a new session shows: an explicit one wins, `Clear` keeps none, and an
/// absent one is the prompt with its whitespace collapsed, cut to [`PTY_DESCRIPTION_MAX_CHARS`].
pub fn pty_description(param: DescriptionParam<'_>, prompt: &str) -> Option<String> {
    let text = match param {
        DescriptionParam::Clear => return None,
        DescriptionParam::Set(text) => text.trim().to_owned(),
        DescriptionParam::Absent => prompt.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    let text: String = text.chars().take(PTY_DESCRIPTION_MAX_CHARS).collect();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::adapters::by_id;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_placeholder_is_authoritative() {
        let plan = plan(by_id("codex"), &args(&["exec", "--json", "{prompt}"]), "fix it", None, ArgvSource::Caller);
        assert_eq!(plan.args, args(&["exec", "--json", "fix it"]));
        assert_eq!(plan.deferred_prompt, None);
    }

    #[test]
    fn a_normal_cli_gets_the_prompt_last_after_flags_and_model() {
        let plan = plan(by_id("claude"), &args(&["--verbose"]), "fix it", Some("opus"), ArgvSource::Caller);
        assert_eq!(plan.args, args(&["--verbose", "--model", "opus", "fix it"]));
    }

    #[test]
    fn a_prefill_only_tui_gets_the_prompt_through_the_pty() {
        let plan = plan(by_id("opencode"), &[], "add a health route", None, ArgvSource::Caller);
        assert_eq!(plan.args, Vec::<String>::new());
        assert_eq!(plan.deferred_prompt.as_deref(), Some("add a health route"));
    }

    #[test]
    fn a_run_config_argv_is_never_converted_to_deferred_delivery() {
        let plan = plan(by_id("codex"), &args(&["--profile", "work"]), "go", None, ArgvSource::RunConfig);
        assert_eq!(plan.args, args(&["--profile", "work", "go"]));
        assert_eq!(plan.deferred_prompt, None);
    }

    #[test]
    fn a_model_for_an_agent_without_a_known_flag_is_reported_not_guessed() {
        let plan = plan(by_id("goose"), &[], "go", Some("gpt-5"), ArgvSource::Caller);
        assert!(plan.model_ignored);
        assert_eq!(plan.args, args(&["go"]));
    }

    #[test]
    fn the_description_is_explicit_cleared_or_derived_from_the_prompt() {
        assert_eq!(pty_description(DescriptionParam::Set(" Review auth "), "x").as_deref(), Some("Review auth"));
        assert_eq!(pty_description(DescriptionParam::Clear, "x"), None);
        assert_eq!(pty_description(DescriptionParam::Set(""), "x"), None);
        let long = format!("Fix   the\nbug {}", "é".repeat(300));
        let derived = pty_description(DescriptionParam::Absent, &long).unwrap();
        assert!(derived.starts_with("Fix the bug é"));
        assert_eq!(derived.chars().count(), PTY_DESCRIPTION_MAX_CHARS);
    }
}

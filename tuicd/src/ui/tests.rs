use std::sync::Arc;
use std::time::Duration;

use super::*;

/// Short windows, so the tests run in milliseconds of real time.
const WINDOW: Duration = Duration::from_millis(300);
const GRACE: Duration = Duration::from_millis(100);
use crate::events::EventBus;

fn request() -> ConfirmRequest {
    ConfirmRequest {
        title: "Push?".into(),
        message: "push main to origin".into(),
        requester: "agent tu-1 (claude-code)".into(),
        kind: "ui_confirm",
    }
}

fn ui() -> Arc<Ui> {
    Arc::new(Ui::new(Arc::new(EventBus::new())))
}

fn kinds(ui: &Ui) -> Vec<&'static str> {
    ui.events().since(0).1.iter().map(|e| e.kind).collect()
}

async fn first_pending(ui: &Ui) -> String {
    for _ in 0..1000 {
        if let Some(p) = ui.pending_confirms().first() {
            return p.id.clone();
        }
        tokio::task::yield_now().await;
    }
    panic!("no confirmation became pending");
}

#[tokio::test]
async fn nobody_to_answer_refuses_at_once_and_says_nothing() {
    let ui = ui();
    assert_eq!(ui.confirm_within(request(), WINDOW, GRACE).await, ConfirmOutcome::NoClient);
    assert!(kinds(&ui).is_empty());
    let screenshots_only = ui.answerer(vec![Capability::Screenshot]);
    assert_eq!(ui.confirm_within(request(), WINDOW, GRACE).await, ConfirmOutcome::NoClient);
    drop(screenshots_only);
}

#[tokio::test]
async fn the_first_answer_wins_and_a_second_is_told_it_is_late() {
    let ui = ui();
    let _client = ui.answerer(vec![Capability::Confirm]);
    let asking = tokio::spawn({
        let ui = ui.clone();
        async move { ui.confirm_within(request(), WINDOW, GRACE).await }
    });
    let id = first_pending(&ui).await;
    assert_eq!(ui.answer("confirm-999", true), Err(AnswerError::NotFound));
    assert_eq!(ui.answer(&id, true), Ok(()));
    assert_eq!(ui.answer(&id, false), Err(AnswerError::AlreadyResolved));
    assert_eq!(asking.await.unwrap(), ConfirmOutcome::Confirmed);
    assert_eq!(kinds(&ui), [proto::events::UI_CONFIRM_REQUESTED, proto::events::UI_CONFIRM_RESOLVED]);
    assert!(ui.pending_confirms().is_empty());
}

#[tokio::test]
async fn a_declined_answer_names_its_reason() {
    let ui = ui();
    let _client = ui.answerer(vec![Capability::Confirm, Capability::Screenshot]);
    let asking = tokio::spawn({
        let ui = ui.clone();
        async move { ui.confirm_within(request(), WINDOW, GRACE).await }
    });
    let id = first_pending(&ui).await;
    ui.answer(&id, false).unwrap();
    let outcome = asking.await.unwrap();
    assert_eq!(outcome, ConfirmOutcome::Declined);
    assert_eq!(outcome.reason(), Some("declined by the user"));
    let resolved = ui.events().since(0).1.last().unwrap().data.to_string();
    assert!(resolved.contains("\"confirmed\":false") && resolved.contains("declined"), "{resolved}");
}

#[tokio::test]
async fn the_last_answerer_leaving_ends_the_wait_after_the_grace() {
    let ui = ui();
    let client = ui.answerer(vec![Capability::Confirm]);
    let asking = tokio::spawn({
        let ui = ui.clone();
        async move { ui.confirm_within(request(), WINDOW, GRACE).await }
    });
    first_pending(&ui).await;
    drop(client);
    assert!(!ui.can_confirm());
    let outcome =
        tokio::time::timeout(WINDOW, asking).await.expect("resolved within the grace, before the window").unwrap();
    assert_eq!(outcome, ConfirmOutcome::NoClient);
}

#[tokio::test]
async fn a_client_coming_back_within_the_grace_keeps_the_question_open() {
    let ui = ui();
    let client = ui.answerer(vec![Capability::Confirm]);
    let asking = tokio::spawn({
        let ui = ui.clone();
        async move { ui.confirm_within(request(), WINDOW, GRACE).await }
    });
    let id = first_pending(&ui).await;
    drop(client);
    tokio::time::sleep(GRACE / 4).await;
    let _back = ui.answerer(vec![Capability::Confirm]);
    tokio::time::sleep(GRACE * 3 / 2).await;
    assert_eq!(ui.pending_confirms().len(), 1, "still waiting after the grace: someone came back");
    ui.answer(&id, true).unwrap();
    assert_eq!(asking.await.unwrap(), ConfirmOutcome::Confirmed);
}

#[tokio::test]
async fn unanswered_times_out_and_a_dropped_caller_resolves_for_everyone() {
    let ui = ui();
    let _client = ui.answerer(vec![Capability::Confirm]);
    let outcome = ui.confirm_within(request(), WINDOW, GRACE).await;
    assert_eq!(outcome, ConfirmOutcome::TimedOut);
    assert_eq!(outcome.reason(), Some("no answer within 300s"));

    let asking = tokio::spawn({
        let ui = ui.clone();
        async move { ui.confirm_within(request(), WINDOW, GRACE).await }
    });
    let id = first_pending(&ui).await;
    asking.abort();
    let _ = asking.await;
    assert!(ui.pending_confirms().is_empty());
    assert_eq!(ui.answer(&id, true), Err(AnswerError::AlreadyResolved));
    let resolved = ui.events().since(0).1.last().unwrap().data.to_string();
    assert!(resolved.contains(&id) && resolved.contains("ended before an answer"), "{resolved}");
}

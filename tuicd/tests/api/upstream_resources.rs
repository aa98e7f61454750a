//! Upstream resources, resource templates, prompts, completions and instructions through tuicd's
//! `/mcp`, with the real `server-everything`: URIs namespaced as
//! `tuic+upstream://<upstream>/<uri>` and read back through its upstream, prompts named
//! `{upstream}__{prompt}`, completions routed, and bad input refused naming what was wrong.

use serde_json::{Value, json};

use crate::harness::Daemon;
use crate::mcp_client::initialize;
use crate::upstream_util::*;

const DOC: &str = "tuic+upstream://everything/demo://resource/static/document/architecture.md";

fn strings<'a>(items: &'a Value, key: &str) -> Vec<&'a str> {
    items.as_array().unwrap().iter().filter_map(|i| i[key].as_str()).collect()
}

/// The error of a JSON-RPC answer, asserting it is one: `(code, message)`.
fn error(body: &Value) -> (i64, String) {
    assert!(body.get("result").is_none(), "an error, not a result: {body}");
    (body["error"]["code"].as_i64().unwrap(), body["error"]["message"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn resources_and_templates_are_listed_namespaced_and_read_through_their_upstream() {
    let daemon = with_upstreams(&[everything("everything")]).start().await;
    wait_status(&daemon, "everything", "ready").await;
    let init = initialize(&daemon, &[]).await;
    let session = init.session().unwrap();
    let capabilities = &init.body["result"]["capabilities"];
    for served in ["resources", "prompts", "completions"] {
        assert!(capabilities[served].is_object(), "{served} advertised: {capabilities}");
    }

    let listed = request(&daemon, &session, 1, "resources/list", json!({})).await;
    let uris = strings(&listed["result"]["resources"], "uri");
    assert!(uris.contains(&DOC), "{uris:?}");
    assert!(uris.iter().all(|u| u.starts_with("tuic+upstream://everything/")), "{uris:?}");

    let read = request(&daemon, &session, 2, "resources/read", json!({"uri": DOC})).await;
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], DOC, "{read}");
    assert!(contents["text"].as_str().unwrap().contains("Architecture"), "{read}");

    let templates = request(&daemon, &session, 3, "resources/templates/list", json!({})).await;
    let uri_templates = strings(&templates["result"]["resourceTemplates"], "uriTemplate");
    let text_template = "tuic+upstream://everything/demo://resource/dynamic/text/{resourceId}";
    assert!(uri_templates.contains(&text_template), "{uri_templates:?}");
    let expanded = text_template.replace("{resourceId}", "3");
    let read = request(&daemon, &session, 4, "resources/read", json!({"uri": expanded})).await;
    assert_eq!(read["result"]["contents"][0]["uri"], expanded.as_str(), "{read}");
    assert!(read["result"]["contents"][0]["text"].as_str().unwrap().starts_with("Resource 3:"), "{read}");

    // A tool's resource links point through tuicd, and read there.
    let links = call_tool(&daemon, &session, "everything__get-resource-links", json!({"count": 2})).await;
    let link = links["result"]["content"].as_array().unwrap().iter().find(|c| c["type"] == "resource_link").unwrap();
    let link_uri = link["uri"].as_str().unwrap();
    assert!(link_uri.starts_with("tuic+upstream://everything/demo://resource/dynamic/"), "{links}");
    let read = request(&daemon, &session, 5, "resources/read", json!({"uri": link_uri})).await;
    assert_eq!(read["result"]["contents"][0]["uri"], link_uri, "{read}");

    // Bad input names what was wrong.
    let (code, message) = error(&request(&daemon, &session, 6, "resources/read", json!({"uri": "demo://x"})).await);
    assert_eq!(code, -32602);
    assert!(message.contains("demo://x") && message.contains("tuic+upstream://"), "{message}");
    let nope = "tuic+upstream://nope/demo://x";
    let (code, message) = error(&request(&daemon, &session, 7, "resources/read", json!({"uri": nope})).await);
    assert!(code == -32602 && message.contains("\"nope\"") && message.contains("everything"), "{message}");
    let (code, message) = error(&request(&daemon, &session, 8, "resources/read", json!({"uri": 3})).await);
    assert!(code == -32602 && message.contains("\"uri\" must be a string"), "{message}");
    let (code, message) = error(&request(&daemon, &session, 9, "resources/list", json!({"cursor": "x"})).await);
    assert!(code == -32602 && message.contains("cursor"), "{message}");
    // The upstream's own refusal of a URI it does not know passes through as it worded it.
    let unknown = "tuic+upstream://everything/demo://resource/nothing-here";
    let (_, message) = error(&request(&daemon, &session, 10, "resources/read", json!({"uri": unknown})).await);
    assert!(message.contains("demo://resource/nothing-here"), "{message}");
}

#[tokio::test]
async fn prompts_and_completions_are_routed_by_their_listed_pair() {
    let daemon = with_upstreams(&[everything("everything")]).start().await;
    wait_status(&daemon, "everything", "ready").await;
    let session = session(&daemon).await;

    let listed = request(&daemon, &session, 1, "prompts/list", json!({})).await;
    let names = strings(&listed["result"]["prompts"], "name");
    for expected in ["everything__simple-prompt", "everything__args-prompt", "everything__completable-prompt"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let args = listed["result"]["prompts"].as_array().unwrap().iter().find(|p| p["name"] == "everything__args-prompt");
    assert_eq!(args.unwrap()["arguments"][0]["name"], "city", "the upstream's prompt kept: {listed}");

    let got = request(
        &daemon,
        &session,
        2,
        "prompts/get",
        json!({"name": "everything__args-prompt", "arguments": {"city": "Lyon"}}),
    )
    .await;
    let text = got["result"]["messages"][0]["content"]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Lyon"), "{got}");

    // A fresh session gets a prompt it never listed.
    let other = crate::upstream_util::session(&daemon).await;
    let simple = request(&daemon, &other, 3, "prompts/get", json!({"name": "everything__simple-prompt"})).await;
    assert!(simple["result"]["messages"].as_array().is_some_and(|m| !m.is_empty()), "{simple}");

    let completed = request(
        &daemon,
        &session,
        4,
        "completion/complete",
        json!({
        "ref": {"type": "ref/prompt", "name": "everything__completable-prompt"},
        "argument": {"name": "department", "value": "Eng"}}),
    )
    .await;
    assert_eq!(completed["result"]["completion"]["values"], json!(["Engineering"]), "{completed}");
    let in_context = request(
        &daemon,
        &session,
        5,
        "completion/complete",
        json!({
        "ref": {"type": "ref/prompt", "name": "everything__completable-prompt"},
        "argument": {"name": "name", "value": "A"}, "context": {"arguments": {"department": "Engineering"}}}),
    )
    .await;
    assert_eq!(in_context["result"]["completion"]["values"], json!(["Alice"]), "{in_context}");
    let template = request(
        &daemon,
        &session,
        6,
        "completion/complete",
        json!({
        "ref": {"type": "ref/resource", "uri": "tuic+upstream://everything/demo://resource/dynamic/text/{resourceId}"},
        "argument": {"name": "resourceId", "value": "7"}}),
    )
    .await;
    assert_eq!(template["result"]["completion"]["values"], json!(["7"]), "{template}");

    let (code, message) =
        error(&request(&daemon, &session, 7, "prompts/get", json!({"name": "everything__nope"})).await);
    assert!(
        code == -32602 && message.contains("everything__nope") && message.contains("everything__simple-prompt"),
        "{message}"
    );
    let (code, message) = error(&request(&daemon, &session, 8, "prompts/get", json!({})).await);
    assert!(code == -32602 && message.contains("\"name\" is required"), "{message}");
    let (code, message) = error(
        &request(
            &daemon,
            &session,
            9,
            "completion/complete",
            json!({
        "ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": ""}}),
        )
        .await,
    );
    assert!(code == -32602 && message.contains("ref/tool"), "{message}");
    let (code, message) = error(
        &request(
            &daemon,
            &session,
            10,
            "completion/complete",
            json!({
        "ref": {"type": "ref/prompt", "name": "everything__args-prompt"}}),
        )
        .await,
    );
    assert!(code == -32602 && message.contains("\"argument\""), "{message}");
}

#[tokio::test]
async fn upstream_instructions_are_joined_and_nothing_is_advertised_without_upstreams() {
    let daemon = with_upstreams(&[everything("everything")]).start().await;
    wait_status(&daemon, "everything", "ready").await;
    let init = initialize(&daemon, &[]).await;
    let instructions = init.body["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("## everything (tools everything__*)"), "{instructions}");
    assert!(instructions.contains("Everything Server"), "{instructions}");
    let (native, upstream) = instructions.split_once("\nUpstream servers' own instructions").unwrap();
    assert!(native.contains("tuicd"), "tuicd's own instructions first");
    assert!(upstream.len() <= 2_100, "within the budget: {} B", upstream.len());

    let bare = Daemon::start().await;
    let init = initialize(&bare, &[]).await;
    let capabilities = &init.body["result"]["capabilities"];
    for absent in ["resources", "prompts", "completions"] {
        assert!(capabilities.get(absent).is_none(), "{absent} not advertised: {capabilities}");
    }
    assert!(!init.body["result"]["instructions"].as_str().unwrap().contains("Upstream servers"));
    let session = init.session().unwrap();
    for method in ["resources/list", "resources/read", "prompts/list", "prompts/get", "completion/complete"] {
        let answer = request(&bare, &session, 1, method, json!({})).await;
        assert_eq!(answer["error"]["code"], -32601, "{method} is not served: {answer}");
    }
}

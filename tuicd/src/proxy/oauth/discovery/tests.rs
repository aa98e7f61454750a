use super::*;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn strings(urls: Vec<Url>) -> Vec<String> {
    urls.into_iter().map(String::from).collect()
}

#[test]
fn a_bearer_challenge_yields_its_metadata_url_scope_and_error() {
    let c = parse_challenge(
        r#"Bearer realm="mcp", error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write""#,
    )
    .unwrap();
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
    assert_eq!(c.error.as_deref(), Some("invalid_token"));
}

#[test]
fn other_schemes_are_skipped_and_unquoted_or_escaped_values_read() {
    let c =
        parse_challenge(r#"Basic realm="x", bearer resource_metadata=https://a.example/m, scope="a \"b\"""#).unwrap();
    assert_eq!(c.resource_metadata.as_deref(), Some("https://a.example/m"));
    assert_eq!(c.scope.as_deref(), Some(r#"a "b""#));
    assert_eq!(parse_challenge("Bearer"), Some(Challenge::default()));
    assert_eq!(parse_challenge(r#"Basic realm="x""#), None);
    assert_eq!(parse_challenge(""), None);
}

#[test]
fn an_insufficient_scope_challenge_is_told_from_every_other_one() {
    // The conformance suite's two spellings: `error` last, and `error` first with a description.
    let c = insufficient_scope(
        r#"Bearer scope="mcp:basic mcp:write", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", error="insufficient_scope""#,
    )
    .unwrap();
    assert_eq!(c.scope.as_deref(), Some("mcp:basic mcp:write"));
    assert_eq!(c.resource_metadata.as_deref(), Some("http://h/.well-known/oauth-protected-resource/mcp"));
    let c = insufficient_scope(
        r#"Bearer error="insufficient_scope", scope="mcp:admin", error_description="Scope upgrade will never succeed""#,
    )
    .unwrap();
    assert_eq!(c.scope.as_deref(), Some("mcp:admin"));
    assert_eq!(insufficient_scope(r#"Bearer error=INSUFFICIENT_SCOPE"#).map(|c| c.scope), Some(None));
    assert_eq!(insufficient_scope(r#"Bearer error="invalid_token", scope="a""#), None);
    assert_eq!(insufficient_scope(r#"Bearer scope="a""#), None);
    assert_eq!(insufficient_scope(r#"Basic error="insufficient_scope""#), None);
    assert_eq!(insufficient_scope(""), None);
}

#[test]
fn resource_metadata_is_looked_up_path_aware_then_at_the_root() {
    assert_eq!(
        strings(resource_metadata_urls(&url("https://h.example/api/mcp?x=1"))),
        vec![
            "https://h.example/.well-known/oauth-protected-resource/api/mcp",
            "https://h.example/.well-known/oauth-protected-resource"
        ]
    );
    assert_eq!(
        strings(resource_metadata_urls(&url("http://127.0.0.1:9000/"))),
        vec!["http://127.0.0.1:9000/.well-known/oauth-protected-resource"]
    );
}

#[test]
fn an_issuer_with_a_path_gets_insertion_then_oidc_variants() {
    assert_eq!(
        strings(authorization_server_urls(&url("https://auth.example/tenant1"))),
        vec![
            "https://auth.example/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example/.well-known/openid-configuration/tenant1",
            "https://auth.example/tenant1/.well-known/openid-configuration",
        ]
    );
    assert_eq!(
        strings(authorization_server_urls(&url("https://auth.example"))),
        vec![
            "https://auth.example/.well-known/oauth-authorization-server",
            "https://auth.example/.well-known/openid-configuration",
        ]
    );
}

#[test]
fn scope_comes_from_config_then_challenge_then_resource_metadata() {
    let challenge = Challenge { scope: Some("mcp:tools".into()), ..Default::default() };
    let resource = ResourceMetadata { scopes_supported: Some(vec!["a".into(), "b".into()]), ..Default::default() };
    assert_eq!(choose_scope(&["x".into(), "y".into()], Some(&challenge), Some(&resource)).as_deref(), Some("x y"));
    assert_eq!(choose_scope(&[], Some(&challenge), Some(&resource)).as_deref(), Some("mcp:tools"));
    assert_eq!(choose_scope(&[], Some(&Challenge::default()), Some(&resource)).as_deref(), Some("a b"));
    assert_eq!(choose_scope(&[], None, None), None);
}

#[test]
fn the_registrable_domain_groups_subdomains_and_keeps_addresses_whole() {
    assert_eq!(registrable_domain(&url("https://mcp.api.example.com/x")), "example.com");
    assert_eq!(registrable_domain(&url("https://login.example.co.uk")), "example.co.uk");
    assert_eq!(registrable_domain(&url("http://127.0.0.1:8080")), "127.0.0.1");
    assert!(!cross_domain(&url("https://mcp.example.com"), &url("https://auth.example.com")));
    assert!(cross_domain(&url("https://mcp.example.com"), &url("https://example.auth0.com")));
    assert!(cross_domain(&url("http://127.0.0.1:1"), &url("http://127.0.0.2:1")));
    assert!(!cross_domain(&url("http://localhost:1"), &url("http://localhost:2")));
}

#[test]
fn the_named_resource_must_be_the_upstream_or_a_prefix_of_it() {
    let server = url("https://mcp.example.com/api/mcp");
    assert_eq!(resource_parameter(&server, None).unwrap(), "https://mcp.example.com/api/mcp");
    assert_eq!(
        resource_parameter(&server, Some("https://mcp.example.com/api/mcp")).unwrap(),
        "https://mcp.example.com/api/mcp"
    );
    assert_eq!(resource_parameter(&server, Some("https://mcp.example.com/")).unwrap(), "https://mcp.example.com/");
    assert!(resource_parameter(&server, Some("https://mcp.example.com/api/mc")).is_err());
    let err = resource_parameter(&server, Some("https://other.example.com/mcp")).unwrap_err();
    assert!(err.contains("other.example.com"), "{err}");
}

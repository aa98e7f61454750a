//! The meta tools over the real registry and a test app.

use serde_json::{Value, json};

use crate::config::AppConfig;
use crate::mcp::tools::tests::test_app;

#[test]
fn the_index_is_rebuilt_when_the_tool_set_changes() {
    let dir = tempfile::tempdir().unwrap();
    let app = test_app(dir.path());
    let all = AppConfig { disabled_native_tools: Vec::new(), ..AppConfig::default() };
    let index = app.mcp.search_index.get(&all);
    assert!(index.names().contains(&"session"));
    assert!(std::sync::Arc::ptr_eq(&index, &app.mcp.search_index.get(&all)), "an unchanged set keeps its index");
    let fewer = AppConfig { disabled_native_tools: vec!["session".into()], ..AppConfig::default() };
    let rebuilt = app.mcp.search_index.get(&fewer);
    assert!(!rebuilt.names().contains(&"session"), "{:?}", rebuilt.names());
    let hits: Vec<Value> = rebuilt.search("type into a terminal", 5).iter().map(|h| json!(h.name)).collect();
    assert!(!hits.contains(&json!("session")), "a hidden tool is never found: {hits:?}");
}

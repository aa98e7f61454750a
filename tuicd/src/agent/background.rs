//! `background_work`: whether a meaningful descendant of the agent process is alive (a build, a
//! test run, a dev server the agent started), as opposed to the persistent integration helpers
//! an agent keeps running for its whole life (MCP servers, tuic-bridge, language servers).
//!
//! The caller takes the process snapshot (at most once a second, only while someone asks) and
//! passes the agent's descendants; this module only decides. The helper list is data.

use super::Adapter;

/// One descendant of the agent process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Descendant<'a> {
    /// The executable name (`comm`).
    pub name: &'a str,
    /// The full command line, space separated.
    pub args: &'a str,
}

/// A rule that marks a descendant as an integration helper, not work.
#[derive(Debug, Clone, Copy)]
pub(crate) enum HelperRule {
    Name(&'static str),
    NamePrefix(&'static str),
    ArgsContain(&'static str),
    /// The named program with an argument containing this text (`caffeinate -i -t 300`).
    NameWithArg(&'static str, &'static str),
}

/// Persistent helpers agents keep alive; none of them is the agent doing work.
pub(crate) const HELPERS: &[HelperRule] = &[
    HelperRule::Name("tuic-bridge"),
    HelperRule::Name("mdkb"),
    HelperRule::Name("node_repl"),
    HelperRule::NameWithArg("caffeinate", "-t"),
    HelperRule::NamePrefix("mcp-server"),
    HelperRule::ArgsContain("@modelcontextprotocol/"),
    HelperRule::ArgsContain("mcp-server"),
    HelperRule::ArgsContain("mcp_server"),
    HelperRule::Name("rust-analyzer"),
    HelperRule::Name("gopls"),
    HelperRule::Name("typescript-language-server"),
    HelperRule::Name("pyright-langserver"),
    HelperRule::Name("clangd"),
];

impl HelperRule {
    fn matches(&self, process: &Descendant<'_>) -> bool {
        match *self {
            HelperRule::Name(name) => process.name == name,
            HelperRule::NamePrefix(prefix) => process.name.starts_with(prefix),
            HelperRule::ArgsContain(text) => process.args.contains(text),
            HelperRule::NameWithArg(name, arg) => {
                process.name == name && process.args.split_whitespace().skip(1).any(|a| a.contains(arg))
            }
        }
    }
}

/// Whether `process` is an integration helper.
pub(crate) fn is_helper(process: &Descendant<'_>) -> bool {
    HELPERS.iter().any(|rule| rule.matches(process))
}

/// Whether `process` is the agent CLI itself: a native binary its launcher starts (`node codex`
/// runs the native `codex`) or a re-launch of itself with other runtime flags (`node gemini`
/// starts `node --max-old-space-size=... gemini`). Its own children can still be work.
pub(crate) fn is_agent_itself(adapter: &Adapter, process: &Descendant<'_>) -> bool {
    let name = process.name.strip_suffix(".exe").unwrap_or(process.name);
    adapter.binaries.contains(&name) || adapter.own_processes.iter().any(|own| process.args.contains(own))
}

/// Whether any descendant of `adapter`'s process is meaningful work.
pub(crate) fn has_background_work<'a>(
    adapter: Option<&Adapter>,
    descendants: impl IntoIterator<Item = Descendant<'a>>,
) -> bool {
    descendants
        .into_iter()
        .any(|process| !is_helper(&process) && !adapter.is_some_and(|a| is_agent_itself(a, &process)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p<'a>(name: &'a str, args: &'a str) -> Descendant<'a> {
        Descendant { name, args }
    }

    #[test]
    fn integration_helpers_are_not_background_work() {
        let helpers = [
            p("tuic-bridge", "tuic-bridge"),
            p("node", "node /usr/lib/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
            p("caffeinate", "caffeinate -i -t 300"),
            p("uvx", "uvx mcp-server-git --repository ."),
            p("rust-analyzer", "rust-analyzer"),
        ];
        assert!(!has_background_work(None, helpers));
        assert!(!has_background_work(None, []));
    }

    #[test]
    fn a_build_or_a_long_caffeinate_is_work() {
        assert!(has_background_work(None, [p("tuic-bridge", "tuic-bridge"), p("cargo", "cargo test -p tuicd")]));
        assert!(has_background_work(None, [p("caffeinate", "caffeinate -i make")]));
    }

    #[test]
    fn the_clis_own_native_binary_or_relaunch_is_the_agent_not_work() {
        use crate::agent::adapters::by_id;
        let codex = by_id("codex").unwrap();
        let native = p("codex", "/t/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex/codex");
        assert!(!has_background_work(Some(codex), [native]));
        assert!(has_background_work(Some(codex), [native, p("sleep", "sleep 5")]), "its children are work");
        let gemini = by_id("gemini").unwrap();
        let relaunch = p("node", "node --max-old-space-size=8192 /t/node_modules/@google/gemini-cli/bundle/gemini.js");
        assert!(!has_background_work(Some(gemini), [relaunch]));
        assert!(has_background_work(None, [relaunch]), "without the adapter it is just a node process");
    }
}

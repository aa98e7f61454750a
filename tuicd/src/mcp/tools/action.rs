//! One declaration per tool action: [`ActionDef`], built by the [`action!`] macro from the
//! action's name, its typed parameters, its handler and two flags. The tool's `inputSchema`, its
//! `action` enum, dispatch and the docs check all read these declarations.

use schemars::Schema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::{Answer, CallContext, ToolError, ToolFuture, to_value};

/// One action of a tool.
#[derive(Debug)]
pub(crate) struct ActionDef {
    pub name: &'static str,
    /// Refused to remote (non-loopback) callers before the handler runs.
    pub loopback_only: bool,
    /// Runs on the blocking pool or waits for a long time (a process spawn, a disk write, a wait).
    /// Read by the docs check, which holds docs/mcp.md's `(blocks)` marks to it.
    #[cfg_attr(not(test), allow(dead_code))]
    pub blocks: bool,
    /// The schema of the action's typed parameters.
    pub schema: fn() -> Schema,
    /// Parses the parameters into their type and runs the handler.
    pub call: fn(CallContext, Map<String, Value>) -> ToolFuture,
}

/// What a handler may answer: any `Serialize` type (a typed answer, or `Value` where the answer
/// is genuinely open), or an [`Answer`] already shaped by the tool.
pub(crate) trait Reply {
    fn into_answer(self) -> Result<Answer, ToolError>;
}

impl<T: Serialize> Reply for T {
    fn into_answer(self) -> Result<Answer, ToolError> {
        to_value(&self).map(Answer::Value)
    }
}

impl Reply for Answer {
    fn into_answer(self) -> Result<Answer, ToolError> {
        Ok(self)
    }
}

/// Declares one action:
/// `action!(TOOL_NAME, "name", Params => async handler, loopback: bool, blocks: bool)`.
/// The handler is `fn(&CallContext, Params) -> Result<impl Reply, ToolError>`, `async` or `sync`.
macro_rules! action {
    (@run async $handler:path, $ctx:ident, $params:ident) => { $handler(&$ctx, $params).await };
    (@run sync $handler:path, $ctx:ident, $params:ident) => { $handler(&$ctx, $params) };
    ($tool:expr, $name:literal, $params:ty => $mode:ident $handler:path, loopback: $loopback:literal, blocks: $blocks:literal) => {
        $crate::mcp::tools::action::ActionDef {
            name: $name,
            loopback_only: $loopback,
            blocks: $blocks,
            schema: $crate::mcp::tools::schema::derive::<$params>,
            call: {
                fn call(
                    ctx: $crate::mcp::tools::CallContext,
                    args: serde_json::Map<String, serde_json::Value>,
                ) -> $crate::mcp::tools::ToolFuture {
                    Box::pin(async move {
                        let params: $params = $crate::mcp::tools::params($tool, $name, args)?;
                        let answer = $crate::mcp::tools::action::action!(@run $mode $handler, ctx, params)?;
                        $crate::mcp::tools::action::Reply::into_answer(answer)
                    })
                }
                call
            },
        }
    };
}
pub(crate) use action;

/// Parameters of an action that takes none.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoParams {}

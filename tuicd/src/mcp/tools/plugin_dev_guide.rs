//! The `plugin_dev_guide` tool: the plugin developer guide, as text an agent reads before it
//! writes a plugin (the same guide `GET /plugins/docs` serves).

use serde::Serialize;

use super::action::{NoParams, action};
use super::{CallContext, ToolDef, ToolError};

pub(crate) const NAME: &str = "plugin_dev_guide";

/// The guide, in Markdown.
pub(crate) const GUIDE: &str = include_str!("plugin_dev_guide.md");

pub(crate) const DESCRIPTION: &str = "The guide to writing a tuic plugin: the routes, events and output watchers a plugin uses. Read it before writing one.";

pub(crate) static TOOL: ToolDef = ToolDef {
    name: NAME,
    description: DESCRIPTION,
    takes_action: false,
    actions: &[action!(NAME, "guide", NoParams => sync guide, loopback: false, blocks: false)],
};

#[derive(Debug, Serialize)]
struct Guide {
    content: &'static str,
}

fn guide(_: &CallContext, _: NoParams) -> Result<Guide, ToolError> {
    Ok(Guide { content: GUIDE })
}

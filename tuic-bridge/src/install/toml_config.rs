//! Codex's `config.toml`: one `[mcp_servers.<name>]` table. Edited through `toml_edit`, which
//! keeps the rest of the file byte for byte: comments, key order, spacing, other tables.

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, TableLike, Value};

use super::{Change, Edit, Refusal};

/// Puts `[mcp_servers.<name>]` with `command` and no args into `old` (None: no file yet).
pub(crate) fn edit(old: Option<&str>, name: &str, command: &str) -> Result<Edit, Refusal> {
    let text = old.unwrap_or_default();
    let mut doc = text.parse::<DocumentMut>().map_err(|e| Refusal(e.to_string().trim_end().to_owned()))?;
    let servers = doc.entry("mcp_servers").or_insert_with(implicit_table);
    let change = match servers {
        Item::Table(servers) => set_table_entry(servers, name, command),
        Item::Value(Value::InlineTable(servers)) => set_inline_entry(servers, name, command),
        other => return Err(Refusal(format!("mcp_servers is a TOML {}, not a table", other.type_name()))),
    };
    match change {
        Change::Unchanged => Ok(Edit::unchanged(text)),
        change => Ok(Edit { change, text: doc.to_string() }),
    }
}

/// `[mcp_servers.tuic]` without a bare `[mcp_servers]` header above it.
fn implicit_table() -> Item {
    let mut table = Table::new();
    table.set_implicit(true);
    Item::Table(table)
}

/// The usual shape, `[mcp_servers.<name>]`. An existing table is emptied and refilled rather than
/// replaced, so the comments above its header stay where they were.
fn set_table_entry(servers: &mut Table, name: &str, command: &str) -> Change {
    match servers.get_mut(name) {
        Some(existing) if is_entry(existing, command) => Change::Unchanged,
        Some(Item::Table(existing)) => {
            existing.clear();
            existing.set_implicit(false);
            fill(existing, command);
            Change::Replaced
        }
        Some(existing) => {
            *existing = Item::Table(new_table(command));
            Change::Replaced
        }
        None => {
            servers.insert(name, Item::Table(new_table(command)));
            Change::Added
        }
    }
}

/// `mcp_servers = { ... }` written inline: the entry goes in as an inline table too.
fn set_inline_entry(servers: &mut InlineTable, name: &str, command: &str) -> Change {
    let change = match servers.get(name) {
        Some(existing) if is_value_entry(existing, command) => return Change::Unchanged,
        Some(_) => Change::Replaced,
        None => Change::Added,
    };
    let mut entry = InlineTable::new();
    entry.insert("command", Value::from(command));
    entry.insert("args", Value::Array(Array::new()));
    servers.insert(name, Value::InlineTable(entry));
    change
}

fn new_table(command: &str) -> Table {
    let mut table = Table::new();
    fill(&mut table, command);
    table
}

fn fill(table: &mut Table, command: &str) {
    table.insert("command", toml_edit::value(command));
    table.insert("args", toml_edit::value(Array::new()));
}

/// Exactly `command = <command>` and `args = []`, in either order, in any table form.
fn is_entry(item: &Item, command: &str) -> bool {
    item.as_table_like().is_some_and(|table| is_entry_table(table, command))
}

fn is_value_entry(value: &Value, command: &str) -> bool {
    value.as_inline_table().is_some_and(|table| is_entry_table(table, command))
}

fn is_entry_table(table: &dyn TableLike, command: &str) -> bool {
    table.len() == 2
        && table.get("command").and_then(Item::as_str) == Some(command)
        && table.get("args").and_then(Item::as_array).is_some_and(Array::is_empty)
}

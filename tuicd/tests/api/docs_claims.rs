//! docs/configuration.md promises what each key does: every key it lists must be read by the
//! daemon's code (a field access outside tests), unless its row says it is `reserved` or `legacy`.

use std::path::{Path, PathBuf};

/// `(key path, meaning)` for each row of the key table.
fn documented_keys(markdown: &str) -> Vec<(String, String)> {
    let mut keys = Vec::new();
    let table = markdown.lines().skip_while(|l| !l.starts_with("| key |")).take_while(|l| l.starts_with('|'));
    for line in table.filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (names, meaning) = (cells[1], cells.get(3).copied().unwrap_or(""));
        let mut parent = String::new();
        for name in names.split(',').map(|n| n.trim().trim_matches('`')) {
            let key =
                if name.contains('.') || parent.is_empty() { name.to_owned() } else { format!("{parent}.{name}") };
            parent = key.rsplit_once('.').map(|(p, _)| p.to_owned()).unwrap_or_default();
            keys.push((key, meaning.to_owned()));
        }
    }
    keys
}

/// The daemon's source without its test code.
fn production_source(dir: &Path, out: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path: PathBuf = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                production_source(&path, out);
            }
        } else if name.ends_with(".rs") && !name.ends_with("tests.rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push_str(text.split("#[cfg(test)]").next().unwrap_or(""));
        }
    }
}

#[test]
fn every_documented_config_key_is_read_by_the_daemon() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let markdown = std::fs::read_to_string(root.join("../docs/configuration.md")).unwrap();
    let keys = documented_keys(&markdown);
    assert!(keys.len() > 15, "the key table was not found: {keys:?}");
    let mut source = String::new();
    production_source(&root.join("src"), &mut source);
    let unread: Vec<&String> = keys
        .iter()
        .filter(|(_, meaning)| !(meaning.starts_with("reserved") || meaning.starts_with("legacy")))
        .map(|(key, _)| key)
        .filter(|key| {
            let field = key.rsplit('.').next().unwrap();
            !source.contains(&format!(".{field}"))
        })
        .collect();
    assert!(unread.is_empty(), "docs/configuration.md documents keys nothing reads: {unread:?}");
}

#[test]
fn the_key_table_parser_reads_grouped_keys() {
    let table = "| key | default | meaning |\n|---|---|---|\n| `a.b.c`, `d` | unset | x |\n| `e` | `1` | reserved |\n\n| `f` | g | h |\n";
    let keys: Vec<String> = documented_keys(table).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["a.b.c", "a.b.d", "e"]);
}

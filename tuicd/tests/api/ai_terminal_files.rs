//! The `ai_terminal_*` file tools through the real daemon on a real git repository: paged and
//! redacted reads, globbed listings and regex search honouring .gitignore, writes and edits
//! confirmed by a scripted person (declined, or refused at once with nobody to answer), the
//! repository confinement, and clear errors for bad input.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::ai_terminal::{enabled, error_of, repo, shell_in};
use crate::harness::ConfirmAnswerer;
use crate::mcp_client::ok;

const AWS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const GITHUB_TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

/// The test repository's files: a long text, secrets, ignored files, a binary one.
fn populate(root: &Path) {
    let notes: String = (1..=250).map(|n| format!("note {n}\n")).collect();
    std::fs::write(root.join("notes.txt"), notes).unwrap();
    std::fs::write(root.join(".env"), format!("AWS_ACCESS_KEY_ID={AWS_KEY}\nGITHUB_TOKEN={GITHUB_TOKEN}\nDEBUG=1\n"))
        .unwrap();
    std::fs::write(root.join(".gitignore"), "ignored/\n*.log\n").unwrap();
    std::fs::create_dir_all(root.join("ignored")).unwrap();
    std::fs::write(root.join("ignored/hidden.rs"), "let needle = 1;\n").unwrap();
    std::fs::write(root.join("debug.log"), "needle in a log\n").unwrap();
    std::fs::write(root.join("src/main.rs"), "// before\nlet needle = 2;\n// after\n").unwrap();
    std::fs::write(root.join("src/a.rs"), format!("const KEY: &str = \"{AWS_KEY}\"; // needle\n")).unwrap();
    std::fs::write(root.join("blob.bin"), b"needle\0\x01\x02").unwrap();
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn read_list_and_search_stay_in_the_repository_redacted_and_honour_gitignore() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    populate(&root);
    let id = shell_in(&daemon, &root).await;

    let page = ok(&daemon, "ai_terminal_read_file", json!({"session_id": id, "file_path": "notes.txt"})).await;
    assert_eq!(page["lines"], json!(200), "{page}");
    assert_eq!(page["total_lines"], json!(250));
    assert_eq!(page["next_offset"], json!(200));
    assert!(page["content"].as_str().unwrap().starts_with("note 1\nnote 2\n"));
    assert!(page["content"].as_str().unwrap().ends_with("note 200"));
    let last = ok(
        &daemon,
        "ai_terminal_read_file",
        json!({"session_id": id, "file_path": root.join("notes.txt"), "offset": 240, "limit": 2000}),
    )
    .await;
    assert_eq!(last["lines"], json!(10), "{last}");
    assert!(last.get("next_offset").is_none(), "{last}");
    assert_eq!(last["content"].as_str().unwrap().lines().next(), Some("note 241"));

    let env = ok(&daemon, "ai_terminal_read_file", json!({"session_id": id, "file_path": ".env"})).await;
    let text = env["content"].as_str().unwrap();
    assert!(!text.contains(AWS_KEY) && !text.contains(GITHUB_TOKEN), "{text}");
    assert!(text.contains("[REDACTED:") && text.contains("DEBUG=1"), "{text}");

    let rust = ok(&daemon, "ai_terminal_list_files", json!({"session_id": id, "pattern": "**/*.rs"})).await;
    assert_eq!(strings(&rust["files"]), ["src/a.rs", "src/lib.rs", "src/main.rs"], "{rust}");
    assert_eq!(rust["truncated"], json!(false));
    let top = ok(&daemon, "ai_terminal_list_files", json!({"session_id": id, "pattern": "*"})).await;
    let top = strings(&top["files"]);
    assert!(top.contains(&".env".to_owned()) && top.contains(&"notes.txt".to_owned()), "{top:?}");
    assert!(!top.iter().any(|f| f.ends_with(".log") || f.starts_with(".git/")), "{top:?}");
    let src = ok(&daemon, "ai_terminal_list_files", json!({"session_id": id, "pattern": "*.rs", "path": "src"})).await;
    assert_eq!(strings(&src["files"]), ["a.rs", "lib.rs", "main.rs"], "{src}");

    let found = ok(
        &daemon,
        "ai_terminal_search_files",
        json!({"session_id": id, "pattern": r"let needle = \d", "context_lines": 1}),
    )
    .await;
    let matches = found["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 1, "ignored/ and the binary file are skipped: {found}");
    assert_eq!(matches[0]["file"], json!("src/main.rs"));
    assert_eq!(matches[0]["line"], json!(2));
    assert_eq!(matches[0]["before"], json!(["// before"]));
    assert_eq!(matches[0]["after"], json!(["// after"]));

    let needles = ok(&daemon, "ai_terminal_search_files", json!({"session_id": id, "pattern": "needle"})).await;
    let files: Vec<&str> = needles["matches"].as_array().unwrap().iter().map(|m| m["file"].as_str().unwrap()).collect();
    assert_eq!(files, ["src/a.rs", "src/main.rs"], "*.log, ignored/ and binaries skipped: {needles}");
    let secret_line = needles["matches"][0]["text"].as_str().unwrap();
    assert!(!secret_line.contains(AWS_KEY) && secret_line.contains("[REDACTED:aws_access_key_id]"), "{secret_line}");
    let in_env =
        ok(&daemon, "ai_terminal_search_files", json!({"session_id": id, "pattern": "TOKEN", "glob": ".env"})).await;
    assert_eq!(in_env["matches"].as_array().unwrap().len(), 1, "{in_env}");
    assert!(!in_env.to_string().contains(GITHUB_TOKEN), "{in_env}");
    let by_glob =
        ok(&daemon, "ai_terminal_search_files", json!({"session_id": id, "pattern": "needle", "glob": "src/m*.rs"}))
            .await;
    assert_eq!(by_glob["matches"].as_array().unwrap().len(), 1, "{by_glob}");
}

#[tokio::test]
async fn writes_and_edits_happen_only_when_a_person_confirms() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let new_file = root.join("src/new.txt");
    let old_file = root.join("src/old.txt");
    std::fs::write(&old_file, "alpha\nbeta\nalpha\n").unwrap();
    let calls = [
        (
            "ai_terminal_write_file",
            json!({"session_id": id, "file_path": "src/new.txt", "content": "alpha\nbeta\nalpha\n"}),
        ),
        (
            "ai_terminal_edit_file",
            json!({"session_id": id, "file_path": "src/old.txt", "old_string": "beta", "new_string": "gamma"}),
        ),
    ];
    let untouched = || {
        assert!(!new_file.exists(), "nothing was written");
        assert_eq!(std::fs::read_to_string(&old_file).unwrap(), "alpha\nbeta\nalpha\n", "nothing was edited");
    };

    // Nobody to answer (before any UI client ever connected): refused at once.
    for (tool, args) in &calls {
        let started = Instant::now();
        let (error, value) = error_of(&daemon, tool, args.clone()).await;
        assert!(error.contains("no UI client connected"), "{tool}: {error}");
        assert_eq!(value["confirmed"], json!(false));
        assert!(started.elapsed() < Duration::from_secs(5), "{tool}: refused at once, not after a wait");
    }
    untouched();

    // Declined: nothing done, and the person saw what was asked.
    let declining = ConfirmAnswerer::start(&daemon, false).await;
    for (tool, args) in &calls {
        let (error, _) = error_of(&daemon, tool, args.clone()).await;
        assert!(error.contains("declined by the user"), "{tool}: {error}");
    }
    let seen = declining.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|s| s["kind"] == json!("ai_terminal")), "{seen:?}");
    assert!(seen[0]["message"].as_str().unwrap().contains("src/new.txt"), "{}", seen[0]);
    assert!(seen[1]["message"].as_str().unwrap().contains("gamma"), "{}", seen[1]);
    untouched();
    drop(declining);

    // Confirmed.
    let person = ConfirmAnswerer::start(&daemon, true).await;
    let written = ok(&daemon, calls[0].0, calls[0].1.clone()).await;
    assert_eq!(written["created"], json!(true), "{written}");
    assert_eq!(written["path"], json!("src/new.txt"));
    assert_eq!(std::fs::read_to_string(&new_file).unwrap(), "alpha\nbeta\nalpha\n");
    let edited = ok(&daemon, calls[1].0, calls[1].1.clone()).await;
    assert_eq!(edited["replacements"], json!(1), "{edited}");
    assert_eq!(std::fs::read_to_string(&old_file).unwrap(), "alpha\ngamma\nalpha\n");
    assert_eq!(person.seen().len(), 2);
    let leftovers: Vec<_> = std::fs::read_dir(root.join("src")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 3, "no temp file is left beside them: {leftovers:?}");

    // Bad input is refused before anyone is asked.
    let args = json!({"session_id": id, "file_path": "src/old.txt", "old_string": "alpha", "new_string": "delta"});
    let (error, value) = error_of(&daemon, "ai_terminal_edit_file", args.clone()).await;
    assert!(error.contains("occurs 2 times") && error.contains("replace_all"), "{error}");
    assert_eq!(value["occurrences"], json!(2));
    let (error, _) = error_of(
        &daemon,
        "ai_terminal_edit_file",
        json!({"session_id": id, "file_path": "src/old.txt", "old_string": "omega", "new_string": "x"}),
    )
    .await;
    assert!(error.contains("old_string: not found"), "{error}");
    assert_eq!(person.seen().len(), 2, "no confirmation is asked for an edit that cannot apply");
    assert_eq!(std::fs::read_to_string(&old_file).unwrap(), "alpha\ngamma\nalpha\n");

    let mut all = args;
    all["replace_all"] = json!(true);
    let replaced = ok(&daemon, "ai_terminal_edit_file", all).await;
    assert_eq!(replaced["replacements"], json!(2), "{replaced}");
    assert_eq!(std::fs::read_to_string(&old_file).unwrap(), "delta\ngamma\ndelta\n");
    let over =
        ok(&daemon, "ai_terminal_write_file", json!({"session_id": id, "file_path": new_file, "content": "x"})).await;
    assert_eq!(over["created"], json!(false), "{over}");
    assert_eq!(std::fs::read_to_string(&new_file).unwrap(), "x");
}

#[tokio::test]
async fn paths_out_of_the_repository_are_refused_and_nothing_is_touched() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let outside = daemon.dir.path().join("outside.txt");
    std::fs::write(&outside, "outside secret\n").unwrap();
    // A sibling whose name starts with the root's: inside by string prefix, not by components.
    let sibling: PathBuf = daemon.dir.path().join("repo-evil");
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::write(sibling.join("loot.txt"), "sibling secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&sibling, root.join("linkdir")).unwrap();
    let person = ConfirmAnswerer::start(&daemon, true).await;

    let sibling_file = sibling.join("loot.txt");
    let paths: Vec<String> = vec![
        "../outside.txt".into(),
        "src/../../outside.txt".into(),
        outside.display().to_string(),
        sibling_file.display().to_string(),
        "link.txt".into(),
        "linkdir/loot.txt".into(),
    ];
    for path in &paths {
        let (error, _) = error_of(&daemon, "ai_terminal_read_file", json!({"session_id": id, "file_path": path})).await;
        assert!(error.contains("'..'") || error.contains("outside the session's repository"), "{path}: {error}");
        assert!(!error.contains("secret"), "{path}: {error}");
        let (error, _) = error_of(
            &daemon,
            "ai_terminal_write_file",
            json!({"session_id": id, "file_path": path, "content": "pwned"}),
        )
        .await;
        assert!(error.contains("'..'") || error.contains("outside the session's repository"), "{path}: {error}");
        let (error, _) = error_of(
            &daemon,
            "ai_terminal_edit_file",
            json!({"session_id": id, "file_path": path, "old_string": "secret", "new_string": "pwned"}),
        )
        .await;
        assert!(error.contains("'..'") || error.contains("outside the session's repository"), "{path}: {error}");
    }
    for dir in ["..", sibling.to_str().unwrap(), "linkdir"] {
        let (error, _) =
            error_of(&daemon, "ai_terminal_list_files", json!({"session_id": id, "pattern": "*", "path": dir})).await;
        assert!(error.contains("'..'") || error.contains("outside the session's repository"), "{dir}: {error}");
        let (error, _) =
            error_of(&daemon, "ai_terminal_search_files", json!({"session_id": id, "pattern": "secret", "path": dir}))
                .await;
        assert!(error.contains("'..'") || error.contains("outside the session's repository"), "{dir}: {error}");
    }
    // A walk of the repository does not follow its symlinks out.
    let found = ok(&daemon, "ai_terminal_search_files", json!({"session_id": id, "pattern": "secret"})).await;
    assert_eq!(found["matches"], json!([]), "{found}");
    let listed = ok(&daemon, "ai_terminal_list_files", json!({"session_id": id, "pattern": "**"})).await;
    assert!(!listed.to_string().contains("loot"), "{listed}");

    assert!(person.seen().is_empty(), "the gate refuses before anyone is asked");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside secret\n");
    assert_eq!(std::fs::read_to_string(&sibling_file).unwrap(), "sibling secret\n");
    assert!(!daemon.dir.path().join("pwned").exists());
    assert_eq!(std::fs::read_dir(&sibling).unwrap().count(), 1);
}

#[tokio::test]
async fn bad_input_gets_errors_that_name_it() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    populate(&root);
    let id = shell_in(&daemon, &root).await;
    std::fs::File::create(root.join("huge.txt")).unwrap().set_len(11 * 1024 * 1024).unwrap();

    let cases: Vec<(&str, Value, &[&str])> = vec![
        ("ai_terminal_read_file", json!({"file_path": "notes.txt", "limit": "ten"}), &["limit"]),
        ("ai_terminal_read_file", json!({"file_path": 5}), &["file_path"]),
        ("ai_terminal_read_file", json!({"file_path": "notes.txt", "limit": 2001}), &["limit", "2000"]),
        ("ai_terminal_read_file", json!({"file_path": "notes.txt", "limit": 0}), &["limit"]),
        ("ai_terminal_read_file", json!({"file_path": "notes.txt", "offset": 251}), &["offset", "250 lines"]),
        ("ai_terminal_read_file", json!({"file_path": "blob.bin"}), &["blob.bin is a binary file"]),
        ("ai_terminal_read_file", json!({"file_path": "huge.txt"}), &["huge.txt", "10 MB"]),
        ("ai_terminal_read_file", json!({"file_path": "src"}), &["src is a directory"]),
        ("ai_terminal_read_file", json!({"file_path": "nope.txt"}), &["nope.txt does not exist"]),
        ("ai_terminal_read_file", json!({"file_path": ""}), &["file_path: must not be empty"]),
        ("ai_terminal_edit_file", json!({"file_path": "blob.bin", "old_string": "a", "new_string": "b"}), &["binary"]),
        (
            "ai_terminal_edit_file",
            json!({"file_path": "notes.txt", "old_string": "", "new_string": "b"}),
            &["old_string"],
        ),
        (
            "ai_terminal_edit_file",
            json!({"file_path": "notes.txt", "old_string": "a", "new_string": "a"}),
            &["new_string"],
        ),
        ("ai_terminal_write_file", json!({"file_path": "src", "content": "x"}), &["directory"]),
        ("ai_terminal_write_file", json!({"file_path": "no/such/dir.txt", "content": "x"}), &["does not exist"]),
        ("ai_terminal_write_file", json!({"file_path": "x.txt"}), &["content"]),
        ("ai_terminal_list_files", json!({"pattern": "a[b"}), &["pattern: not a valid glob"]),
        ("ai_terminal_list_files", json!({"pattern": "*", "path": "notes.txt"}), &["not a directory"]),
        ("ai_terminal_search_files", json!({"pattern": "(unclosed"}), &["pattern: not a valid regular expression"]),
        ("ai_terminal_search_files", json!({"pattern": "x", "context_lines": 11}), &["context_lines", "10"]),
        ("ai_terminal_search_files", json!({"pattern": "x", "glob": "{a"}), &["glob: not a valid glob"]),
        ("ai_terminal_search_files", json!({"pattern": "x", "colour": true}), &["colour"]),
    ];
    let person = ConfirmAnswerer::start(&daemon, true).await;
    for (tool, mut args, wanted) in cases {
        args["session_id"] = json!(id);
        let (error, _) = error_of(&daemon, tool, args.clone()).await;
        for word in wanted {
            assert!(error.contains(word), "{tool} {args}: {error:?} should name {word:?}");
        }
    }
    assert!(person.seen().is_empty(), "bad input is refused before anyone is asked");
    assert!(!root.join("no").exists() && !root.join("x.txt").exists());
    let (error, _) = error_of(&daemon, "ai_terminal_read_file", json!({"session_id": "tu-99", "file_path": "a"})).await;
    assert!(error.contains("Unknown session"), "{error}");
}

//! Redaction through the real daemon, tried as an attacker would (issue 30): the leaks of
//! terminal reads (line prefixes, ANSI colour, a token split over two lines, a key block whose
//! BEGIN line is out of the window), `wait_for` and `search_files` as oracles, and secrets in
//! file names.

use std::path::Path;

use serde_json::{Value, json};

use crate::ai_terminal::{enabled, repo, shell_in};
use crate::mcp_client::ok;
use crate::session_util::{wait_text, write};

const TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const PASSWORD: &str = "hunter2hunter2";

/// 64-character base64 lines, as a key's body is armoured.
const KEY_BODY: [&str; 3] = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
    "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
];

fn populate(root: &Path) {
    std::fs::write(
        root.join("app.env"),
        format!("DB_USER=app\nDB_PASSWORD={PASSWORD}\nJSON={{\"user\":\"bob\",\"password\":\"p4ss-w0rd-91\"}}\n"),
    )
    .unwrap();
    let key = format!("-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n", KEY_BODY.join("\n"));
    std::fs::write(root.join("id_rsa"), key).unwrap();
    std::fs::write(root.join(format!("backup-{TOKEN}.txt")), "x\n").unwrap();
}

fn screen_of(value: &Value) -> &str {
    value["screen"].as_str().unwrap()
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in [TOKEN, "ghp_0123456789abcdefghij", PASSWORD, "p4ss-w0rd-91", KEY_BODY[0], KEY_BODY[1], KEY_BODY[2]] {
        assert!(!text.contains(secret), "{what} shows {secret}: {text}");
    }
}

#[tokio::test]
async fn terminal_reads_hold_with_prefixes_colour_splits_and_a_key_above_the_window() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    populate(&root);
    let id = shell_in(&daemon, &root).await;
    // grep -rn, cat -n, a diff's `+` line, a coloured token, a token cut over two lines.
    write(
        &daemon,
        &id,
        "grep -rn PASSWORD . ; cat -n app.env; echo \"+DB_PASSWORD=$(sed -n 2p app.env | cut -d= -f2)\"\n",
    )
    .await;
    write(
        &daemon,
        &id,
        "printf '\\033[31m%s\\033[0m\\n' \"$(cat backup-*.txt >/dev/null; ls backup-* | cut -c8-47)\"\n",
    )
    .await;
    // The marker is computed, so only the output (not the echoed command line) holds it.
    write(&daemon, &id, "ls backup-* | cut -c8-47 | fold -w 24; echo one-$((40+2))\n").await;
    wait_text(&daemon, &id, "one-42").await;
    let screen = ok(&daemon, "ai_terminal_read_screen", json!({"session_id": id, "lines": 200})).await;
    let text = screen_of(&screen);
    assert_no_secret("read_screen", text);
    assert!(text.contains("DB_PASSWORD=[REDACTED:secret]"), "{text}");
    assert!(text.contains("[REDACTED:github_token]"), "{text}");

    // The key's BEGIN line scrolls above a window of three lines; its body still never shows.
    write(&daemon, &id, "cat id_rsa; echo two-$((40+2))\n").await;
    wait_text(&daemon, &id, "two-42").await;
    for lines in [2, 3, 4, 6] {
        let tail = ok(&daemon, "ai_terminal_read_screen", json!({"session_id": id, "lines": lines})).await;
        assert_no_secret(&format!("read_screen lines={lines}"), screen_of(&tail));
    }

    // wait_for matches the redacted text only: a pattern inside the secret never matches, and a
    // match is returned redacted.
    let inside = ok(
        &daemon,
        "ai_terminal_wait_for",
        json!({"session_id": id, "pattern": "DB_PASSWORD=hunter", "timeout_ms": 300}),
    )
    .await;
    assert_eq!(inside["reason"], json!("timeout"), "{inside}");
    let outside = ok(
        &daemon,
        "ai_terminal_wait_for",
        json!({"session_id": id, "pattern": "env:2:DB_PASSWORD=\\S+", "timeout_ms": 5000}),
    )
    .await;
    assert_eq!(outside["reason"], json!("matched"), "{outside}");
    assert_eq!(outside["matched"], json!("env:2:DB_PASSWORD=[REDACTED:secret]"), "{outside}");
    assert_no_secret("wait_for", &outside.to_string());
}

#[tokio::test]
async fn search_files_is_no_oracle_and_file_names_are_redacted() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    populate(&root);
    let id = shell_in(&daemon, &root).await;
    let search = |pattern: &str| {
        let daemon = &daemon;
        let args = json!({"session_id": id, "pattern": pattern, "glob": "*.env"});
        async move { ok(daemon, "ai_terminal_search_files", args).await }
    };
    // The issue's probe: an alternative that is the secret's first character answered 2
    // matches, one that is not answered 0. Now both answer the same, from the redacted text.
    let right = search(r"DB_PASSWORD=(h|\[REDACTED)").await;
    let wrong = search(r"DB_PASSWORD=(x|\[REDACTED)").await;
    assert_eq!(right["matches"], wrong["matches"], "{right} vs {wrong}");
    assert_eq!(right["matches"].as_array().unwrap().len(), 1, "{right}");
    for probe in ["DB_PASSWORD=h", "hunter", "p4ss-w0rd", r#""password":"p"#] {
        let found = search(probe).await;
        assert_eq!(found["matches"], json!([]), "{probe} touches only redacted text: {found}");
    }
    let json_line = search("JSON=").await;
    assert_eq!(json_line["matches"][0]["text"], json!(r#"JSON={"user":"bob","password":"[REDACTED:secret]"}"#));

    // read_file: the key's body is redacted on every page, also one starting below the BEGIN line.
    for offset in [0, 1, 2, 3] {
        let page =
            ok(&daemon, "ai_terminal_read_file", json!({"session_id": id, "file_path": "id_rsa", "offset": offset}))
                .await;
        assert_no_secret(&format!("read_file offset={offset}"), &page.to_string());
        assert_eq!(page["total_lines"], json!(5), "lines are kept: {page}");
    }

    // A token as a file name: listed redacted, and a glob cannot test it.
    let listed = ok(&daemon, "ai_terminal_list_files", json!({"session_id": id, "pattern": "*.txt"})).await;
    assert_eq!(listed["files"], json!(["backup-[REDACTED:github_token].txt"]), "{listed}");
    let probe = ok(&daemon, "ai_terminal_list_files", json!({"session_id": id, "pattern": "backup-ghp_0*"})).await;
    assert_eq!(probe["files"], json!([]), "{probe}");
    let by_name =
        ok(&daemon, "ai_terminal_search_files", json!({"session_id": id, "pattern": "x", "glob": "backup-*"})).await;
    assert_no_secret("search_files file", &by_name.to_string());
    assert_eq!(by_name["matches"][0]["file"], json!("backup-[REDACTED:github_token].txt"), "{by_name}");
}

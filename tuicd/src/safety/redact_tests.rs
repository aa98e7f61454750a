use std::path::{Path, PathBuf};

use super::{redact, scan};

const GITHUB_TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

/// (input, expected) pairs: every secret shape.
const SECRETS: &[(&str, &str)] = &[
    ("key AKIAIOSFODNN7EXAMPLE in use", "key [REDACTED:aws_access_key_id] in use"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED:secret]"),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ012345 ok", "token [REDACTED:github_token] ok"),
    ("gho_0123456789abcdefghijABCDEFGHIJ012345", "[REDACTED:github_token]"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github_token]"),
    ("xoxb-1234567890-abcdefghij", "[REDACTED:slack_token]"),
    ("xoxp-523423-234243-234233-e039d02840a0b9379c", "[REDACTED:slack_token]"),
    ("ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuv", "ANTHROPIC=[REDACTED:anthropic_key]"),
    ("export OPENAI_API_KEY=\"sk-proj-abcdefghijklmnopqrstuvwx\"", "export OPENAI_API_KEY=\"[REDACTED:openai_key]\""),
    ("glpat-abcdefghij0123456789", "[REDACTED:gitlab_token]"),
    ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:npm_token]"),
    ("DATABASE_PASSWORD=hunter2hunter2", "DATABASE_PASSWORD=[REDACTED:secret]"),
    ("  \"api_key\": \"3f9a8b7c6d5e4f3a2b1c\",", "  \"api_key\": \"[REDACTED:secret]\","),
    (
        "curl -H 'Authorization: Bearer abcdefghijklmnop0123456789'",
        "curl -H 'Authorization: Bearer [REDACTED:bearer_token]'",
    ),
    (
        "git clone https://bob:s3cretpass@example.com/r.git",
        "git clone https://bob:[REDACTED:password]@example.com/r.git",
    ),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google_api_key]"),
    ("sk_live_abcdefghijklmnop1234", "[REDACTED:stripe_key]"),
    ("mysql --password=Tr0ub4dor3", "mysql --password=[REDACTED:secret]"),
    ("<password>Tr0ub4dor3</password>", "<password>[REDACTED:secret]</password>"),
    ("blob = 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u'", "blob = '[REDACTED:high_entropy]'"),
];

/// Each leak the issue lists, as a reader's tools show it: the secret must be gone, the rest kept.
const LEAKS: &[(&str, &str, &str)] = &[
    // (what, text, the secret)
    ("grep -rn", "config/app.env:12:DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("grep -n", "12:DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("grep -r", "config/app.env:DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("cat -n", "    12\tDB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("git diff", "+DB_PASSWORD=s3cr3t-pr0d-value", "s3cr3t-pr0d-value"),
    ("git diff removed", "-DB_PASSWORD=s3cr3t-pr0d-value", "s3cr3t-pr0d-value"),
    ("one-line JSON", r#"{"user":"bob","password":"p4ss-w0rd-91","port":5432}"#, "p4ss-w0rd-91"),
    ("one-line JSON, spaced", r#"{"user": "bob", "client_secret": "cs-8f7e6d5c4b", "n": 1}"#, "cs-8f7e6d5c4b"),
    ("escaped quote inside", r#"DB_PASSWORD="ab\"cd-Secret-77""#, "cd-Secret-77"),
    ("quote inside, bare", "DB_PASSWORD=abc'def-Secret-77", "def-Secret-77"),
    ("quote inside, quoted", r#""password": "it"s-a-s3cret-Value","#, "s-a-s3cret-Value"),
    ("single quote inside", "password = 'it's-a-s3cret-Value'", "s-a-s3cret-Value"),
    ("looks like a placeholder word", "DB_PASSWORD=true-secret-value-4242", "true-secret-value-4242"),
    ("example inside", "API_TOKEN=example-4242-real-token", "example-4242-real-token"),
    ("ANSI coloured", "\x1b[31mghp_0123456789abcdefghijABCDEFGHIJ012345\x1b[0m", "ghp_0123456789abcdefghij"),
    ("ANSI inside", "ghp_0123456789abcdef\x1b[1mghijABCDEFGHIJ012345", "ghp_0123456789abcdef"),
    ("ANSI coloured value", "DB_PASSWORD=\x1b[33mhunter2hunter2\x1b[0m", "hunter2hunter2"),
    ("split over two lines", "ghp_0123456789abcdefghij\nABCDEFGHIJ012345", "ghp_0123456789abcdefghij"),
    ("YAML", "database:\n  password: correct-horse-battery-9", "correct-horse-battery-9"),
    ("shell export", "export GITHUB_TOKEN='tok-123-abc-456'", "tok-123-abc-456"),
    ("env prefix", "env DB_PASS=Xy7zz1-secret ./run", "Xy7zz1-secret"),
    ("Go", "apiKey := \"k-99a-77b-55c\"", "k-99a-77b-55c"),
    (
        "wrapped private key body",
        "-----BEGIN RSA PRIVATE KEY-----\n12:MIIEowIBAAKCAQEA7\n13:q1w2e3r4t5y6\n",
        "MIIEowIBAAKCAQEA7",
    ),
];

const UNTOUCHED: &[&str] = &[
    // An .env.example: placeholders, empty values, references.
    "API_KEY=\nSECRET_TOKEN=<your-token-here>\nDB_PASSWORD=changeme\nAUTH_TOKEN=${AUTH_TOKEN}\nGITHUB_TOKEN=your-github-token\nPASSWORD=xxxxxxxx\nPASSWORD=***\nTOKEN=$TOKEN",
    "cargo build --release\n   Compiling tuicd v0.1.0\n    Finished in 3.2s",
    "the tokenizer splits words; password policy is documented",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "https://example.com/path?query=1",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "let token = session.token();\nlet password = read_password()?;\npassword: String,\npub token: Token,",
    "fn check(token: &str, password: Option<&str>) -> bool {",
    "return Err(\"password: must not be empty\".into());",
    "json!({\"token\": token, \"password\": password})",
    "format!(\"--token={}\", token)",
    "max_tokens: 4096\nauth_rate_limit_max: 5\nauthor: Jane",
    "id = '203db13e-70c7-462b-9a3d-bf32640cb0be'",
    "SESSION_BROADCAST_CAPACITY_FOR_EVERY_CLIENT_V2 = 64",
    "/home/user/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tokio-1.40.0/src/lib.rs",
];

#[test]
fn every_secret_shape_is_redacted() {
    for (input, expected) in SECRETS {
        assert_eq!(redact(input), *expected, "input: {input}");
    }
}

#[test]
fn every_leak_of_the_issue_is_closed() {
    for (what, text, secret) in LEAKS {
        let out = redact(text);
        assert!(!out.contains(secret), "{what}: {text:?} -> {out:?}");
        assert!(out.contains("[REDACTED:"), "{what}: {out:?}");
        assert_eq!(out.matches('\n').count(), text.matches('\n').count(), "{what}: the lines are kept: {out:?}");
    }
    // What is not secret on those lines stays.
    let json = redact(r#"{"user":"bob","password":"p4ss-w0rd-91","port":5432}"#);
    assert_eq!(json, r#"{"user":"bob","password":"[REDACTED:secret]","port":5432}"#);
    assert_eq!(redact("+DB_PASSWORD=s3cr3t-pr0d-value"), "+DB_PASSWORD=[REDACTED:secret]");
    assert_eq!(redact("    12\tDB_PASSWORD=hunter2hunter2"), "    12\tDB_PASSWORD=[REDACTED:secret]");
    // An escape around a token stays; only the token goes.
    assert_eq!(redact(&format!("\x1b[31m{GITHUB_TOKEN}\x1b[0m")), "\x1b[31m[REDACTED:github_token]\x1b[0m");
}

#[test]
fn placeholders_and_plain_text_pass_untouched() {
    for text in UNTOUCHED {
        let out = redact(text);
        assert!(matches!(out, std::borrow::Cow::Borrowed(_)), "changed: {text:?} -> {out:?}");
    }
}

#[test]
fn broken_escapes_and_cut_text_never_break_the_scan() {
    for text in [
        "\x1b[31é",
        "\x1b(é",
        "\x1b",
        "é\x1b[",
        "\x1b]0;title",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "password=",
        "\"password\": \"",
        "key: ",
        "ghp_\n",
        "\n\n",
        "",
    ] {
        let out = redact(text);
        assert!(out.len() <= text.len() + 64, "{text:?} -> {out:?}");
    }
    assert_eq!(redact("é\x1b[1mDB_PASSWORD=hunter2hunter2"), "é\x1b[1mDB_PASSWORD=[REDACTED:secret]");
}

#[test]
fn file_names_are_redacted_like_text() {
    assert_eq!(redact(&format!("backup-{GITHUB_TOKEN}.txt")), "backup-[REDACTED:github_token].txt");
    assert_eq!(redact("notes/plain-name.md"), "notes/plain-name.md");
}

#[test]
fn private_key_blocks_go_whole_and_keep_their_lines() {
    let pem = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter";
    assert_eq!(redact(pem), "before\n[REDACTED:private_key]\n\n\n\nafter");
    let rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----";
    assert_eq!(redact(rsa), "[REDACTED:private_key]\n\n");
    let cut = "cat id_ed25519\n-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI";
    assert_eq!(redact(cut), "cat id_ed25519\n[REDACTED:private_key]\n");
    // A diff and `cat -n` of a key: the prefixes do not hide the body.
    let diff = "+-----BEGIN EC PRIVATE KEY-----\n+MHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\n+-----END EC PRIVATE KEY-----\n context";
    assert_eq!(redact(diff), "+[REDACTED:private_key]\n\n\n context");
    let numbered =
        "     1\t-----BEGIN PRIVATE KEY-----\n     2\tMC4CAQAwBQYDK2VwBCIEIAbCdEf\n     3\t-----END PRIVATE KEY-----";
    assert_eq!(redact(numbered), "     1\t[REDACTED:private_key]\n\n");
    // A body cut by a prompt: the prompt is not part of the key.
    let interrupted = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAbCdEf\n^C\n$ ls";
    assert_eq!(redact(interrupted), "[REDACTED:private_key]\n\n^C\n$ ls");
}

/// 64-character base64 lines, as a key's body is armoured.
fn key_body() -> String {
    [
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
        "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
        "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
    ]
    .join("\n")
}

#[test]
fn a_private_key_body_is_found_when_its_begin_line_is_above_the_window() {
    let window = format!("{}\n-----END RSA PRIVATE KEY-----\n$ echo done\ndone", key_body());
    let out = redact(&window);
    assert_eq!(out, "[REDACTED:private_key]\n\n\n\n$ echo done\ndone");
    // Neither armour line in the window: each body line reads as random.
    let body = key_body();
    let out = redact(&body);
    assert!(!out.contains("MIIE") && !out.contains("MzEf") && !out.contains("NMoS"), "{out}");
    assert_eq!(out.lines().count(), 3);
}

/// The figures docs/benchmarks.md reports: recall on the labelled public corpus
/// (tuicd/tests/fixtures/secrets), and redactions in this crate's own source tree (`src/`),
/// an ordinary repository's files where nothing is a secret except the tests' fixtures.
#[test]
fn corpus_recall_and_source_tree_false_positives() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/secrets");
    let labels = std::fs::read_to_string(corpus.join("labels.tsv")).expect("labels.tsv");
    let (mut present, mut found, mut missed) = (0usize, 0usize, Vec::new());
    for row in labels.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let [file, line, secret] = row.splitn(3, '\t').collect::<Vec<_>>()[..] else { panic!("bad row {row}") };
        let text = std::fs::read_to_string(corpus.join(file)).expect("a corpus file");
        let redacted = redact(&text);
        let line: usize = line.parse().expect("a line number");
        let shown = redacted.lines().nth(line - 1).unwrap_or_default();
        present += 1;
        if leaks(shown, secret) {
            missed.push(format!("{file}:{line}: {shown}"));
        } else {
            found += 1;
        }
    }
    let recall = found as f64 / present as f64;

    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let (mut redactions, mut bytes, mut hits) = (0usize, 0usize, Vec::new());
    let started = std::time::Instant::now();
    // What tuicd's own people wrote: not the phone page's generated, vendored terminal (a minified
    // bundle, an npm lock file's integrity hashes).
    let generated =
        |relative: &str| relative.starts_with("routes/mobile/vendor/") || relative.starts_with("routes/mobile/xterm.");
    for path in &files {
        if generated(&path.strip_prefix(&src).unwrap_or(path).display().to_string()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        bytes += text.len();
        for span in scan(&text) {
            redactions += 1;
            let line = text[..span.start].matches('\n').count() + 1;
            let relative = path.strip_prefix(&src).unwrap_or(path).display().to_string();
            // The redaction module's own tests hold secrets on purpose.
            if !relative.starts_with("safety/redact") {
                hits.push(format!("{relative}:{line}: {} {:?}", span.kind, &text[span.start..span.end]));
            }
        }
    }
    println!("redaction recall on the labelled corpus: {found}/{present} = {recall:.3}");
    for miss in &missed {
        println!("  missed {miss}");
    }
    println!(
        "redactions in tuicd/src: {redactions} in {} files ({} KiB, scanned in {} ms, debug build); outside safety/redact*: {}",
        files.len(),
        bytes / 1024,
        started.elapsed().as_millis(),
        hits.len()
    );
    for hit in &hits {
        println!("  {hit}");
    }
    assert!(recall >= 0.9, "recall {recall:.3} is under 0.9; missed: {missed:#?}");
    assert!(hits.len() <= 8, "{} false positives in tuicd/src: {hits:#?}", hits.len());
}

/// Whether any 8-character piece of `secret` (the whole of a shorter one) is still in `shown`.
fn leaks(shown: &str, secret: &str) -> bool {
    let chars: Vec<char> = secret.chars().collect();
    let width = chars.len().min(8);
    chars.windows(width).any(|w| shown.contains(&w.iter().collect::<String>()))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

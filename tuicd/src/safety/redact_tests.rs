use super::redact;

/// (input, expected) pairs: every secret shape, and the text that must pass untouched.
const SECRETS: &[(&str, &str)] = &[
    ("key AKIAIOSFODNN7EXAMPLE in use", "key [REDACTED:aws_access_key_id] in use"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED:secret]"),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ012345 ok", "token [REDACTED:github_token] ok"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github_token]"),
    ("xoxb-1234567890-abcdefghij", "[REDACTED:slack_token]"),
    ("ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuv", "ANTHROPIC=[REDACTED:anthropic_key]"),
    ("export OPENAI_API_KEY=\"sk-proj-abcdefghijklmnopqrstuvwx\"", "export OPENAI_API_KEY=\"[REDACTED:openai_key]\""),
    ("DATABASE_PASSWORD=hunter2hunter2", "DATABASE_PASSWORD=[REDACTED:secret]"),
    ("  \"api_key\": \"3f9a8b7c6d5e4f3a2b1c\",", "  \"api_key\": \"[REDACTED:secret]\","),
    ("curl -H 'Authorization: Bearer abcdefghijklmnop0123456789'", "curl -H '[REDACTED:bearer_token]'"),
    (
        "git clone https://bob:s3cretpass@example.com/r.git",
        "git clone https://bob:[REDACTED:password]@example.com/r.git",
    ),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google_api_key]"),
    ("sk_live_abcdefghijklmnop1234", "[REDACTED:stripe_key]"),
];

const UNTOUCHED: &[&str] = &[
    // An .env.example: placeholders, empty values, references.
    "API_KEY=\nSECRET_TOKEN=<your-token-here>\nDB_PASSWORD=changeme\nAUTH_TOKEN=${AUTH_TOKEN}\nGITHUB_TOKEN=your-github-token\nPASSWORD=xxxxxxxx",
    "cargo build --release\n   Compiling tuicd v0.1.0\n    Finished in 3.2s",
    "the tokenizer splits words; password policy is documented",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "https://example.com/path?query=1",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
];

#[test]
fn every_secret_shape_is_redacted() {
    for (input, expected) in SECRETS {
        assert_eq!(redact(input), *expected, "input: {input}");
    }
}

#[test]
fn placeholders_and_plain_text_pass_untouched() {
    for text in UNTOUCHED {
        let out = redact(text);
        assert!(matches!(out, std::borrow::Cow::Borrowed(_)), "changed: {text:?} -> {out:?}");
    }
}

#[test]
fn private_key_blocks_go_whole_even_when_cut_off() {
    let pem = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter";
    assert_eq!(redact(pem), "before\n[REDACTED:private_key]\nafter");
    let rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----";
    assert_eq!(redact(rsa), "[REDACTED:private_key]");
    let cut = "cat id_ed25519\n-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI";
    assert_eq!(redact(cut), "cat id_ed25519\n[REDACTED:private_key]");
}

#[test]
fn an_env_file_keeps_its_names_and_loses_its_values() {
    let env = "# prod\nexport AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nPORT=8080\nSTRIPE_SECRET=rk_test_abcdefghij\n";
    assert_eq!(
        redact(env),
        "# prod\nexport AWS_SECRET_ACCESS_KEY=[REDACTED:secret]\nPORT=8080\nSTRIPE_SECRET=[REDACTED:secret]\n"
    );
}

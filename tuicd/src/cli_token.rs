//! `tuicd token create|list|revoke` (part of the binary, `main.rs`): scoped, revocable tokens
//! for remote access, made by the running daemon over its socket (`/auth/tokens`). The token is
//! printed once, with the phone link and its QR code when remote access is on.

use std::path::Path;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use crate::cli_upstream::request;

pub(crate) struct Create {
    pub name: Option<String>,
    pub scope: String,
    pub sessions: Vec<String>,
    pub agent: bool,
    pub ttl: Option<String>,
    pub qr: bool,
}

pub(crate) async fn create(socket: &Path, create: Create) -> ExitCode {
    let kind = if create.agent { "agent" } else { "person" };
    let mut body =
        json!({"name": create.name.unwrap_or_else(|| format!("{kind} token")), "kind": kind, "scope": create.scope});
    if !create.sessions.is_empty() {
        let mut sessions = Map::new();
        for entry in &create.sessions {
            let (id, scope) = entry.split_once('=').unwrap_or((entry, &create.scope));
            sessions.insert(id.to_owned(), Value::String(scope.to_owned()));
        }
        body["sessions"] = Value::Object(sessions);
    }
    if let Some(ttl) = create.ttl {
        body["ttl"] = Value::String(ttl);
    }
    let Some(answer) = ask(socket, "POST", "/auth/tokens", Some(body), 201).await else { return ExitCode::FAILURE };
    let info = &answer["info"];
    println!("{}", answer["token"].as_str().unwrap_or_default());
    eprintln!("\nThis is the only time the token is shown. {}", describe(info));
    match answer["phone_link"].as_str() {
        Some(link) => {
            eprintln!("\nPhone link (opens /mobile signed in; the token then lives in a cookie):\n  {link}");
            if create.qr {
                match qrcode::QrCode::new(link.as_bytes()) {
                    Ok(code) => eprintln!(
                        "\n{}",
                        code.render::<qrcode::render::unicode::Dense1x2>()
                            .dark_color(qrcode::render::unicode::Dense1x2::Light)
                            .light_color(qrcode::render::unicode::Dense1x2::Dark)
                            .build()
                    ),
                    Err(e) => eprintln!("(no QR code: {e})"),
                }
            }
        }
        None => eprintln!("\nNo phone link: {}", answer["phone_link_note"].as_str().unwrap_or("remote access is off")),
    }
    ExitCode::SUCCESS
}

pub(crate) async fn list(socket: &Path) -> ExitCode {
    let Some(answer) = ask(socket, "GET", "/auth/tokens", None, 200).await else { return ExitCode::FAILURE };
    let tokens = answer["tokens"].as_array().cloned().unwrap_or_default();
    if tokens.is_empty() {
        println!("no tokens (tuicd token create --scope observe|drive|admin makes one)");
        return ExitCode::SUCCESS;
    }
    println!("{:<10} {:<20} RIGHTS", "ID", "NAME");
    for token in &tokens {
        println!(
            "{:<10} {:<20} {}",
            token["id"].as_str().unwrap_or_default(),
            token["name"].as_str().unwrap_or_default(),
            describe(token)
        );
    }
    ExitCode::SUCCESS
}

pub(crate) async fn revoke(socket: &Path, id: &str) -> ExitCode {
    match ask(socket, "DELETE", &format!("/auth/tokens/{id}"), None, 200).await {
        Some(_) => {
            println!("revoked {id}: its requests and open streams are refused from now on");
            ExitCode::SUCCESS
        }
        None => ExitCode::FAILURE,
    }
}

/// The daemon's answer when its status is `expected`; else the error is printed.
async fn ask(socket: &Path, method: &str, path: &str, body: Option<Value>, expected: u16) -> Option<Value> {
    match request(socket, method, path, body).await {
        Ok((status, answer)) if status == expected => Some(answer),
        Ok((_, answer)) => {
            eprintln!("tuicd refused: {}", answer["error"].as_str().unwrap_or("unknown error"));
            None
        }
        Err(e) => {
            eprintln!("no tuicd running at {}: {e}", socket.display());
            None
        }
    }
}

/// One line: kind, scope or per-session rights, expiry, last use.
fn describe(token: &Value) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let reach = match token["sessions"].as_object() {
        Some(sessions) => sessions
            .iter()
            .map(|(id, scope)| format!("{} on {id}", scope.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", "),
        None => format!("{} on every session", token["scope"].as_str().unwrap_or_default()),
    };
    let expires = match token["expires_at"].as_u64() {
        Some(at) => format!("expires in {}", span(at.saturating_sub(now))),
        None => "never expires".to_owned(),
    };
    let used = match token["last_used_at"].as_u64() {
        Some(at) => format!("used {} ago", span(now.saturating_sub(at))),
        None => "not used since the daemon started".to_owned(),
    };
    format!("{} · {reach} · {expires} · {used}", token["kind"].as_str().unwrap_or_default())
}

fn span(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7_200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3_600),
        s => format!("{}d", s / 86_400),
    }
}

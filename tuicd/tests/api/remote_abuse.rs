//! Remote access under abuse (issue 29): slow and idle sockets, bursts of wrong passwords, a
//! local user's failures, user-name timing, plain HTTP off loopback. Every client is on loopback:
//! Linux routes all of 127.0.0.0/8 locally, so a client binding 127.0.0.2 is "another address".

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use base64::Engine;
use futures_util::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

use crate::harness::{Daemon, free_port, quick_hash, wait_until};

/// What the real user must get an answer within, whatever else is going on.
const REAL_USER_BOUND: Duration = Duration::from_secs(1);
/// The daemon's limits this file relies on (`tuicd::limits`).
const PER_ADDRESS: usize = tuicd::limits::TCP_CONNECTIONS_PER_ADDRESS;
const AUTHENTICATE_WITHIN: Duration = tuicd::limits::TCP_AUTHENTICATE_WITHIN;

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

async fn tcp_daemon(port: u16, hash: String, extra: Value) -> Daemon {
    let mut config = json!({"services": {"server": {"enabled": true, "port": port},
        "auth": {"username": "me", "password_hash": hash}}});
    crate::harness::merge(&mut config, extra);
    Daemon::builder().config(config).env("RUST_LOG", "info,tuicd::server::auth=debug").start().await
}

/// A client whose connections come from `local`.
fn client_from(local: &str) -> reqwest::Client {
    reqwest::Client::builder().local_address(local.parse::<IpAddr>().unwrap()).build().unwrap()
}

/// One authenticated `GET /health` from `client`; its status and how long it took.
async fn timed_health(client: &reqwest::Client, port: u16, password: &str) -> (Option<StatusCode>, Duration) {
    let start = Instant::now();
    let sent = client
        .get(format!("http://127.0.0.1:{port}/health"))
        .header("Authorization", basic("me", password))
        .timeout(Duration::from_secs(5))
        .send()
        .await;
    (sent.ok().map(|r| r.status()), start.elapsed())
}

async fn connect_from(local: &str, port: u16) -> Option<TcpStream> {
    let socket = TcpSocket::new_v4().ok()?;
    socket.bind(SocketAddr::new(local.parse().ok()?, 0)).ok()?;
    tokio::time::timeout(Duration::from_secs(2), socket.connect(([127, 0, 0, 1], port).into())).await.ok()?.ok()
}

/// Opens one socket per entry of `from` (its local address), 100 at a time; every other one sends
/// the first byte of a request head and nothing more (a slowloris), the rest stay silent.
async fn flood(from: &[String], port: u16) -> Vec<TcpStream> {
    let mut sockets = Vec::new();
    for chunk in from.chunks(100) {
        for stream in join_all(chunk.iter().map(|local| connect_from(local, port))).await.into_iter().flatten() {
            sockets.push(stream);
        }
    }
    for stream in sockets.iter_mut().step_by(2) {
        let _ = stream.write_all(b"G").await;
    }
    sockets
}

/// Whether the daemon has closed `stream` (EOF or reset); reads and drops anything it sent.
fn closed(stream: &TcpStream) -> bool {
    let mut buffer = [0u8; 512];
    loop {
        match stream.try_read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

async fn wait_closed(sockets: &[TcpStream], at_least: usize, deadline: Duration, what: &str) {
    wait_until(what, deadline, || async { (sockets.iter().filter(|s| closed(s)).count() >= at_least).then_some(()) })
        .await;
}

#[tokio::test]
async fn a_thousand_slow_and_idle_sockets_from_one_address_leave_the_real_user_an_answer_within_a_second() {
    let port = free_port();
    let daemon = tcp_daemon(port, quick_hash("right"), json!({})).await;
    let owner = client_from("127.0.0.2");
    let started = Instant::now();
    let sockets = flood(&vec!["127.0.0.1".to_owned(); 1_100], port).await;
    assert!(sockets.len() >= 1_000, "only {} sockets connected", sockets.len());

    let (status, took) = timed_health(&owner, port, "right").await;
    eprintln!("real user under {} slow/idle sockets: {took:?}", sockets.len());
    assert_eq!(status, Some(StatusCode::OK), "{}", daemon.log());
    assert!(took < REAL_USER_BOUND, "the real user waited {took:?}");

    // One address keeps at most its cap; the rest are closed at once, and the ones kept are closed
    // when they have not authenticated in time.
    wait_closed(&sockets, sockets.len() - PER_ADDRESS, Duration::from_secs(5), "over-cap sockets closed").await;
    let bound = AUTHENTICATE_WITHIN + Duration::from_secs(5);
    wait_closed(&sockets, sockets.len(), bound, "every slow or idle socket closed").await;
    assert!(started.elapsed() < Duration::from_secs(30));
    drop(sockets);
}

#[tokio::test]
async fn slow_sockets_spread_over_many_addresses_never_fill_the_listener() {
    let port = free_port();
    let daemon = tcp_daemon(port, quick_hash("right"), json!({})).await;
    let owner = client_from("127.0.0.2");
    // 20 addresses, 55 each: under the per-address cap, over the listener's total.
    let from: Vec<String> = (0..1_100).map(|i| format!("127.0.1.{}", 1 + i % 20)).collect();
    let sockets = flood(&from, port).await;
    assert!(sockets.len() >= 1_050, "only {} sockets connected", sockets.len());

    let (status, took) = timed_health(&owner, port, "right").await;
    eprintln!("real user under {} sockets from 20 addresses: {took:?}", sockets.len());
    assert_eq!(status, Some(StatusCode::OK), "{}", daemon.log());
    assert!(took < REAL_USER_BOUND, "the real user waited {took:?}");

    let total = tuicd::limits::MAX_CONNECTIONS;
    wait_closed(&sockets, sockets.len() + 1 - total, Duration::from_secs(5), "room made by closing the oldest").await;
    // The real user's authenticated keep-alive connection was not the one closed: it still answers.
    let (status, _) = timed_health(&owner, port, "right").await;
    assert_eq!(status, Some(StatusCode::OK));
    drop(sockets);
}

fn bcrypt_runs(daemon: &Daemon) -> usize {
    daemon.log().matches("bcrypt verification").count()
}

#[tokio::test]
async fn a_burst_of_300_wrong_passwords_runs_bcrypt_at_most_the_limit_and_another_address_still_logs_in() {
    let port = free_port();
    // A realistic cost, so that each verification takes real time.
    let daemon = tcp_daemon(port, bcrypt::hash("right", 10).unwrap(), json!({})).await;
    let attacker = client_from("127.0.0.1");
    let burst: Vec<_> = (0..300)
        .map(|i| {
            let attacker = attacker.clone();
            tokio::spawn(async move { timed_health(&attacker, port, &format!("wrong{i}")).await.0 })
        })
        .collect();
    wait_until("the burst reaches bcrypt", Duration::from_secs(5), || async {
        (bcrypt_runs(&daemon) > 0).then_some(())
    })
    .await;

    let (status, took) = timed_health(&client_from("127.0.0.2"), port, "right").await;
    eprintln!("correct login from another address during the burst: {took:?}");
    assert_eq!(status, Some(StatusCode::OK), "{}", daemon.log());
    assert!(took < REAL_USER_BOUND, "the correct login waited {took:?}");

    let statuses: Vec<_> = join_all(burst).await.into_iter().map(Result::unwrap).collect();
    assert!(!statuses.contains(&Some(StatusCode::OK)));
    let limit = 5; // auth_rate_limit_max's default
    // The owner's own login is one of the runs counted.
    let runs = bcrypt_runs(&daemon) - 1;
    eprintln!("bcrypt runs for 300 wrong passwords: {runs}");
    assert!(runs <= limit, "{runs} bcrypt verifications for one address's burst");
}

#[tokio::test]
async fn another_local_users_failures_do_not_lock_the_loopback_owner_out() {
    let port = free_port();
    let _daemon = tcp_daemon(port, quick_hash("right"), json!({})).await;
    let local = client_from("127.0.0.1");
    let url = format!("http://127.0.0.1:{port}/health");
    let mut statuses = Vec::new();
    for i in 0..8 {
        let r = local.get(&url).header("Authorization", basic("eve", &format!("guess{i}"))).send().await.unwrap();
        statuses.push(r.status());
    }
    // The guesser is limited...
    assert_eq!(statuses.last(), Some(&StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
    // ...and the owner, on the same address, is not.
    let (status, _) = timed_health(&local, port, "right").await;
    assert_eq!(status, Some(StatusCode::OK));
}

#[tokio::test]
async fn a_wrong_user_name_takes_as_long_as_a_wrong_password() {
    let port = free_port();
    let _daemon = tcp_daemon(port, bcrypt::hash("right", 10).unwrap(), json!({})).await;
    let client = client_from("127.0.0.1");
    let url = format!("http://127.0.0.1:{port}/health");
    let fastest = |user: String, password: String| {
        let client = client.clone();
        let url = url.clone();
        async move {
            let start = Instant::now();
            let r = client.get(&url).header("Authorization", basic(&user, &password)).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
            start.elapsed()
        }
    };
    let mut wrong_name = Duration::MAX;
    let mut wrong_password = Duration::MAX;
    // Four of each: under the limit of five failures per name.
    for i in 0..4 {
        wrong_name = wrong_name.min(fastest(format!("nobody{i}"), "right".into()).await);
        wrong_password = wrong_password.min(fastest("me".into(), format!("wrong{i}")).await);
    }
    eprintln!("fastest wrong user name {wrong_name:?}, fastest wrong password {wrong_password:?}");
    assert!(
        wrong_name * 2 > wrong_password,
        "a wrong name answers in {wrong_name:?}, a wrong password in {wrong_password:?}"
    );
}

#[tokio::test]
async fn plain_http_on_a_non_loopback_address_is_refused_unless_allow_insecure_remote() {
    // TEST-NET-1: no interface here has it, so nothing is ever listened on off loopback.
    let server = |extra: Value| {
        let mut config = json!({"services": {"server": {"enabled": true, "port": free_port(), "bind_address": "192.0.2.1"},
            "auth": {"username": "me", "password_hash": quick_hash("right")}}});
        crate::harness::merge(&mut config, json!({"services": {"server": extra}}));
        Daemon::builder().config(config).spawn()
    };
    let mut refused = server(json!({}));
    assert!(!refused.wait_exit().await.success());
    let log = refused.log();
    assert!(log.contains("services.server.allow_insecure_remote: true") && log.contains("192.0.2.1"), "{log}");

    // Allowed: the refusal is gone; binding the absent address is what fails now.
    let mut allowed = server(json!({"allow_insecure_remote": true}));
    assert!(!allowed.wait_exit().await.success());
    let log = allowed.log();
    assert!(!log.contains("allow_insecure_remote") && log.contains("no free port"), "{log}");
}

//! Bounded in-process stress: 20 agents x 500 messages with concurrent waits, cancelled waits,
//! reconnects and reaps, and a terminal-delivery task. Asserts 0 lost and 0 duplicated; prints
//! throughput and send-to-woken-wait latency (figures only, never asserted).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use uuid::Uuid;

use super::support::{World, t};
use crate::messaging::{AgentKind, DeliveryPath, InboxQuery, Lifecycle, Messaging, RegisterRequest, SystemClock};

const AGENTS: usize = 20;
const MESSAGES_PER_AGENT: usize = 500;
/// Unread mail a sender may have outstanding per recipient: below the inbox capacity, so FIFO
/// eviction never fires and every loss would be a real bug.
const CREDITS: usize = 60;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_agents_exchange_ten_thousand_messages_with_nothing_lost_or_duplicated() {
    // The wall clock here, not the manual one: latencies are real and cursors see true bursts.
    let m = Messaging::new(Arc::new(SystemClock));
    let world = Arc::new(World::default());
    let mut ids = Vec::new();
    for i in 0..AGENTS {
        let rx = t(&format!("rx-{i}"));
        world.set_live(&rx, true);
        let id = if i < AGENTS / 2 {
            let id = Uuid::new_v4();
            world.add_pty(id, i, AgentKind::Other, Lifecycle::Idle);
            m.bind_transport(&rx, id, &*world).unwrap();
            id
        } else {
            m.register(&rx, RegisterRequest { name: Some(format!("ext-{i}")), ..Default::default() }, &*world)
                .unwrap()
                .tuic_session
        };
        let tx = t(&format!("tx-{i}"));
        world.set_live(&tx, true);
        m.bind_transport(&tx, id, &*world).unwrap();
        ids.push(id);
    }
    let recipient_of = |from: usize, k: usize| (from + 1 + k % (AGENTS - 1)) % AGENTS;
    let mut expected = [0usize; AGENTS];
    for from in 0..AGENTS {
        for k in 0..MESSAGES_PER_AGENT {
            expected[recipient_of(from, k)] += 1;
        }
    }
    let credits: Vec<_> = (0..AGENTS).map(|_| Arc::new(Semaphore::new(CREDITS))).collect();
    let base = Instant::now();
    let sent_ids = Arc::new(Mutex::new(HashSet::new()));
    let paths = Arc::new(Mutex::new(HashMap::<DeliveryPath, usize>::new()));
    let taken = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));

    let delivery = {
        let (m, world, taken, done) = (m.clone(), world.clone(), taken.clone(), done.clone());
        tokio::spawn(async move {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let notified = m.deliveries_notify().notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                for recipient in m.pending_deliveries() {
                    for message in m.take_deliveries(recipient, &*world).payloads {
                        *taken.lock().unwrap().entry(message.id).or_default() += 1;
                    }
                }
                let _ = tokio::time::timeout(Duration::from_millis(5), notified).await;
            }
        })
    };

    let mut receivers = Vec::new();
    for (i, want) in expected.iter().copied().enumerate() {
        let (m, world, credit) = (m.clone(), world.clone(), credits[i].clone());
        receivers.push(tokio::spawn(async move {
            let mut seen = HashSet::new();
            let (mut duplicates, mut latencies, mut cancelled, mut reconnects) = (0, Vec::new(), 0, 0);
            let mut transport = t(&format!("rx-{i}"));
            let mut round = 0u64;
            while seen.len() < want {
                round += 1;
                let outcome = if round.is_multiple_of(7) {
                    // A client that gives up: the dropped wait must hand its lease back.
                    match tokio::time::timeout(Duration::from_micros(200), m.wait(&transport, None, Some(50))).await {
                        Ok(outcome) => outcome.unwrap(),
                        Err(_) => {
                            cancelled += 1;
                            continue;
                        }
                    }
                } else {
                    m.wait(&transport, None, Some(50)).await.unwrap()
                };
                let now = base.elapsed().as_micros() as u64;
                for message in &outcome.messages {
                    if !seen.insert(message.id.clone()) {
                        duplicates += 1;
                    }
                    let sent_at: u64 = message.content.rsplit(':').next().unwrap().parse().unwrap();
                    latencies.push(now.saturating_sub(sent_at));
                }
                credit.add_permits(outcome.messages.len());
                if outcome.met && seen.len() / 100 > reconnects {
                    // Reconnect on a fresh protocol session, then reap the old one.
                    reconnects += 1;
                    let fresh = t(&format!("rx-{i}-{reconnects}"));
                    world.set_live(&fresh, true);
                    world.set_live(&transport, false);
                    let id = m.identity_of(&transport).unwrap();
                    m.bind_transport(&fresh, id, &*world).unwrap();
                    let reaped = m.reap_transport(&transport, &*world);
                    assert!(reaped.evicted.is_empty());
                    transport = fresh;
                }
            }
            let tail = m.inbox(&transport, InboxQuery::default()).unwrap();
            assert!(tail.messages.is_empty(), "agent {i}: unread mail left over");
            assert_eq!(tail.missed_count, None, "agent {i}: eviction fired");
            (seen, duplicates, latencies, cancelled, reconnects)
        }));
    }

    let mut senders = Vec::new();
    for from in 0..AGENTS {
        let (m, world, ids, credits) = (m.clone(), world.clone(), ids.clone(), credits.clone());
        let (sent_ids, paths) = (sent_ids.clone(), paths.clone());
        senders.push(tokio::spawn(async move {
            let tx = t(&format!("tx-{from}"));
            for k in 0..MESSAGES_PER_AGENT {
                let to = recipient_of(from, k);
                credits[to].acquire().await.unwrap().forget();
                let stamp = base.elapsed().as_micros();
                let sent = m.send(&tx, &ids[to].to_string(), format!("{from}:{k}:{stamp}"), &*world).unwrap();
                sent_ids.lock().unwrap().insert(sent.message_id);
                *paths.lock().unwrap().entry(sent.delivery_path).or_default() += 1;
                if k % 16 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for sender in senders {
        sender.await.unwrap();
    }
    let (mut received, mut duplicates, mut latencies, mut cancelled, mut reconnects) =
        (HashSet::new(), 0, Vec::new(), 0, 0);
    for receiver in receivers {
        let (seen, dup, lat, can, rec) = receiver.await.unwrap();
        duplicates += dup;
        latencies.extend(lat);
        cancelled += can;
        reconnects += rec;
        for id in seen {
            assert!(received.insert(id), "a message reached two recipients");
        }
    }
    let elapsed = base.elapsed();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    delivery.await.unwrap();

    let sent_ids = sent_ids.lock().unwrap();
    let total = AGENTS * MESSAGES_PER_AGENT;
    assert_eq!(sent_ids.len(), total);
    let lost = sent_ids.difference(&received).count();
    assert_eq!(lost, 0, "lost messages");
    assert_eq!(duplicates, 0, "duplicated deliveries to a waiter");
    let taken = taken.lock().unwrap();
    assert!(taken.values().all(|n| *n == 1), "the terminal route took a message twice");

    latencies.sort_unstable();
    let pct = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    eprintln!(
        "stress: {total} messages, {AGENTS} agents, {:.0} ms, {:.0} msg/s; lost 0, duplicated 0; \
         send->woken wait p50 {} us, p99 {} us; cancelled waits {cancelled}, reconnects+reaps {reconnects}; \
         terminal takes {}; paths {:?}",
        elapsed.as_secs_f64() * 1e3,
        total as f64 / elapsed.as_secs_f64(),
        pct(50),
        pct(99),
        taken.len(),
        paths.lock().unwrap(),
    );
}

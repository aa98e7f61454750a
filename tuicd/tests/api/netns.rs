//! A second host on this machine: a network namespace joined to ours by a veth pair, so a test's
//! client reaches the daemon's TCP listener from a real non-loopback address. Needs root (the
//! test command runs as root); a namespace that cannot be made fails the test, it never skips.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

static NEXT: AtomicU32 = AtomicU32::new(0);

pub(crate) struct RemoteHost {
    pub name: String,
    /// Our side of the veth pair: the daemon binds its TCP listener here.
    pub host_ip: String,
    /// The namespace's side: what the daemon sees as the peer address.
    pub peer_ip: String,
    host_if: String,
}

fn run(args: &[&str]) -> Output {
    Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("{}: {e}", args.join(" ")))
}

fn must(args: &[&str]) {
    let out = run(args);
    assert!(
        out.status.success(),
        "`{}` failed (network namespaces need root and iproute2): {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl RemoteHost {
    /// A fresh namespace `tuic-<pid>-<n>` with a /30 link to this one; unique per test run.
    pub(crate) fn create() -> Self {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let name = format!("tuic-{pid}-{n}");
        let host_if = format!("tv{}{n}h", pid % 1_000_000);
        let peer_if = format!("tv{}{n}p", pid % 1_000_000);
        // 10.(200 + n).a.b/30 from the pid: two runs at once get different subnets.
        let (a, b) = ((pid >> 6) & 0xff, (pid & 0x3f) * 4);
        let host_ip = format!("10.{}.{a}.{}", 200 + n % 50, b + 1);
        let peer_ip = format!("10.{}.{a}.{}", 200 + n % 50, b + 2);
        let host = RemoteHost { name, host_ip, peer_ip, host_if };
        must(&["ip", "netns", "add", &host.name]);
        must(&["ip", "link", "add", &host.host_if, "type", "veth", "peer", "name", &peer_if]);
        must(&["ip", "link", "set", &peer_if, "netns", &host.name]);
        must(&["ip", "addr", "add", &format!("{}/30", host.host_ip), "dev", &host.host_if]);
        must(&["ip", "link", "set", &host.host_if, "up"]);
        must(&[
            "ip",
            "netns",
            "exec",
            &host.name,
            "ip",
            "addr",
            "add",
            &format!("{}/30", host.peer_ip),
            "dev",
            &peer_if,
        ]);
        must(&["ip", "netns", "exec", &host.name, "ip", "link", "set", &peer_if, "up"]);
        must(&["ip", "netns", "exec", &host.name, "ip", "link", "set", "lo", "up"]);
        host
    }

    /// Runs `program args` inside the namespace, bounded by `timeout`.
    pub(crate) async fn exec(&self, program: &str, args: &[&str], timeout: Duration) -> Output {
        let mut command = tokio::process::Command::new("ip");
        command.args(["netns", "exec", &self.name, program]).args(args).kill_on_drop(true);
        tokio::time::timeout(timeout, command.output())
            .await
            .unwrap_or_else(|_| panic!("{program} in {} did not finish in {timeout:?}", self.name))
            .unwrap()
    }
}

impl Drop for RemoteHost {
    /// Runs on panic too: deleting the namespace deletes its end of the pair, and with it ours.
    fn drop(&mut self) {
        run(&["ip", "netns", "del", &self.name]);
        run(&["ip", "link", "del", &self.host_if]);
    }
}

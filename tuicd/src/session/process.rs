//! `/process/stats`: CPU% and RSS of tuicd and of each session's child process tree. Sampled only
//! when asked (no background timer); CPU% is measured since the previous sample.

use std::collections::HashMap;
use std::time::Instant;

use proto::session::ProcessStat;
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

use super::SessionRegistry;
use crate::limits::PROCESS_SAMPLE_MIN_INTERVAL;

#[derive(Default)]
pub(super) struct ProcessSampler {
    system: Option<System>,
    sampled: Option<Instant>,
}

impl ProcessSampler {
    fn refresh(&mut self) -> Option<&System> {
        if self.system.is_none() {
            self.system = System::new().inspect_err(|e| tracing::warn!(error = %e, "process stats unavailable")).ok();
        }
        let system = self.system.as_mut()?;
        if self.sampled.is_none_or(|at| at.elapsed() >= PROCESS_SAMPLE_MIN_INTERVAL) {
            let kind = ProcessRefreshKind::nothing().with_cpu().with_memory();
            system.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
            self.sampled = Some(Instant::now());
        }
        Some(system)
    }
}

impl SessionRegistry {
    /// tuicd first, then one row per live session summing its child's process tree.
    pub(crate) fn process_stats(&self) -> Vec<ProcessStat> {
        let sessions = self.list();
        let mut sampler = self.sampler();
        let Some(system) = sampler.refresh() else { return Vec::new() };
        let mut children: HashMap<Pid, Vec<Pid>> = HashMap::new();
        for (pid, process) in system.processes() {
            if let Some(parent) = process.parent() {
                children.entry(parent).or_default().push(*pid);
            }
        }
        let tree = |root: Pid| {
            let (mut rss, mut cpu, mut count) = (0u64, 0f32, 0usize);
            let mut stack = vec![root];
            while let Some(pid) = stack.pop() {
                if let Some(p) = system.process(pid) {
                    rss += p.memory();
                    cpu += p.cpu_usage();
                    count += 1;
                }
                stack.extend(children.get(&pid).into_iter().flatten());
            }
            (rss, cpu, count)
        };
        let own = Pid::from_u32(std::process::id());
        let mut rows = vec![ProcessStat {
            session_id: None,
            name: "tuicd".into(),
            pid: own.as_u32(),
            rss_kb: system.process(own).map_or(0, |p| p.memory() / 1024),
            cpu_pct: system.process(own).map_or(0.0, |p| p.cpu_usage()),
            processes: 1,
        }];
        for session in sessions {
            let Some(pid) = session.pid else { continue };
            let pid = Pid::from_u32(pid);
            let (rss, cpu, count) = tree(pid);
            if count == 0 {
                continue;
            }
            let name = system.process(pid).map(|p| p.name().to_string_lossy().into_owned()).unwrap_or_default();
            rows.push(ProcessStat {
                session_id: Some(session.id.clone()),
                name,
                pid: pid.as_u32(),
                rss_kb: rss / 1024,
                cpu_pct: cpu,
                processes: count,
            });
        }
        rows
    }
}

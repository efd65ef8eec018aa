//! A load run: check-only queries at a fixed rate (open loop: requests are sent on schedule
//! whether or not earlier ones finished), with latency percentiles and the nodes' memory sampled.

use std::sync::Arc;
use std::time::{Duration, Instant};

use argus_client::{Client, Kind};
use argus_iris::Generator;
use indicatif::ProgressBar;

/// The most queries one load run may send (each is a task holding its shares until answered).
pub const MAX_QUERIES: usize = 10_000_000;

/// How the command that was run spells the rate and duration flags, for its error messages.
#[derive(Clone, Copy, Debug)]
pub struct Flags {
    /// The requests-per-second flag, e.g. `--qps`.
    pub qps: &'static str,
    /// The duration flag, e.g. `--seconds`.
    pub seconds: &'static str,
}

/// The schedule of a load run: `queries` requests, one every `period`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Number of requests.
    pub queries: usize,
    /// Time between two requests.
    pub period: Duration,
}

/// Checks a load run's rate and duration before anything is built: a finite positive rate, a
/// positive duration, at least one and at most [`MAX_QUERIES`] queries, and a schedule that fits
/// the clock.
pub fn schedule(qps: f64, seconds: u64, flags: Flags) -> Result<Schedule, String> {
    let Flags { qps: qf, seconds: sf } = flags;
    if !qps.is_finite() || qps <= 0.0 {
        return Err(format!("{qf} must be a finite number of requests per second above 0, got {qps}"));
    }
    if seconds == 0 {
        return Err(format!("{sf} must be at least 1"));
    }
    let total = (qps * seconds as f64).round();
    if total < 1.0 {
        return Err(format!("{qf} {qps} for {sf} {seconds} makes no query; raise {qf} or {sf}"));
    }
    if total > MAX_QUERIES as f64 {
        return Err(format!(
            "{qf} {qps} for {sf} {seconds} makes {total:.0} queries; a load run sends at most {MAX_QUERIES}: \
             lower {qf} or {sf}"
        ));
    }
    let queries = total as usize;
    let too_long = || format!("{qf} {qps} for {sf} {seconds} schedules queries too far ahead; lower {sf}");
    let period = Duration::try_from_secs_f64(1.0 / qps).map_err(|_| too_long())?;
    // The last query's due time must be representable, or the schedule would panic midway.
    period.checked_mul(queries as u32 - 1).and_then(|last| Instant::now().checked_add(last)).ok_or_else(too_long)?;
    Ok(Schedule { queries, period })
}

/// Runs `qps` check-only queries per second for `seconds` against `client`'s nodes; fails on
/// any error, and refuses a rate or duration [`schedule`] refuses (naming `flags`). `alive` is
/// polled to notice a node process that died.
pub fn run_load(
    rt: &tokio::runtime::Runtime,
    client: &Arc<Client>,
    gen: &mut Generator,
    qps: f64,
    seconds: u64,
    flags: Flags,
    mut alive: Option<&mut dyn FnMut() -> Result<(), String>>,
) -> Result<(), String> {
    let Schedule { queries: n, period } = schedule(qps, seconds, flags)?;
    println!("\nload run: {n} check-only queries at {qps} per second for {seconds} s");
    let pb = ProgressBar::new(n as u64);
    let rss = |s: &[argus_client::NodeStatus; 3]| s.iter().map(|n| n.rss_bytes).collect::<Vec<_>>();
    let rss0 = rss(&rt.block_on(client.status()).map_err(|e| e.to_string())?);
    let mut samples = vec![rss0.clone()];
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    let mut next_sample = start + Duration::from_secs(10);
    for k in 0..n {
        // Made at its turn, not all up front: a long run's templates would not fit in memory.
        let t = gen.random_template();
        let due = start + period * k as u32;
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        if Instant::now() >= next_sample {
            if let Some(a) = alive.as_mut() {
                a()?;
            }
            let c = client.clone();
            if let Ok(s) = rt.block_on(async move { c.status().await }) {
                samples.push(rss(&s));
            }
            next_sample += Duration::from_secs(10);
        }
        let (c, pb) = (client.clone(), pb.clone());
        tasks.spawn_on(
            async move {
                let c2 = c.clone();
                let shares = tokio::task::spawn_blocking(move || c2.make_shares(&t)).await.expect("sharing")?;
                let t0 = Instant::now();
                let r = c.submit_shares(argus_client::new_request_id(), Kind::Check, shares).await;
                pb.inc(1);
                r.map(|_| t0.elapsed())
            },
            rt.handle(),
        );
    }
    let mut latencies = Vec::new();
    let mut errors = Vec::new();
    rt.block_on(async {
        while let Some(r) = tasks.join_next().await {
            match r {
                Ok(Ok(l)) => latencies.push(l),
                Ok(Err(e)) => errors.push(e.to_string()),
                Err(e) => errors.push(e.to_string()),
            }
        }
    });
    pb.finish();
    let elapsed = start.elapsed().as_secs_f64();
    let end = rt.block_on(client.status()).map_err(|e| e.to_string())?;
    samples.push(rss(&end));
    latencies.sort();
    let pct = |p: f64| latencies.get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)));
    let ms = |d: Option<&Duration>| d.map_or("-".into(), |d| format!("{:.0} ms", d.as_secs_f64() * 1e3));
    println!(
        "load: {} ok, {} errors in {:.1} s ({:.2} per second); latency p50 {}, p90 {}, p99 {}, max {}",
        latencies.len(),
        errors.len(),
        elapsed,
        latencies.len() as f64 / elapsed,
        ms(pct(0.5)),
        ms(pct(0.9)),
        ms(pct(0.99)),
        ms(latencies.last())
    );
    for node in 0..3 {
        let series: Vec<f64> = samples.iter().map(|s| s[node] as f64 / 1e6).collect();
        let max = series.iter().cloned().fold(0.0, f64::max);
        // Every minute's sample too, so a plateau shows apart from a steady climb.
        let by_minute: Vec<String> = series.iter().step_by(6).map(|v| format!("{v:.0}")).collect();
        println!(
            "node {node} RSS: start {:.0} MB, end {:.0} MB, max {:.0} MB ({} samples, every 10 s; by minute: {}); \
             {} requests refused busy since start",
            series[0],
            series[series.len() - 1],
            max,
            series.len(),
            by_minute.join(" "),
            end[node].refused_busy
        );
    }
    if let Some(e) = errors.first() {
        return Err(format!("{} load queries failed, first: {e}", errors.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Flags = Flags { qps: "--qps", seconds: "--seconds" };

    #[test]
    fn a_finite_positive_rate_and_duration_make_a_schedule() {
        assert_eq!(schedule(10.0, 300, F).unwrap(), Schedule { queries: 3000, period: Duration::from_millis(100) });
        assert_eq!(schedule(0.5, 2, F).unwrap().queries, 1);
    }

    #[test]
    fn a_rate_that_is_not_finite_and_positive_is_refused_naming_the_flag() {
        for qps in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.0, -1.0] {
            let e = schedule(qps, 1, F).unwrap_err();
            assert!(e.starts_with("--qps must be a finite number"), "{qps}: {e}");
        }
        let demo = Flags { qps: "--load-qps", seconds: "--load-seconds" };
        assert!(schedule(0.0, 1, demo).unwrap_err().starts_with("--load-qps must"));
        assert_eq!(schedule(1.0, 0, demo).unwrap_err(), "--load-seconds must be at least 1");
    }

    #[test]
    fn too_many_too_few_or_too_distant_queries_are_refused() {
        assert_eq!(schedule(10_000.0, 1_000, F).unwrap().queries, MAX_QUERIES);
        let e = schedule(10_000.0, 1_001, F).unwrap_err();
        assert!(e.contains("at most 10000000"), "{e}");
        assert!(schedule(f64::MAX, 2, F).unwrap_err().contains("at most"));
        assert!(schedule(0.1, 1, F).unwrap_err().contains("makes no query"));
        let e = schedule(1e-13, u64::MAX, F).unwrap_err();
        assert!(e.contains("too far ahead"), "{e}");
        assert!(schedule(1e-300, u64::MAX, F).is_err());
    }
}

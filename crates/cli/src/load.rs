//! A load run: check-only queries at a fixed rate (open loop: requests are sent on schedule
//! whether or not earlier ones finished), with latency percentiles and the nodes' memory sampled.

use std::sync::Arc;
use std::time::{Duration, Instant};

use argus_iris::Generator;
use argus_node::{Client, Kind};
use indicatif::ProgressBar;

/// Runs `qps` check-only queries per second for `seconds` against `client`'s nodes; fails on
/// any error. `alive` is polled to notice a node process that died.
pub fn run_load(
    rt: &tokio::runtime::Runtime,
    client: &Arc<Client>,
    gen: &mut Generator,
    qps: f64,
    seconds: u64,
    mut alive: Option<&mut dyn FnMut() -> Result<(), String>>,
) -> Result<(), String> {
    if qps.is_nan() || qps <= 0.0 {
        return Err(format!("--load-qps must be positive, got {qps}"));
    }
    let n = (qps * seconds as f64).round() as usize;
    println!("\nload run: {n} check-only queries at {qps} per second for {seconds} s");
    let templates: Vec<_> = (0..n).map(|_| gen.random_template()).collect();
    let pb = ProgressBar::new(n as u64);
    let period = Duration::from_secs_f64(1.0 / qps);
    let rss = |s: &[argus_node::NodeStatus; 3]| s.iter().map(|n| n.rss_bytes).collect::<Vec<_>>();
    let rss0 = rss(&rt.block_on(client.status()).map_err(|e| e.to_string())?);
    let mut samples = vec![rss0.clone()];
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    let mut next_sample = start + Duration::from_secs(10);
    for (k, t) in templates.into_iter().enumerate() {
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
                let r = c.submit_shares(argus_node::client::new_request_id(), Kind::Check, shares).await;
                pb.inc(1);
                r.map(|_| t0.elapsed())
            },
            rt.handle(),
        );
    }
    let mut latencies = Vec::with_capacity(n);
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

//! The Chrome trace event file (JSON object format): the domains' records merged, bounded by the
//! event limit, sorted by time, written as `X` (warp states), `b`/`e` (async request spans, nested
//! by depth), `C` (counters) and `M` (process and thread names) events.

use super::{Counter, Recorder, Sample, Span, TimelineOptions, Track};
use crate::engine::Time;
use std::fmt::Write as _;

/// A rendered timeline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// The Chrome trace JSON.
    pub json: String,
    /// Trace events in it (metadata included).
    pub events: usize,
    /// The event limit was reached: the file holds what starts before this core cycle.
    pub truncated_at: Option<u64>,
    pub limit: usize,
}

/// Process ids: SM `s` is `SM_PID + s`; the others are fixed.
const SM_PID: u64 = 1;
const MEMORY_PID: u64 = 100_000;
const COUNTER_PID: u64 = 100_001;
/// DRAM bandwidth buckets, core cycles.
const DRAM_BUCKET: u64 = 100;

fn cost(s: &Span) -> usize {
    if matches!(s.track, Track::Warp { .. }) {
        1
    } else {
        2
    }
}

/// Merges the records of every domain (in domain order) and the barrier's counters into one trace.
/// `period`: the core clock period (ps); `sms`: the SMs (each a process of the trace).
pub fn merge(
    domains: Vec<Recorder>,
    mut central: Recorder,
    opts: &TimelineOptions,
    period: Time,
    sms: u16,
) -> Timeline {
    // DRAM bandwidth from the partitions' accesses, per bucket.
    let bucket = DRAM_BUCKET * period;
    let mut dram: Vec<(Time, u32)> = domains
        .iter()
        .flat_map(|d| d.dram.iter().copied())
        .collect();
    dram.sort_by_key(|d| d.0);
    let mut i = 0;
    while i < dram.len() {
        let b = dram[i].0 / bucket;
        let mut bytes = 0u64;
        while i < dram.len() && dram[i].0 / bucket == b {
            bytes += dram[i].1 as u64;
            i += 1;
        }
        // bytes per bucket / bucket ns = GB/s.
        let gbs = bytes as f64 / (bucket as f64 / 1000.0);
        central.sample(Counter::DramBandwidth, b * bucket, gbs);
        let next = b + 1;
        if i == dram.len() || dram[i].0 / bucket > next {
            central.sample(Counter::DramBandwidth, next * bucket, 0.0);
        }
    }
    let mut cut = domains
        .iter()
        .chain(std::iter::once(&central))
        .filter_map(|d| d.full_at)
        .min();
    let mut spans: Vec<Span> = Vec::new();
    let mut samples: Vec<Sample> = Vec::new();
    for d in domains.into_iter().chain(std::iter::once(central)) {
        spans.extend(d.spans);
        samples.extend(d.samples);
    }
    if let Some(c) = cut {
        spans.retain(|s| s.start < c);
        samples.retain(|s| s.t < c);
    }
    spans.sort_by_key(|s| s.start);
    samples.sort_by_key(|s| s.t);
    let total: usize = spans.iter().map(cost).sum::<usize>() + samples.len();
    if total > opts.limit {
        // Keep the earliest records, spans and samples alike, up to the limit.
        let (mut si, mut ci, mut used) = (0, 0, 0);
        loop {
            let next_span = spans.get(si).map(|s| s.start);
            let next_sample = samples.get(ci).map(|s| s.t);
            let (t, c) = match (next_span, next_sample) {
                (Some(a), Some(b)) if a <= b => (a, cost(&spans[si])),
                (Some(a), None) => (a, cost(&spans[si])),
                (_, Some(b)) => (b, 1),
                (None, None) => break,
            };
            if used + c > opts.limit {
                cut = Some(cut.map_or(t, |x| x.min(t)));
                break;
            }
            used += c;
            if next_span == Some(t) && (next_sample.is_none() || next_span <= next_sample) {
                si += 1;
            } else {
                ci += 1;
            }
        }
        spans.truncate(si);
        samples.truncate(ci);
    }
    render(&spans, &samples, cut, opts, period, sms)
}

/// Time in core cycles, as the viewer's microseconds.
fn ts(t: Time, period: Time) -> String {
    let whole = t / period;
    let frac = t % period;
    if frac == 0 {
        format!("{whole}")
    } else {
        format!("{:.3}", t as f64 / period as f64)
    }
}

fn render(
    spans: &[Span],
    samples: &[Sample],
    cut: Option<Time>,
    opts: &TimelineOptions,
    period: Time,
    sms: u16,
) -> Timeline {
    // (time, class, order within class, sequence, text): at one time, ends (innermost first) come
    // before begins (outermost first), so that spans nest.
    let mut evs: Vec<(Time, u8, i32, usize, String)> = Vec::new();
    let mut meta = Vec::new();
    let name = |pid: u64, n: &str| {
        format!(
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"ts\":0,\"args\":{{\"name\":{}}}}}",
            serde_json::to_string(n).expect("a string")
        )
    };
    for s in 0..sms {
        meta.push(name(SM_PID + s as u64, &format!("SM {s}")));
    }
    meta.push(name(MEMORY_PID, "memory requests"));
    meta.push(name(COUNTER_PID, "counters"));
    let mut warps: Vec<(u16, u16)> = spans
        .iter()
        .filter_map(|s| match s.track {
            Track::Warp { sm, slot } => Some((sm, slot)),
            _ => None,
        })
        .collect();
    warps.sort();
    warps.dedup();
    for (sm, slot) in warps {
        meta.push(format!(
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{slot},\"ts\":0,\"args\":{{\"name\":\"warp slot {slot}\"}}}}",
            SM_PID + sm as u64
        ));
    }
    for (seq, s) in spans.iter().enumerate() {
        let nm = serde_json::to_string(&s.name).expect("a string");
        let args = if s.args.is_empty() {
            String::new()
        } else {
            format!(",\"args\":{{{}}}", s.args)
        };
        match s.track {
            Track::Warp { sm, slot } => {
                let dur = (s.end - s.start) as f64 / period as f64;
                evs.push((
                    s.start,
                    2,
                    0,
                    seq,
                    format!(
                        "{{\"ph\":\"X\",\"name\":{nm},\"cat\":\"warp\",\"pid\":{},\"tid\":{slot},\"ts\":{},\"dur\":{}{args}}}",
                        SM_PID + sm as u64,
                        ts(s.start, period),
                        fmt_dur(dur)
                    ),
                ));
            }
            track => {
                let (cat, id) = match track {
                    Track::Request { sm, tag } => ("request", format!("req sm{sm} tag{tag}")),
                    Track::Access { sm, op, line } if line == u64::MAX => {
                        ("access", format!("local sm{sm} op{op}"))
                    }
                    Track::Access { sm, op, line } => {
                        ("access", format!("access sm{sm} op{op} {line:#x}"))
                    }
                    Track::Store { sm, seq } => ("store", format!("store sm{sm} #{seq}")),
                    Track::Warp { .. } => unreachable!("handled above"),
                };
                let common = format!(
                    "\"name\":{nm},\"cat\":\"{cat}\",\"id\":\"{id}\",\"pid\":{MEMORY_PID},\"tid\":0"
                );
                evs.push((
                    s.start,
                    2,
                    s.depth as i32,
                    seq,
                    format!(
                        "{{\"ph\":\"b\",{common},\"ts\":{}{args}}}",
                        ts(s.start, period)
                    ),
                ));
                evs.push((
                    s.end,
                    1,
                    -(s.depth as i32),
                    seq,
                    format!("{{\"ph\":\"e\",{common},\"ts\":{}}}", ts(s.end, period)),
                ));
            }
        }
    }
    let base = spans.len();
    for (i, c) in samples.iter().enumerate() {
        let (name, key) = match c.counter {
            Counter::StoreBuffer { sm } => (format!("store buffer entries SM {sm}"), "entries"),
            Counter::AtomicQueue { slice } => (format!("atomic queue slice {slice}"), "operations"),
            Counter::Outstanding => ("outstanding requests".to_string(), "requests"),
            Counter::DramBandwidth => ("DRAM bandwidth".to_string(), "GB/s"),
        };
        evs.push((
            c.t,
            2,
            0,
            base + i,
            format!(
                "{{\"ph\":\"C\",\"name\":\"{name}\",\"pid\":{COUNTER_PID},\"tid\":0,\"ts\":{},\"args\":{{\"{key}\":{}}}}}",
                ts(c.t, period),
                crate::stats::fmt_num(c.value)
            ),
        ));
    }
    evs.sort_by_key(|e| (e.0, e.1, e.2, e.3));
    let events = meta.len() + evs.len();
    let truncated_at = cut.map(|c| c / period);
    let mut json = String::with_capacity(events * 120 + 256);
    json.push_str("{\"traceEvents\":[\n");
    let mut first = true;
    for e in meta.iter().chain(evs.iter().map(|e| &e.4)) {
        if !first {
            json.push_str(",\n");
        }
        first = false;
        json.push_str(e);
    }
    json.push_str("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{");
    let _ = write!(
        json,
        "\"time_unit\":\"1 us in the viewer = 1 core cycle\",\"limit\":{},\"window\":{},\"truncated_at_cycle\":{}",
        opts.limit,
        match opts.window {
            Some((a, b)) if b == u64::MAX => format!("\"{a}..\""),
            Some((a, b)) => format!("\"{a}..{b}\""),
            None => "null".into(),
        },
        truncated_at.map(|c| c.to_string()).unwrap_or_else(|| "null".into())
    );
    json.push_str("}}\n");
    Timeline {
        json,
        events,
        truncated_at,
        limit: opts.limit,
    }
}

fn fmt_dur(d: f64) -> String {
    if d.fract() == 0.0 {
        format!("{}", d as u64)
    } else {
        format!("{d:.3}")
    }
}

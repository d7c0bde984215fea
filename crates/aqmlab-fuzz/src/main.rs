//! `aqmlab-fuzz`: run a fixed-seed batch of mutated scenarios through the
//! library (see the library documentation) and report failures.
//!
//! ```text
//! aqmlab-fuzz [--cases N] [--seed S] [--start I] [--budget-mb M] [--time-limit-s T]
//!             [--save DIR] [--corpus DIR] [--show-rejections] [--print I]
//! ```
//!
//! - `--cases` (default 20000) cases `start..start+N` of the run `--seed`
//!   (default 1);
//! - `--budget-mb` (default 1024): a case that holds more memory than this
//!   aborts the batch, naming the case (an allocation the library would not
//!   survive in practice);
//! - `--time-limit-s` (default 10): a case using more CPU time than this
//!   (or 30 times this in wall time) aborts the batch, naming the case;
//! - `--save DIR`: write each distinct failure's first case there;
//! - `--show-rejections`: print the first line of each rejected case's
//!   message (to see what the mutations exercise);
//! - `--corpus DIR` (default: the repository's `scenarios/`): the seed
//!   scenarios, every `*.toml` below DIR;
//! - `--print I`: print case I (its seed scenario, mutations and text) and
//!   exit, to reproduce a failure.
//!
//! The report counts the cases that ran (and held every invariant), those
//! rejected (the library's exit-2 errors, split by whether the message
//! names the key: [`aqmlab_fuzz::pointer`]), those that panicked and those
//! that broke an invariant; it lists the first rejections that name no key.
//!
//! Exit status: 0 when no case failed (no panic, no broken invariant), 1 otherwise (and the process aborts on
//! a blown budget).

use aqmlab_fuzz::{corpus, features_of, make_case, pointer, run_case, unclear, Outcome, Pointer};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Bytes allocated and not yet freed.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Most bytes live during the current case.
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations that would take `LIVE` above this abort (usize::MAX: off).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The case running (u64::MAX: none).
static CASE: AtomicU64 = AtomicU64::new(u64::MAX);
/// When the current case started, ms since the batch started (0: idle).
static CASE_START_MS: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting live bytes and enforcing the per-case
/// budget. It must not allocate itself: the abort message is written from a
/// stack buffer.
struct Counting;

fn over_budget(size: usize) -> ! {
    let mut buf = [0u8; 160];
    let mut n = 0;
    let mut put = |s: &[u8]| {
        for &b in s {
            if n < buf.len() {
                buf[n] = b;
                n += 1;
            }
        }
    };
    put(b"\naqmlab-fuzz: allocation budget exceeded in case ");
    put(itoa(CASE.load(Relaxed), &mut [0u8; 20]));
    put(b" (an allocation of ");
    put(itoa(size as u64, &mut [0u8; 20]));
    put(b" bytes); reproduce with --print <case>\n");
    let _ = std::io::stderr().write_all(&buf[..n]);
    std::process::abort()
}

fn itoa(mut v: u64, b: &mut [u8; 20]) -> &[u8] {
    let mut i = b.len();
    loop {
        i -= 1;
        b[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &b[i..]
}

impl Counting {
    fn grow(size: usize) {
        let now = LIVE.fetch_add(size, Relaxed).saturating_add(size);
        if now > LIMIT.load(Relaxed) {
            LIVE.fetch_sub(size, Relaxed);
            over_budget(size);
        }
        PEAK.fetch_max(now, Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        Self::grow(l.size());
        let p = System.alloc(l);
        if p.is_null() {
            LIVE.fetch_sub(l.size(), Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        Self::grow(l.size());
        let p = System.alloc_zeroed(l);
        if p.is_null() {
            LIVE.fetch_sub(l.size(), Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > l.size() {
            Self::grow(new - l.size());
        }
        let q = System.realloc(p, l, new);
        if q.is_null() {
            if new > l.size() {
                LIVE.fetch_sub(new - l.size(), Relaxed);
            }
        } else if new < l.size() {
            LIVE.fetch_sub(l.size() - new, Relaxed);
        }
        q
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// CPU time of this process (user + system), seconds, where /proc has it.
fn process_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // fields after the command name (which may hold spaces) in parentheses
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

struct Args {
    cases: u64,
    seed: u64,
    start: u64,
    budget_mb: u64,
    time_limit_s: u64,
    save: Option<PathBuf>,
    print: Option<u64>,
    show_rejections: bool,
    corpus: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        cases: 20_000,
        seed: 1,
        start: 0,
        budget_mb: 1024,
        time_limit_s: 10,
        save: None,
        print: None,
        show_rejections: false,
        corpus: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or_else(|| format!("{k} needs a value"));
        let num = |s: String| {
            s.parse::<u64>()
                .map_err(|_| format!("{k}: expected a non-negative integer, got `{s}`"))
        };
        match k.as_str() {
            "--cases" => a.cases = num(v()?)?,
            "--seed" => a.seed = num(v()?)?,
            "--start" => a.start = num(v()?)?,
            "--budget-mb" => a.budget_mb = num(v()?)?,
            "--time-limit-s" => a.time_limit_s = num(v()?)?.max(1),
            "--save" => a.save = Some(PathBuf::from(v()?)),
            "--print" => a.print = Some(num(v()?)?),
            "--show-rejections" => a.show_rejections = true,
            "--corpus" => a.corpus = PathBuf::from(v()?),
            "-h" | "--help" => {
                return Err("usage: aqmlab-fuzz [--cases N] [--seed S] [--start I] [--budget-mb M] [--time-limit-s T] [--save DIR] [--corpus DIR] [--show-rejections] [--print I]".into())
            }
            _ => return Err(format!("unknown argument `{k}`; see --help")),
        }
    }
    Ok(a)
}

/// One distinct failure: the first case that hit it, and how many did.
struct Failure {
    message: String,
    first_case: u64,
    count: u64,
}

/// How many cases gave one reason, and the first of them (case, message).
type Examples = (u64, Vec<(u64, String)>);

fn main() -> std::process::ExitCode {
    let a = match parse_args() {
        Ok(a) => a,
        Err(m) => {
            eprintln!("{m}");
            return std::process::ExitCode::from(2);
        }
    };
    let corpus = corpus(&a.corpus);
    if let Some(i) = a.print {
        let c = make_case(&corpus, a.seed, i);
        println!(
            "# case {i} of seed {}: from {}{}\n# mutations:",
            a.seed,
            c.seed_name,
            if c.sweep { " (as a sweep)" } else { "" }
        );
        for m in &c.mutations {
            println!("#   {}", m.replace('\n', "\\n"));
        }
        print!("{}", c.text);
        return std::process::ExitCode::SUCCESS;
    }

    // the panic hook records the message and place; the batch goes on
    static LAST_PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if CASE_START_MS.load(Relaxed) == 0 {
            // not inside a case: the fuzzer itself failed
            eprintln!(
                "aqmlab-fuzz: internal panic at {at} (case {}): {msg}",
                CASE.load(Relaxed)
            );
        }
        if let Ok(mut g) = LAST_PANIC.lock() {
            *g = Some((at, msg));
        }
    }));

    let t0 = Instant::now();
    let limit_s = a.time_limit_s;
    // The time budget counts this process's CPU time (from /proc), so a
    // machine busy with other work does not make a case look hung; a wall
    // clock 30 times longer catches a case blocked outside the CPU.
    std::thread::spawn(move || {
        let (mut seen, mut cpu0, mut wall0) = (u64::MAX, process_cpu_s(), Instant::now());
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let case = CASE.load(Relaxed);
            let busy = CASE_START_MS.load(Relaxed) != 0;
            let cpu = process_cpu_s();
            if case != seen || !busy {
                (seen, cpu0, wall0) = (case, cpu, Instant::now());
                continue;
            }
            let used = match (cpu, cpu0) {
                (Some(c), Some(c0)) => c - c0,
                _ => wall0.elapsed().as_secs_f64(),
            };
            if used > limit_s as f64 || wall0.elapsed().as_secs() > 30 * limit_s {
                eprintln!(
                    "\naqmlab-fuzz: case {case} ran longer than {limit_s} s (time budget: {used:.1} s CPU, {:.1} s wall); reproduce with --print {case}",
                    wall0.elapsed().as_secs_f64()
                );
                std::process::abort();
            }
        }
    });

    let budget = (a.budget_mb as usize).saturating_mul(1 << 20);
    let mut outcomes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut failures: BTreeMap<String, Failure> = BTreeMap::new();
    let mut pointers: BTreeMap<Pointer, u64> = BTreeMap::new();
    let mut unnamed_first: Vec<(u64, String)> = Vec::new();
    // per feature: (cases, rejected, unclear); per reason: count, first cases
    let mut by_feature: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    let mut reasons: BTreeMap<&str, Examples> = BTreeMap::new();
    let (mut peak_max, mut peak_case) = (0usize, 0u64);
    let (mut slow_ms, mut slow_case) = (0u128, 0u64);
    for i in a.start..a.start.saturating_add(a.cases) {
        CASE.store(i, Relaxed);
        let c = make_case(&corpus, a.seed, i);
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        CASE.store(i, Relaxed);
        let started = Instant::now();
        CASE_START_MS.store((t0.elapsed().as_millis() as u64).max(1), Relaxed);
        LIMIT.store(base.saturating_add(budget), Relaxed);
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| run_case(&c)));
        LIMIT.store(usize::MAX, Relaxed);
        CASE_START_MS.store(0, Relaxed);
        let ms = started.elapsed().as_millis();
        for f in features_of(&c.mutations) {
            by_feature.entry(f).or_default().0 += 1;
        }
        if ms > slow_ms {
            (slow_ms, slow_case) = (ms, i);
        }
        let peak = PEAK.load(Relaxed).saturating_sub(base);
        if peak > peak_max {
            (peak_max, peak_case) = (peak, i);
        }
        // a failure: (where, message)
        let failed = match r {
            Ok(Outcome::Rejected(m)) => {
                *outcomes.entry("rejected").or_default() += 1;
                let why = unclear(&m, &c.mutations);
                for f in features_of(&c.mutations) {
                    let e = by_feature.entry(f).or_default();
                    e.1 += 1;
                    e.2 += u64::from(why.is_some());
                }
                if let Some(w) = why {
                    let r = reasons.entry(w).or_default();
                    r.0 += 1;
                    if r.1.len() < 5 {
                        r.1.push((
                            i,
                            m.lines().next().unwrap_or("").chars().take(200).collect(),
                        ));
                    }
                }
                let p = pointer(&m, &c.mutations);
                *pointers.entry(p).or_default() += 1;
                if p == Pointer::None && unnamed_first.len() < 20 {
                    unnamed_first.push((
                        i,
                        m.lines().next().unwrap_or("").chars().take(200).collect(),
                    ));
                }
                if a.show_rejections {
                    println!("case {i}: {}", m.lines().next().unwrap_or(""));
                }
                None
            }
            Ok(Outcome::Ran) => {
                *outcomes.entry("ran").or_default() += 1;
                None
            }
            Ok(Outcome::Violated(m)) => {
                *outcomes.entry("violated").or_default() += 1;
                // one distinct failure per kind of figure: the message up
                // to its first number
                let kind: String = m.chars().take_while(|c| !c.is_ascii_digit()).collect();
                Some((format!("invariant: {kind}"), m))
            }
            Err(_) => {
                *outcomes.entry("panicked").or_default() += 1;
                let (at, msg) = LAST_PANIC
                    .lock()
                    .ok()
                    .and_then(|mut g| g.take())
                    .unwrap_or_default();
                Some((at, msg))
            }
        };
        if let Some((at, msg)) = failed {
            let f = failures.entry(at).or_insert_with(|| Failure {
                message: msg.chars().take(300).collect(),
                first_case: i,
                count: 0,
            });
            f.count += 1;
            if f.count == 1 {
                if let Some(d) = &a.save {
                    let _ = std::fs::create_dir_all(d);
                    let _ = std::fs::write(
                        d.join(format!("case-{i}.toml")),
                        format!(
                            "# from {}; mutations: {:?}; overrides: {:?}; sweep: {}\n{}",
                            c.seed_name, c.mutations, c.overrides, c.sweep, c.text
                        ),
                    );
                }
            }
        }
        let done = i - a.start + 1;
        if done % 10_000 == 0 {
            eprintln!(
                "aqmlab-fuzz: {done} cases, {:.0} cases/s, {} distinct failures",
                done as f64 / t0.elapsed().as_secs_f64(),
                failures.len()
            );
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let n = |k: &str| outcomes.get(k).copied().unwrap_or(0);
    let failed = n("panicked") + n("violated");
    println!(
        "aqmlab-fuzz: seed {}, cases {}..{}: {} ran (invariants hold), {} rejected (exit 2), {} panicked, {} broke an invariant ({} distinct failures) in {:.1} s ({:.0} cases/s); corpus {} scenarios; largest case memory {:.1} MiB (case {}), slowest case {} ms (case {})",
        a.seed,
        a.start,
        a.start.saturating_add(a.cases),
        n("ran"),
        n("rejected"),
        n("panicked"),
        n("violated"),
        failures.len(),
        secs,
        a.cases as f64 / secs.max(1e-9),
        corpus.len(),
        peak_max as f64 / (1 << 20) as f64,
        peak_case,
        slow_ms,
        slow_case
    );
    let p = |k: Pointer| pointers.get(&k).copied().unwrap_or(0);
    let rejected = n("rejected").max(1) as f64;
    println!(
        "  exit-2 messages: {} name the key ({:.2} %), {} name the line and column of a TOML syntax error ({:.2} %), {} name no key ({:.2} %)",
        p(Pointer::Key),
        100.0 * p(Pointer::Key) as f64 / rejected,
        p(Pointer::Line),
        100.0 * p(Pointer::Line) as f64 / rejected,
        p(Pointer::None),
        100.0 * p(Pointer::None) as f64 / rejected,
    );
    for (i, m) in &unnamed_first {
        println!("  no key, case {i}: {m}");
    }
    // unclear messages (aqmlab_fuzz::unclear) by feature: a case counts
    // towards every feature its mutations touch
    let unclear_all: u64 = reasons.values().map(|r| r.0).sum();
    println!(
        "  unclear exit-2 messages: {unclear_all} of {} ({:.2} %); by feature (cases, refused, unclear, % of refused):",
        n("rejected"),
        100.0 * unclear_all as f64 / rejected
    );
    for (f, (cases, rej, unc)) in &by_feature {
        println!(
            "    {f:<10} {cases:>7} {rej:>7} {unc:>6} {:>6.2} %",
            100.0 * *unc as f64 / (*rej).max(1) as f64
        );
    }
    for (w, (count, first)) in &reasons {
        println!("  unclear ({w}): {count}");
        for (i, m) in first {
            println!("    case {i}: {m}");
        }
    }
    for (at, f) in &failures {
        println!(
            "  FAIL at {at}: {} cases, first case {} (--print {}): {}",
            f.count, f.first_case, f.first_case, f.message
        );
    }
    if failed > 0 {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    }
}

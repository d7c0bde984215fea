//! The MarkMax fluid model and its threshold conditions.
//!
//! Source: N. Osipova, A. Blanc, K. Avrachenkov, "Improving TCP Fairness with
//! MarkMax Policy" (slides, "Fluid model" and
//! "Mathematical results: threshold selection").
//!
//! The model, as on the slides:
//! - N flows with constant round-trip times RTT_i; between cuts the sending
//!   rate of flow i grows linearly, λ_i(t) = λ_{0,i} + α_i t with
//!   α_i = 1/RTT_i² (congestion avoidance: one packet per RTT, rate = window
//!   / RTT), and the total rate is λ(t) = Σ_i λ_i(t);
//! - one buffer x(t) drained at rate μ: dx/dt = λ − μ while x > 0 or λ > μ,
//!   otherwise x stays at 0 and the link carries only λ < μ;
//! - when x reaches θ, the selected flow i is cut, λ_i ← β·λ_i (0 < β < 1),
//!   the source reacting immediately; the slides' rule "λ⁺ < μ – stop
//!   cutting" is applied literally: cuts at that instant continue, one flow
//!   at a time, until the total rate is below μ. The cuts of one instant
//!   form one *congestion epoch*.
//! - Selection ([`Selection`]): the flow with the largest rate (the slides'
//!   model: "cut flow with the biggest sending rate"; ties to the lowest
//!   index) or the flow with the largest backlog. Per-flow backlogs are
//!   modelled with the usual fluid FIFO approximation — each flow leaves the
//!   buffer in proportion to its share of it, dx_i/dt = λ_i − μ·x_i/x —
//!   integrated by classical Runge–Kutta with a fixed step
//!   (`backlog_step_s`). With backlog selection a flow is cut at most once per
//!   instant while other flows remain (its backlog does not change
//!   instantly).
//!
//! The integrator is exact for the aggregate: between events λ is linear and
//! x quadratic in time, so the times at which x reaches θ or 0, or λ reaches
//! μ on an empty buffer, are roots of quadratics (computed in a numerically
//! stable form). Time averages (rates, backlog, unused capacity) are exact
//! integrals of these pieces.
//!
//! Threshold conditions (functions below; α is the growth rate of the
//! *total* rate, α = Σ α_i, which is the reading under which the slides'
//! first bound is exactly the condition derived from this model):
//! - single cut: if θ < μ²(1−β)²/(2α(N−1+β)²) then λ⁺ < μ after one cut.
//!   Derivation: starting from an empty buffer at λ = μ, x = α s²/2 reaches
//!   θ when λ⁻ = μ + √(2αθ); the largest of N rates is at least λ⁻/N, so
//!   λ⁺ ≤ λ⁻(N−1+β)/N, which is below μ iff the bound holds. Tight for N
//!   equal flows.
//! - positive backlog (full utilisation): if θ > μ²(1 − βμ/(μ+√(2αθ)))²/(2α)
//!   then x stays positive. From the model: after a cut to λ⁺ < μ at x = θ,
//!   x falls to θ − (μ−λ⁺)²/(2α) ([`min_backlog_after_cut`]); the worst case
//!   (one flow carrying all the rate) is λ⁺ = βλ⁻, giving the condition
//!   θ > (μ − β(μ+√(2αθ)))²/(2α) ([`positive_backlog_rhs_model`]). The slides'
//!   right-hand side is never smaller than this one (βμ²/λ⁻ ≤ βλ⁻), so the
//!   slides' condition is sufficient, more conservative than needed.
//!
//! Parameters: `mu` (packets/s), `beta` (the slides leave it open; TCP's
//! halving is 0.5), `theta` (packets), per flow `rtt_s` (s) and `rate0`
//! (packets/s), `x0` (initial backlog, packets, default 0), `selection`
//! (default largest rate), `backlog_step_s` (default 1e-4 s).

/// One flow of the fluid model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FluidFlow {
    /// Round-trip time, seconds (constant).
    pub rtt_s: f64,
    /// Sending rate at t = 0, packets/s.
    pub rate0: f64,
}

impl FluidFlow {
    /// α_i = 1/RTT_i², packets/s².
    pub fn alpha(&self) -> f64 {
        1.0 / (self.rtt_s * self.rtt_s)
    }
}

/// Which flow a cut selects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Selection {
    /// The largest sending rate (the slides' fluid model).
    #[default]
    LargestRate,
    /// The largest backlog in the buffer (the packet algorithm's rule).
    LargestBacklog,
}

/// A fluid-model configuration.
#[derive(Clone, Debug)]
pub struct FluidConfig {
    /// Service rate μ, packets/s.
    pub mu: f64,
    /// Cut factor β, 0 < β < 1.
    pub beta: f64,
    /// Threshold θ, packets.
    pub theta: f64,
    pub flows: Vec<FluidFlow>,
    /// Initial backlog, packets (0 ≤ x0 ≤ θ).
    pub x0: f64,
    pub selection: Selection,
    /// Fixed Runge–Kutta step for per-flow backlogs (largest-backlog
    /// selection only), seconds.
    pub backlog_step_s: f64,
}

impl FluidConfig {
    /// Defaults: empty buffer, largest-rate selection, 0.1 ms backlog step.
    pub fn new(mu: f64, beta: f64, theta: f64, flows: Vec<FluidFlow>) -> Self {
        FluidConfig {
            mu,
            beta,
            theta,
            flows,
            x0: 0.0,
            selection: Selection::LargestRate,
            backlog_step_s: 1e-4,
        }
    }

    /// α = Σ α_i, the growth rate of the total rate, packets/s².
    pub fn alpha(&self) -> f64 {
        self.flows.iter().map(|f| f.alpha()).sum()
    }

    pub fn validate(&self) -> Result<(), String> {
        let pos = |v: f64| v > 0.0 && v.is_finite();
        if !pos(self.mu) {
            return Err(format!("mu must be positive, got {}", self.mu));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("beta must be in (0, 1), got {}", self.beta));
        }
        if !pos(self.theta) {
            return Err(format!("theta must be positive, got {}", self.theta));
        }
        if self.flows.is_empty() {
            return Err("at least one flow".into());
        }
        for (i, f) in self.flows.iter().enumerate() {
            if !pos(f.rtt_s) {
                return Err(format!("flow {i}: rtt_s must be positive"));
            }
            if !(f.rate0 >= 0.0 && f.rate0.is_finite()) {
                return Err(format!("flow {i}: rate0 must be non-negative"));
            }
        }
        if !(self.x0 >= 0.0 && self.x0 <= self.theta) {
            return Err(format!("x0 must be in [0, theta], got {}", self.x0));
        }
        if self.selection == Selection::LargestBacklog && !pos(self.backlog_step_s) {
            return Err("backlog_step_s must be positive".into());
        }
        Ok(())
    }
}

/// One cut.
#[derive(Clone, Debug, PartialEq)]
pub struct Cut {
    pub t: f64,
    pub flow: usize,
    /// The flow's rate just before the cut, packets/s.
    pub rate_before: f64,
    /// Total rate just before and after this cut.
    pub total_before: f64,
    pub total_after: f64,
    /// Index of the congestion epoch (in [`FluidRun::epochs`]).
    pub epoch: usize,
}

/// The cuts at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Epoch {
    pub t: f64,
    /// Number of cuts (1 when one cut brought λ under μ).
    pub cuts: usize,
    /// Total rate λ⁻ before the first cut and λ⁺ after the last.
    pub total_before: f64,
    pub total_after: f64,
}

/// A sample of the trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub t: f64,
    /// Backlog, packets.
    pub x: f64,
    /// Per-flow rates, packets/s.
    pub rates: Vec<f64>,
    /// Per-flow backlogs (largest-backlog selection only; else empty).
    pub backlogs: Vec<f64>,
}

/// The result of [`simulate`].
#[derive(Clone, Debug)]
pub struct FluidRun {
    pub t_end: f64,
    pub cuts: Vec<Cut>,
    pub epochs: Vec<Epoch>,
    /// Samples every `sample_dt` (if asked) plus just before and after
    /// every epoch.
    pub samples: Vec<Sample>,
    /// Time-average rate of each flow (its throughput), packets/s.
    pub mean_rates: Vec<f64>,
    /// Time-average backlog, packets.
    pub mean_x: f64,
    /// ∫ (1 − λ/μ) dt over the periods with an empty buffer, seconds.
    pub unused_s: f64,
    /// Smallest backlog after the first cut (None if no cut).
    pub min_x_after_first_cut: Option<f64>,
    pub max_x: f64,
}

impl FluidRun {
    /// Fraction of the capacity used, 1 − unused/t_end.
    pub fn utilisation(&self) -> f64 {
        1.0 - self.unused_s / self.t_end
    }
    /// Jain's index over the flows' mean rates.
    pub fn jain(&self) -> f64 {
        crate::metrics::jain(&self.mean_rates)
    }
}

// ---- threshold conditions ---------------------------------------------------

/// The slides' single-cut bound μ²(1−β)²/(2α(N−1+β)²), packets: with θ below
/// it, one cut brings λ under μ (α = Σ α_i).
pub fn single_cut_bound(mu: f64, alpha: f64, beta: f64, n: usize) -> f64 {
    let k = n as f64 - 1.0 + beta;
    mu * mu * (1.0 - beta).powi(2) / (2.0 * alpha * k * k)
}

/// θ < [`single_cut_bound`].
pub fn single_cut_condition(theta: f64, mu: f64, alpha: f64, beta: f64, n: usize) -> bool {
    theta < single_cut_bound(mu, alpha, beta, n)
}

/// The right-hand side of the slides' positive-backlog condition,
/// μ²(1 − βμ/(μ+√(2αθ)))²/(2α), packets.
pub fn positive_backlog_rhs(theta: f64, mu: f64, alpha: f64, beta: f64) -> f64 {
    let r = 1.0 - beta * mu / (mu + (2.0 * alpha * theta).sqrt());
    mu * mu * r * r / (2.0 * alpha)
}

/// The slides' positive-backlog condition θ > [`positive_backlog_rhs`]:
/// the buffer never empties, the link stays fully used.
pub fn positive_backlog_condition(theta: f64, mu: f64, alpha: f64, beta: f64) -> bool {
    theta > positive_backlog_rhs(theta, mu, alpha, beta)
}

/// The total rate when the buffer, empty while λ = μ, first reaches θ:
/// λ⁻ = μ + √(2αθ).
pub fn rate_at_threshold(theta: f64, mu: f64, alpha: f64) -> f64 {
    mu + (2.0 * alpha * theta).sqrt()
}

/// The smallest backlog after a cut at x = θ to a total rate λ⁺ < μ:
/// θ − (μ − λ⁺)²/(2α) (negative: the buffer empties).
pub fn min_backlog_after_cut(theta: f64, mu: f64, alpha: f64, lambda_plus: f64) -> f64 {
    theta - (mu - lambda_plus).powi(2) / (2.0 * alpha)
}

/// The model's own worst-case positive-backlog bound: one flow carries the
/// whole rate, λ⁺ = β(μ + √(2αθ)); the buffer stays positive iff θ exceeds
/// (μ − λ⁺)²/(2α) (returned; 0 if λ⁺ ≥ μ, when the buffer does not drain).
pub fn positive_backlog_rhs_model(theta: f64, mu: f64, alpha: f64, beta: f64) -> f64 {
    let lp = beta * rate_at_threshold(theta, mu, alpha);
    if lp >= mu {
        0.0
    } else {
        (mu - lp).powi(2) / (2.0 * alpha)
    }
}

// ---- the integrator ---------------------------------------------------------

/// Smallest s > 0 with a/2·s² + b·s + c = 0 where the function crosses
/// upwards, for c ≤ 0 (x below θ, or at θ with b < 0). `a` > 0.
fn up_root(a: f64, b: f64, c: f64) -> f64 {
    let d = (b * b - 2.0 * a * c).max(0.0).sqrt();
    if b >= 0.0 {
        if c >= 0.0 {
            0.0
        } else {
            -2.0 * c / (b + d)
        }
    } else {
        (-b + d) / a
    }
}

/// Smallest s > 0 with a/2·s² + b·s + c = 0 for c > 0, b < 0 (x falling to
/// 0), if x reaches 0.
fn down_root(a: f64, b: f64, c: f64) -> Option<f64> {
    let disc = b * b - 2.0 * a * c;
    if disc < 0.0 || b >= 0.0 {
        return None;
    }
    Some(2.0 * c / (-b + disc.sqrt()))
}

struct State<'a> {
    cfg: &'a FluidConfig,
    alphas: Vec<f64>,
    a: f64,
    t: f64,
    x: f64,
    r: Vec<f64>,
    xb: Vec<f64>,
    int_r: Vec<f64>,
    int_x: f64,
    unused: f64,
    min_after: Option<f64>,
    max_x: f64,
}

impl State<'_> {
    fn total(&self) -> f64 {
        self.r.iter().sum()
    }

    fn sample(&self) -> Sample {
        Sample {
            t: self.t,
            x: self.x,
            rates: self.r.clone(),
            backlogs: self.xb.clone(),
        }
    }

    /// Per-flow backlog derivative at local time s of a busy segment that
    /// started with rates `r0` and backlog `x0` (b = λ0 − μ).
    fn dxb(&self, r0: &[f64], s: f64, xb: &[f64], out: &mut [f64]) {
        let lam: f64 = r0.iter().zip(&self.alphas).map(|(r, a)| r + a * s).sum();
        let tot: f64 = xb.iter().sum();
        for i in 0..xb.len() {
            let li = r0[i] + self.alphas[i] * s;
            let share = if tot > 1e-9 {
                xb[i] / tot
            } else if lam > 0.0 {
                li / lam
            } else {
                1.0 / xb.len() as f64
            };
            out[i] = li - self.cfg.mu * share;
        }
    }

    /// Advance by `s` seconds with no cut inside; `busy` tells whether x
    /// follows the quadratic (else it stays at 0).
    fn advance(&mut self, s: f64, busy: bool) {
        if s <= 0.0 {
            return;
        }
        let mu = self.cfg.mu;
        let a = self.a;
        let l0 = self.total();
        let b = l0 - mu;
        let x0 = self.x;
        for i in 0..self.r.len() {
            self.int_r[i] += self.r[i] * s + self.alphas[i] * s * s / 2.0;
        }
        if busy {
            self.int_x += x0 * s + b * s * s / 2.0 + a * s * s * s / 6.0;
            // extremes of x on [0, s]
            let mut lo = x0.min(x0 + b * s + a * s * s / 2.0);
            let sm = -b / a;
            if sm > 0.0 && sm < s {
                lo = lo.min(x0 - b * b / (2.0 * a));
            }
            let hi = x0.max(x0 + b * s + a * s * s / 2.0);
            self.max_x = self.max_x.max(hi);
            if let Some(m) = self.min_after.as_mut() {
                *m = m.min(lo.max(0.0));
            }
            if self.cfg.selection == Selection::LargestBacklog {
                self.advance_backlogs(s);
            }
            self.x = (x0 + b * s + a * s * s / 2.0).max(0.0);
        } else {
            // empty buffer, λ < μ: the unused capacity is ∫ (1 − λ/μ)
            self.unused += (s - (l0 * s + a * s * s / 2.0) / mu).max(0.0);
            if let Some(m) = self.min_after.as_mut() {
                *m = 0.0;
            }
            for v in self.xb.iter_mut() {
                *v = 0.0;
            }
        }
        for i in 0..self.r.len() {
            self.r[i] += self.alphas[i] * s;
        }
        self.t += s;
    }

    /// RK4 on the per-flow backlogs over a busy segment of length `s`.
    fn advance_backlogs(&mut self, s: f64) {
        let n = self.xb.len();
        let steps = (s / self.cfg.backlog_step_s).ceil().max(1.0) as usize;
        let h = s / steps as f64;
        let r0 = self.r.clone();
        let (x0, b, a) = (self.x, self.total() - self.cfg.mu, self.a);
        let mut y = self.xb.clone();
        let (mut k1, mut k2, mut k3, mut k4, mut tmp) = (
            vec![0.0; n],
            vec![0.0; n],
            vec![0.0; n],
            vec![0.0; n],
            vec![0.0; n],
        );
        for k in 0..steps {
            let s0 = k as f64 * h;
            self.dxb(&r0, s0, &y, &mut k1);
            for i in 0..n {
                tmp[i] = y[i] + h / 2.0 * k1[i];
            }
            self.dxb(&r0, s0 + h / 2.0, &tmp, &mut k2);
            for i in 0..n {
                tmp[i] = y[i] + h / 2.0 * k2[i];
            }
            self.dxb(&r0, s0 + h / 2.0, &tmp, &mut k3);
            for i in 0..n {
                tmp[i] = y[i] + h * k3[i];
            }
            self.dxb(&r0, s0 + h, &tmp, &mut k4);
            for i in 0..n {
                y[i] = (y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])).max(0.0);
            }
            // keep Σ x_i equal to the exact aggregate
            let s1 = s0 + h;
            let x = (x0 + b * s1 + a * s1 * s1 / 2.0).max(0.0);
            let tot: f64 = y.iter().sum();
            if tot > 0.0 {
                for v in y.iter_mut() {
                    *v *= x / tot;
                }
            }
        }
        self.xb = y;
    }

    /// The flow to cut; `cut_now` marks flows already cut at this instant.
    fn select(&self, cut_now: &[bool]) -> usize {
        let argmax = |v: &[f64], skip: &dyn Fn(usize) -> bool| {
            let mut best: Option<usize> = None;
            for i in 0..v.len() {
                if skip(i) {
                    continue;
                }
                match best {
                    Some(b) if v[i] <= v[b] => {}
                    _ => best = Some(i),
                }
            }
            best
        };
        match self.cfg.selection {
            Selection::LargestRate => argmax(&self.r, &|_| false).expect("flows"),
            Selection::LargestBacklog => argmax(&self.xb, &|i| cut_now[i])
                .or_else(|| argmax(&self.xb, &|_| false))
                .expect("flows"),
        }
    }
}

impl<'a> State<'a> {
    /// The state at t = 0: every flow at its initial rate, the backlog
    /// `x0` (split over the flows in proportion to their rates when cuts
    /// select by backlog).
    fn new(cfg: &'a FluidConfig) -> Self {
        let n = cfg.flows.len();
        let alphas: Vec<f64> = cfg.flows.iter().map(|f| f.alpha()).collect();
        let r: Vec<f64> = cfg.flows.iter().map(|f| f.rate0).collect();
        let mut xb = Vec::new();
        if cfg.selection == Selection::LargestBacklog {
            let l: f64 = r.iter().sum();
            xb = r
                .iter()
                .map(|ri| {
                    if l > 0.0 {
                        cfg.x0 * ri / l
                    } else {
                        cfg.x0 / n as f64
                    }
                })
                .collect();
        }
        State {
            cfg,
            a: alphas.iter().sum(),
            alphas,
            t: 0.0,
            x: cfg.x0,
            r,
            xb,
            int_r: vec![0.0; n],
            int_x: 0.0,
            unused: 0.0,
            min_after: None,
            max_x: cfg.x0,
        }
    }

    /// The backlog reached θ while λ ≥ μ: cut flows (β each) until λ < μ.
    /// The cuts are appended to `cuts`; returns the epoch (number `e`).
    fn cut_epoch(&mut self, e: usize, cuts: &mut Vec<Cut>) -> Result<Epoch, String> {
        let (theta, mu, n) = (self.cfg.theta, self.cfg.mu, self.cfg.flows.len());
        self.x = theta;
        let before = self.total();
        let mut cut_now = vec![false; n];
        let mut k = 0;
        while self.total() >= mu {
            let i = self.select(&cut_now);
            cut_now[i] = true;
            let tb = self.total();
            let rb = self.r[i];
            self.r[i] *= self.cfg.beta;
            cuts.push(Cut {
                t: self.t,
                flow: i,
                rate_before: rb,
                total_before: tb,
                total_after: self.total(),
                epoch: e,
            });
            k += 1;
            if k > 10_000 {
                return Err("more than 10000 cuts at one instant".into());
            }
        }
        if self.min_after.is_none() {
            self.min_after = Some(theta);
        }
        Ok(Epoch {
            t: self.t,
            cuts: k,
            total_before: before,
            total_after: self.total(),
        })
    }

    /// Advance to the next event at most `span` seconds ahead: the backlog
    /// reaching θ or 0, the idle link turning busy, or the end of `span`.
    fn step(&mut self, span: f64) {
        #[derive(PartialEq)]
        enum Ev {
            None,
            Theta,
            Zero,
            Busy,
        }
        let theta = self.cfg.theta;
        let b = self.total() - self.cfg.mu;
        let mut s = span;
        let idle = self.x <= 0.0 && b < 0.0;
        let mut ev = Ev::None;
        if idle {
            let sb = -b / self.a;
            if sb <= s {
                s = sb;
                ev = Ev::Busy;
            }
        } else {
            let sth = up_root(self.a, b, self.x - theta);
            if sth <= s {
                s = sth;
                ev = Ev::Theta;
            }
            if let Some(sz) = down_root(self.a, b, self.x) {
                if sz <= s {
                    s = sz;
                    ev = Ev::Zero;
                }
            }
        }
        self.advance(s, !idle);
        match ev {
            Ev::Theta => self.x = theta,
            Ev::Zero => {
                self.x = 0.0;
                if let Some(m) = self.min_after.as_mut() {
                    *m = 0.0;
                }
            }
            Ev::Busy | Ev::None => {}
        }
    }
}

/// Integrate the model from t = 0 to `t_end` seconds. With `sample_dt`,
/// the trajectory is also sampled every `sample_dt` seconds.
pub fn simulate(cfg: &FluidConfig, t_end: f64, sample_dt: Option<f64>) -> Result<FluidRun, String> {
    cfg.validate()?;
    if !(t_end > 0.0 && t_end.is_finite()) {
        return Err(format!("t_end must be positive, got {t_end}"));
    }
    if let Some(d) = sample_dt {
        if !(d > 0.0 && d.is_finite()) {
            return Err(format!("sample_dt must be positive, got {d}"));
        }
    }
    let mut st = State::new(cfg);
    let mut cuts = Vec::new();
    let mut epochs: Vec<Epoch> = Vec::new();
    let mut samples = Vec::new();
    let mut next_sample = sample_dt.map(|_| 0.0);
    let mut k_sample = 0u64;
    let eps = 1e-12 * cfg.theta.max(1.0);
    let mut guard = 0u64;
    while st.t < t_end {
        guard += 1;
        if guard > 200_000_000 {
            return Err("too many events (more than 2e8)".into());
        }
        if let (Some(ns), Some(d)) = (next_sample, sample_dt) {
            if st.t >= ns - 1e-12 {
                samples.push(st.sample());
                k_sample += 1;
                next_sample = Some(k_sample as f64 * d);
            }
        }
        // Cuts: at x = θ while λ ≥ μ.
        if st.x >= cfg.theta - eps && st.total() >= cfg.mu {
            st.x = cfg.theta;
            samples.push(st.sample());
            let e = st.cut_epoch(epochs.len(), &mut cuts)?;
            epochs.push(e);
            samples.push(st.sample());
            continue;
        }
        let mut span = t_end - st.t;
        if let Some(ns) = next_sample {
            span = span.min((ns - st.t).max(0.0));
        }
        st.step(span);
    }
    let t_end = st.t;
    Ok(FluidRun {
        t_end,
        mean_rates: st.int_r.iter().map(|v| v / t_end).collect(),
        mean_x: st.int_x / t_end,
        unused_s: st.unused,
        min_x_after_first_cut: st.min_after,
        max_x: st.max_x,
        cuts,
        epochs,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(rtts: &[f64], rate0: f64) -> Vec<FluidFlow> {
        rtts.iter()
            .map(|&rtt_s| FluidFlow { rtt_s, rate0 })
            .collect()
    }

    #[test]
    fn first_threshold_crossing_is_exact() {
        // One flow, λ = μ at t = 0, empty buffer: x = α t²/2 reaches θ at
        // t = √(2θ/α) with λ⁻ = μ + √(2αθ).
        let (mu, theta) = (1000.0, 50.0);
        let f = flows(&[0.1], mu);
        let alpha = f[0].alpha();
        let run = simulate(&FluidConfig::new(mu, 0.5, theta, f), 2.0, None).unwrap();
        let c = &run.cuts[0];
        assert!(
            (c.t - (2.0 * theta / alpha).sqrt()).abs() < 1e-12,
            "{}",
            c.t
        );
        assert!((c.total_before - rate_at_threshold(theta, mu, alpha)).abs() < 1e-9);
    }

    #[test]
    fn idle_link_accounts_unused_capacity() {
        // λ = 50 + t (α = 1), μ = 100: the buffer is empty until λ = μ at
        // t0 = 50 s; the unused capacity ∫ (1 − λ/μ) dt is 4.5 s over the
        // first 10 s and 12.5 s over [0, t0]; then x = (t − 50)²/2.
        let mu = 100.0;
        let cfg = FluidConfig::new(mu, 0.5, 1e6, flows(&[1.0], mu / 2.0));
        let run = simulate(&cfg, 10.0, None).unwrap();
        assert!((run.unused_s - 4.5).abs() < 1e-9, "{}", run.unused_s);
        assert_eq!(run.mean_x, 0.0);
        let run = simulate(&cfg, 60.0, None).unwrap();
        assert!((run.unused_s - 12.5).abs() < 1e-9, "{}", run.unused_s);
        // ∫ x = 10³/6 over [50, 60]
        assert!(
            (run.mean_x - 1000.0 / 6.0 / 60.0).abs() < 1e-9,
            "{}",
            run.mean_x
        );
        assert!((run.max_x - 50.0).abs() < 1e-9);
        assert!((run.utilisation() - (1.0 - 12.5 / 60.0)).abs() < 1e-12);
    }

    #[test]
    fn per_flow_backlogs_sum_to_the_buffer() {
        let mut c = FluidConfig::new(1000.0, 0.5, 40.0, flows(&[0.05, 0.2], 480.0));
        c.selection = Selection::LargestBacklog;
        let run = simulate(&c, 20.0, Some(0.01)).unwrap();
        assert!(!run.cuts.is_empty());
        for s in &run.samples {
            let tot: f64 = s.backlogs.iter().sum();
            assert!((tot - s.x).abs() < 1e-6 * s.x.max(1.0), "{tot} vs {}", s.x);
        }
    }
}

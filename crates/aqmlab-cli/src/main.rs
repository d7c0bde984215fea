use aqmlab::{Scenario, Simulation};
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let sc = match Scenario::from_file(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    };
    let mut sim = Simulation::new(&sc, sc.seed);
    let r = sim.run();
    println!(
        "events {} wall {:.3}s ev/s {:.0}",
        r.events,
        r.wall_seconds,
        r.events as f64 / r.wall_seconds
    );
    for f in &r.flows {
        println!("{} acked {} delivered {} gp {:.2}Mbps rtx {} to {} fr {} drops {} cwnd {:.1} srtt {:?}", f.group, f.bytes_acked, f.segments_delivered, f.goodput_bps/1e6, f.retransmits, f.timeouts, f.fast_retransmits, f.drops, f.final_cwnd, f.srtt_s);
    }
    for q in &r.queues {
        if q.enqueued > 0 {
            println!(
                "{} {} enq {} drop {} (e{} f{} o{}) meanlen {:.2} delay {:.4}ms p99 {:.4}ms",
                q.link,
                q.kind,
                q.enqueued,
                q.dropped,
                q.dropped_early,
                q.dropped_forced,
                q.dropped_overflow,
                q.mean_len_pkts,
                q.mean_delay_s * 1e3,
                q.p99_delay_s * 1e3
            );
        }
    }
    for l in &r.links {
        if l.tx_packets > 0 {
            println!("{} util {:.3}", l.link, l.utilization);
        }
    }
    println!("{:?} holds {}", r.conservation, r.conservation.holds());
    aqmlab::output::write_run(&r, std::path::Path::new("/tmp/out1")).unwrap();
}

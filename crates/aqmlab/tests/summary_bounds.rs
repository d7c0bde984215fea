//! `summary.json` stays a summary whatever the number of flow groups:
//! at most `MAX_GROUPS` groups are listed in `groups` and `fairness`, the
//! rest counted in `totals.groups_unlisted` (their flows are in
//! `flows.csv`).

use aqmlab::output::summary::{Summary, MAX_GROUPS};
use aqmlab::{Scenario, Simulation};

#[test]
fn groups_beyond_the_bound_are_counted_not_listed() {
    let n = MAX_GROUPS + 200;
    let mut text = String::from(
        "name = \"many-groups\"\nduration = \"20ms\"\n[topology]\nkind = \"dumbbell\"\n\
         access_rate = \"1Gbps\"\naccess_delay = \"1ms\"\nbottleneck_rate = \"100Mbps\"\n\
         bottleneck_delay = \"5ms\"\n",
    );
    for i in 0..n {
        text += &format!("[[flows]]\ngroup = \"g{i:05}\"\nsrc = \"src0\"\ndst = \"dst0\"\n");
    }
    let sc = Scenario::from_toml(&text, "many-groups.toml").unwrap();
    let r = Simulation::new(&sc, 1).run();
    assert_eq!(r.flows.len(), n);
    let s = Summary::of(&r);
    assert_eq!(s.totals.groups, n);
    assert_eq!(s.totals.groups_unlisted, 200);
    assert_eq!(s.groups.len(), MAX_GROUPS);
    assert_eq!(s.fairness.len(), MAX_GROUPS);
    // the first groups by name, each with its own figures
    assert_eq!(s.groups.keys().next(), Some(&"g00000"));
    assert_eq!(
        s.groups.keys().last(),
        Some(&format!("g{:05}", MAX_GROUPS - 1).as_str())
    );
    assert!(s.groups.values().all(|g| g.flows == 1));
    assert!(s.fairness.keys().eq(s.groups.keys()));
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.len() < 1 << 20, "summary.json of {} bytes", json.len());
}

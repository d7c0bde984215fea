//! A sweep's Parquet dataset over runs whose tables differ in their columns
//! (`output::columnar::write_dataset`): every pair of queue kinds of the
//! catalogue, in both orders, gives one schema — the union of the parts'
//! columns in order of first appearance — with nulls where a part has no
//! such column; under `format = "csv"` no dataset is written.

use aqmlab::output::columnar::write_dataset;
use aqmlab::scenario::FileFormat;
use aqmlab::{Scenario, Simulation};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use std::path::Path;

/// The parameters queue `kind` requires beyond its `kind`.
fn required(kind: &str) -> &'static str {
    match kind {
        "red" => ", limit = 100, min_th = 5, max_th = 15",
        "ared" => ", limit = 100, auto = true",
        "rio" => ", limit = 100",
        "markmax" => ", theta = 0.5",
        "step" => ", k = 20",
        _ => "",
    }
}

fn scenario(kind: &str) -> String {
    let extra = required(kind);
    format!(
        r#"
name = "{kind}"
duration = "300ms"
[nodes]
hosts = ["a", "b"]
[[links]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
queue_ab = {{ kind = "{kind}"{extra} }}
monitor = true
[output]
sample_interval = "20ms"
[[flows]]
group = "g"
src = "a"
dst = "b"
count = 2
"#
    )
}

/// The header and rows of a CSV file.
fn csv_of(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rd = csv::Reader::from_path(p).unwrap();
    let head = rd.headers().unwrap().iter().map(String::from).collect();
    let rows = (rd.records())
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (head, rows)
}

/// The column names and rows (cells as text, `None` for a null) of a
/// Parquet file.
fn parquet_of(p: &Path) -> (Vec<String>, Vec<Vec<Option<String>>>) {
    let r = SerializedFileReader::new(std::fs::File::open(p).unwrap()).unwrap();
    let schema = r.metadata().file_metadata().schema_descr();
    let names = schema
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let rows = (r.get_row_iter(None).unwrap())
        .map(|row| {
            (row.unwrap().get_column_iter())
                .map(|(_, v)| match v {
                    Field::Null => None,
                    Field::Str(s) => Some(s.clone()),
                    Field::Long(n) => Some(n.to_string()),
                    Field::Double(x) => Some(x.to_string()),
                    Field::Bool(b) => Some(b.to_string()),
                    other => Some(format!("{other:?}")),
                })
                .collect()
        })
        .collect();
    (names, rows)
}

/// The two cells hold the same value (a CSV cell against a Parquet value
/// printed back: numbers compared as numbers).
fn same(csv: &str, pq: &Option<String>) -> bool {
    match pq {
        None => csv.is_empty(),
        Some(v) if v == csv => true,
        Some(v) => matches!((csv.parse::<f64>(), v.parse::<f64>()), (Ok(a), Ok(b)) if a == b),
    }
}

#[test]
fn every_pair_of_queue_kinds_gives_one_dataset() {
    let kinds = aqmlab::aqm::QueueSpec::KINDS;
    assert!(kinds.len() >= 15, "{kinds:?}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    for k in kinds {
        let sc = Scenario::from_toml(&scenario(k), k).unwrap_or_else(|e| panic!("{k}: {e}"));
        let r = Simulation::new(&sc, 1).run();
        aqmlab::output::write_run(&r, &out.join(k).join("seed-1")).unwrap();
    }
    // DualPI2's queue series has its L and C queues' columns; CoDel's not
    let (dq, _) = csv_of(&out.join("dualpi2/seed-1/queues.csv"));
    let (cq, _) = csv_of(&out.join("codel/seed-1/queues.csv"));
    assert!(
        dq.len() > cq.len() && dq.iter().any(|c| c.starts_with("l_")),
        "{dq:?}"
    );
    let mut differing = 0;
    for a in kinds {
        for b in kinds.iter().filter(|b| *b != a) {
            let rels = [format!("{a}/seed-1"), format!("{b}/seed-1")];
            let rels: Vec<&str> = rels.iter().map(String::as_str).collect();
            // `csv`: no dataset
            assert!(write_dataset(out, &rels, FileFormat::Csv)
                .unwrap()
                .is_empty());
            assert!(!out.join("parquet").exists());
            let wrote = write_dataset(out, &rels, FileFormat::Parquet)
                .unwrap_or_else(|e| panic!("{a} + {b}: {e}"));
            assert!(
                wrote.contains(&"queues") && wrote.contains(&"flows"),
                "{wrote:?}"
            );
            for t in &wrote {
                // a table one run has not (`classes`) has a part for the other
                let with: Vec<&str> = (rels.iter().copied())
                    .filter(|r| out.join(r).join(format!("{t}.csv")).exists())
                    .collect();
                let parts: Vec<(Vec<String>, Vec<Vec<String>>)> = (with.iter())
                    .map(|r| csv_of(&out.join(r).join(format!("{t}.csv"))))
                    .collect();
                // the union, in order of first appearance
                let mut union = parts[0].0.clone();
                for c in parts.iter().flat_map(|p| &p.0) {
                    if !union.contains(c) {
                        union.push(c.clone());
                    }
                }
                if parts.len() == 2 && parts[0].0 != parts[1].0 {
                    differing += 1;
                }
                let n = std::fs::read_dir(out.join("parquet").join(t))
                    .unwrap()
                    .count();
                assert_eq!(n, with.len(), "{a} + {b}: {t}");
                for (rel, (head, rows)) in with.iter().zip(&parts) {
                    let f = out
                        .join("parquet")
                        .join(t)
                        .join(format!("{}.parquet", rel.replace('/', "_")));
                    let (names, pq) = parquet_of(&f);
                    assert_eq!(names, union, "{a} + {b}: {t}");
                    assert_eq!(pq.len(), rows.len(), "{a} + {b}: {t}");
                    for (row, prow) in rows.iter().zip(&pq) {
                        for (j, name) in union.iter().enumerate() {
                            match head.iter().position(|h| h == name) {
                                Some(i) => assert!(
                                    same(&row[i], &prow[j]),
                                    "{a} + {b}: {t}.{name}: {} vs {:?}",
                                    row[i],
                                    prow[j]
                                ),
                                None => assert_eq!(prow[j], None, "{a} + {b}: {t}.{name}"),
                            }
                        }
                    }
                }
            }
            let left: Vec<String> = std::fs::read_dir(out.join("parquet"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect();
            assert!(left.is_empty(), "{left:?}");
        }
    }
    // pairs with DualPI2 (and the per-class tables) differ in columns
    assert!(differing >= 2 * (kinds.len() - 1), "{differing}");
}

#[test]
fn a_column_whose_type_differs_between_parts_takes_one_type() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let part = |rel: &str, text: &str| {
        std::fs::create_dir_all(out.join(rel)).unwrap();
        std::fs::write(out.join(rel).join("flows.csv"), text).unwrap();
    };
    // `n`: integers in one part, decimals in the other: DOUBLE in both;
    // `x`: numbers in one, other text in the other: strings in both, as
    // written; `only_b`: absent from a: null there
    part("a/seed-1", "label,seed,n,x\na,1,3,7\na,1,4,8.5\n");
    part("b/seed-1", "label,seed,n,x,only_b\nb,1,2.5,high,true\n");
    let wrote = write_dataset(out, &["a/seed-1", "b/seed-1"], FileFormat::Parquet).unwrap();
    assert_eq!(wrote, ["flows"]);
    let (names, a) = parquet_of(&out.join("parquet/flows/a_seed-1.parquet"));
    assert_eq!(names, ["label", "seed", "n", "x", "only_b"]);
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        a,
        [
            [s("a"), s("1"), s("3"), s("7"), None],
            [s("a"), s("1"), s("4"), s("8.5"), None]
        ]
    );
    let (_, b) = parquet_of(&out.join("parquet/flows/b_seed-1.parquet"));
    assert_eq!(b, [[s("b"), s("1"), s("2.5"), s("high"), s("true")]]);
    let r = SerializedFileReader::new(
        std::fs::File::open(out.join("parquet/flows/a_seed-1.parquet")).unwrap(),
    )
    .unwrap();
    let types: Vec<String> = (r.metadata().file_metadata().schema_descr().columns().iter())
        .map(|c| format!("{:?}", c.physical_type()))
        .collect();
    assert_eq!(
        types,
        ["BYTE_ARRAY", "INT64", "DOUBLE", "BYTE_ARRAY", "BOOLEAN"]
    );
}

#[test]
fn a_dataset_that_cannot_be_built_leaves_no_temporary_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    std::fs::create_dir_all(out.join("a/seed-1")).unwrap();
    // a header that names a column twice cannot be one schema
    std::fs::write(out.join("a/seed-1/flows.csv"), "label,seed,x,x\na,1,1,2\n").unwrap();
    let e = write_dataset(out, &["a/seed-1"], FileFormat::Parquet)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("parquet/flows") && e.contains("`x` appears twice"),
        "{e}"
    );
    assert!(!out.join("parquet").exists());
}

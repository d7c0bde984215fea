//! `reproduce` called as a library (as the Python package does): it returns
//! the long-format rows that it writes to `tables.csv`, and bad options are
//! input errors that write nothing.

use aqmlab_reproduce::table::read_csv;
use aqmlab_reproduce::Error as CliError;
use aqmlab_reproduce::{papers, reproduce, Opts};

fn short() -> Opts {
    Opts {
        seeds: 1,
        duration_s: Some(5.0),
        load: None,
    }
}

#[test]
fn library_call_returns_the_rows_it_writes() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("hs");
    let rows = reproduce("codel-highspeed-tcp", &short(), Some(&out)).unwrap();
    assert_eq!(rows.len(), 4 * 9 + 2 * 3);
    assert_eq!(read_csv(&out.join("tables.csv")).unwrap(), rows);
    let t1 = rows
        .iter()
        .find(|r| r.table == "Table 1" && r.row == "RED" && r.column == "CUBIC")
        .unwrap();
    assert_eq!(
        (t1.paper, t1.unit.as_str(), t1.n),
        (Some(222.941), "Mbit/s", 1)
    );
    assert!(t1.aqmlab_mean > 0.0);
    // without an output directory: the same rows, nothing left behind
    let again = reproduce("codel-highspeed-tcp", &short(), None).unwrap();
    assert_eq!(again, rows, "deterministic");
}

#[test]
fn bad_options_are_input_errors_and_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("x");
    let err = |paper: &str, o: &Opts| match reproduce(paper, o, Some(&out)) {
        Err(CliError::Input(m)) => m,
        other => panic!("{paper}: expected an input error, got {other:?}"),
    };
    assert!(err("no-such-paper", &short()).contains("red-gateway"));
    let zero = Opts {
        seeds: 0,
        ..short()
    };
    assert!(err("markmax", &zero).contains("--seeds"));
    assert!(err("red-gateway", &short()).contains("--duration"));
    let load = Opts {
        load: Some(0.5),
        ..short()
    };
    assert!(err("markmax", &load).contains("--load"));
    let bad_load = Opts {
        load: Some(3.0),
        duration_s: None,
        ..short()
    };
    assert!(err("rio-ps", &bad_load).contains("(0, 2]"));
    assert!(!out.exists());
    assert_eq!(papers::find("rio-ps").unwrap().default_seeds, 2);
}

//! An interrupt while a plot is being written (SIGINT during plotting:
//! the handler calls `output::abort_cleanup`) leaves no hidden temporary
//! file: the plot's `.tmp-<name>.png` (one prefix, not `.tmp-.tmp-`) is
//! registered while open and deleted by the cleanup. Its own test binary:
//! `abort_cleanup` stops all later output of the process for good.

use aqmlab::output::{abort_cleanup, TempFile};
use std::fs;

#[test]
fn an_interrupt_while_plotting_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let png = d.path().join("queue_delay.png");
    let svg = d.path().join("queue_delay.svg");
    // a finished output beside the plots stays
    fs::write(d.path().join("sweep.csv"), b"label\n").unwrap();
    let t_png = TempFile::beside(&png).unwrap();
    let t_svg = TempFile::beside(&svg).unwrap();
    assert_eq!(
        t_png.path().file_name().unwrap().to_string_lossy(),
        ".tmp-queue_delay.png"
    );
    fs::write(t_png.path(), b"half a png").unwrap();
    fs::write(t_svg.path(), b"<svg").unwrap();
    // The handler runs while both are open, then the process exits (the
    // TempFiles are never dropped).
    assert_eq!(abort_cleanup(), 2);
    std::mem::forget(t_png);
    std::mem::forget(t_svg);
    let left: Vec<String> = fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["sweep.csv".to_string()]);
}

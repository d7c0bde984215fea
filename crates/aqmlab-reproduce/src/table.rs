//! One long-format table for every reproduction: each cell of each of the
//! paper's tables (or figures) is one row
//! `table,row,column,unit,paper,aqmlab_mean,aqmlab_sd,n`, written to
//! `tables.csv` through the `csv` crate and returned by
//! [`crate::reproduce`].
//!
//! `paper` is the paper's number in `unit` (empty where the paper gives
//! none); `aqmlab_mean` is aqmlab's value of the same quantity over `n`
//! seeds and `aqmlab_sd` its standard deviation (empty where the value is
//! pooled over the seeds). Where the paper sums a
//! count over k runs, `aqmlab_mean` is the per-run mean times k and
//! `aqmlab_sd` the per-run sd times √k (the sd of a k-run sum); `unit` says so.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One cell: where it sits, the paper's number and aqmlab's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    pub table: String,
    pub row: String,
    pub column: String,
    pub unit: String,
    pub paper: Option<f64>,
    pub aqmlab_mean: f64,
    /// None (an empty field) where the value is pooled over the seeds rather
    /// than a mean of per-seed values, so there is no spread over seeds.
    pub aqmlab_sd: Option<f64>,
    pub n: u64,
}

impl TableRow {
    /// A row from its parts.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        table: impl Into<String>,
        row: impl Into<String>,
        column: impl Into<String>,
        unit: impl Into<String>,
        paper: Option<f64>,
        mean: f64,
        sd: f64,
        n: u64,
    ) -> TableRow {
        TableRow {
            table: table.into(),
            row: row.into(),
            column: column.into(),
            unit: unit.into(),
            paper,
            aqmlab_mean: mean,
            aqmlab_sd: Some(sd),
            n,
        }
    }

    /// The same row for a value pooled over the seeds: no sd.
    pub fn pooled(mut self) -> TableRow {
        self.aqmlab_sd = None;
        self
    }
}

/// The header of every `tables.csv`.
pub const HEADER: [&str; 8] = [
    "table",
    "row",
    "column",
    "unit",
    "paper",
    "aqmlab_mean",
    "aqmlab_sd",
    "n",
];

/// `rows` as CSV text (header first).
pub fn to_csv(rows: &[TableRow]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)
            .map_err(|e| Error::Internal(format!("tables.csv: {e}")))?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Internal(format!("tables.csv: {e}")))?;
    let mut s = String::from_utf8(bytes).map_err(|e| Error::Internal(e.to_string()))?;
    if rows.is_empty() {
        s = format!("{}\n", HEADER.join(","));
    }
    Ok(s)
}

/// Read a `tables.csv` back.
pub fn read_csv(path: &Path) -> Result<Vec<TableRow>> {
    let mut r = csv::Reader::from_path(path)
        .map_err(|e| Error::Internal(format!("{}: {e}", path.display())))?;
    r.deserialize()
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::Internal(format!("{}: {e}", path.display())))
}

/// Write `rows` to `path` as CSV.
pub fn write_csv(rows: &[TableRow], path: &Path) -> Result {
    aqmlab::output::write_atomic(path, to_csv(rows)?.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_the_long_schema_and_quotes_commas() {
        let rows = [
            TableRow::new(
                "Table 1",
                "RED",
                "CUBIC",
                "Mbit/s",
                Some(222.941),
                49.5,
                0.0,
                1,
            ),
            TableRow::new("Fig. 5", "a, b", "median", "ms", None, 55.78, 1.5, 3),
            TableRow::new("Fig. 6", "x", "y", "%", None, 1.0, 0.0, 2).pooled(),
        ];
        let s = to_csv(&rows).unwrap();
        let mut l = s.lines();
        assert_eq!(l.next(), Some(HEADER.join(",").as_str()));
        assert_eq!(
            l.next(),
            Some("Table 1,RED,CUBIC,Mbit/s,222.941,49.5,0.0,1")
        );
        assert_eq!(l.next(), Some("Fig. 5,\"a, b\",median,ms,,55.78,1.5,3"));
        assert_eq!(l.next(), Some("Fig. 6,x,y,%,,1.0,,2"));
        assert_eq!(to_csv(&[]).unwrap(), format!("{}\n", HEADER.join(",")));
    }
}

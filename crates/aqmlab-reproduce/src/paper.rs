//! The paper's numbers as data: `scenarios/papers/<paper>/paper.toml`, one
//! `[[table]]` per printed table with its caption (`source`), unit, row and
//! column names and values, read into (table, row, column, unit, value,
//! source) cells.

use crate::{Error, Result};
use serde::Deserialize;

/// One printed number.
#[derive(Clone, Debug, PartialEq)]
pub struct PaperValue {
    pub table: String,
    pub row: String,
    pub column: String,
    pub unit: String,
    pub value: f64,
    /// The caption or sentence the number comes from.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    table: Vec<Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    name: String,
    /// One unit for every column…
    unit: Option<String>,
    /// …or one per column.
    units: Option<Vec<String>>,
    source: String,
    rows: Vec<String>,
    columns: Vec<String>,
    values: Vec<Vec<f64>>,
}

/// All the paper's numbers.
#[derive(Clone, Debug)]
pub struct Paper {
    pub values: Vec<PaperValue>,
}

impl Paper {
    /// Parse `text` (the contents of `file`), checking that every table has
    /// one value per row and column and a unit for every column.
    pub fn parse(text: &str, file: &str) -> Result<Paper> {
        let f: File = toml::from_str(text)
            .map_err(|e| Error::Internal(format!("{file}: {}", e.message())))?;
        let mut values = Vec::new();
        for t in f.table {
            let units = match (&t.unit, &t.units) {
                (Some(u), None) => vec![u.clone(); t.columns.len()],
                (None, Some(u)) if u.len() == t.columns.len() => u.clone(),
                _ => {
                    return Err(Error::Internal(format!(
                        "{file}: {}: give `unit`, or `units` with one per column",
                        t.name
                    )))
                }
            };
            if t.values.len() != t.rows.len() || t.values.iter().any(|r| r.len() != t.columns.len())
            {
                return Err(Error::Internal(format!(
                    "{file}: {}: values must be {} rows of {} numbers",
                    t.name,
                    t.rows.len(),
                    t.columns.len()
                )));
            }
            for (r, row) in t.rows.iter().enumerate() {
                for (c, col) in t.columns.iter().enumerate() {
                    values.push(PaperValue {
                        table: t.name.clone(),
                        row: row.clone(),
                        column: col.clone(),
                        unit: units[c].clone(),
                        value: t.values[r][c],
                        source: t.source.clone(),
                    });
                }
            }
        }
        Ok(Paper { values })
    }

    /// The number at (table, row, column).
    pub fn get(&self, table: &str, row: &str, column: &str) -> Result<&PaperValue> {
        self.values
            .iter()
            .find(|v| v.table == table && v.row == row && v.column == column)
            .ok_or_else(|| {
                Error::Internal(format!(
                    "paper.toml: no value for {table} / {row} / {column}"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tables_and_rejects_ragged_ones() {
        let t = r#"
[[table]]
name = "T"
units = ["a", "b"]
source = "Table T."
rows = ["r1", "r2"]
columns = ["c1", "c2"]
values = [[1.0, 2.0], [3.0, 4.0]]
"#;
        let p = Paper::parse(t, "x.toml").unwrap();
        assert_eq!(p.values.len(), 4);
        let v = p.get("T", "r2", "c2").unwrap();
        assert_eq!(
            (v.value, v.unit.as_str(), v.source.as_str()),
            (4.0, "b", "Table T.")
        );
        assert!(p.get("T", "r3", "c1").is_err());
        let ragged = t.replace("[3.0, 4.0]", "[3.0]");
        assert!(Paper::parse(&ragged, "x.toml").is_err());
    }
}

//! Parquet forms of the result tables (`[output] format = "parquet"`):
//! the same columns, names and values as the CSV, written with the
//! `parquet` crate's column writers (Snappy-compressed).
//!
//! Each CSV column gets one Parquet type from its values, as
//! `pandas.read_csv` would infer it: 64-bit integers when every non-empty
//! cell is an integer, doubles when every one is a number, booleans when
//! every one is `true`/`false`, UTF-8 strings otherwise. An empty cell
//! (a figure the row does not have, such as a flow's `completion_s` when it
//! did not complete) is a null.

use parquet::basic::{Compression, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::path::Path;
use std::sync::Arc;

/// Rows per row group.
const ROW_GROUP: usize = 1 << 17;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Double,
    Bool,
    Text,
}

/// A column's kind and nullability, gathered cell by cell (over one table,
/// or every part of a dataset so that all parts share one schema).
#[derive(Clone, Copy, Debug)]
struct Column {
    values: bool,
    empty: bool,
    int: bool,
    num: bool,
    bool: bool,
}

impl Default for Column {
    fn default() -> Self {
        Column {
            values: false,
            empty: false,
            int: true,
            num: true,
            bool: true,
        }
    }
}

impl Column {
    fn see(&mut self, c: &str) {
        if c.is_empty() {
            self.empty = true;
            return;
        }
        self.values = true;
        self.int &= c.parse::<i64>().is_ok();
        self.num &= self.int || c.parse::<f64>().is_ok();
        self.bool &= c == "true" || c == "false";
    }

    /// (kind, nullable)
    fn kind(&self) -> (Kind, bool) {
        let k = if !self.values {
            Kind::Text
        } else if self.int {
            Kind::Int
        } else if self.num {
            Kind::Double
        } else if self.bool {
            Kind::Bool
        } else {
            Kind::Text
        };
        (k, self.empty)
    }
}

#[cfg(test)]
fn kind_of(cells: &[&str]) -> Kind {
    let mut c = Column::default();
    cells.iter().for_each(|x| c.see(x));
    c.kind().0
}

pub(super) fn pq_err(e: parquet::errors::ParquetError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// A Parquet file at `path` with `schema`, Snappy-compressed, written by
/// aqmlab (the settings every Parquet file of aqmlab's shares).
pub(super) fn create(
    path: &Path,
    schema: Arc<Type>,
) -> std::io::Result<SerializedFileWriter<std::fs::File>> {
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("aqmlab {}", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    SerializedFileWriter::new(std::fs::File::create(path)?, schema, props).map_err(pq_err)
}

/// The header and rows of the CSV file `csv`.
fn read_csv(csv: &Path) -> std::io::Result<(Vec<String>, Vec<csv::StringRecord>)> {
    let err = |e: csv::Error| std::io::Error::other(format!("{}: {e}", csv.display()));
    let mut rd = csv::Reader::from_path(csv).map_err(err)?;
    let names: Vec<String> = rd
        .headers()
        .map_err(err)?
        .iter()
        .map(String::from)
        .collect();
    let rows: Vec<csv::StringRecord> = rd.records().collect::<Result<_, _>>().map_err(err)?;
    Ok((names, rows))
}

fn columns(n: usize, rows: &[csv::StringRecord], cols: &mut Vec<Column>) {
    cols.resize(n, Column::default());
    for r in rows {
        for (j, c) in cols.iter_mut().enumerate() {
            c.see(r.get(j).unwrap_or(""));
        }
    }
}

/// Convert the CSV file `csv` (with a header) into the Parquet file `pq`.
pub fn csv_to_parquet(csv: &Path, pq: &Path) -> std::io::Result<()> {
    let (names, rows) = read_csv(csv)?;
    let mut cols = Vec::new();
    columns(names.len(), &rows, &mut cols);
    let kinds: Vec<(Kind, bool)> = cols.iter().map(Column::kind).collect();
    write(&names, &kinds, &rows, pq)
}

/// Convert the CSV files `parts` (`(csv, parquet)` pairs, every CSV with the
/// same header) into Parquet files that share one schema, the column types
/// chosen over all of them: one dataset that `pandas.read_parquet` (pyarrow),
/// polars and DuckDB read whole from the parquet files' folder. Reads each
/// CSV twice (types, then values), holding one at a time.
pub fn csvs_to_dataset(parts: &[(std::path::PathBuf, std::path::PathBuf)]) -> std::io::Result<()> {
    let mut head: Option<(Vec<String>, &Path)> = None;
    let mut cols = Vec::new();
    for (csv, _) in parts {
        let (names, rows) = read_csv(csv)?;
        match &head {
            Some((h, first)) if *h != names => {
                return Err(std::io::Error::other(format!(
                "{}: its columns differ from those of {}; a dataset's parts share their columns",
                csv.display(),
                first.display()
            )))
            }
            Some(_) => {}
            None => head = Some((names.clone(), csv)),
        }
        columns(names.len(), &rows, &mut cols);
    }
    let Some((names, _)) = head else {
        return Ok(());
    };
    let kinds: Vec<(Kind, bool)> = cols.iter().map(Column::kind).collect();
    for (csv, pq) in parts {
        let (_, rows) = read_csv(csv)?;
        write(&names, &kinds, &rows, pq)?;
    }
    Ok(())
}

fn write(
    names: &[String],
    kinds: &[(Kind, bool)],
    rows: &[csv::StringRecord],
    pq: &Path,
) -> std::io::Result<()> {
    let mut fields = Vec::with_capacity(names.len());
    for (name, &(k, nullable)) in names.iter().zip(kinds) {
        let physical = match k {
            Kind::Int => Physical::INT64,
            Kind::Double => Physical::DOUBLE,
            Kind::Bool => Physical::BOOLEAN,
            Kind::Text => Physical::BYTE_ARRAY,
        };
        let mut b = Type::primitive_type_builder(name, physical).with_repetition(if nullable {
            Repetition::OPTIONAL
        } else {
            Repetition::REQUIRED
        });
        if k == Kind::Text {
            b = b.with_logical_type(Some(parquet::basic::LogicalType::String));
        }
        fields.push(Arc::new(b.build().map_err(pq_err)?));
    }
    let schema = Arc::new(
        Type::group_type_builder("table")
            .with_fields(fields)
            .build()
            .map_err(pq_err)?,
    );
    let mut w = create(pq, schema)?;
    // An empty table still gets one (empty) row group, so readers see its
    // columns.
    let groups: Vec<&[csv::StringRecord]> = if rows.is_empty() {
        vec![rows]
    } else {
        rows.chunks(ROW_GROUP).collect()
    };
    for chunk in groups {
        let mut g = w.next_row_group().map_err(pq_err)?;
        for (j, &(k, nullable)) in kinds.iter().enumerate() {
            let cells: Vec<&str> = chunk.iter().map(|r| r.get(j).unwrap_or("")).collect();
            let def: Option<Vec<i16>> =
                nullable.then(|| cells.iter().map(|c| i16::from(!c.is_empty())).collect());
            let vals = cells.iter().filter(|c| !c.is_empty());
            let mut c = g.next_column().map_err(pq_err)?.ok_or_else(|| {
                std::io::Error::other("parquet: fewer columns in the schema than written")
            })?;
            let d = def.as_deref();
            // Every value was checked to parse when its kind was chosen.
            match k {
                Kind::Int => {
                    let v: Vec<i64> = vals.map(|c| c.parse().unwrap_or_default()).collect();
                    c.typed::<Int64Type>().write_batch(&v, d, None)
                }
                Kind::Double => {
                    let v: Vec<f64> = vals.map(|c| c.parse().unwrap_or_default()).collect();
                    c.typed::<DoubleType>().write_batch(&v, d, None)
                }
                Kind::Bool => {
                    let v: Vec<bool> = vals.map(|c| *c == "true").collect();
                    c.typed::<BoolType>().write_batch(&v, d, None)
                }
                Kind::Text => {
                    let v: Vec<ByteArray> = vals.map(|c| ByteArray::from(*c)).collect();
                    c.typed::<ByteArrayType>().write_batch(&v, d, None)
                }
            }
            .map_err(pq_err)?;
            c.close().map_err(pq_err)?;
        }
        g.close().map_err(pq_err)?;
    }
    w.close().map_err(pq_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    #[test]
    fn kinds_follow_the_cells() {
        assert_eq!(kind_of(&["1", "", "-3"]), Kind::Int);
        assert_eq!(kind_of(&["1", "2.5", "inf"]), Kind::Double);
        assert_eq!(kind_of(&["true", "false", ""]), Kind::Bool);
        assert_eq!(kind_of(&["1", "x"]), Kind::Text);
        assert_eq!(kind_of(&["", ""]), Kind::Text);
    }

    #[test]
    fn a_table_round_trips_with_nulls() {
        let dir = tempfile::tempdir().unwrap();
        let (c, p) = (dir.path().join("t.csv"), dir.path().join("t.parquet"));
        std::fs::write(&c, "label,n,x,ok,name\n\"a,b\",1,0.5,true,\nc,,2,false,z\n").unwrap();
        csv_to_parquet(&c, &p).unwrap();
        let r = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
        let rows: Vec<Vec<String>> = (r.get_row_iter(None).unwrap())
            .map(|row| {
                (row.unwrap().get_column_iter())
                    .map(|(_, v)| match v {
                        Field::Null => "null".to_string(),
                        Field::Str(s) => s.clone(),
                        Field::Long(n) => format!("i{n}"),
                        Field::Double(x) => format!("d{x}"),
                        Field::Bool(b) => format!("b{b}"),
                        other => format!("{other:?}"),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            rows,
            [
                ["a,b", "i1", "d0.5", "btrue", "null"],
                ["c", "null", "d2", "bfalse", "z"]
            ]
        );
    }
}

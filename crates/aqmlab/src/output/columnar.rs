//! Parquet forms of the result tables (`[output] format = "parquet"`):
//! the same columns, names and values as the CSV, written with the
//! `parquet` crate's column writers (Snappy-compressed).
//!
//! Each CSV column gets one Parquet type from its values, as
//! `pandas.read_csv` would infer it: 64-bit integers when every non-empty
//! cell is an integer, doubles when every one is a number, booleans when
//! every one is `true`/`false`, UTF-8 strings otherwise (doubles for a
//! column without a value, as pandas reads it). An empty cell
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
        // a column with no value at all: numbers, all null (pandas reads
        // such a CSV column as float, all NaN)
        let k = if !self.values {
            Kind::Double
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

/// The settings of aqmlab's Parquet files: Snappy-compressed,
/// dictionary-encoded where it pays, with column statistics.
fn properties() -> Arc<WriterProperties> {
    let b =
        WriterProperties::builder().set_created_by(format!("aqmlab {}", env!("CARGO_PKG_VERSION")));
    Arc::new(b.set_compression(Compression::SNAPPY).build())
}

/// A Parquet file at `path` with `schema` and aqmlab's settings.
pub(super) fn create(
    path: &Path,
    schema: Arc<Type>,
) -> std::io::Result<SerializedFileWriter<std::fs::File>> {
    SerializedFileWriter::new(std::fs::File::create(path)?, schema, properties()).map_err(pq_err)
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

/// Convert the CSV file `csv` (with a header) into the Parquet file `pq`:
/// a dataset of one part, the tests' reference for the typed writer.
#[cfg(test)]
fn csv_to_parquet(csv: &Path, pq: &Path) -> std::io::Result<()> {
    let (names, rows) = read_csv(csv)?;
    let mut cols = vec![Column::default(); names.len()];
    for r in &rows {
        for (j, c) in cols.iter_mut().enumerate() {
            c.see(r.get(j).unwrap_or(""));
        }
    }
    let kinds: Vec<(Kind, bool)> = cols.iter().map(Column::kind).collect();
    write(&names, &kinds, &rows, pq)
}

/// Convert the CSV files `parts` (`(csv, parquet)` pairs) into Parquet
/// files that share one schema: one dataset that `pandas.read_parquet`
/// (pyarrow), polars and DuckDB read whole from the parquet files' folder.
///
/// The parts may differ in their columns (a DualPI2 queue's `queues.csv`
/// has its L and C queues' columns, a CoDel queue's has not): the schema
/// holds every column of every part, in the order of first appearance
/// (the first part's columns, then each new one where it first appears),
/// and a part without a column has nulls there. Each column's type is
/// chosen over the cells of all parts as for one table ([`Column`]): a
/// column of integers in one part and of decimals in another is DOUBLE, one
/// of numbers in one part and of other text in another is a string column
/// in every part (the cells as the CSVs hold them). Reads each CSV twice
/// (types, then values), holding one at a time.
pub fn csvs_to_dataset(parts: &[(std::path::PathBuf, std::path::PathBuf)]) -> std::io::Result<()> {
    let mut names: Vec<String> = Vec::new();
    let mut cols: Vec<Column> = Vec::new();
    // rows that have the column, against all rows: fewer means nulls
    let mut with = Vec::new();
    let mut total = 0usize;
    for (csv, _) in parts {
        let (head, rows) = read_csv(csv)?;
        let at = union_columns(&mut names, &head, csv)?;
        cols.resize(names.len(), Column::default());
        with.resize(names.len(), 0usize);
        for r in &rows {
            for (j, &c) in at.iter().enumerate() {
                cols[c].see(r.get(j).unwrap_or(""));
            }
        }
        at.iter().for_each(|&c| with[c] += rows.len());
        total += rows.len();
    }
    if parts.is_empty() {
        return Ok(());
    }
    let kinds: Vec<(Kind, bool)> = (cols.iter().zip(&with))
        .map(|(c, &n)| {
            let (k, nullable) = c.kind();
            (k, nullable || n < total)
        })
        .collect();
    for (csv, pq) in parts {
        let (head, rows) = read_csv(csv)?;
        let at = union_columns(&mut names.clone(), &head, csv)?;
        let rows: Vec<csv::StringRecord> = if at.iter().copied().eq(0..names.len()) {
            rows
        } else {
            // the part's cells moved to the dataset's columns, "" (null)
            // where the part has no such column
            let mut to = vec![None; names.len()];
            at.iter().enumerate().for_each(|(j, &c)| to[c] = Some(j));
            (rows.iter())
                .map(|r| {
                    (to.iter())
                        .map(|j| j.and_then(|j| r.get(j)).unwrap_or(""))
                        .collect()
                })
                .collect()
        };
        write(&names, &kinds, &rows, pq)?;
    }
    Ok(())
}

/// Add the columns of `head` (a part's header, from file `csv`) that
/// `names` lacks to its end; returns, per column of `head`, its index in
/// `names`. A header that names a column twice is an error.
fn union_columns(
    names: &mut Vec<String>,
    head: &[String],
    csv: &Path,
) -> std::io::Result<Vec<usize>> {
    let mut at = Vec::with_capacity(head.len());
    for (j, h) in head.iter().enumerate() {
        if head[..j].contains(h) {
            return Err(std::io::Error::other(format!(
                "{}: column `{h}` appears twice in the header",
                csv.display()
            )));
        }
        at.push(match names.iter().position(|n| n == h) {
            Some(c) => c,
            None => {
                names.push(h.clone());
                names.len() - 1
            }
        });
    }
    Ok(at)
}

/// One column's values, typed. Nulls have no value here: they are the
/// zeros of [`TypedColumn::def`].
#[derive(Debug)]
pub enum Values {
    Int(Vec<i64>),
    Double(Vec<f64>),
    Bool(Vec<bool>),
    /// The strings one after another and where each ends: sliced into
    /// `ByteArray`s that share the buffer, a row group at a time.
    Text(Vec<u8>, Vec<usize>),
}

impl Values {
    /// Append `x` to a text column (a no-op on another kind).
    fn push_str(&mut self, x: &str) {
        if let Values::Text(buf, ends) = self {
            buf.extend_from_slice(x.as_bytes());
            ends.push(buf.len());
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Values::Int(_) => Kind::Int,
            Values::Double(_) => Kind::Double,
            Values::Bool(_) => Kind::Bool,
            Values::Text(..) => Kind::Text,
        }
    }
}

/// A named, typed column of a result table (what the Parquet writer and
/// the Python package's Arrow export take): its values and, per row, 1 for
/// a value or 0 for a null (its definition level).
#[derive(Debug)]
pub struct TypedColumn {
    pub name: String,
    /// The non-null values, in row order.
    pub values: Values,
    /// One per row: 1 for a value, 0 for a null.
    pub def: Vec<i16>,
    /// Whether any row is null.
    pub nullable: bool,
}

/// The result tables of a sweep's runs (the folders `rels` under `out`,
/// each holding CSV tables) as one Parquet dataset per table:
/// `<out>/parquet/<table>/<rel with / as _>.parquet`, every part with the
/// same columns and types (`label` and `seed` among them; the union of the
/// parts' columns, [`csvs_to_dataset`]), which `pandas.read_parquet`,
/// polars and DuckDB read whole from the folder. Written under `format =
/// "parquet"`; each dataset is built in a temporary folder and renamed into
/// place, and the temporary folder is removed when building fails. A
/// dataset of an earlier sweep that this one does not write is removed.
/// Returns the tables written.
pub fn write_dataset(
    out: &Path,
    rels: &[&str],
    format: crate::net::event_log::FileFormat,
) -> std::io::Result<Vec<&'static str>> {
    use crate::net::event_log::FileFormat;
    let root = out.join("parquet");
    let io = |p: &Path, e: std::io::Error| std::io::Error::other(format!("{}: {e}", p.display()));
    let mut wrote = Vec::new();
    for table in super::TABLES {
        let dir = root.join(table);
        let tmp = root.join(format!(".tmp-{table}"));
        for d in [&dir, &tmp] {
            if d.exists() {
                std::fs::remove_dir_all(d).map_err(|e| io(d, e))?;
            }
        }
        if format != FileFormat::Parquet {
            continue;
        }
        let parts: Vec<(std::path::PathBuf, std::path::PathBuf)> = rels
            .iter()
            .map(|rel| {
                (
                    out.join(rel).join(format!("{table}.csv")),
                    tmp.join(format!("{}.parquet", rel.replace('/', "_"))),
                )
            })
            .filter(|(c, _)| c.is_file())
            .collect();
        if parts.is_empty() {
            continue;
        }
        let built = std::fs::create_dir_all(&tmp)
            .and_then(|_| csvs_to_dataset(&parts))
            .and_then(|_| std::fs::rename(&tmp, &dir));
        if let Err(e) = built {
            // no half-written dataset is left behind
            let _ = std::fs::remove_dir_all(&tmp);
            if wrote.is_empty() {
                let _ = std::fs::remove_dir(&root);
            }
            return Err(io(&dir, e));
        }
        wrote.push(*table);
    }
    if wrote.is_empty() {
        // nothing of ours left in it
        let _ = std::fs::remove_dir(&root);
    }
    Ok(wrote)
}

fn write(
    names: &[String],
    kinds: &[(Kind, bool)],
    rows: &[csv::StringRecord],
    pq: &Path,
) -> std::io::Result<()> {
    // Every value was checked to parse when its kind was chosen.
    let cols: Vec<TypedColumn> = (names.iter().zip(kinds).enumerate())
        .map(|(j, (name, &(k, nullable)))| {
            let cells = rows.iter().map(|r| r.get(j).unwrap_or(""));
            let def = cells.clone().map(|c| i16::from(!c.is_empty())).collect();
            let vals = cells.filter(|c| !c.is_empty());
            let values = match k {
                Kind::Int => Values::Int(vals.map(|c| c.parse().unwrap_or_default()).collect()),
                Kind::Double => {
                    Values::Double(vals.map(|c| c.parse().unwrap_or_default()).collect())
                }
                Kind::Bool => Values::Bool(vals.map(|c| c == "true").collect()),
                Kind::Text => {
                    let mut t = Values::Text(Vec::new(), Vec::new());
                    vals.for_each(|c| t.push_str(c));
                    t
                }
            };
            TypedColumn {
                name: name.clone(),
                values,
                def,
                nullable,
            }
        })
        .collect();
    write_columns(cols, rows.len(), std::fs::File::create(pq)?)
}

/// Write `cols` (each of `rows` rows) as one Parquet file into `sink`.
pub(crate) fn write_columns<W: std::io::Write + Send>(
    mut cols: Vec<TypedColumn>,
    rows: usize,
    sink: W,
) -> std::io::Result<()> {
    let mut fields = Vec::with_capacity(cols.len());
    for c in &cols {
        let k = c.values.kind();
        let physical = match k {
            Kind::Int => Physical::INT64,
            Kind::Double => Physical::DOUBLE,
            Kind::Bool => Physical::BOOLEAN,
            Kind::Text => Physical::BYTE_ARRAY,
        };
        let mut b =
            Type::primitive_type_builder(&c.name, physical).with_repetition(if c.nullable {
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
    let mut w = SerializedFileWriter::new(sink, schema, properties()).map_err(pq_err)?;
    // Each text column's buffer, shared by the values sliced from it.
    let text: Vec<Option<bytes::Bytes>> = (cols.iter_mut())
        .map(|c| match &mut c.values {
            Values::Text(buf, _) => Some(bytes::Bytes::from(std::mem::take(buf))),
            _ => None,
        })
        .collect();
    // Where each column's values of the current row group start.
    let mut at = vec![0usize; cols.len()];
    // An empty table still gets one (empty) row group, so readers see its
    // columns.
    let mut start = 0;
    loop {
        let end = (start + ROW_GROUP).min(rows);
        let mut g = w.next_row_group().map_err(pq_err)?;
        for ((c, at), text) in cols.iter().zip(&mut at).zip(&text) {
            let def = &c.def[start..end];
            let n = def.iter().filter(|&&d| d == 1).count();
            let d = c.nullable.then_some(def);
            let mut cw = g.next_column().map_err(pq_err)?.ok_or_else(|| {
                std::io::Error::other("parquet: fewer columns in the schema than written")
            })?;
            let r = *at..*at + n;
            match &c.values {
                Values::Int(v) => cw.typed::<Int64Type>().write_batch(&v[r], d, None),
                Values::Double(v) => cw.typed::<DoubleType>().write_batch(&v[r], d, None),
                Values::Bool(v) => cw.typed::<BoolType>().write_batch(&v[r], d, None),
                Values::Text(_, ends) => {
                    let buf = text.as_ref().expect("a text column has its buffer");
                    let v: Vec<ByteArray> = (r.clone())
                        .map(|i| {
                            let from = if i == 0 { 0 } else { ends[i - 1] };
                            ByteArray::from(buf.slice(from..ends[i]))
                        })
                        .collect();
                    cw.typed::<ByteArrayType>().write_batch(&v, d, None)
                }
            }
            .map_err(pq_err)?;
            cw.close().map_err(pq_err)?;
            *at += n;
        }
        g.close().map_err(pq_err)?;
        start = end;
        if start >= rows {
            break;
        }
    }
    w.close().map_err(pq_err)?;
    Ok(())
}

/// A table built row by row, each row led by the run's `label` and
/// `seed`: from `Serialize` structs ([`RowColumns::push`]: the rows of
/// `flows`, `links`, `requests`, with the columns, order and names the
/// `csv` crate writes for them), or cell by cell after a
/// [`RowColumns::head`] (the time series and per-class tables). Each
/// column's Parquet type follows its Rust type (integers as INT64, floats
/// as DOUBLE, `bool`, strings and enum variant names as UTF-8, a missing
/// value as null), so no value goes through text.
pub struct RowColumns {
    names: Vec<String>,
    /// The field names of rows pushed as structs (compared by address
    /// first: every row of one type passes the same `&'static str`s).
    keys: Vec<&'static str>,
    cols: Vec<Builder>,
    label: String,
    seed: i64,
    rows: usize,
    /// Rows expected (each column reserves room for them).
    cap: usize,
    /// The next cell's column in a row written cell by cell.
    col: usize,
}

/// One column being built: its values (typed at the first non-null one)
/// and definition levels.
#[derive(Default)]
struct Builder {
    values: Option<Values>,
    def: Vec<i16>,
    nulls: bool,
}

impl Builder {
    fn null(&mut self) {
        self.def.push(0);
        self.nulls = true;
    }

    fn int(&mut self, x: i64) -> Result<(), SerError> {
        self.def.push(1);
        let cap = self.def.capacity();
        match (self.values).get_or_insert_with(|| Values::Int(Vec::with_capacity(cap))) {
            Values::Int(v) => v.push(x),
            Values::Double(v) => v.push(x as f64),
            _ => return Err(SerError("an integer in a column of another type".into())),
        }
        Ok(())
    }

    fn double(&mut self, x: f64) -> Result<(), SerError> {
        self.def.push(1);
        let v = self
            .values
            .get_or_insert_with(|| Values::Double(Vec::with_capacity(self.def.capacity())));
        if let Values::Int(ints) = v {
            *v = Values::Double(ints.iter().map(|&i| i as f64).collect());
        }
        match v {
            Values::Double(v) => v.push(x),
            _ => return Err(SerError("a number in a column of another type".into())),
        }
        Ok(())
    }

    fn bool(&mut self, x: bool) -> Result<(), SerError> {
        self.def.push(1);
        let cap = self.def.capacity();
        match (self.values).get_or_insert_with(|| Values::Bool(Vec::with_capacity(cap))) {
            Values::Bool(v) => v.push(x),
            _ => return Err(SerError("a boolean in a column of another type".into())),
        }
        Ok(())
    }

    fn text(&mut self, x: &str) -> Result<(), SerError> {
        self.def.push(1);
        match self.values.get_or_insert_with(|| {
            Values::Text(Vec::new(), Vec::with_capacity(self.def.capacity()))
        }) {
            t @ Values::Text(..) => t.push_str(x),
            _ => return Err(SerError("a string in a column of another type".into())),
        }
        Ok(())
    }
}

impl RowColumns {
    /// An empty table whose rows (about `cap` of them) will be led by
    /// `label` and `seed`.
    pub fn new(label: &str, seed: u64, cap: usize) -> Self {
        RowColumns {
            names: Vec::new(),
            keys: Vec::new(),
            cols: Vec::new(),
            label: label.to_string(),
            seed: seed as i64,
            rows: 0,
            cap,
            col: 0,
        }
    }

    /// Name the columns (after `label` and `seed`) of a table written cell
    /// by cell.
    pub fn head(&mut self, names: &[&str]) {
        self.names = names.iter().map(|n| n.to_string()).collect();
        self.cols = (names.iter())
            .map(|_| Builder {
                def: Vec::with_capacity(self.cap),
                ..Builder::default()
            })
            .collect();
    }

    /// The builder of the next cell of the current row.
    fn cell(&mut self) -> std::io::Result<&mut Builder> {
        let (row, n) = (self.rows, self.cols.len());
        let b = self.cols.get_mut(self.col).ok_or_else(|| {
            std::io::Error::other(format!("table row {row}: more cells than its {n} columns"))
        })?;
        self.col += 1;
        Ok(b)
    }

    fn cell_err(&self, e: SerError) -> std::io::Error {
        let name = self.names.get(self.col.wrapping_sub(1));
        std::io::Error::other(format!(
            "table row {}, column `{}`: {}",
            self.rows,
            name.map_or("?", String::as_str),
            e.0
        ))
    }

    /// The next cell: text.
    pub fn text(&mut self, v: &str) -> std::io::Result<()> {
        let r = self.cell()?.text(v);
        r.map_err(|e| self.cell_err(e))
    }

    /// The next cell: an integer.
    pub fn int(&mut self, v: i64) -> std::io::Result<()> {
        let r = self.cell()?.int(v);
        r.map_err(|e| self.cell_err(e))
    }

    /// The next cell: a number.
    pub fn double(&mut self, v: f64) -> std::io::Result<()> {
        let r = self.cell()?.double(v);
        r.map_err(|e| self.cell_err(e))
    }

    /// The next cell: none (null).
    pub fn null(&mut self) -> std::io::Result<()> {
        self.cell()?.null();
        Ok(())
    }

    /// End the current row (every column must have had its cell).
    pub fn end_row(&mut self) -> std::io::Result<()> {
        if self.col != self.cols.len() {
            return Err(std::io::Error::other(format!(
                "table row {}: {} cells where the table has {} columns",
                self.rows,
                self.col,
                self.cols.len()
            )));
        }
        self.col = 0;
        self.rows += 1;
        Ok(())
    }

    /// Append one row: `x` must serialize as a struct of plain fields.
    pub fn push<T: serde::Serialize>(&mut self, x: &T) -> std::io::Result<()> {
        let first = self.rows == 0;
        x.serialize(RowSer {
            t: self,
            col: 0,
            first,
        })
        .map_err(|e| std::io::Error::other(format!("table row {}: {}", self.rows, e.0)))?;
        self.rows += 1;
        Ok(())
    }

    /// Rows pushed so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Write the table as Parquet into `sink` (its columns as
    /// [`RowColumns::into_columns`] gives them).
    pub fn write<W: std::io::Write + Send>(
        self,
        empty_head: &[&str],
        sink: W,
    ) -> std::io::Result<()> {
        let (cols, n) = self.into_columns(empty_head);
        write_columns(cols, n, sink)
    }

    /// The table's typed columns and its number of rows: `label`, `seed`,
    /// then those pushed. Without a row the columns are `label`, `seed` and
    /// those of [`RowColumns::head`] (else `empty_head`), as text (what the
    /// CSV header of an empty table reads as).
    pub fn into_columns(self, empty_head: &[&str]) -> (Vec<TypedColumn>, usize) {
        let n = self.rows;
        let mut cols = Vec::with_capacity(self.names.len() + 2);
        if n == 0 {
            let head: Vec<&str> = if self.names.is_empty() {
                empty_head.to_vec()
            } else {
                self.names.iter().map(String::as_str).collect()
            };
            for name in ["label", "seed"].iter().chain(&head) {
                cols.push(TypedColumn {
                    name: name.to_string(),
                    values: Values::Text(Vec::new(), Vec::new()),
                    def: Vec::new(),
                    nullable: false,
                });
            }
            return (cols, 0);
        }
        let mut label = Values::Text(
            Vec::with_capacity(self.label.len() * n),
            Vec::with_capacity(n),
        );
        (0..n).for_each(|_| label.push_str(&self.label));
        cols.push(TypedColumn {
            name: "label".into(),
            values: label,
            def: vec![1; n],
            nullable: false,
        });
        cols.push(TypedColumn {
            name: "seed".into(),
            values: Values::Int(vec![self.seed; n]),
            def: vec![1; n],
            nullable: false,
        });
        for (name, b) in self.names.into_iter().zip(self.cols) {
            cols.push(TypedColumn {
                name,
                // a column with no value: numbers, all null (as from CSV)
                values: b.values.unwrap_or(Values::Double(Vec::new())),
                def: b.def,
                nullable: b.nulls,
            });
        }
        (cols, n)
    }
}

/// Why a row could not be taken apart into columns.
#[derive(Debug)]
pub struct SerError(String);

impl std::fmt::Display for SerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerError {}

impl serde::ser::Error for SerError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        SerError(msg.to_string())
    }
}

fn unsupported<T>(what: &str) -> Result<T, SerError> {
    Err(SerError(format!("{what} cannot be a table cell")))
}

/// The serializer methods of what cannot be a table cell (bytes,
/// sequences, maps, enum variants with data): each an error, in both
/// serializers below.
macro_rules! reject_compound {
    () => {
        fn serialize_bytes(self, _: &[u8]) -> Result<(), SerError> {
            unsupported("bytes")
        }
        fn serialize_newtype_variant<T: ?Sized + serde::Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<(), SerError> {
            unsupported("an enum variant with data")
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<No, SerError> {
            unsupported("a sequence")
        }
        fn serialize_tuple(self, _: usize) -> Result<No, SerError> {
            unsupported("a tuple")
        }
        fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<No, SerError> {
            unsupported("a tuple struct")
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<No, SerError> {
            unsupported("an enum variant with data")
        }
        fn serialize_map(self, _: Option<usize>) -> Result<No, SerError> {
            unsupported("a map")
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<No, SerError> {
            unsupported("an enum variant with data")
        }
    };
}

/// The scalar serializer methods of a row, each an error: a row is a
/// struct.
macro_rules! not_a_struct {
    ($($f:ident: $t:ty),*) => {
        $(fn $f(self, _: $t) -> Result<(), SerError> {
            unsupported("a row that is not a struct")
        })*
    };
}

/// Serializes one row (a struct) into the columns of a [`RowColumns`].
struct RowSer<'a> {
    t: &'a mut RowColumns,
    col: usize,
    first: bool,
}

impl serde::ser::SerializeStruct for RowSer<'_> {
    type Ok = ();
    type Error = SerError;

    fn serialize_field<T: ?Sized + serde::Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerError> {
        if self.first {
            self.t.keys.push(key);
            self.t.names.push(key.to_string());
            self.t.cols.push(Builder {
                def: Vec::with_capacity(self.t.cap),
                ..Builder::default()
            });
        } else if !(self.t.keys.get(self.col)).is_some_and(|k| std::ptr::eq(*k, key) || *k == key) {
            return Err(SerError(format!(
                "field `{key}` where the table has `{}`",
                self.t
                    .names
                    .get(self.col)
                    .map_or("no column", String::as_str)
            )));
        }
        value.serialize(CellSer(&mut self.t.cols[self.col]))?;
        self.col += 1;
        Ok(())
    }

    fn end(self) -> Result<(), SerError> {
        if self.col != self.t.names.len() {
            return Err(SerError(format!(
                "{} fields where the table has {} columns",
                self.col,
                self.t.names.len()
            )));
        }
        Ok(())
    }
}

type No = serde::ser::Impossible<(), SerError>;

/// The serializer of a row: a struct and nothing else.
impl<'a> serde::Serializer for RowSer<'a> {
    type Ok = ();
    type Error = SerError;
    type SerializeSeq = No;
    type SerializeTuple = No;
    type SerializeTupleStruct = No;
    type SerializeTupleVariant = No;
    type SerializeMap = No;
    type SerializeStruct = RowSer<'a>;
    type SerializeStructVariant = No;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<RowSer<'a>, SerError> {
        Ok(self)
    }
    not_a_struct!(serialize_bool: bool, serialize_i64: i64, serialize_u64: u64, serialize_f64: f64, serialize_str: &str, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_f32: f32, serialize_char: char);
    fn serialize_none(self) -> Result<(), SerError> {
        unsupported("a row that is not a struct")
    }
    fn serialize_some<T: ?Sized + serde::Serialize>(self, _: &T) -> Result<(), SerError> {
        unsupported("a row that is not a struct")
    }
    fn serialize_unit(self) -> Result<(), SerError> {
        unsupported("a row that is not a struct")
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), SerError> {
        unsupported("a row that is not a struct")
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), SerError> {
        unsupported("a row that is not a struct")
    }
    fn serialize_newtype_struct<T: ?Sized + serde::Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), SerError> {
        unsupported("a row that is not a struct")
    }
    reject_compound!();
}

/// Cell serializer methods of integers that fit an `i64`.
macro_rules! small_ints {
    ($($f:ident: $t:ty),*) => {
        $(fn $f(self, v: $t) -> Result<(), SerError> {
            self.0.int(v.into())
        })*
    };
}

/// The serializer of one cell into its column.
struct CellSer<'a>(&'a mut Builder);

impl serde::Serializer for CellSer<'_> {
    type Ok = ();
    type Error = SerError;
    type SerializeSeq = No;
    type SerializeTuple = No;
    type SerializeTupleStruct = No;
    type SerializeTupleVariant = No;
    type SerializeMap = No;
    type SerializeStruct = No;
    type SerializeStructVariant = No;

    fn serialize_bool(self, v: bool) -> Result<(), SerError> {
        self.0.bool(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), SerError> {
        self.0.int(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), SerError> {
        match i64::try_from(v) {
            Ok(i) => self.0.int(i),
            Err(_) => self.0.double(v as f64),
        }
    }
    fn serialize_f64(self, v: f64) -> Result<(), SerError> {
        self.0.double(v)
    }
    fn serialize_str(self, v: &str) -> Result<(), SerError> {
        self.0.text(v)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<No, SerError> {
        unsupported("a struct")
    }
    fn serialize_none(self) -> Result<(), SerError> {
        self.0.null();
        Ok(())
    }
    fn serialize_some<T: ?Sized + serde::Serialize>(self, v: &T) -> Result<(), SerError> {
        v.serialize(self)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), SerError> {
        self.0.text(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + serde::Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), SerError> {
        v.serialize(self)
    }
    small_ints!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32);
    small_ints!(serialize_u8: u8, serialize_u16: u16, serialize_u32: u32);
    fn serialize_f32(self, v: f32) -> Result<(), SerError> {
        self.0.double(v.into())
    }
    fn serialize_char(self, v: char) -> Result<(), SerError> {
        self.0.text(v.encode_utf8(&mut [0; 4]))
    }
    /// `()` is an empty cell in the CSV: a null here.
    fn serialize_unit(self) -> Result<(), SerError> {
        self.0.null();
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), SerError> {
        self.0.null();
        Ok(())
    }
    reject_compound!();
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
        assert_eq!(kind_of(&["", ""]), Kind::Double);
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

    #[derive(serde::Serialize)]
    enum Side {
        Up,
    }

    #[derive(serde::Serialize)]
    struct Row {
        id: u32,
        name: String,
        rate: f64,
        done: Option<f64>,
        ok: bool,
        side: Side,
        big: u64,
    }

    fn rows() -> Vec<Row> {
        (0..5)
            .map(|i| Row {
                id: i,
                name: format!("h{i}"),
                rate: 0.5 * f64::from(i),
                done: (i % 2 == 0).then(|| f64::from(i) + 0.25),
                ok: i % 3 == 0,
                side: Side::Up,
                big: u64::from(i) << 40,
            })
            .collect()
    }

    /// The typed writer gives the very file that converting the rows' CSV
    /// gives (every column's type read from its text matches its Rust
    /// type here), row groups included.
    #[test]
    fn typed_rows_write_the_file_the_csv_conversion_writes() {
        let dir = tempfile::tempdir().unwrap();
        let (c, a, b) = (
            dir.path().join("t.csv"),
            dir.path().join("a.parquet"),
            dir.path().join("b.parquet"),
        );
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_path(&c)
            .unwrap();
        w.write_record([
            "label", "seed", "id", "name", "rate", "done", "ok", "side", "big",
        ])
        .unwrap();
        let mut t = RowColumns::new("run", 7, 0);
        for r in rows() {
            w.write_field("run").unwrap();
            w.write_field("7").unwrap();
            w.serialize(&r).unwrap();
            t.push(&r).unwrap();
        }
        w.flush().unwrap();
        assert_eq!(t.rows(), 5);
        csv_to_parquet(&c, &a).unwrap();
        t.write(&[], std::fs::File::create(&b).unwrap()).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }

    /// A table made for transfer holds the rows and schema of the file.
    #[test]
    fn an_empty_typed_table_has_its_head_as_text_columns() {
        let mut buf = Vec::new();
        RowColumns::new("run", 1, 0)
            .write(&["id"], &mut buf)
            .unwrap();
        let r = SerializedFileReader::new(bytes::Bytes::from(buf)).unwrap();
        let schema = r.metadata().file_metadata().schema_descr();
        let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
        assert_eq!(names, ["label", "seed", "id"]);
        assert_eq!(r.metadata().file_metadata().num_rows(), 0);
    }

    #[test]
    fn a_row_that_is_not_a_struct_or_changes_its_fields_is_refused() {
        let mut t = RowColumns::new("run", 1, 0);
        let e = t.push(&3u32).unwrap_err().to_string();
        assert!(e.contains("not a struct"), "{e}");
        #[derive(serde::Serialize)]
        struct A {
            x: u32,
        }
        #[derive(serde::Serialize)]
        struct B {
            y: u32,
        }
        let mut t = RowColumns::new("run", 1, 0);
        t.push(&A { x: 1 }).unwrap();
        let e = t.push(&B { y: 1 }).unwrap_err().to_string();
        assert!(e.contains("field `y` where the table has `x`"), "{e}");
    }
}

//! A run's result tables as Arrow record batches, handed to Python through
//! the Arrow C stream interface ("The Arrow C stream interface", Apache
//! Arrow format specification; exported as a PyCapsule named
//! `arrow_array_stream`, per "The Arrow PyCapsule Interface"). pyarrow,
//! polars and DuckDB import it without copying the buffers and without
//! parsing any text.
//!
//! The columns are the library's typed columns
//! ([`aqmlab::output::table_columns`]): the names and types of the Parquet
//! tables (`Int64`, `Float64`, `Boolean`, `Utf8`), a null where the CSV
//! cell is empty.

use aqmlab::output::columnar::{TypedColumn, Values};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, LargeStringArray, RecordBatch,
    RecordBatchIterator, StringArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, Field, Schema};
use std::sync::Arc;

/// The C stream of one record batch holding `cols` (`rows` rows each).
pub fn stream(cols: Vec<TypedColumn>, rows: usize) -> Result<FFI_ArrowArrayStream, ArrowError> {
    let batch = record_batch(cols, rows)?;
    let schema = batch.schema();
    let reader = RecordBatchIterator::new([Ok(batch)], schema);
    Ok(FFI_ArrowArrayStream::new(Box::new(reader)))
}

/// The record batch of `cols`.
pub fn record_batch(cols: Vec<TypedColumn>, rows: usize) -> Result<RecordBatch, ArrowError> {
    let mut fields = Vec::with_capacity(cols.len());
    let mut arrays = Vec::with_capacity(cols.len());
    for c in cols {
        let a = array(c.values, &c.def, c.nullable, rows)?;
        fields.push(Field::new(c.name, a.data_type().clone(), c.nullable));
        arrays.push(a);
    }
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options)
}

/// One column as an Arrow array of `rows` slots: the values of `values`
/// in the rows whose `def` is 1, nulls elsewhere.
fn array(values: Values, def: &[i16], nullable: bool, rows: usize) -> Result<ArrayRef, ArrowError> {
    let nulls = nullable.then(|| NullBuffer::from(def.iter().map(|&d| d == 1).collect::<Vec<_>>()));
    // a column holds one value per non-null row, and one row per table row
    let n = match &values {
        Values::Int(v) => v.len(),
        Values::Double(v) => v.len(),
        Values::Bool(v) => v.len(),
        Values::Text(_, ends) => ends.len(),
    };
    let want = if nullable {
        def.iter().filter(|&&d| d == 1).count()
    } else {
        rows
    };
    if n != want || (nullable && def.len() != rows) {
        return Err(ArrowError::InvalidArgumentError(format!(
            "a column of {n} values and {} rows in a table of {rows} rows",
            def.len()
        )));
    }
    // Spread the non-null values over their rows (a null slot holds `zero`;
    // the values were counted above).
    fn spread<T: Copy>(v: Vec<T>, def: &[i16], nullable: bool, zero: T) -> Vec<T> {
        if !nullable {
            return v;
        }
        let mut it = v.into_iter();
        def.iter()
            .map(|&d| {
                if d == 1 {
                    it.next().unwrap_or(zero)
                } else {
                    zero
                }
            })
            .collect()
    }
    Ok(match values {
        Values::Int(v) => {
            let v = spread(v, def, nullable, 0);
            Arc::new(Int64Array::try_new(ScalarBuffer::from(v), nulls)?)
        }
        Values::Double(v) => {
            let v = spread(v, def, nullable, 0.0);
            Arc::new(Float64Array::try_new(ScalarBuffer::from(v), nulls)?)
        }
        Values::Bool(v) => {
            let v = spread(v, def, nullable, false);
            Arc::new(BooleanArray::new(BooleanBuffer::from(v), nulls))
        }
        Values::Text(buf, ends) => {
            // offsets: each row ends where its string does, a null row
            // where the previous one ended
            let mut offsets = Vec::with_capacity(rows + 1);
            offsets.push(0usize);
            let mut it = ends.into_iter();
            let mut last = 0;
            if nullable {
                for &d in def {
                    if d == 1 {
                        last = it.next().unwrap_or(last);
                    }
                    offsets.push(last);
                }
            } else {
                offsets.extend(it);
            }
            if let Ok(o) = offsets
                .iter()
                .map(|&o| i32::try_from(o))
                .collect::<Result<Vec<_>, _>>()
            {
                Arc::new(StringArray::try_new(
                    OffsetBuffer::new(ScalarBuffer::from(o)),
                    Buffer::from_vec(buf),
                    nulls,
                )?)
            } else {
                let o: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
                Arc::new(LargeStringArray::try_new(
                    OffsetBuffer::new(ScalarBuffer::from(o)),
                    Buffer::from_vec(buf),
                    nulls,
                )?)
            }
        }
    })
}

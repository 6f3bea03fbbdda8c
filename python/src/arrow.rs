//! Frames handed to Python through the Arrow C stream interface: an [`ArrowStream`] has
//! `__arrow_c_stream__` (the Arrow PyCapsule interface), so `polars.DataFrame(s)`,
//! `pyarrow.table(s)` and DuckDB read it without copying a row, and without this crate
//! needing the Python polars' private API (or its exact version).
//!
//! Strings go out as Arrow's plain `large_utf8` (polars' oldest compatibility level), not
//! `utf8_view`, which older readers do not know.

use polars::prelude::*;
use polars_arrow::array::{Array, StructArray};
use polars_arrow::datatypes::{ArrowDataType, Field as ArrowField};
use polars_arrow::ffi::export_iterator;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// A polars error as a Python exception.
pub fn polars_error(e: PolarsError) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// A table (one or more frames of one schema), exported on request.
#[pyclass(module = "bdpscope._native", frozen)]
pub struct ArrowStream {
    frames: Vec<DataFrame>,
}

impl ArrowStream {
    /// `frames` must be non-empty and share a schema (an empty table is one empty frame).
    pub fn new(frames: Vec<DataFrame>) -> ArrowStream {
        debug_assert!(!frames.is_empty());
        ArrowStream { frames }
    }
}

#[pymethods]
impl ArrowStream {
    /// The Arrow PyCapsule interface: a capsule holding an `ArrowArrayStream` of struct
    /// arrays (record batches), one per chunk. A requested schema is not honoured (the
    /// interface allows that): the consumer casts.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let level = CompatLevel::oldest();
        let schema = self.frames[0].schema().to_arrow(level);
        let fields: Vec<ArrowField> = schema.iter_values().cloned().collect();
        let dtype = ArrowDataType::Struct(fields);
        let batch_type = dtype.clone();
        let frames = self.frames.clone();
        let batches = frames
            .into_iter()
            .flat_map(move |mut df| {
                df.rechunk_mut();
                df.iter_chunks(level, false).collect::<Vec<_>>()
            })
            .map(move |rb| {
                let height = rb.height();
                let array = StructArray::new(batch_type.clone(), height, rb.into_arrays(), None);
                Ok(Box::new(array) as Box<dyn Array>)
            });
        let stream = export_iterator(Box::new(batches), ArrowField::new("".into(), dtype, false));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Rows in the table.
    fn __len__(&self) -> usize {
        self.frames.iter().map(DataFrame::height).sum()
    }
}

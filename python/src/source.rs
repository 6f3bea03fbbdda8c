//! What a Python caller may hand over as a capture: a path (`str` or `os.PathLike`),
//! bytes (`bytes`, `bytearray`, `memoryview`: read in place, not copied when immutable), or
//! any binary file-like object with `read` (an open file, `io.BytesIO`, an fsspec or
//! pyarrow.fs stream from S3 or HDFS), read in 1 MiB pieces with the GIL taken only for
//! each `read` call.

use bdpscope::capture::{CaptureError, CaptureReader};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyTypeError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyMemoryView, PyString};
use std::io::Read;
use std::path::PathBuf;

pub enum Input {
    Path(PathBuf),
    Bytes(PyBackedBytes),
    Stream(Py<PyAny>),
}

/// A capture to read and the name its flows carry (the `capture` column).
pub struct Source {
    pub input: Input,
    pub name: String,
}

/// Why a source could not be opened as a capture, in the command line's words.
pub enum OpenError {
    /// The file could not be opened ("NAME: cannot open: ...").
    Io(std::io::Error, String),
    /// Its bytes are not a capture ("NAME: not readable as a capture: ...").
    Capture(CaptureError, String),
}

impl OpenError {
    pub fn message(&self) -> String {
        match self {
            OpenError::Io(e, name) => format!("{name}: cannot open: {e}"),
            OpenError::Capture(e, name) => format!("{name}: not readable as a capture: {e}"),
        }
    }

    pub fn into_py(self) -> PyErr {
        let msg = self.message();
        match self {
            OpenError::Io(e, _) => match e.kind() {
                std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
                std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
                _ => PyOSError::new_err(msg),
            },
            OpenError::Capture(..) => crate::CaptureError::new_err(msg),
        }
    }
}

/// The name of a stream: its `name` (open files) or `path` (fsspec files), if a string.
fn stream_name(obj: &Bound<'_, PyAny>) -> String {
    for attr in ["name", "path"] {
        if let Ok(v) = obj.getattr(attr) {
            if let Ok(s) = v.cast::<PyString>() {
                return s.to_string();
            }
        }
    }
    "<stream>".to_string()
}

impl Source {
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
        if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")? {
            let path: PathBuf = obj.extract()?;
            let name = path.to_string_lossy().into_owned();
            return Ok(Source {
                input: Input::Path(path),
                name,
            });
        }
        if obj.is_instance_of::<PyBytes>() {
            return Ok(Source {
                input: Input::Bytes(obj.extract()?),
                name: "<bytes>".to_string(),
            });
        }
        if obj.hasattr("read")? {
            return Ok(Source {
                name: stream_name(obj),
                input: Input::Stream(obj.clone().unbind()),
            });
        }
        // bytearray, memoryview and other buffers: copied once into bytes (a bytearray
        // may change under us while the GIL is released).
        // Through memoryview first: only a buffer passes (bytes(12345) would make 12345
        // zero bytes).
        let buffer = obj.py().get_type::<PyMemoryView>().call1((obj,));
        if let Ok(bytes) = buffer.and_then(|view| obj.py().get_type::<PyBytes>().call1((view,))) {
            return Ok(Source {
                input: Input::Bytes(bytes.extract()?),
                name: "<bytes>".to_string(),
            });
        }
        Err(PyTypeError::new_err(format!(
            "a capture is a path, bytes or a binary file-like object, not {}",
            obj.get_type().name()?
        )))
    }

    /// Opens the capture (recognised by content: pcap, pcapng, gzip or zstd), and its
    /// size when known. Called without the GIL.
    pub fn open(self) -> Result<(CaptureReader, String, Option<u64>), OpenError> {
        let name = self.name;
        let (input, size): (Box<dyn Read + Send>, Option<u64>) = match self.input {
            Input::Path(p) => {
                let f = std::fs::File::open(&p).map_err(|e| OpenError::Io(e, name.clone()))?;
                let size = f.metadata().ok().map(|m| m.len());
                (Box::new(f), size)
            }
            Input::Bytes(b) => {
                let size = b.len() as u64;
                (Box::new(std::io::Cursor::new(b)), Some(size))
            }
            Input::Stream(obj) => (Box::new(PyReader(obj)), None),
        };
        let reader = CaptureReader::new(input).map_err(|e| OpenError::Capture(e, name.clone()))?;
        Ok((reader, name, size))
    }
}

/// A Python binary stream as a `Read`: each call takes the GIL for one `read(n)`.
struct PyReader(Py<PyAny>);

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let data = self
                .0
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let data = data.bind(py);
            if data.is_none() {
                // A non-blocking stream with nothing ready: there is no such thing in a file.
                return Err(std::io::Error::other("the stream's read() returned None"));
            }
            let bytes: PyBackedBytes = data
                .extract()
                .map_err(|_| std::io::Error::other("the stream's read() did not return bytes"))?;
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            Ok(n)
        })
    }
}

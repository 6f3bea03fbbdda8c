//! Output formats: the analysis never formats; these modules do.

pub mod charts;
pub mod html;
pub mod json;
pub mod offload;
pub mod packets;
pub mod page;
pub mod table;
pub mod text;

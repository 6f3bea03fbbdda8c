//! What a file's name says about it. A capture is always read by its content (the reader
//! never sees a name); the name only tells, for a file that cannot be read, whether it was
//! meant as a capture — an archive holds READMEs, `SOURCES.md` and `truth.json` beside its
//! captures, and those are no one's failure — or is a capture that failed.

use super::rotation::rotation_key;

/// The extensions capture tools write: tcpdump and libpcap (`.pcap`), Wireshark and
/// dumpcap (`.pcapng`, and the older `.ntar`), and the `.cap` many tools and archives use.
const CAPTURE_EXTENSIONS: [&str; 4] = [".pcap", ".pcapng", ".cap", ".ntar"];

/// Whether `name` (a path or a file name) is a capture's: it ends in a capture extension,
/// after a compression suffix (`.gz`, `.zst`, `.zstd`) and a rotation counter are set
/// aside as batch's rotation groups set them aside (`trace.pcap`, `trace.pcap7`,
/// `x.pcapng.gz`, `LOG.CAP`; not `notes.txt`, `truth.json`, `x.pcap.json`).
pub fn has_capture_name(name: &str) -> bool {
    let (template, _) = rotation_key(name);
    let lower = template.to_ascii_lowercase();
    CAPTURE_EXTENSIONS.iter().any(|ext| lower.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_names_by_extension_compression_and_rotation() {
        for yes in [
            "a/trace.pcap",
            "trace.pcap7",
            "d/x.pcapng.gz",
            "x.pcap.zst",
            "x.pcap.zstd",
            "LOG.CAP",
            "old.ntar",
            "x-20240101-120000.pcap",
            "derived__empty.pcap",
        ] {
            assert!(has_capture_name(yes), "{yes}");
        }
        for no in [
            "README",
            "SOURCES.md",
            "truth.json",
            "notes.txt",
            "x.pcap.json",
            "pcap",
            "a.pcap/notes.txt",
            "archive.tar.gz",
        ] {
            assert!(!has_capture_name(no), "{no}");
        }
    }
}

//! Rotated captures: `tcpdump -C` / `-G` and dumpcap ring buffers spread one capture over
//! files whose names differ only in numbers (`trace.pcap`, `trace.pcap1`, ...,
//! `x-20240101-120000.pcap`). The group a file belongs to and its place in the group come
//! from its name alone, so every reader of an archive (batch, the Spark job) groups alike.

/// The rotation group of a path and its place in the group: the folder plus the file
/// name with the compression suffix removed, each run of digits replaced by `#` (the
/// numbers, in order, give the place) and a trailing counter dropped, so that
/// `d/trace.pcap`, `d/trace.pcap1`, `d/trace.pcap12.gz` share `d/trace.pcap` and
/// `d/x-20240101-1200.pcap` falls into `d/x-#-#.pcap`.
pub fn rotation_key(name: &str) -> (String, Vec<u128>) {
    let (dir, file) = match name.rfind(['/', std::path::MAIN_SEPARATOR]) {
        Some(i) => name.split_at(i + 1),
        None => ("", name),
    };
    let lower = file.to_ascii_lowercase();
    let mut stem = file;
    for suffix in [".gz", ".zst", ".zstd"] {
        if lower.ends_with(suffix) {
            stem = &file[..file.len() - suffix.len()];
            break;
        }
    }
    let mut template = String::with_capacity(stem.len());
    let mut numbers = Vec::new();
    let mut digits = String::new();
    for ch in stem.chars().chain(std::iter::once('\0')) {
        if ch.is_ascii_digit() {
            digits.push(ch);
            continue;
        }
        if !digits.is_empty() {
            numbers.push(digits.parse::<u128>().unwrap_or(u128::MAX));
            template.push('#');
            digits.clear();
        }
        if ch != '\0' {
            template.push(ch);
        }
    }
    if template.ends_with('#') {
        template.pop();
    }
    (format!("{dir}{template}"), numbers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_keys_group_tcpdump_rotations() {
        assert_eq!(rotation_key("d/trace.pcap"), ("d/trace.pcap".into(), vec![]));
        assert_eq!(rotation_key("d/trace.pcap1"), ("d/trace.pcap".into(), vec![1]));
        assert_eq!(rotation_key("d/trace.pcap12.gz"), ("d/trace.pcap".into(), vec![12]));
        assert_eq!(
            rotation_key("x-20240101-120000.pcap"),
            ("x-#-#.pcap".into(), vec![20240101, 120000])
        );
        assert_ne!(rotation_key("d/client.pcap.gz").0, rotation_key("d/server.pcap.gz").0);
        assert_ne!(rotation_key("a/trace.pcap1").0, rotation_key("b/trace.pcap1").0);
    }
}

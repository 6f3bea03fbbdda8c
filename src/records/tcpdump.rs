//! Compiling a capture filter with libpcap, through tcpdump: `tcpdump -r - -ddd EXPR`
//! with a 24-byte pcap file header on its standard input gives the classic BPF program
//! libpcap would run on a file of that link type (`tcpdump -r FILE EXPR` compiles the
//! same way: the link type through libpcap's LINKTYPE -> DLT mapping, no device, netmask
//! 0). The program is then run by the library ([`bdpscope::bpf`]).
//!
//! Why tcpdump and not libpcap itself: linking libpcap needs unsafe FFI and a system
//! library for every build, while the filter is needed only when one is given; tcpdump
//! is where users' filters already work, and this keeps its exact grammar, link-layer
//! rules and optimiser. The snapshot length changes only the value the program returns
//! for a match (checked over link types and expressions in tests/filter_tcpdump.rs), so
//! the header gives 0 and libpcap takes its maximum.

use bdpscope::bpf::Program;
use bdpscope::capture::LinkType;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The Debian package that provides tcpdump (and with it libpcap's compiler).
const PACKAGE: &str = "tcpdump";

/// Where tcpdump is: `$BDPSCOPE_TCPDUMP`, else the first `tcpdump` on PATH, else
/// /usr/sbin/tcpdump (not on a normal user's PATH on some systems).
fn locate() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BDPSCOPE_TCPDUMP") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|d| d.join("tcpdump"))
        .find(|p| p.is_file())
}

/// A pcap file header (little-endian, microseconds, version 2.4) with no records.
fn pcap_header(link: LinkType) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone, sigfigs and snaplen 0 (libpcap then uses its maximum for the link type).
    h[20..24].copy_from_slice(&link.0.to_le_bytes());
    h
}

/// Compiles one expression for the link types it is asked about, once per link type.
pub struct Compiler {
    tcpdump: PathBuf,
    expression: String,
    programs: Mutex<HashMap<LinkType, Result<Program, String>>>,
}

impl Compiler {
    /// Finds tcpdump; the error says what to install.
    pub fn new(expression: &str) -> Result<Compiler, String> {
        let tcpdump = locate().ok_or_else(|| {
            format!(
                "a capture filter is compiled by libpcap through tcpdump, which is not installed \
                 (Debian/Ubuntu: apt-get install {PACKAGE}); without a filter nothing needs it"
            )
        })?;
        Ok(Compiler {
            tcpdump,
            expression: expression.to_string(),
            programs: Mutex::new(HashMap::new()),
        })
    }

    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The program for a link type, or libpcap's message (compiled once, then cached).
    pub fn compile(&self, link: LinkType) -> Result<Program, String> {
        let mut cache = self.programs.lock().unwrap_or_else(|e| e.into_inner());
        cache.entry(link).or_insert_with(|| self.run_tcpdump(link)).clone()
    }

    fn run_tcpdump(&self, link: LinkType) -> Result<Program, String> {
        let mut child = Command::new(&self.tcpdump)
            .args(["-r", "-", "-ddd", "--"])
            .arg(&self.expression)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.tcpdump.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            // tcpdump may exit before reading (a bad expression): a broken pipe is fine.
            let _ = stdin.write_all(&pcap_header(link));
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("cannot run {}: {e}", self.tcpdump.display()))?;
        if !out.status.success() {
            return Err(libpcap_message(&String::from_utf8_lossy(&out.stderr)));
        }
        Program::parse_ddd(&String::from_utf8_lossy(&out.stdout))
            .map_err(|e| format!("tcpdump gave a program bdpscope refuses: {e}"))
    }
}

/// libpcap's message from tcpdump's standard error: its last `tcpdump: ` line, without
/// the prefix ("can't parse filter expression: syntax error", "no VLAN support for Raw
/// IP", ...).
fn libpcap_message(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("tcpdump: "))
        .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("tcpdump failed without a message")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_libpcaps() {
        let e = "reading from file -, link-type RAW (Raw IP), snapshot length 262144\n\
                 tcpdump: no VLAN support for Raw IP\n";
        assert_eq!(libpcap_message(e), "no VLAN support for Raw IP");
        assert_eq!(libpcap_message(""), "tcpdump failed without a message");
    }

    #[test]
    fn the_header_names_the_link_type() {
        let h = pcap_header(LinkType::LINUX_SLL2);
        assert_eq!(&h[0..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
        assert_eq!(u32::from_le_bytes(h[20..24].try_into().unwrap()), 276);
    }
}

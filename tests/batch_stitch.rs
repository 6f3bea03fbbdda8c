//! `bdpscope batch --stitch`: a connection spread over rotated files (tcpdump -C naming:
//! trace.pcap, trace.pcap1, trace.pcap2) is analysed as one flow, the same as the
//! unsplit capture; a file that does not continue in time starts a new chain.

mod batch_util;
mod needs;

use batch_util::*;

const T0: i64 = 1_700_000_000_000_000_000;
const HOUR: i64 = 3_600_000_000_000;

#[test]
fn batch_stitch_carries_connections_over_rotated_files() {
    let dir = scratch("stitch");
    let recs = bulk("10.0.0.1:40000", "10.0.0.2:5001", T0, 60, 10);
    write(&dir.join("whole/trace.pcap"), &pcap(&recs));
    let third = recs.len() / 3;
    let rot = dir.join("rot");
    write(&rot.join("trace.pcap"), &pcap(&recs[..third]));
    write(&rot.join("trace.pcap1"), &gzip(&pcap(&recs[third..2 * third])));
    write(&rot.join("trace.pcap2"), &pcap(&recs[2 * third..]));
    // An hour later: not a continuation.
    write(
        &rot.join("trace.pcap3"),
        &pcap(&bulk("10.0.0.1:40001", "10.0.0.2:5001", T0 + HOUR, 10, 4)),
    );
    write(&rot.join("trace.pcap4"), b"not a capture\n");

    let out = dir.join("stitched");
    let o = batch(&[&rot], &out, &["--stitch"]);
    // trace.pcap4 is a capture by its name (a rotated file) that holds text: it fails,
    // and the chain goes on without it.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (header, rows) = csv_rows(&out.join("flows.csv"));
    assert_eq!(rows.len(), 2, "{rows:#?}");
    let chain = format!("{}..trace.pcap2", rot.join("trace.pcap").display());
    let stitched = rows
        .iter()
        .map(|r| fields(r))
        .find(|f| f[0] == chain)
        .expect("the chained flow");
    assert_eq!(stitched[1], "0");

    // The same flow as in the unsplit capture, apart from the capture's name.
    let whole = dir.join("whole/trace.pcap");
    let a = run(&["analyze", whole.to_str().unwrap(), "--format", "csv"]);
    let text = String::from_utf8(a.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), header);
    let expected = fields(lines.next().unwrap());
    assert_eq!(stitched[1..], expected[1..]);

    let later = rows
        .iter()
        .map(|r| fields(r))
        .find(|f| f[0].ends_with("trace.pcap3"))
        .expect("the later flow");
    assert_eq!(later[1], "0");

    let caps = captures(&out);
    assert_eq!(caps.len(), 5);
    for r in &caps[..3] {
        assert_eq!(r["chain"], chain);
        assert_eq!(r["tcp_segments"], "", "per-file TCP counts are not known in a chain");
    }
    let packets: usize = caps[..3].iter().map(|r| r["packets"].parse::<usize>().unwrap()).sum();
    assert_eq!(packets, recs.len());
    assert_eq!(caps[3]["chain"], caps[3]["path"]);
    assert_eq!(caps[3]["flows"], "1");
    assert_eq!(caps[4]["status"], "failed");

    // Without --stitch every file is on its own: the connection falls into pieces.
    let plain = dir.join("plain");
    batch(&[&rot], &plain, &[]);
    let (_, pieces) = csv_rows(&plain.join("flows.csv"));
    assert_eq!(pieces.len(), 4);

    // Shards keep a rotation group together.
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    batch(&[&rot], &s1, &["--stitch", "--shard", "1/2"]);
    batch(&[&rot], &s2, &["--stitch", "--shard", "2/2"]);
    let mut union: Vec<String> = csv_rows(&s1.join("flows.csv"))
        .1
        .into_iter()
        .chain(csv_rows(&s2.join("flows.csv")).1)
        .collect();
    union.sort();
    assert_eq!(union, rows);

    // Switching --stitch off on the same folder replaces the chain's rows.
    batch(&[&rot], &out, &[]);
    assert_eq!(csv_rows(&out.join("flows.csv")).1, pieces);
    assert_eq!(captures(&out).len(), 5);
}

//! A flow's id is the same in every command, whatever else is on the command line: with
//! or without a host/port selection, alone or after another capture (ids are per
//! capture), in `analyze` (JSON, CSV, text), `packets`, `plot`, `report` and batch's
//! tables.

mod batch_util;
mod needs;

use batch_util::*;
use std::collections::BTreeMap;
use std::path::Path;

const T0: i64 = 1_700_000_000_000_000_000;
const SEC: i64 = 1_000_000_000;

/// Three downloads from different servers and ports, one after another (their ids 0, 1,
/// 2), and a fourth overlapping the third.
fn three_servers() -> Vec<Rec> {
    let mut recs = bulk("10.9.0.1:40000", "10.9.0.2:80", T0, 40, 8);
    recs.extend(bulk("10.9.0.1:40001", "10.9.0.3:443", T0 + 5 * SEC, 40, 8));
    recs.extend(bulk("10.9.0.1:40002", "10.9.0.2:8080", T0 + 10 * SEC, 40, 8));
    recs.extend(bulk("10.9.0.1:40003", "10.9.0.4:443", T0 + 10 * SEC + SEC / 10, 40, 8));
    recs.sort_by_key(|r| r.0);
    recs
}

/// Another capture with two connections of its own, given first.
fn other() -> Vec<Rec> {
    let mut recs = bulk("10.8.0.1:50000", "10.8.0.2:443", T0, 30, 8);
    recs.extend(bulk("10.8.0.1:50001", "10.8.0.2:443", T0 + 3 * SEC, 30, 8));
    recs.sort_by_key(|r| r.0);
    recs
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// (capture, id) -> client of every flow `analyze --format json` lists.
fn json_ids(args: &[&str]) -> BTreeMap<(String, u64), String> {
    let mut all = vec!["analyze", "--format", "json"];
    all.extend(args);
    let o = run(&all);
    assert!(o.status.success(), "{all:?}: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                (f["capture"].as_str().unwrap().to_string(), f["id"].as_u64().unwrap()),
                f["client"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_flow_keeps_its_id_with_a_selection_and_after_another_file() {
    let dir = scratch("flow-ids");
    let (x, y) = (dir.join("x.pcap"), dir.join("y.pcap"));
    write(&x, &pcap(&three_servers()));
    write(&y, &pcap(&other()));
    let all = json_ids(&[s(&x)]);
    let ids: Vec<(u64, &str)> = all.iter().map(|((_, id), c)| (*id, c.as_str())).collect();
    assert_eq!(
        ids,
        [
            (0, "10.9.0.1:40000"),
            (1, "10.9.0.1:40001"),
            (2, "10.9.0.1:40002"),
            (3, "10.9.0.1:40003")
        ]
    );
    let of_x = |m: BTreeMap<(String, u64), String>| -> Vec<(u64, String)> {
        m.into_iter()
            .filter(|((c, _), _)| c == s(&x))
            .map(|((_, id), c)| (id, c))
            .collect()
    };
    let want = |keep: &[u64]| -> Vec<(u64, String)> {
        all.iter()
            .filter(|((_, id), _)| keep.contains(id))
            .map(|((_, id), c)| (*id, c.clone()))
            .collect()
    };
    for (sel, keep) in [
        (vec!["--port", "443"], vec![1, 3]),
        (vec!["--host", "10.9.0.2"], vec![0, 2]),
        (vec!["--host", "10.9.0.2", "--port", "8080"], vec![2]),
        (vec!["--port", "40003"], vec![3]),
    ] {
        for files in [vec![s(&x)], vec![s(&y), s(&x)]] {
            let mut args = sel.clone();
            args.extend(&files);
            assert_eq!(of_x(json_ids(&args)), want(&keep), "analyze {args:?}");
            // Several analysis threads: the same.
            let mut j = vec!["-j", "3"];
            j.extend(&args);
            assert_eq!(of_x(json_ids(&j)), want(&keep), "analyze {j:?}");
        }
    }
    // `--flow` with a selection: the id as without it.
    assert_eq!(of_x(json_ids(&["--port", "443", "--flow", "3", s(&x)])), want(&[3]));
    assert!(!run(&["analyze", "--port", "443", "--flow", "2", s(&x)])
        .status
        .success());

    // `--flow 1` is flow 1 of every capture; `--flow x.pcap#1` (or the path as the
    // output names it) of x.pcap only.
    let both = json_ids(&["--flow", "1", s(&y), s(&x)]);
    assert_eq!(both.keys().map(|(_, id)| *id).collect::<Vec<_>>(), [1, 1], "{both:?}");
    for r in ["x.pcap#1".to_string(), format!("{}#1", s(&x))] {
        let one = json_ids(&["--flow", &r, s(&y), s(&x)]);
        assert_eq!(of_x(one.clone()), want(&[1]), "--flow {r}");
        assert_eq!(one.len(), 1, "--flow {r}: {one:?}");
    }
    let o = run(&["analyze", "--flow", "y.pcap#3", s(&y), s(&x)]);
    assert_eq!(o.status.code(), Some(1), "y.pcap has no flow 3");
    assert!(stderr(&o).contains("no flow matches --flow y.pcap#3"), "{}", stderr(&o));
    let o = run(&["packets", "--flow", "y.pcap#0", s(&x)]);
    assert_eq!(o.status.code(), Some(1), "a flow of another capture");
    let o = std::process::Command::new(BIN)
        .args(["analyze", "--flow", "x#y", s(&x)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "not a flow reference");

    // CSV and text: the same ids.
    let o = run(&["analyze", "--format", "csv", "--port", "443", s(&y), s(&x)]);
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (ci, ii) = (
        header.iter().position(|h| *h == "capture").unwrap(),
        header.iter().position(|h| *h == "id").unwrap(),
    );
    let csv: Vec<(String, String)> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|c| (c[ci].to_string(), c[ii].to_string()))
        .collect();
    let sx = s(&x).to_string();
    assert!(
        csv.contains(&(sx.clone(), "1".into())) && csv.contains(&(sx.clone(), "3".into())),
        "{csv:?}"
    );
    assert!(
        !csv.iter().any(|(c, id)| c == &sx && (id == "0" || id == "2")),
        "{csv:?}"
    );
    let o = run(&["analyze", "--all", "--port", "8080", s(&y), s(&x)]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("flow 2  10.9.0.1:40002 <- 10.9.0.2:8080"), "{text}");
    // Each capture's header: the whole capture's flows, and how many the selection kept.
    assert!(text.contains(", 4 flows, 1 selected by --port 8080\n"), "{text}");
    assert!(text.contains(", 2 flows, 0 selected by --port 8080\n"), "{text}");

    // packets: the rows of the selected connection carry its id.
    let o = run(&["packets", "--port", "8080", s(&x)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let flows: std::collections::BTreeSet<&str> = text.lines().skip(1).map(|l| l.split(',').nth(2).unwrap()).collect();
    assert_eq!(flows.into_iter().collect::<Vec<_>>(), ["2"]);

    // plot: the file is named by the id.
    let plots = dir.join("plots");
    let o = run(&["plot", "--port", "8080", s(&x), "--out", s(&plots)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.is_empty() && names.iter().all(|n| n.starts_with("flow-2-")),
        "{names:?}"
    );

    // report: the flow's row names its id, after another file and with a selection.
    let rep = dir.join("report");
    let o = run(&["report", "--port", "8080", s(&y), s(&x), "--out", s(&rep)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(html.contains("10.9.0.1:40002"), "the selected flow is in the report");
    assert!(!html.contains("10.9.0.1:40000"), "the others are not");
    assert_eq!(report_id(&html, "10.9.0.1:40002"), Some(2), "its id in the report");

    // batch: the flows table numbers each capture's flows as analyze does, selection or not.
    for sel in [vec![], vec!["--port", "443"]] {
        let out = dir.join(format!("batch{}", sel.len()));
        let o = batch(&[&y, &x], &out, &sel);
        assert!(o.status.success(), "{}", stderr(&o));
        let (header, rows) = csv_rows(&out.join("flows.csv"));
        let h: Vec<&str> = header.split(',').collect();
        let col = |name: &str| h.iter().position(|c| *c == name).unwrap();
        let (ci, ii, ca, cp) = (col("capture"), col("id"), col("client_addr"), col("client_port"));
        let mut got: Vec<(u64, String)> = rows
            .iter()
            .map(|r| r.split(',').collect::<Vec<_>>())
            .filter(|c| c[ci].ends_with("x.pcap"))
            .map(|c| (c[ii].parse().unwrap(), format!("{}:{}", c[ca], c[cp])))
            .collect();
        got.sort();
        let keep: Vec<u64> = if sel.is_empty() { vec![0, 1, 2, 3] } else { vec![1, 3] };
        assert_eq!(got, want(&keep), "batch {sel:?}");
    }
}

/// The id in the heading of the report's section of the flow whose client is `client`
/// ("<h2>flow N <span class="ends">CLIENT ...").
fn report_id(html: &str, client: &str) -> Option<u64> {
    let at = html.find(&format!("<span class=\"ends\">{client}"))?;
    let before = &html[..at];
    let k = before.rfind("<h2>flow ")?;
    before[k + 9..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

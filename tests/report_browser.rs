//! The HTML report in a real browser: for every scenario of ../shared/captures (both
//! vantage points in one report) and for the project's own fixture (or a synthetic
//! capture when fixtures/ has none), `bdpscope report` writes a page that
//! - needs nothing from the network (no external scripts, styles, images or fonts),
//! - runs its script in headless Chromium without errors (the page marks itself ready;
//!   Chromium logs no console message), sorts and filters from its query string,
//! - and is really drawn: a screenshot has plenty of non-background pixels, many
//!   colours, and the plot colours (band and line colours).
//!
//! Needs /usr/bin/chromium (Debian's `chromium` package); skipped, with a message, when
//! it is not installed, and failed under CI (see tests/needs).

mod needs;
mod plot_support;

use plot_support::*;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";

fn chromium_available() -> bool {
    needs::program(CHROMIUM, "apt-get install chromium")
}

/// Runs headless Chromium on a page with `extra` arguments; returns (stdout, stderr).
fn chromium(profile: &Path, url: &str, extra: &[String]) -> (String, String) {
    let mut cmd = Command::new(CHROMIUM);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(url)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start chromium");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (o.join().unwrap(), e.join().unwrap())
}

/// Console messages and script errors in Chromium's log (lines about D-Bus and other
/// parts of the browser that do not concern the page are ignored).
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught") || l.contains("Refused to"))
        .collect()
}

struct Shot {
    width: u32,
    height: u32,
    colours: usize,
    ink: f64,
    rgb: Vec<u8>,
}

fn decode(p: &Path) -> Shot {
    let decoder = png::Decoder::new(std::fs::File::open(p).expect("screenshot written"));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let px = info.color_type.samples();
    let n = (info.width * info.height) as usize;
    let mut rgb = Vec::with_capacity(n * 3);
    let mut colours = std::collections::HashSet::new();
    let mut ink = 0;
    for i in 0..n {
        let p = &buf[i * px..i * px + 3];
        rgb.extend_from_slice(p);
        if p != [255, 255, 255] {
            ink += 1;
        }
        colours.insert((p[0] >> 2, p[1] >> 2, p[2] >> 2));
    }
    Shot {
        width: info.width,
        height: info.height,
        colours: colours.len(),
        ink: ink as f64 / n as f64,
        rgb,
    }
}

impl Shot {
    /// Pixels within a small distance of a colour.
    fn count_near(&self, (r, g, b): (u8, u8, u8)) -> usize {
        self.rgb
            .chunks_exact(3)
            .filter(|p| {
                (p[0] as i32 - r as i32).abs() <= 6
                    && (p[1] as i32 - g as i32).abs() <= 6
                    && (p[2] as i32 - b as i32).abs() <= 6
            })
            .count()
    }
}

/// Writes the report of these captures and checks it in the browser.
fn check_report(name: &str, captures: &[PathBuf], expect_plots: bool) {
    let dir = temp_dir(&format!("report-{name}"));
    let out_dir = dir.join("report");
    let mut args: Vec<&OsStr> = vec![OsStr::new("report")];
    args.extend(captures.iter().map(|p| p.as_os_str()));
    args.extend([OsStr::new("--out"), out_dir.as_os_str()]);
    let out = bdpscope(&args);
    assert!(
        out.status.success(),
        "{name}: report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = out_dir.join("index.html");
    let html = std::fs::read_to_string(&index).expect("index.html written");

    // Self-contained: nothing to fetch.
    for bad in [
        "<script src",
        "<link",
        "src=\"http",
        "href=\"http",
        "url(http",
        "@import",
        "<iframe",
    ] {
        assert!(
            !html.contains(bad),
            "{name}: the page refers to something outside itself: {bad}"
        );
    }
    assert!(html.contains("<svg"), "{name}: plots are inline SVG");
    assert!(html.contains("id=\"flow-table\""));

    let url = format!("file://{}", index.display());
    let profile = dir.join("profile");

    // The script runs without errors, and sorts and filters from the query string.
    let (dom, log) = chromium(&profile, &format!("{url}?sort=id&dir=desc"), &["--dump-dom".into()]);
    // The script marks the root element: data-ready when done, data-js-error on an error.
    let html_tag = between(&dom, "<html", ">");
    assert!(
        html_tag.contains("data-ready=\"1\""),
        "{name}: the page's script did not finish: <html{html_tag}>\n{}",
        tail(&log)
    );
    assert!(
        !html_tag.contains("data-js-error"),
        "{name}: script error: {}",
        between(html_tag, "data-js-error=\"", "\"")
    );
    assert!(
        console_errors(&log).is_empty(),
        "{name}: console messages: {:?}",
        console_errors(&log)
    );
    assert!(
        dom.contains("aria-sort=\"descending\""),
        "{name}: sorted by the query string"
    );
    let ids: Vec<u64> = row_ids(&dom);
    let mut sorted = ids.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted, "{name}: rows sorted by id, descending");

    // Drawn for real: a screenshot of the top of the page.
    let shot_path = dir.join("shot.png");
    let (_, log) = chromium(
        &profile,
        &url,
        &[
            format!("--screenshot={}", shot_path.display()),
            "--window-size=1280,4000".into(),
        ],
    );
    assert!(
        console_errors(&log).is_empty(),
        "{name}: console messages: {:?}",
        console_errors(&log)
    );
    let shot = decode(&shot_path);
    assert_eq!((shot.width, shot.height), (1280, 4000));
    assert!(
        shot.ink > 0.08,
        "{name}: page nearly blank ({:.1}% drawn)",
        shot.ink * 100.0
    );
    assert!(shot.colours > 40, "{name}: only {} colours", shot.colours);
    if !html.contains("<figure class=\"plot\">") {
        assert!(!expect_plots, "{name}: no plots in the report");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // The plots' own colours: the flight line's blue and at least one limitation band.
    let blue = shot.count_near((31, 94, 168));
    assert!(
        blue > 300,
        "{name}: the plot lines are not drawn ({blue} px of line blue)"
    );
    let bands = [(253, 208, 162), (190, 215, 238), (245, 180, 180), (199, 233, 192)]
        .iter()
        .map(|&c| shot.count_near(c))
        .sum::<usize>();
    assert!(
        bands > 2000,
        "{name}: no limitation bands or verdict chips visible ({bands} px)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn tail(s: &str) -> String {
    s.lines()
        .rev()
        .take(20)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n")
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> &'a str {
    s.split_once(a)
        .and_then(|(_, r)| r.split_once(b))
        .map_or("", |(x, _)| x)
}

/// Flow ids in table order (the first cell's data-v of each body row).
fn row_ids(dom: &str) -> Vec<u64> {
    let body = between(dom, "<tbody>", "</tbody>");
    let body = if body.is_empty() {
        dom.split("id=\"flow-table\"").nth(1).unwrap_or("")
    } else {
        body
    };
    body.split("<tr data-verdict=")
        .skip(1)
        .filter_map(|row| between(row, "data-v=\"", "\"").parse().ok())
        .collect()
}

#[test]
fn the_report_of_every_shared_scenario_renders_in_chromium() {
    if !chromium_available() {
        return;
    }
    let Some(shared) = needs::shared() else { return };
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(shared.join("captures"))
        .expect("captures")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    scenarios.sort();
    assert!(!scenarios.is_empty());
    // Two at a time (report + Chromium are mostly single-threaded each).
    let queue = std::sync::Mutex::new(scenarios);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some(s) = queue.lock().unwrap().pop() else { break };
                let caps: Vec<PathBuf> = ["client.pcap.gz", "server.pcap.gz"]
                    .iter()
                    .map(|f| s.join(f))
                    .filter(|p| p.is_file())
                    .collect();
                if !caps.is_empty() {
                    check_report(&s.file_name().unwrap().to_string_lossy(), &caps, true);
                }
            });
        }
    });
}

/// Capture files under `dir`, one level of sub-folders deep (fixtures/<scenario>/*.pcap*).
fn captures_under(dir: &Path) -> Vec<PathBuf> {
    let is_capture = |p: &Path| {
        let n = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
        [".pcap", ".pcapng", ".pcap.gz", ".pcapng.gz", ".pcap.zst", ".pcapng.zst"]
            .iter()
            .any(|x| n.ends_with(x))
    };
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Ok(sub) = std::fs::read_dir(&p) {
                out.extend(sub.flatten().map(|e| e.path()).filter(|p| p.is_file() && is_capture(p)));
            }
        } else if is_capture(&p) {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn the_report_of_the_fixtures_renders_in_chromium() {
    if !chromium_available() {
        return;
    }
    // All of the project's own fixtures in one report (as reports/example is made), or a
    // synthetic download while fixtures/ has none.
    let mut caps = captures_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"));
    let dir = temp_dir("report-fixture-input");
    if caps.is_empty() {
        caps.push(synthetic_capture(&dir, Flow::default()));
    }
    check_report("fixtures", &caps, true);
    let _ = std::fs::remove_dir_all(&dir);
}

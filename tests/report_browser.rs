//! The HTML report in a real browser: for every scenario of ../shared/captures (both
//! vantage points in one report) and for the project's own fixture (or a synthetic
//! capture when fixtures/ has none), `bdpscope report` writes a page that
//! - needs nothing from the network (no external scripts, styles, images or fonts),
//! - runs its script in headless Chromium without errors (the page marks itself ready;
//!   Chromium logs no console message), sorts and filters from its query string,
//! - and is really drawn: a screenshot has plenty of non-background pixels, many
//!   colours, and the plot colours (band and line colours),
//! - and its graphs zoom: driven over the DevTools protocol with real mouse input, a drag
//!   zooms the four graphs of a flow together, the picture changes, the tooltip shows
//!   values, a double-click zooms out; no console message, no network request.
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

/// Headless, and none of the browser's own network traffic (this machine's network is
/// closed; see the machine notes).
const FLAGS: [&str; 11] = [
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
];

fn chromium_available() -> bool {
    needs::program(CHROMIUM, "apt-get install chromium")
}

/// Runs headless Chromium on a page with `extra` arguments; returns (stdout, stderr).
fn chromium(profile: &Path, url: &str, extra: &[String]) -> (String, String) {
    let mut cmd = Command::new(CHROMIUM);
    cmd.args(FLAGS)
        .args(["--enable-logging=stderr", "--v=0"])
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
    if !html.contains("<figure class=\"chart\"") {
        assert!(!expect_plots, "{name}: no graphs in the report");
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

/// A Chrome DevTools Protocol session over one WebSocket: commands with ids, events kept
/// for reading later (console messages, exceptions, network requests).
struct Cdp {
    child: std::process::Child,
    ws: tungstenite::WebSocket<std::net::TcpStream>,
    session: String,
    next: u64,
    events: Vec<serde_json::Value>,
}

impl Cdp {
    /// Starts headless Chromium with a DevTools port and opens one page in it.
    fn start(profile: &Path, width: u32, height: u32) -> Cdp {
        use std::io::BufRead;
        let mut child = Command::new(CHROMIUM)
            .args(FLAGS)
            .args(["--remote-debugging-port=0", "--remote-allow-origins=*"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start chromium");
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID" on stderr.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("chromium printed its DevTools address");
        let addr = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .expect("host:port")
            .to_string();
        let stream = std::net::TcpStream::connect(&addr).expect("connect to DevTools");
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let (ws, _) = tungstenite::client(url.as_str(), stream).expect("DevTools WebSocket handshake");
        let mut cdp = Cdp {
            child,
            ws,
            session: String::new(),
            next: 0,
            events: Vec::new(),
        };
        let target = cdp.browser("Target.createTarget", serde_json::json!({"url": "about:blank"}));
        let id = target["targetId"].as_str().unwrap().to_string();
        let attached = cdp.browser(
            "Target.attachToTarget",
            serde_json::json!({"targetId": id, "flatten": true}),
        );
        cdp.session = attached["sessionId"].as_str().unwrap().to_string();
        for m in ["Runtime.enable", "Log.enable", "Page.enable", "Network.enable"] {
            cdp.call(m, serde_json::json!({}));
        }
        cdp.call(
            "Emulation.setDeviceMetricsOverride",
            serde_json::json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        cdp
    }

    fn send(&mut self, method: &str, params: serde_json::Value, session: bool) -> serde_json::Value {
        self.next += 1;
        let id = self.next;
        let mut msg = serde_json::json!({"id": id, "method": method, "params": params});
        if session {
            msg["sessionId"] = serde_json::Value::String(self.session.clone());
        }
        self.ws
            .send(tungstenite::Message::Text(msg.to_string().into()))
            .expect("send to DevTools");
        loop {
            let m = self.ws.read().expect("read from DevTools");
            let tungstenite::Message::Text(t) = m else { continue };
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            if v["id"].as_u64() == Some(id) {
                assert!(v.get("error").is_none(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn browser(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.send(method, params, false)
    }

    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.send(method, params, true)
    }

    /// Evaluates an expression in the page; its value (JSON-able).
    fn eval(&mut self, expr: &str) -> serde_json::Value {
        let r = self.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {}", r["exceptionDetails"]);
        r["result"]["value"].clone()
    }

    fn mouse(&mut self, kind: &str, x: f64, y: f64, buttons: u32, clicks: u32) {
        self.call(
            "Input.dispatchMouseEvent",
            serde_json::json!({"type": kind, "x": x, "y": y, "button": if kind == "mouseMoved" && buttons == 0 { "none" } else { "left" },
                "buttons": buttons, "clickCount": clicks}),
        );
    }

    /// A PNG of a part of the page, in CSS pixels of the viewport.
    fn screenshot(&mut self, x: f64, y: f64, w: f64, h: f64) -> Vec<u8> {
        use base64::Engine;
        let r = self.call(
            "Page.captureScreenshot",
            serde_json::json!({"format": "png", "clip": {"x": x, "y": y, "width": w, "height": h, "scale": 1}}),
        );
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }

    /// Console messages, uncaught exceptions and log errors seen so far.
    fn problems(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e["method"].as_str()? {
                "Runtime.exceptionThrown" => Some(format!("exception: {}", e["params"]["exceptionDetails"])),
                "Runtime.consoleAPICalled" => Some(format!("console.{}: {}", e["params"]["type"], e["params"]["args"])),
                "Log.entryAdded" if e["params"]["entry"]["level"] == "error" => {
                    Some(format!("log: {}", e["params"]["entry"]["text"]))
                }
                _ => None,
            })
            .collect()
    }

    /// URLs the page asked the network for (anything but the file itself and data: URLs).
    fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_string))
            .filter(|u| !u.starts_with("file://") && !u.starts_with("data:") && u != "about:blank")
            .collect()
    }
}

impl Drop for Cdp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Pixels that differ between two PNGs of the same size.
fn differing_pixels(a: &[u8], b: &[u8]) -> usize {
    let rgb = |png_bytes: &[u8]| {
        let mut r = png::Decoder::new(std::io::Cursor::new(png_bytes)).read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size()];
        let info = r.next_frame(&mut buf).unwrap();
        (info.width, info.height, info.color_type.samples(), buf)
    };
    let (wa, ha, pa, ba) = rgb(a);
    let (wb, hb, pb, bb) = rgb(b);
    assert_eq!((wa, ha), (wb, hb), "screenshots of the same size");
    (0..(wa * ha) as usize)
        .filter(|&i| ba[i * pa..i * pa + 3] != bb[i * pb..i * pb + 3])
        .count()
}

/// The flow's four graphs' visible time ranges [min, max] (from the page's figures).
fn ranges(cdp: &mut Cdp, flow: &str) -> Vec<(f64, f64)> {
    let v = cdp.eval(&format!(
        "Array.from(document.querySelectorAll('#{flow} figure.chart')).map(f => [+f.dataset.xmin, +f.dataset.xmax])"
    ));
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
        .collect()
}

/// The zoom, in a real browser with real mouse input: a drag across one graph zooms the
/// time axis of all four graphs of the flow (and only theirs), the picture changes, the
/// tooltip shows the values at the cursor, a double-click zooms back out; no console
/// message, no network request. Also: the script writes quantities as bdpscope::units.
#[test]
fn the_graphs_zoom_together_in_chromium() {
    if !chromium_available() {
        return;
    }
    let dir = temp_dir("report-zoom");
    let out_dir = dir.join("report");
    let mut args: Vec<std::ffi::OsString> = vec!["report".into()];
    for c in captures_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")) {
        args.push(c.into_os_string());
    }
    args.extend(["--out".into(), out_dir.clone().into_os_string()]);
    let refs: Vec<&OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let o = bdpscope(&refs);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let index = out_dir.join("index.html");
    let size = std::fs::metadata(&index).unwrap().len();
    let html = std::fs::read_to_string(&index).unwrap();
    let flows = html.matches("class=\"flow-data\"").count();
    eprintln!(
        "report of {} fixture captures: {size} bytes, {flows} flows with graphs, {} bytes per flow",
        args.len() - 3,
        size / flows.max(1) as u64
    );
    assert!(flows >= 10, "{flows} flows with graphs");

    let mut cdp = Cdp::start(&dir.join("profile"), 1280, 1000);
    cdp.call(
        "Page.navigate",
        serde_json::json!({"url": format!("file://{}", index.display())}),
    );
    let start = Instant::now();
    while cdp.eval("document.readyState === 'complete' && document.documentElement.getAttribute('data-ready')") != "1" {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the page's script did not finish"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        cdp.eval("document.documentElement.getAttribute('data-js-error')"),
        serde_json::Value::Null
    );
    assert_eq!(
        cdp.eval("document.querySelectorAll('figure.chart canvas').length")
            .as_u64(),
        Some(4 * flows as u64),
        "every graph is drawn on a canvas"
    );

    // The time-sequence graph of the first flow, in the middle of the viewport. Ids are
    // per capture: with several captures a section is flow-CAPTURE-ID (from 1).
    let flow = "flow-1-0";
    let rect = cdp.eval(&format!(
        "(() => {{ const o = document.querySelector('#{flow} figure.chart[data-kind=timeseq] .u-over');
           o.scrollIntoView({{block: 'center'}}); const r = o.getBoundingClientRect();
           return [r.left, r.top, r.width, r.height]; }})()"
    ));
    let r: Vec<f64> = rect.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let (left, top, width, height) = (r[0], r[1], r[2], r[3]);
    assert!(width > 500.0 && height > 150.0, "plot area {width} x {height}");
    // In page coordinates: the screenshot's clip is measured from the document's origin.
    let fig = cdp.eval(&format!(
        "(() => {{ const r = document.querySelector('#{flow} figure.chart[data-kind=timeseq]').getBoundingClientRect();
           return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; }})()"
    ));
    let f: Vec<f64> = fig.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let before = ranges(&mut cdp, flow);
    let other_before = ranges(&mut cdp, "flow-2-0");
    assert_eq!(before.len(), 4);
    let full = before[0];
    assert!(
        before.iter().all(|r| *r == full) && full.0 == 0.0 && full.1 > 1.0,
        "{before:?}"
    );
    let shot_before = cdp.screenshot(f[0], f[1], f[2], f[3]);

    // Drag from 30% to 50% of the plot's width.
    let y = top + height / 2.0;
    let (x0, x1) = (left + 0.3 * width, left + 0.5 * width);
    cdp.mouse("mouseMoved", x0, y, 0, 0);
    cdp.mouse("mousePressed", x0, y, 1, 1);
    for k in 1..=10 {
        cdp.mouse("mouseMoved", x0 + (x1 - x0) * k as f64 / 10.0, y, 1, 0);
    }
    cdp.mouse("mouseReleased", x1, y, 0, 1);
    let after = ranges(&mut cdp, flow);
    let z = after[0];
    assert!(
        after.iter().all(|r| *r == z),
        "the four graphs zoom together: {after:?}"
    );
    let expect = (full.1 * 0.3, full.1 * 0.5);
    assert!(
        (z.0 - expect.0).abs() < 0.02 * full.1 && (z.1 - expect.1).abs() < 0.02 * full.1,
        "zoomed to {z:?}, the drag covered about {expect:?}"
    );
    assert_eq!(
        ranges(&mut cdp, "flow-2-0"),
        other_before,
        "other flows' graphs do not move"
    );
    let shot_after = cdp.screenshot(f[0], f[1], f[2], f[3]);
    // BDPSCOPE_KEEP_SHOTS=DIR keeps the two pictures (README's zoom picture comes from here).
    if let Some(keep) = std::env::var_os("BDPSCOPE_KEEP_SHOTS") {
        std::fs::write(Path::new(&keep).join("zoom-before.png"), &shot_before).unwrap();
        std::fs::write(Path::new(&keep).join("zoom-after.png"), &shot_after).unwrap();
    }
    let changed = differing_pixels(&shot_before, &shot_after);
    let total = (f[2] * f[3]) as usize;
    assert!(
        changed > total / 50,
        "the zoomed graph looks different ({changed} of {total} pixels)"
    );

    // The tooltip: the time and the values under the cursor.
    cdp.mouse("mouseMoved", left + 0.4 * width, y, 0, 0);
    let tip = cdp.eval(&format!(
        "(() => {{ const t = document.querySelector('#{flow} figure.chart[data-kind=timeseq] .tip');
           return [t.style.display, t.textContent]; }})()"
    ));
    assert_eq!(tip[0], "block", "tooltip shown");
    let text = tip[1].as_str().unwrap();
    assert!(text.contains(" s") && text.contains("cumulative ACK"), "{text}");
    let synced = cdp.eval(&format!(
        "document.querySelector('#{flow} figure.chart[data-kind=rtt] .tip').style.display"
    ));
    assert_eq!(synced, "block", "the cursor moves on the flow's other graphs too");

    // A double-click zooms back out, on every graph of the flow.
    let (cx, cy) = (left + 0.6 * width, y);
    cdp.mouse("mousePressed", cx, cy, 1, 1);
    cdp.mouse("mouseReleased", cx, cy, 0, 1);
    cdp.mouse("mousePressed", cx, cy, 1, 2);
    cdp.mouse("mouseReleased", cx, cy, 0, 2);
    assert_eq!(ranges(&mut cdp, flow), before, "double-click resets the zoom");

    // The script's quantities are bdpscope::units's.
    for v in [0.0, 1.0, 999.0, 1023.0, 1024.0, 18_841.0, 262_144.0, 1_250_000.0, 5.4e9] {
        let js = cdp.eval(&format!("window.bdpscopeUnits.bytes({v})"));
        assert_eq!(js.as_str().unwrap(), bdpscope::units::bytes(v), "bytes({v})");
    }
    for v in [0.0, 999.0, 1000.0, 6.23e6, 9.61e6, 5e7, 1e9, 2.5e10] {
        let js = cdp.eval(&format!("window.bdpscopeUnits.bits({v})"));
        assert_eq!(js.as_str().unwrap(), bdpscope::units::bits(v), "bits({v})");
    }
    for v in [0.0001, 0.0403, 0.0999, 0.1003, 2.5] {
        let js = cdp.eval(&format!("window.bdpscopeUnits.ms({v})"));
        assert_eq!(js.as_str().unwrap(), bdpscope::units::ms(v), "ms({v})");
    }

    assert!(cdp.problems().is_empty(), "console: {:?}", cdp.problems());
    assert!(cdp.requests().is_empty(), "network requests: {:?}", cdp.requests());
    drop(cdp);
    let _ = std::fs::remove_dir_all(&dir);
}

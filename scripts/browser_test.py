#!/usr/bin/env python3
"""Opens blescope's HTML report in Chromium (through chromium-driver and selenium) and checks it as a user would.

    scripts/browser_test.py --blescope .build/debug/blescope --capture FILE [--screenshots DIR]
    scripts/browser_test.py --blescope BIN --perf CAPTURE...     # page size, load and filter times

Checks (each failure printed as `FAIL: ...`, exit 1): one bar per connection of the JSON report, each ending on the JSON's
end frame, reason and who ended it; clicking the first error on the links chart shows its sequence chart and scrolls the
timeline to its frame; filtering by ATT handle and by text leaves the rows `blescope timeline --format jsonl` and tshark
count; `#frame=N` opens the timeline at N; no console error; no request leaves the page. Exit 3: selenium, Chromium or
its driver missing (the Swift test that runs this skips, or fails where BLESCOPE_REQUIRE_BROWSER=1).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    print("browser_test.py: selenium missing (pip install selenium)", file=sys.stderr)
    sys.exit(3)

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def browser():
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not binary or not driver:
        print("browser_test.py: chromium or chromedriver missing (apt-get install -y chromium chromium-driver)", file=sys.stderr)
        sys.exit(3)
    o = webdriver.ChromeOptions()
    o.binary_location = binary
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000",
              "--no-first-run", "--disable-extensions", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=o)


def run(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def report(blescope, capture, out):
    run([blescope, "report", "--quiet", capture, "-o", out])
    return out


def wait(d, script, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        v = d.execute_script(script)
        if v:
            return v
        time.sleep(0.05)
    return None


def open_page(d, url):
    d.get(url)
    return wait(d, "var t=document.querySelector('.tl');return !t||t.dataset.ready==='1';")


def set_filter(d, name, value):
    return d.execute_script(
        "document.querySelector('#tl1').scrollIntoView();var e=document.querySelector('#tl1 [data-f=\"'+arguments[0]+'\"]');var t=performance.now();e.value=arguments[1];"
        "e.dispatchEvent(new Event('input'));return [+document.querySelector('#tl1').dataset.rows,performance.now()-t];",
        name, value)


def check_lanes(d, doc):
    connections = doc["files"][0]["connections"]
    bars = d.find_elements(By.CSS_SELECTOR, "svg.links g.conn")
    check(len(bars) == len(connections), f"{len(bars)} bars on the links chart = {len(connections)} connections in the JSON report")
    by_number = {c["number"]: c for c in connections}
    wrong = []
    for b in bars:
        c = by_number.get(int(b.get_attribute("data-conn")))
        if c is None:
            wrong.append(b.get_attribute("data-conn"))
            continue
        end = b.get_attribute("data-end-frame")
        if (int(end) if end else None) != c["end_frame"] or b.get_attribute("data-ended-by") != (c["ended_by"] or "open"):
            wrong.append(c["number"])
        elif c["end_frame"] is not None and b.get_attribute("data-end-reason") != c["disconnect_reason"]:
            wrong.append(c["number"])
    check(not wrong, f"every bar ends on its connection's end frame, reason and ender (wrong: {wrong})")


def check_finding_click(d, shots):
    d.execute_script("document.querySelector('svg.links').scrollIntoView({block:'center'});")
    # The first error a click reaches (another marker at the same time may cover it).
    top = d.execute_script(
        "var ms=document.querySelectorAll('svg.links a.marker.sev-error');for(var i=0;i<ms.length;i++){"
        "var p=ms[i].querySelector('path'),r=p.getBoundingClientRect(),e=document.elementFromPoint(r.left+r.width/2,r.top+r.height*0.7);"
        "if(e===p)return i;}return -1;")
    markers = d.find_elements(By.CSS_SELECTOR, "svg.links a.marker.sev-error")
    if top < 0:
        print("note: no error on the links chart: the finding click is not checked")
        return
    frame = int(markers[top].get_attribute("data-frame"))
    markers[top].find_element(By.TAG_NAME, "path").click()
    wait(d, f"return document.querySelector('#tl1').dataset.frame==='{frame}';", 5)
    check(d.execute_script("return location.hash;") == f"#file1-d{frame}", f"clicking the error at frame {frame} opens its diagnosis")
    seq = d.execute_script(
        f"var s=document.querySelector('#file1-d{frame} svg.seq');if(!s)return null;var r=s.getBoundingClientRect();"
        "return [r.top,r.bottom,innerHeight,s.querySelectorAll('.msg').length,!!s.querySelector('.msg.decides')];")
    check(seq is not None and seq[3] > 0 and seq[4], f"the finding at frame {frame} has a sequence chart with arrows and its deciding frame ({seq})")
    check(seq is not None and seq[1] > 0 and seq[0] < seq[2], "the sequence chart is in view after the click")
    row = d.execute_script(
        "var v=document.querySelector('#tl1 .tl-view'),r=v.querySelector('.tl-r.hl');if(!r)return null;"
        "var a=r.getBoundingClientRect(),b=v.getBoundingClientRect();return [+r.dataset.frame,a.top>=b.top&&a.bottom<=b.bottom];")
    check(row is not None and row[0] == frame and row[1], f"the timeline is scrolled to frame {frame}, highlighted ({row})")
    d.save_screenshot(os.path.join(shots, "finding-clicked.png"))
    return frame


def jsonl_count(blescope, capture, keep):
    n = 0
    for line in run([blescope, "timeline", "--quiet", "--format", "jsonl", capture]).splitlines():
        e = json.loads(line)
        if e.get("layer") != "finding" and keep(e):
            n += 1
    return n


def tshark_count(capture, display_filter):
    if not shutil.which("tshark"):
        return None
    out = run(["tshark", "-r", capture, "-Y", display_filter, "-T", "fields", "-e", "frame.number"])
    return len(out.split())


def check_filters(d, blescope, capture, shots):
    total = int(d.execute_script("return +document.querySelector('#tl1').dataset.events;"))
    expected = jsonl_count(blescope, capture, lambda e: True)
    check(total == expected, f"the page's timeline holds every event: {total} = {expected} lines of timeline --format jsonl")
    handles = {}
    for line in run([blescope, "timeline", "--quiet", "--format", "jsonl", capture]).splitlines():
        e = json.loads(line)
        if e.get("layer") == "att" and e.get("handle"):
            handles[e["handle"]] = handles.get(e["handle"], 0) + 1
    if handles:
        h = max(handles, key=handles.get)
        rows, ms = set_filter(d, "handle", f"0x{h:04x}")
        check(rows == handles[h], f"ATT handle 0x{h:04x}: {rows} rows = {handles[h]} events in the jsonl ({ms:.1f} ms)")
        d.save_screenshot(os.path.join(shots, "filter-handle.png"))
        set_filter(d, "handle", "")
    rows, ms = set_filter(d, "text", "disconnection complete")
    expected = jsonl_count(blescope, capture, lambda e: "disconnection complete" in (e.get("opcode_name") or "").lower())
    theirs = tshark_count(capture, "bthci_evt.code == 0x05")
    check(rows == expected and (theirs is None or theirs == rows),
          f"text 'disconnection complete': {rows} rows = {expected} in the jsonl = {theirs} Disconnection Complete events in tshark ({ms:.1f} ms)")
    d.save_screenshot(os.path.join(shots, "filter-text.png"))
    rows, _ = set_filter(d, "text", "")
    check(rows == total, "clearing the text shows every event again")


def check_brush(d, page, blescope, capture, shots):
    """Dragging across the links chart sets the timeline's time range: its rows are the events in it."""
    from selenium.webdriver.common.action_chains import ActionChains
    svg = d.find_element(By.CSS_SELECTOR, "svg.links")
    d.execute_script("arguments[0].scrollIntoView({block:'center'});", svg)
    left, width = float(svg.get_attribute("data-plot-left")), float(svg.get_attribute("data-plot-width"))
    scale = svg.size["width"] / float(svg.get_attribute("width"))
    # From 20 % to 70 % of the axis, in the last lane's row (clear of the markers), offsets from the element's centre.
    x0 = (left + 0.2 * width) * scale - svg.size["width"] / 2
    x1 = (left + 0.7 * width) * scale - svg.size["width"] / 2
    y = svg.size["height"] / 2 - 40 * scale
    ActionChains(d).move_to_element_with_offset(svg, int(x0), int(y)).click_and_hold().move_by_offset(int(x1 - x0), 0).release().perform()
    wait(d, "return document.querySelector('#tl1 [data-f=from]').value!=='';", 5)
    lo, hi, rows = d.execute_script(
        "var r=document.querySelector('#tl1');return [+r.querySelector('[data-f=from]').value,+r.querySelector('[data-f=to]').value,+r.dataset.rows];")
    # The events of `timeline --format jsonl` in that range, from the page's origin (the capture's first record).
    _, data = timeline_data(page)
    t0 = data["t0"] / 1e6
    inside = jsonl_count(blescope, capture, lambda e: lo - 5e-7 <= round(e["time"] - t0, 6) <= hi + 5e-7)
    span = float(svg.get_attribute("data-span"))
    check(abs(lo - 0.2 * span) < 0.02 * span + 0.01 and abs(hi - 0.7 * span) < 0.02 * span + 0.01 and rows == inside,
          f"brushing 20–70 % of the links chart keeps {lo:.3f}–{hi:.3f} s of {span} s: {rows} rows = {inside} events of timeline --format jsonl in that range")
    d.save_screenshot(os.path.join(shots, "brush.png"))
    d.execute_script("var r=document.querySelector('#tl1');['from','to'].forEach(function(k){r.querySelector('[data-f='+k+']').value='';});"
                     "r.querySelector('[data-f=text]').dispatchEvent(new Event('input'));")


def check_frame_link(d, url, frame, shots):
    open_page(d, url + f"#frame={frame}")
    got = wait(d, f"return document.querySelector('#tl1').dataset.frame==='{frame}';", 5)
    row = d.execute_script("var r=document.querySelector('#tl1 .tl-r.hl');return r?+r.dataset.frame:null;")
    top = d.execute_script("return document.querySelector('#tl1').getBoundingClientRect().top;")
    check(bool(got) and row == frame and abs(top) < 200, f"#frame={frame} opens the timeline at frame {frame} (row {row}, top {top:.0f})")
    d.save_screenshot(os.path.join(shots, "frame-link.png"))


def check_capture_table(d, doc):
    """The capture table names its two kinds of findings apart: the decoder's and the diagnosis's (a bare "Findings:
    none" beside diagnosis warnings read as "nothing wrong")."""
    rows = {}
    for tr in d.find_elements(By.CSS_SELECTOR, "table.kv tr"):
        th, td = tr.find_elements(By.TAG_NAME, "th"), tr.find_elements(By.TAG_NAME, "td")
        if th and td and th[0].text not in rows:
            rows[th[0].text] = td[0].text
    f = doc["files"][0]
    decode = f["findings"]["count"]
    check("Findings" not in rows and rows.get("Decode findings") == ("none" if decode == 0 else f"{decode:,}"),
          f"the capture table's 'Decode findings' is {rows.get('Decode findings')!r} for {decode} decoder findings in the JSON report")
    summary, rules = f["diagnosis"]["summary"], f["diagnosis"]["rules"]
    parts = [f"{summary[s]} {s}" + ("" if s == "critical" or summary[s] == 1 else "s")
             for s in ("critical", "error", "warning") if summary.get(s)]
    expected = (", ".join(parts) if parts else "nothing wrong found") + f" ({rules} rules)"
    check(rows.get("Diagnosis") == expected,
          f"the capture table's 'Diagnosis' is {rows.get('Diagnosis')!r} = {expected!r} from the JSON report's diagnosis")


def check_clean(d):
    errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    check(not errors, f"no console error ({errors[:3]})")
    resources = d.execute_script("return performance.getEntriesByType('resource').map(function(r){return r.name;});")
    outside = [r for r in resources if not r.startswith("data:")]
    check(not outside, f"no request leaves the page ({outside[:3]})")


def functional(args):
    shots = args.screenshots or tempfile.mkdtemp(prefix="blescope-browser-")
    os.makedirs(shots, exist_ok=True)
    work = tempfile.mkdtemp(prefix="blescope-page-")
    page = report(args.blescope, args.capture, os.path.join(work, "report.html"))
    doc = json.loads(run([args.blescope, "report", "--quiet", "--format", "json", args.capture]))
    url = "file://" + os.path.abspath(page)
    d = browser()
    try:
        check(bool(open_page(d, url)), "the page loads and its timeline is ready")
        d.save_screenshot(os.path.join(shots, "top.png"))
        check_lanes(d, doc)
        check_capture_table(d, doc)
        frame = check_finding_click(d, shots)
        check_filters(d, args.blescope, args.capture, shots)
        check_brush(d, page, args.blescope, args.capture, shots)
        check_clean(d)
        check_frame_link(d, url, frame or doc["files"][0]["connections"][0]["start_frame"], shots)
        check_clean(d)
    finally:
        d.quit()
    print(f"screenshots: {shots}")
    return 1 if failures else 0


def timeline_data(page):
    """The page's timeline data, inflated: (its size in bytes, the document)."""
    import base64
    import gzip
    import re
    html = open(page, encoding="utf-8").read()
    m = re.search(r'class="tl-data"[^>]*>([^<]*)<', html)
    raw = gzip.decompress(base64.b64decode(m.group(1))) if m else b"{}"
    return len(raw), json.loads(raw)


def perf(args):
    d = browser()
    try:
        for capture in args.perf:
            work = tempfile.mkdtemp(prefix="blescope-perf-")
            t = time.time()
            page = report(args.blescope, capture, os.path.join(work, "report.html"))
            made = time.time() - t
            url = "file://" + os.path.abspath(page)
            t = time.time()
            open_page(d, url)
            loaded = time.time() - t
            events = d.execute_script("return +document.querySelector('#tl1').dataset.events;")
            _, text_ms = set_filter(d, "text", "notification")
            set_filter(d, "text", "")
            size, data = timeline_data(page)
            handles = [h for h in data.get("h", []) if h]
            common = max(set(handles), key=handles.count) if handles else 1
            rows, handle_ms = set_filter(d, "handle", f"0x{common:04x}")
            set_filter(d, "handle", "")
            scroll_ms = d.execute_script(
                "var v=document.querySelector('#tl1 .tl-view'),t=performance.now();for(var i=0;i<50;i++){v.scrollTop=i*4000;"
                "v.dispatchEvent(new Event('scroll'));}return (performance.now()-t)/50;")
            print(json.dumps({"capture": os.path.basename(capture), "events": events, "page_bytes": os.path.getsize(page),
                              "report_s": round(made, 2), "load_s": round(loaded, 2), "filter_text_ms": round(text_ms, 1),
                              "filter_handle_ms": round(handle_ms, 1), "handle_rows": rows,
                              "scroll_render_ms": round(scroll_ms, 2), "json_bytes": size,
                              "ready_ms": int(d.execute_script("return +document.querySelector('#tl1').dataset.readyMs;"))}))
            check_clean(d)
    finally:
        d.quit()
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--blescope", required=True)
    p.add_argument("--capture")
    p.add_argument("--screenshots")
    p.add_argument("--perf", nargs="+")
    args = p.parse_args()
    sys.exit(perf(args) if args.perf else functional(args))


if __name__ == "__main__":
    main()

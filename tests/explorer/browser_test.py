#!/usr/bin/env python3
"""The explorer in a real browser: headless Debian Chromium driven by Selenium.

    browser_test.py POSTBOX                  run the checks (ctest runs this)
    browser_test.py POSTBOX --only NAME,...  run some of them
    browser_test.py POSTBOX --shots DIR      write a screenshot of each view into DIR

Each run starts `POSTBOX serve --port 0` on 127.0.0.1 (the server picks a free port and prints
it) and stops it at the end, also when a check fails; the server gets SIGTERM if this process
dies first. Chromium runs headless with a fresh profile directory, and without its sandbox when
run as root (CI runs as root). Exit 77 (ctest: skipped) only when Chromium, chromedriver or
Selenium is not installed.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77


def find(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError as e:  # pragma: no cover - reported, not hidden
    print(f"SKIP: Selenium is not installed for {sys.executable} ({e}); run.sh installs python3-selenium")
    sys.exit(SKIP)


# ---- the server ---------------------------------------------------------------------------------

def _die_with_parent():
    # PR_SET_PDEATHSIG: the server gets SIGTERM when this test process dies, even by SIGKILL.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)


class Server:
    def __init__(self, postbox):
        self.proc = subprocess.Popen([postbox, "serve", "--port", "0"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, preexec_fn=_die_with_parent)
        line = self.proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        if not m:
            self.stop()
            raise RuntimeError(f"postbox serve printed {line!r}, stderr {self.proc.stderr.read()!r}")
        self.url = m.group(1)

    def get(self, path):
        """(status, body text) of GET url+path."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=300) as r:  # a hang guard
                return r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


# ---- the browser --------------------------------------------------------------------------------

def start_browser(profile_dir, width=1500, height=1100):
    chromium = find("chromium", "chromium-browser")
    driver_path = find("chromedriver")
    if not chromium or not driver_path:
        print("SKIP: Debian's chromium and chromium-driver are not installed (run.sh installs them)")
        sys.exit(SKIP)
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
              "--disable-extensions", "--disable-background-networking", "--disable-sync",
              f"--user-data-dir={profile_dir}", f"--window-size={width},{height}",
              "--force-device-scale-factor=1", "--lang=en-US"]:
        opts.add_argument(a)
    if os.geteuid() == 0:
        opts.add_argument("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=driver_path, log_output=subprocess.DEVNULL) \
        if "log_output" in Service.__init__.__code__.co_varnames else \
        Service(executable_path=driver_path, log_path=os.devnull)
    return webdriver.Chrome(service=service, options=opts)


def wait_text(driver, element_id, expected, timeout=120):
    """Waits until #element_id's text equals `expected` (a str) or matches it (a compiled regex)."""
    last = [None]

    def ok(d):
        last[0] = d.find_element(By.ID, element_id).text.strip()
        return last[0] == expected if isinstance(expected, str) else bool(expected.fullmatch(last[0]))

    try:
        WebDriverWait(driver, timeout, poll_frequency=0.1).until(ok)
    except Exception:
        err = driver.find_element(By.ID, "error").text
        raise AssertionError(f"#{element_id} shows {last[0]!r}, expected {expected!r}"
                             + (f" (error banner: {err!r})" if err else ""))
    return last[0]


def set_field(driver, element_id, value):
    e = driver.find_element(By.ID, element_id)
    e.send_keys(Keys.CONTROL, "a")
    e.send_keys(Keys.DELETE)
    e.send_keys(value)


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def cli_sim_time(postbox, args):
    """The time `postbox sim` prints: the text after 'time' on its 'time     X us' line."""
    out = subprocess.run([postbox, "sim"] + args, capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"postbox sim {' '.join(args)} failed: {out.stderr}")
    m = re.search(r"^time +([0-9.]+) ", out.stdout, re.M)
    check(m, f"no time line in {out.stdout!r}")
    return m.group(1)


def cli_error(postbox, args):
    out = subprocess.run([postbox] + args, capture_output=True, text=True, timeout=120)
    check(out.returncode == 2, f"postbox {' '.join(args)} exited {out.returncode}, expected 2")
    return out.stderr


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


# ---- the checks ---------------------------------------------------------------------------------

def test_trees(ctx):
    """p = 64, s = 1, r = 3: Fibo finishes at 15 with 64 nodes drawn; binomial at 24 (Cordsen §4.3)."""
    d, srv = ctx["driver"], ctx["server"]
    # Start from another state, so every figure below comes from what the checks type.
    d.get(srv.url + "/?view=trees&shape=binary&p=8&lambda=2&shape2=")
    wait_text(d, "tree-completion", "6")  # binary tree, p = 8, lambda = 2
    Select(d.find_element(By.ID, "t-kind")).select_by_value("fibo")
    set_field(d, "t-p", "64")
    d.find_element(By.ID, "t-model-sr").click()
    set_field(d, "t-s", "1")
    set_field(d, "t-r", "3")
    wait_text(d, "tree-completion", "15")
    wait_text(d, "tree-nodes", "64")
    drawn = d.execute_script(
        "return Array.from(document.querySelectorAll('#tree-draw g.node'))"
        ".map(g => [g.getAttribute('data-time'), g.classList.contains('last')])")
    check(len(drawn) == 64, f"{len(drawn)} nodes drawn, expected 64")
    check(any(last for _, last in drawn) and all(t == "15" for t, last in drawn if last),
          "the last-activated nodes are not marked at 15")
    wait_text(d, "tree-optimum", "15")
    check("--shape fibo --p 64 --s 1 --r 3" in d.find_element(By.ID, "tree-cli").text, "CLI line does not match")
    q = urllib.parse.parse_qs(urllib.parse.urlparse(d.current_url).query)
    check(q.get("shape") == ["fibo"] and q.get("p") == ["64"] and q.get("s") == ["1"] and q.get("r") == ["3"],
          f"the URL does not hold the state: {d.current_url}")
    Select(d.find_element(By.ID, "t-kind")).select_by_value("binomial")
    wait_text(d, "tree-completion", "24")
    rows = d.find_elements(By.CSS_SELECTOR, "#tree-compare tr.best td")
    check(rows and rows[1].text == "15", "the compare table's best row is not 15")


def test_sim_manna(ctx):
    """An emulated MANNA run shows the time `postbox sim` prints (Cordsen §5's 19-process broadcast)."""
    d, srv, pb = ctx["driver"], ctx["server"], ctx["postbox"]
    d.get(srv.url + "/?view=trees")
    d.find_element(By.TAG_NAME, "body").send_keys("3")  # keyboard: view 3
    WebDriverWait(d, 120).until(lambda x: x.find_element(By.ID, "tab-sim").get_attribute("aria-selected") == "true")
    WebDriverWait(d, 120).until(lambda x: len(Select(x.find_element(By.ID, "s-machine")).options) > 2)
    for algo in ["flat", "binomial", "fibo"]:
        expected = cli_sim_time(pb, ["--machine", "manna", "--op", "bcast", "--algo", algo, "--p", "19", "--bytes", "4"])
        Select(d.find_element(By.ID, "s-machine")).select_by_value("manna")
        Select(d.find_element(By.ID, "s-op")).select_by_value("bcast")
        Select(d.find_element(By.ID, "s-algo")).select_by_value(algo)
        set_field(d, "s-p", "19")
        set_field(d, "s-bytes", "4")
        d.find_element(By.ID, "sim-run").click()
        wait_text(d, "sim-time", expected)
        wait_text(d, "sim-unit", "us")
        check(d.find_element(By.ID, "sim-cli").text ==
              f"postbox sim --machine manna --op bcast --algo {algo} --p 19 --bytes 4", "CLI line does not match")
    # The trace link downloads Chrome trace-event JSON of the same run.
    href = d.find_element(By.ID, "sim-trace").get_attribute("href")
    status, body = srv.get(urllib.parse.urlparse(href).path + "?" + urllib.parse.urlparse(href).query)
    check(status == 200 and json.loads(body)["traceEvents"], f"trace link gave {status}")


def test_url_state(ctx):
    """A URL with state restores it: inputs, the selected view, and the figures computed for it."""
    d, srv, pb = ctx["driver"], ctx["server"], ctx["postbox"]
    d.get(srv.url + "/?view=trees&shape=kary:8&p=73&s=1&r=3&shape2=fibo")
    wait_text(d, "tree-completion", "22")  # Cordsen's complete 2-level 8-ary tree
    wait_text(d, "tree2-completion", re.compile(r"\d+"))
    check(d.find_element(By.ID, "t-kind").get_attribute("value") == "kary", "shape kind not restored")
    check(d.find_element(By.ID, "t-k").get_attribute("value") == "8", "K not restored")
    check(d.find_element(By.ID, "t-p").get_attribute("value") == "73", "p not restored")
    status, body = srv.get("/api/tree?shape=fibo&p=73&s=1&r=3")
    check(status == 200 and d.find_element(By.ID, "tree2-completion").text == json.loads(body)["completion_label"],
          "second tree's completion differs from the API's")

    d.get(srv.url + "/?view=postal&lambda=1.95&n=40&nmax=250&floor=4")
    check(d.find_element(By.ID, "tab-postal").get_attribute("aria-selected") == "true", "postal view not selected")
    status, body = srv.get("/api/postal?lambda=1.95&n=40")
    wait_text(d, "postal-T", json.loads(body)["T"]["label"])
    check(d.find_element(By.ID, "m-lambda").get_attribute("value") == "1.95", "lambda not restored")
    check(len(d.find_elements(By.CSS_SELECTOR, "#postal-breakeven tbody tr")) == 4, "break-even rows not restored")
    status, body = srv.get("/api/alpha-ranges?lambda=1.95&n-max=250")
    lut = json.loads(body)["lookup_table"]
    check(len(d.find_elements(By.CSS_SELECTOR, "#postal-lut tbody tr")) == len(lut), "look-up table rows differ")

    args = ["--machine", "delta", "--op", "bcast", "--algo", "binomial", "--p", "64", "--bytes", "4096",
            "--mesh", "8x8", "--placement", "random"]
    expected = cli_sim_time(pb, args)
    d.get(srv.url + "/?view=sim&machine=delta&op=bcast&algo=binomial&p=64&bytes=4096&mesh=8x8&placement=random")
    wait_text(d, "sim-time", expected)
    check(d.find_element(By.ID, "sim-mesh-panel").is_displayed(), "no mesh heat map on a mesh machine")
    check(d.find_element(By.ID, "s-mesh").get_attribute("value") == "8x8", "mesh not restored")


def test_bad_input(ctx):
    """Bad API input: 400 with the line the CLI prints; hostile input never ends the server."""
    srv, pb, d = ctx["server"], ctx["postbox"], ctx["driver"]
    parity = [
        (["tree", "--shape", "fibo", "--p", "0"], "/api/tree?shape=fibo&p=0"),
        (["tree", "--shape", "fibo", "--p", "two"], "/api/tree?shape=fibo&p=two"),
        (["tree", "--shape", "tree", "--p", "8"], "/api/tree?shape=tree&p=8"),
        (["tree", "--shape", "fibo", "--p", "8", "--lambda", "0.5"], "/api/tree?shape=fibo&p=8&lambda=0.5"),
        (["tree", "--shape", "fibo", "--p", "8", "--lambda", "nan"], "/api/tree?shape=fibo&p=8&lambda=nan"),
        (["tree", "--shape", "fibo", "--p", "8", "--s", "0", "--r", "1"], "/api/tree?shape=fibo&p=8&s=0&r=1"),
        (["tree", "--shape", "fibo", "--p", "8", "--s", "1"], "/api/tree?shape=fibo&p=8&s=1"),
        (["tree", "--shape", "fibo", "--p", "8", "--lambda", "2", "--s", "1", "--r", "1"],
         "/api/tree?shape=fibo&p=8&lambda=2&s=1&r=1"),
        (["tree", "--shape", "lambda", "--p", "8", "--alpha", "1"], "/api/tree?shape=lambda&p=8&alpha=1"),
        (["tree", "--shape", "fibo", "--p", "8", "--alpha", "0.5"], "/api/tree?shape=fibo&p=8&alpha=0.5"),
        (["tree", "--shape", "kary:0", "--p", "8"], "/api/tree?shape=kary:0&p=8"),
        (["tree", "--shape", "fibo", "--p", "8", "--root", "8"], "/api/tree?shape=fibo&p=8&root=8"),
        (["tree", "--shape", "fibo", "--p", "8", "--places", "compact"], "/api/tree?shape=fibo&p=8&places=compact"),
        (["tree", "--compare", "--p", "0"], "/api/compare?p=0"),
        (["model", "postal", "--lambda", "0.5", "--n", "4"], "/api/postal?lambda=0.5&n=4"),
        (["model", "postal", "--lambda", "2", "--n", "0"], "/api/postal?lambda=2&n=0"),
        (["model", "alpha-ranges", "--lambda", "2", "--n-max", "1"], "/api/alpha-ranges?lambda=2&n-max=1"),
        (["model", "breakeven", "--max-floor", "0"], "/api/breakeven?max-floor=0"),
        (["sim", "--machine", "vax", "--p", "4"], "/api/sim?machine=vax&p=4"),
        (["sim", "--machine", "postal:0.5", "--p", "4"], "/api/sim?machine=postal:0.5&p=4"),
        (["sim", "--machine", "delta", "--placement", "diagonal", "--p", "4"],
         "/api/sim?machine=delta&placement=diagonal&p=4"),
        (["sim", "--machine", "delta", "--mesh", "8x8", "--p", "65"], "/api/sim?machine=delta&mesh=8x8&p=65"),
        (["sim", "--machine", "manna", "--op", "scan", "--p", "4"], "/api/sim?machine=manna&op=scan&p=4"),
        (["sim", "--machine", "manna", "--algo", "ring", "--p", "4"], "/api/sim?machine=manna&algo=ring&p=4"),
        (["sim", "--machine", "manna", "--p", "4", "--bytes=-8"], "/api/sim?machine=manna&p=4&bytes=-8"),
    ]
    for args, path in parity:
        expected = cli_error(pb, args)
        status, body = srv.get(path)
        check(status == 400, f"{path}: HTTP {status}, expected 400 ({body!r})")
        check(body == expected, f"{path}: the API says {body!r}, the CLI {expected!r}")
    # Large but legal requests are answered (at the explorer's limits).
    for path in ["/api/tree?shape=lambda&p=4096&lambda=9999.999", "/api/tree?shape=fibo&p=4096&s=0.001&r=10000",
                 "/api/tree?shape=greedy&p=4096&s=0.007&r=9999.993", "/api/postal?lambda=9999&n=1000000000",
                 "/api/combine?lambda=9999.999&n=1000000000", "/api/alpha-ranges?lambda=1.001&n-max=2000",
                 "/api/scaling?shapes=flat;fibo&p-max=1024&lambda=9999"]:
        status, body = srv.get(path)
        check(status in (200, 400), f"{path}: HTTP {status} ({body[:200]!r})")
    hostile = [
        "/api/tree?shape=fibo&p=99999999999999999999999", "/api/tree?shape=fibo&p=5000",
        "/api/tree?shape=greedy&p=64&s=0.000000000001&r=999999999999", "/api/tree?shape=fibo&p=64&lambda=10001",
        "/api/tree?shape=hier&p=8&synthetic=core:65536%20pu:1", "/api/tree?shape=hier&p=8&synthetic=pack:2%20core:x",
        "/api/tree?shape=%ff%fe&p=8", "/api/tree?shape=fibo&p=8&p=9", "/api/tree?shape=fibo&p=8&color=red",
        "/api/tree?shape=" + "x" * 5000 + "&p=8", "/api/postal?lambda=1e308&n=1", "/api/postal?lambda=2",
        "/api/alpha-ranges?lambda=2&n-max=100000", "/api/combine?lambda=0&n=5", "/api/scaling?p-max=1025",
        "/api/sim?machine=/etc/passwd&p=4", "/api/sim?machine=delta&mesh=100000x100000&p=4",
        "/api/sim?machine=delta&p=4&bytes=1073741824", "/api/sim?machine=delta&op=bcast&algo=flat&p=512&bytes=1048576",
        "/api/sim?machine=postal:2&op=all-to-all&algo=1-lev-dir&p=1024",
        "/api/sim?machine=postal:2&p=4&seed=-1", "/api/sim?machine=postal:2&p=4&alpha=nan",
        "/api/calibration?measure=yes",
    ]
    for path in hostile:
        status, body = srv.get(path)
        check(status == 400, f"{path}: HTTP {status}, expected 400 ({body[:200]!r})")
        check(body.startswith("postbox: error: ") and body.count("\n") == 1, f"{path}: not one line: {body[:200]!r}")
    status, _ = srv.get("/api/no-such-endpoint")
    check(status == 404, f"unknown endpoint gave {status}")
    check(srv.alive(), "the server died")
    status, body = srv.get("/api/tree?shape=fibo&p=64&s=1&r=3")
    check(status == 200 and json.loads(body)["completion"] == 15, "the server no longer answers after hostile input")
    # The page shows the server's line.
    d.get(srv.url + "/?view=trees&shape=fibo&p=8&s=1&r=3")
    wait_text(d, "tree-completion", re.compile(r"\d+"))
    set_field(d, "t-p", "0")
    wait_text(d, "error", "postbox: error: --p must be at least 1, got 0")


def test_offline_and_keyboard(ctx):
    """Everything comes from the server (no CDN), no console errors, and the views are keyboard operable."""
    d, srv = ctx["driver"], ctx["server"]
    for view, ready in [("trees", "tree-completion"), ("postal", "postal-T"), ("sim", "sim-time"),
                        ("machine", "machine-completion")]:
        d.get(srv.url + f"/?view={view}")
        wait_text(d, ready, re.compile(r".*\d.*"))
        names = d.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        foreign = [n for n in names if not n.startswith(srv.url + "/")]
        check(not foreign, f"{view}: resources from elsewhere: {foreign}")
    # Scripts must not fail; a 400 from /api is by design (the page shows its line).
    errs = [e for e in console_errors(d) if not (e.get("source") == "network" and "/api/" in e.get("message", ""))]
    check(not errs, f"console errors: {errs}")
    d.get(srv.url + "/?view=trees")
    tab = d.find_element(By.ID, "tab-trees")
    tab.send_keys(Keys.ARROW_RIGHT)
    WebDriverWait(d, 120).until(lambda x: x.find_element(By.ID, "tab-postal").get_attribute("aria-selected") == "true")
    check(d.switch_to.active_element.get_attribute("id") == "tab-postal", "focus did not follow the tab")
    check("view=postal" in d.current_url, "the URL does not name the view")
    d.find_element(By.TAG_NAME, "body").send_keys("4")
    WebDriverWait(d, 120).until(lambda x: x.find_element(By.ID, "tab-machine").get_attribute("aria-selected") == "true")


CHECKS = {
    "trees": test_trees,
    "sim_manna": test_sim_manna,
    "url_state": test_url_state,
    "bad_input": test_bad_input,
    "offline_keyboard": test_offline_and_keyboard,
}

# ---- screenshots (./run.sh explorer-shots) ---------------------------------------------------------

SHOTS = [
    ("trees", "/?view=trees&shape=fibo&p=64&s=1&r=3&shape2=binomial", "tree-completion",
     "Trees: Fibo-tree against binomial, p = 64, s = 1, r = 3 (Cordsen Figs. 4 and 9)"),
    ("trees-lambda", "/?view=trees&shape=lambda&p=8&lambda=2&shape2=binomial", "tree-completion",
     "Trees: the lambda-tree for n = 8, lambda = 2 (Bruck Fig. 2) beside binomial (Fig. 1b)"),
    ("postal", "/?view=postal&lambda=1.95&n=40&nmax=120", "postal-T",
     "Postal model: N_lambda(t), the alpha ranges (Christmas tree), look-up table, break-even, combine"),
    ("sim-manna", "/?view=sim&machine=manna&op=bcast&algo=fibo&p=19&bytes=4", "sim-time",
     "Emulated runs: the Fibo-tree broadcast on MANNA, 19 ranks (Cordsen §5)"),
    ("sim-delta", "/?view=sim&machine=delta&op=bcast&algo=binomial&p=64&bytes=4096&mesh=8x8&placement=random&t=250",
     "sim-time", "Emulated runs: binomial broadcast on an 8x8 Delta submesh, random placement, at t = 250 us"),
    ("machine", "/?view=machine&p=16", "machine-completion",
     "This machine: hwloc topology, measured s, r, lambda, and the Fibo-tree they give for 16 ranks"),
]


def take_shots(ctx, out_dir):
    d, srv = ctx["driver"], ctx["server"]
    os.makedirs(out_dir, exist_ok=True)
    for name, path, ready, what in SHOTS:
        d.set_window_size(1500, 1100)
        d.get(srv.url + path)
        wait_text(d, ready, re.compile(r".*\d.*"), timeout=60)
        time.sleep(0.5)  # let the drawings settle after the last answer
        height = d.execute_script("return Math.min(6000, document.documentElement.scrollHeight)")
        d.set_window_size(1500, height + 140)
        time.sleep(0.5)
        file = os.path.join(out_dir, f"explorer-{name}.png")
        d.save_screenshot(file)
        print(f"wrote {file}: {what}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("postbox", help="path to the postbox binary")
    ap.add_argument("--only", help="comma-separated checks: " + ",".join(CHECKS))
    ap.add_argument("--shots", metavar="DIR", help="write screenshots instead of checking")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(CHECKS)
    for n in names:
        if n not in CHECKS:
            ap.error(f"unknown check {n!r}")
    profile = tempfile.mkdtemp(prefix="postbox-explorer-chromium-")
    server = driver = None
    failed = []
    try:
        server = Server(a.postbox)
        driver = start_browser(profile)
        driver.set_page_load_timeout(60)
        ctx = {"driver": driver, "server": server, "postbox": a.postbox}
        if a.shots:
            take_shots(ctx, a.shots)
        else:
            for n in names:
                t0 = time.time()
                try:
                    CHECKS[n](ctx)
                    print(f"ok    {n} ({time.time() - t0:.1f} s)")
                except Exception:
                    failed.append(n)
                    print(f"FAIL  {n}\n{traceback.format_exc()}")
                check(server.alive(), "the server died during " + n)
    finally:
        if driver is not None:
            driver.quit()
        rc = server.stop() if server is not None else 0
        shutil.rmtree(profile, ignore_errors=True)
    if rc not in (0, None):
        print(f"FAIL  the server exited with {rc} on SIGTERM")
        failed.append("server-exit")
    if failed:
        print(f"{len(failed)} of {len(names)} checks failed: {', '.join(failed)}")
        return 1
    if not a.shots:
        print(f"all {len(names)} browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

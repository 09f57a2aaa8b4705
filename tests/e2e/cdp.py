#!/usr/bin/env python3
"""Clicks through report --format html in headless Chromium over the DevTools
protocol (--remote-debugging-pipe: JSON messages ended by NUL, commands on the
browser's fd 3, replies and events on its fd 4).

usage: cdp.py CHROMIUM PROFILE_DIR PAGE REGION_ID

It opens PAGE from disk, waits for its script, clicks (as a mouse does, at
the element's place) the heatmap band of region REGION_ID and then the
"pages" column's header, and checks what the page shows after each: the
region's row selected and its card, the rows ordered by pages. Any console
message or uncaught exception fails it. Exit 0 when all holds.
"""
import base64
import json
import os
import select
import sys
import time


class Browser:
    def __init__(self, chromium, profile):
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()
        self.pid = os.posix_spawn(chromium, [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
            f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"], os.environ,
            file_actions=[(os.POSIX_SPAWN_DUP2, cmd_r, 3), (os.POSIX_SPAWN_DUP2, res_w, 4),
                          (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                          (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        os.close(cmd_r)
        os.close(res_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.res_r], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.res_r, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self.events):
                if m.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read(deadline))

    def js(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def click(self, selector):
        """A mouse click at the middle of the element, scrolled into view first."""
        rect = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                       " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                       " return [r.left + Math.min(r.width / 2, 40), r.top + r.height / 2]; })()")
        if not rect:
            raise RuntimeError(f"nothing to click: {selector}")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": rect[0], "y": rect[1],
                                                   "button": "left", "clickCount": 1})

    def wait_for(self, expr, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = self.js(expr)
            if v:
                return v
            time.sleep(0.05)
        raise TimeoutError(f"never true: {expr}")

    def console(self):
        """Console messages and exceptions seen so far."""
        bad = []
        for m in self.events:
            p = m.get("params", {})
            if m.get("method") == "Runtime.consoleAPICalled":
                bad.append(f"console.{p.get('type')}: {[a.get('value') for a in p.get('args', [])]}")
            elif m.get("method") == "Runtime.exceptionThrown":
                bad.append(f"exception: {p.get('exceptionDetails', {}).get('exception', {}).get('description')}")
            elif m.get("method") == "Log.entryAdded":
                e = p.get("entry", {})
                bad.append(f"log {e.get('level')}: {e.get('text')} ({e.get('url')})")
        return bad

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def main():
    chromium, profile, page, region = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    b = Browser(chromium, profile)
    failed = []
    try:
        target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        b.session = b.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            b.call(f"{domain}.enable")
        b.call("Page.navigate", {"url": "file://" + os.path.abspath(page)})
        b.wait_event("Page.loadEventFired")
        b.wait_for("document.body.dataset.ready === 'true'")

        # A click on the band selects its region: its row, its card, its band.
        b.click(f'.band[data-region="{region}"] canvas')
        sel = b.wait_for("(() => { const t = document.querySelector('#regions tr.sel');"
                         " return t && t.dataset.region; })()")
        card = b.js("document.getElementById('detail').textContent")
        band = b.js("(() => { const e = document.querySelector('.band.sel'); return e && e.dataset.region; })()")
        print(f"band click: row {sel} selected, band {band}, card {card[:60]!r}")
        if sel != region or band != region or f"Region {region}:" not in card:
            failed.append(f"a click on region {region}'s band selected row {sel}, band {band}")

        # A click on a column header orders the rows by it.
        b.click('#regions th[data-key="pages"]')
        b.wait_for("(() => { const h = document.querySelector('#regions th[data-key=\"pages\"]');"
                   " return h && h.getAttribute('aria-sort') === 'descending'; })()")
        pages = b.js("[...document.querySelectorAll('#regions tbody tr')].map(r => Number(r.cells[10].textContent))")
        print(f"header click: pages column {pages[:8]}...")
        if not pages or pages != sorted(pages, reverse=True):
            failed.append("a click on the pages header did not order the rows by pages")

        shot = b.call("Page.captureScreenshot", {"format": "png"})["data"]
        if len(sys.argv) > 5:
            with open(sys.argv[5], "wb") as f:
                f.write(base64.b64decode(shot))
        failed += b.console()
    finally:
        b.close()
    for f in failed:
        print("FAIL:", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

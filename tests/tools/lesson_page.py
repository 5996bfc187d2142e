"""Drives a lesson page (`mk-tui export FILE --html DIR`) in headless
Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: no
port, no network), with every host name resolving nowhere.

It opens DIR/index.html from file://, waits for the chapter list and the
player (with --lang, clicks that language's button first unless the page
opened in it), then clicks each
chapter of K (indices from 0, comma-separated, or "all") with the mouse,
waits for the player's screen to settle and reads it. It prints one JSON
object: the chapters' labels; for each chapter clicked, the player's time,
its screen text (one line per terminal row) and the state its "show
state" toggle opens; every URL the page requested; and the page's
errors. With --screenshot PNG it saves a screenshot of the page at the
first chapter of K there.

tests/lesson_page.rs compares the text with `mk-tui render --step N`.

Usage: python lesson_page.py CHROMIUM DIR K|all [--lang en|zh] [--screenshot PNG]
"""

import base64
import json
import os
import select
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 120


class Browser:
    """Chromium with the DevTools protocol on fds 3 (in) and 4 (out):
    NUL-terminated JSON messages."""

    def __init__(self, chromium, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # The child reads commands on fd 3 and writes on fd 4.
        def wire():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--allow-file-access-from-files",
                "--window-size=1600,1000",
                "--user-data-dir=" + profile,
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=wire,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.deadline = time.monotonic() + TIMEOUT_S

    def _read_message(self):
        while b"\0" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_child], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise EOFError("Chromium closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read_message()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_event(self, method):
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message())

    def close(self):
        try:
            self.send("Browser.close")
        except (EOFError, OSError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main(chromium, page_dir, chapters, lang, screenshot):
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(chromium, profile)
        try:
            result = drive(browser, page_dir, chapters, lang, screenshot)
        finally:
            browser.close()
    print(json.dumps(result, ensure_ascii=False))


def drive(browser, page_dir, chapters, lang, screenshot):
    targets = browser.send("Target.getTargets")["targetInfos"]
    page = next(t for t in targets if t["type"] == "page")
    session = browser.send(
        "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}
    )["sessionId"]

    def send(method, params=None):
        return browser.send(method, params, session)

    def evaluate(expression):
        answer = send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def wait_for(expression, what):
        return wait_until(browser, evaluate, expression, what)

    def click(selector):
        box = evaluate(
            "(() => { const e = document.querySelector(%s); e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(selector)
        )
        for kind in ("mousePressed", "mouseReleased"):
            send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
            )

    send("Page.enable")
    send("Runtime.enable")
    send("Network.enable")
    send("Emulation.setDeviceMetricsOverride",
         {"width": 1600, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    url = "file://" + os.path.join(os.path.abspath(page_dir), "index.html")
    send("Page.navigate", {"url": url})
    browser.wait_event("Page.loadEventFired")
    wait_for("document.querySelectorAll('#chapters li').length > 0", "a chapter list")
    wait_for("document.querySelector('#player .ap-term') !== null", "a player")
    page_lang = {"en": "en", "zh": "zh-CN"}[lang]
    if evaluate("document.documentElement.lang") != page_lang:
        click("#languages button[data-lang='%s']" % lang)
        wait_for("document.documentElement.lang === '%s'" % page_lang, "the page in " + lang)
        wait_for("document.querySelector('#player .ap-term') !== null", "a player")
    count = evaluate("document.querySelectorAll('#chapters li').length")
    chosen = range(count) if chapters == "all" else [int(k) for k in chapters.split(",")]
    shots = []
    for chapter in chosen:
        shots.append(read_chapter(browser, evaluate, click, chapter))
        if screenshot and len(shots) == 1:
            data = send("Page.captureScreenshot", {"format": "png"})["data"]
            with open(screenshot, "wb") as f:
                f.write(base64.b64decode(data))
    result = {
        "chapters": evaluate(
            "Array.from(document.querySelectorAll('#chapters li button.chapter')).map(b => b.textContent)"
        ),
        "shots": shots,
    }
    result["requests"] = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    result["errors"] = [
        e["params"]["exceptionDetails"].get("exception", {}).get("description")
        or e["params"]["exceptionDetails"].get("text")
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
    ] + [
        " ".join(str(a.get("value", a.get("description", ""))) for a in e["params"]["args"])
        for e in browser.events
        if e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error"
    ]
    return result


def wait_until(browser, evaluate, expression, what):
    """Polls `expression` until it is truthy, within the deadline."""
    while time.monotonic() < browser.deadline:
        value = evaluate(expression)
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError(f"the page never had {what}")


def read_chapter(browser, evaluate, click, chapter):
    """Clicks chapter `chapter` and reads the player's screen once it
    settles, and the chapter's state."""
    click("#chapters li:nth-child(%d) button.chapter" % (chapter + 1))
    wait_until(
        browser,
        evaluate,
        "document.querySelector('#chapters li:nth-child(%d)').getAttribute('aria-current') === 'step'"
        " && document.getElementById('player').dataset.shownChapter === '%d'"
        % (chapter + 1, chapter),
        "the chapter's frame shown",
    )
    screen_js = (
        "Array.from(document.querySelectorAll('#player .ap-term-text .ap-line'))"
        ".map(l => l.textContent.replace(/\\u00a0/g, ' ').trimEnd()).join('\\n')"
    )
    # The seek and the redraw are asynchronous: wait for the screen to hold
    # still for a moment.
    last, still = None, 0
    while still < 5:
        if time.monotonic() > browser.deadline:
            raise TimeoutError("the player's screen never settled")
        text = evaluate(screen_js)
        still = still + 1 if text == last and text else 0
        last = text
        time.sleep(0.1)
    state = evaluate(
        "(() => { const li = document.querySelector('#chapters li:nth-child(%d)');"
        " li.querySelector('details').open = true;"
        " return new Promise(r => setTimeout(() => r(li.querySelector('pre').textContent), 50)); })()"
        % (chapter + 1)
    )
    return {
        "chapter": chapter,
        "time": evaluate("window.mkLessonPlayer.getCurrentTime()"),
        "screen": last,
        "state": json.loads(state),
    }


if __name__ == "__main__":
    args = sys.argv[1:]
    lang, screenshot = "en", None
    while len(args) > 3:
        flag, value = args[-2], args[-1]
        args = args[:-2]
        if flag == "--lang":
            lang = value
        elif flag == "--screenshot":
            screenshot = value
        else:
            sys.exit("usage: lesson_page.py CHROMIUM DIR K [--lang zh] [--screenshot PNG]")
    if len(args) != 3:
        sys.exit("usage: lesson_page.py CHROMIUM DIR K [--lang zh] [--screenshot PNG]")
    main(args[0], args[1], args[2], lang, screenshot)

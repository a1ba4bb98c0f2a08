#!/usr/bin/env python3
"""Drives Debian's headless chromium over the DevTools protocol (--remote-debugging-pipe), for the
dashboard's tests: a real browser that runs the page's script, keeps its event stream open, and is
asked what the page shows.

Usage: headless-browser.py CHROMIUM STEP...   where the steps, run in order, are
  size WxH          the viewport (a width under 600 emulates a phone)
  open URL          load URL and wait for the document to be complete
  wait EXPR         evaluate the JavaScript EXPR every 100 ms until it is truthy (60 s at most)
  eval EXPR         print "eval: " and EXPR's value as JSON
  dump PATH         write the DOM (document.documentElement.outerHTML) to PATH
  screenshot PATH   write a PNG of the viewport to PATH
  say TEXT          print TEXT (for the test to wait on)
  waitfile PATH     wait until PATH exists (the test's signal to go on; 120 s at most)
Exits 0 when every step succeeded, 1 (with a line that says which step failed) otherwise.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium, profile):
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        # chromium reads commands on fd 3 and writes replies on fd 4.
        def arrange_fds():
            # Through fresh descriptors first, in case a pipe end is itself 3 or 4.
            commands, replies = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(commands, 3)
            os.dup2(replies, 4)
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=arrange_fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer = b""
        self.next_id = 0
        self.session = None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait(self, expression, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.evaluate(expression):
                    return
            except RuntimeError:
                pass  # the page is between documents
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {expression}")
            time.sleep(0.1)

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    chromium, steps = argv[1], argv[2:]
    with tempfile.TemporaryDirectory(prefix="shiftwork-chromium-") as profile:
        browser = Browser(chromium, profile)
        try:
            index = 0
            while index < len(steps):
                step, argument = steps[index], steps[index + 1]
                index += 2
                try:
                    if step == "size":
                        width, height = (int(v) for v in argument.split("x"))
                        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                                     deviceScaleFactor=2 if width < 600 else 1, mobile=width < 600)
                    elif step == "open":
                        browser.call("Page.navigate", url=argument)
                        browser.wait("document.readyState === 'complete'", 60)
                    elif step == "wait":
                        browser.wait(argument, 60)
                    elif step == "eval":
                        print("eval: " + json.dumps(browser.evaluate(argument)), flush=True)
                    elif step == "dump":
                        with open(argument, "w") as out:
                            out.write(browser.evaluate("document.documentElement.outerHTML"))
                    elif step == "screenshot":
                        shot = browser.call("Page.captureScreenshot", format="png")
                        with open(argument, "wb") as out:
                            out.write(base64.b64decode(shot["data"]))
                    elif step == "say":
                        print(argument, flush=True)
                    elif step == "waitfile":
                        deadline = time.monotonic() + 120
                        while not os.path.exists(argument):
                            if time.monotonic() > deadline:
                                raise RuntimeError(f"timed out waiting for the file {argument}")
                            time.sleep(0.1)
                    else:
                        raise RuntimeError(f"unknown step {step}")
                except Exception as error:
                    print(f"step failed: {step} {argument}: {error}", flush=True)
                    return 1
            print("browser done", flush=True)
            return 0
        finally:
            browser.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))

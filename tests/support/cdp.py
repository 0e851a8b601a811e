# SPDX-License-Identifier: MPL-2.0
"""cdp.py - headless Chromium driven through the Chrome DevTools Protocol, with the Python
standard library only: a minimal WebSocket client (RFC 6455, client side: masked text
frames out; text, continuation, ping and close frames in) over a socket, and the few
protocol calls the page tests and scripts/screenshots need (navigate, evaluate, real mouse
clicks and typing, screenshots, console errors and JavaScript dialogs collected).

    with Browser(width=1400, height=900) as b:
        b.open("file:///tmp/page.html")
        assert not b.errors, b.errors
        b.click("#scope-main + label")
        b.screenshot("/tmp/shot.png")

A missing chromium is an error (BrowserMissing) with a message saying how to install it;
nothing is skipped. Run with Debian's /usr/bin/python3.
"""
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--mute-audio"]


class BrowserMissing(RuntimeError):
    pass


class ProtocolError(RuntimeError):
    pass


class WebSocket:
    """Just enough of a WebSocket client for the DevTools endpoint on loopback."""

    def __init__(self, url, timeout=30):
        parts = urllib.parse.urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        path = parts.path + ("?" + parts.query if parts.query else "")
        request = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                   % (path, parts.hostname, parts.port, key))
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ProtocolError("the DevTools endpoint closed during the handshake")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise ProtocolError("WebSocket handshake refused: %r" % head[:200])

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise ProtocolError("the DevTools connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _send_frame(self, opcode, payload):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text):
        self._send_frame(0x1, text.encode())

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise ProtocolError("the DevTools connection was closed by the browser")
            if opcode in (0x0, 0x1, 0x2):
                message += payload
                if b0 & 0x80:
                    return message.decode()

    def close(self):
        try:
            self._send_frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise BrowserMissing("chromium is not installed: run bash scripts/install-deps.sh "
                         "(or apt-get install chromium)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    def __init__(self, width=1400, height=900, timeout=60):
        self.chromium = find_chromium()
        self.timeout = timeout
        self.width, self.height = width, height
        self.dir = tempfile.mkdtemp(prefix="retrig-chromium-")
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "chromium.log"), "wb")
        self.proc = subprocess.Popen(
            [self.chromium] + FLAGS + ["--user-data-dir=" + os.path.join(self.dir, "profile"),
                                       "--remote-debugging-port=%d" % self.port,
                                       "--window-size=%d,%d" % (width, height), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        self.ws = None
        self.next_id = 0
        self.events = []
        self.scripts = True  # the page's JavaScript runs (set_scripts)
        self.errors = []   # console errors, uncaught exceptions, failed loads
        self.dialogs = []  # alert/confirm/prompt opened by the page (never expected)
        try:
            self._connect()
        except Exception:
            self.close()
            raise

    def _connect(self):
        deadline = time.time() + self.timeout
        targets = None
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise ProtocolError("chromium exited at start (%d): %s" % (self.proc.returncode, self.tail()))
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % self.port, timeout=2) as r:
                    targets = [t for t in json.load(r) if t.get("type") == "page"]
                if targets:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        if not targets:
            raise ProtocolError("no DevTools page target within %d s: %s" % (self.timeout, self.tail()))
        self.ws = WebSocket(targets[0]["webSocketDebuggerUrl"], timeout=self.timeout)
        for domain in ("Page", "Runtime", "Log"):
            self.send(domain + ".enable")
        self.send("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)

    def tail(self):
        try:
            self.log.flush()
            with open(os.path.join(self.dir, "chromium.log"), "rb") as f:
                return f.read()[-1500:].decode(errors="replace")
        except OSError:
            return ""

    def _event(self, message):
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console.%s: %s" % (params["type"], " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", []))))
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.errors.append("exception: %s %s" % (d.get("text", ""), d.get("exception", {}).get("description", "")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append("log: %s" % params["entry"].get("text", ""))
        elif method == "Page.javascriptDialogOpening":
            self.dialogs.append(params.get("message", ""))
            self.ws.send(json.dumps({"id": self._id(), "method": "Page.handleJavaScriptDialog",
                                     "params": {"accept": False}}))
        self.events.append(message)

    def _id(self):
        self.next_id += 1
        return self.next_id

    def send(self, method, **params):
        mid = self._id()
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == mid:
                if "error" in message:
                    raise ProtocolError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            if "method" in message:
                self._event(message)

    def wait_event(self, method, timeout=None):
        deadline = time.time() + (timeout or self.timeout)
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                del self.events[i]
                return e
        self.ws.sock.settimeout(max(0.1, deadline - time.time()))
        while time.time() < deadline:
            try:
                message = json.loads(self.ws.recv())
            except socket.timeout:
                break
            if "method" in message:
                self._event(message)
                if message["method"] == method:
                    self.events.remove(message)
                    self.ws.sock.settimeout(self.timeout)
                    return message
        self.ws.sock.settimeout(self.timeout)
        raise ProtocolError("no %s within the timeout" % method)

    def open(self, url):
        """Loads url and waits for its load event; a URL that differs from the current one
        only in its fragment is loaded again too (a navigation alone would not)."""
        self.events.clear()
        if self.eval("location.href").split("#")[0] == url.split("#")[0]:
            self.eval("location.href = %s" % json.dumps(url))
            self.reload()
            return
        result = self.send("Page.navigate", url=url)
        if result.get("errorText"):
            raise ProtocolError("cannot open %s: %s" % (url, result["errorText"]))
        self.wait_event("Page.loadEventFired")
        self.settle()

    def settle(self):
        """Waits until the page has drawn what the last action changed."""
        if self.scripts:
            self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        else:
            time.sleep(0.3)  # no callback runs in a page without JavaScript

    def set_scripts(self, enabled):
        """Runs the page's JavaScript or not, as a browser with JavaScript switched off; the
        evaluations of this client still run."""
        self.send("Emulation.setScriptExecutionDisabled", value=not enabled)
        self.scripts = enabled

    def reload(self):
        """Loads the current URL again (its fragment included), as the reload button does."""
        self.events.clear()
        self.send("Page.reload")
        self.wait_event("Page.loadEventFired")
        self.settle()

    def eval(self, expression):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True, userGesture=True)
        if "exceptionDetails" in result:
            d = result["exceptionDetails"]
            raise ProtocolError("%s: %s" % (expression[:200], d.get("exception", {}).get("description", d.get("text"))))
        return result.get("result", {}).get("value")

    def center(self, selector):
        box = self.eval("""(() => { const e = document.querySelector(%s); if (!e) return null;
            e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2, r.width, r.height]; })()""" % json.dumps(selector))
        if not box:
            raise ProtocolError("no element %s" % selector)
        if box[2] <= 0 or box[3] <= 0:
            raise ProtocolError("element %s is not shown" % selector)
        return box[0], box[1]

    def click(self, selector):
        """A real mouse click in the middle of the element, as a person would."""
        x, y = self.center(selector)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        self.settle()

    def type(self, selector, text):
        """Focuses the element, clears it, and types text (input events as from a keyboard)."""
        self.click(selector)
        self.eval("(() => { const e = document.querySelector(%s); e.select(); })()" % json.dumps(selector))
        self.send("Input.dispatchKeyEvent", type="keyDown", key="Backspace", code="Backspace",
                  windowsVirtualKeyCode=8)
        self.send("Input.dispatchKeyEvent", type="keyUp", key="Backspace", code="Backspace",
                  windowsVirtualKeyCode=8)
        if text:
            self.send("Input.insertText", text=text)
        self.settle()

    def screenshot(self, path, height=None):
        """The viewport (or the top `height` pixels of the page) as a PNG file."""
        params = {"format": "png"}
        if height:
            params["clip"] = {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1}
            params["captureBeyondViewport"] = True
        self.eval("window.scrollTo(0, 0)")
        data = self.send("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        if self.ws:
            try:
                self.ws.send(json.dumps({"id": self._id(), "method": "Browser.close"}))
            except OSError:
                pass
            self.ws.close()
            self.ws = None
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main(argv):
    """cdp.py screenshot URL OUT.png [--width W] [--height H] [--click SELECTOR]...: a
    screenshot of the top H pixels of a page after clicking the given elements."""
    import argparse
    p = argparse.ArgumentParser(prog="cdp.py", description=main.__doc__)
    p.add_argument("command", choices=["screenshot"])
    p.add_argument("url")
    p.add_argument("out")
    p.add_argument("--width", type=int, default=1440)
    p.add_argument("--height", type=int, default=1500)
    p.add_argument("--click", action="append", default=[])
    args = p.parse_args(argv)
    with Browser(width=args.width, height=min(args.height, 1200)) as b:
        b.open(args.url)
        for selector in args.click:
            b.click(selector)
        if b.errors or b.dialogs:
            raise ProtocolError("the page logged errors: %s" % (b.errors + b.dialogs))
        b.screenshot(args.out, height=args.height)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))

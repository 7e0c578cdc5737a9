#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server for GPU checks of the LLM policy where no
language model can be reached (the lent GPU machines have no network): it answers each
/chat/completions request with the next file of ANSWERS (sorted; after the last, the last again),
streamed as server-sent events or as one JSON object as the request asks, and appends every request
body to LOG (one JSON line each: what the policy sent, i.e. the prompts). It is NOT a model: runs
against it check the measuring path (labels, custom share, GPU times, duels, session records),
never what a model would write. Standard library only.

  scripts/scripted-llm.py --answers DIR --port-file FILE [--port 0] [--log FILE]
"""
import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--answers", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", default=None)
    a = p.parse_args()
    answers = [open(os.path.join(a.answers, f), encoding="utf8").read() for f in sorted(os.listdir(a.answers)) if not f.startswith(".")]
    if not answers:
        sys.exit(f"no answers in {a.answers}")
    state = {"n": 0}
    lock = threading.Lock()

    class H(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def _json(self, code, obj):
            b = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def do_GET(self):
            if self.path.endswith("/models"):
                return self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "created": 1, "owned_by": "kernelduel"}]})
            self._json(404, {"error": {"message": "not found"}})

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return self._json(400, {"error": {"message": "bad json"}})
            if not self.path.endswith("/chat/completions"):
                return self._json(404, {"error": {"message": "not found"}})
            with lock:
                i = state["n"]
                state["n"] += 1
                if a.log:
                    with open(a.log, "a", encoding="utf8") as f:
                        f.write(json.dumps({"index": i, "body": body}) + "\n")
            text = answers[min(i, len(answers) - 1)]
            model = body.get("model") or "scripted"
            if not body.get("stream"):
                return self._json(200, {"id": "scripted", "object": "chat.completion", "created": 1, "model": model,
                                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                                        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.end_headers()

            def chunk(delta, finish):
                c = {"id": "scripted", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())

            chunk({"role": "assistant", "content": ""}, None)
            for k in range(0, len(text), 400):
                chunk({"content": text[k:k + 400]}, None)
            chunk({}, "stop")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), H)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A webhook receiver for `receipt serve --webhook`: checks each delivery's Standard Webhooks
signature with libreceipt, de-duplicates on webhook-id, prints one line per new event, answers 204.

    webhook_receiver.py --port 18092 --secret-file webhook.secret [--count N]

A delivery whose signature does not verify gets 401 (the server retries it, then parks it).
With --count, exits after N events (a script can wait on it)."""
import argparse
import http.server
import json
import sys

from libreceipt import ReceiptError, webhook


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret-file", required=True)
    parser.add_argument("--count", type=int)
    arguments = parser.parse_args()
    secret = open(arguments.secret_file).read().strip()
    seen = set()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                event_id = webhook.verify(secret, dict(self.headers.items()), body)
            except (ReceiptError, ValueError) as error:
                print(f"refused: {error}", file=sys.stderr, flush=True)
                self.send_response(401)
                self.end_headers()
                return
            if event_id not in seen:  # at-least-once: a redelivery carries the same webhook-id
                seen.add(event_id)
                data = json.loads(body)["data"]
                print(json.loads(body)["type"], event_id, data.get("original_transaction_id", "-"),
                      data.get("state", {}) and data["state"]["status_name"], flush=True)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", arguments.port), Handler)
    while arguments.count is None or len(seen) < arguments.count:
        server.handle_request()


if __name__ == "__main__":
    main()

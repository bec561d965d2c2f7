#!/usr/bin/env python3
"""Serves a folder over HTTP on 127.0.0.1 with a fixed added latency per request, for the
benchmark's remote case. Prints the port on the first line of stdout, then serves until killed.

usage: serve.py DIR [--latency SECONDS]
"""
import argparse
import functools
import http.server
import sys
import time


class SlowHandler(http.server.SimpleHTTPRequestHandler):
    latency = 0.0

    def do_GET(self):
        time.sleep(self.latency)
        super().do_GET()

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--latency", type=float, default=0.02)
    args = parser.parse_args()
    SlowHandler.latency = args.latency
    handler = functools.partial(SlowHandler, directory=args.directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())

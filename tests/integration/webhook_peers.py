#!/usr/bin/env python3
"""Hostile and careless peers of karpenter-webhook, for test_webhook.sh.

  webhook_peers.py slowloris PORT CA N SECONDS [headers]
      N connections that never finish a request: half stall in the TLS
      handshake, half in the headers (all in the headers with "headers"),
      each sending a byte every 0.3 s, while a
      well-behaved client tries GET /healthz every 0.5 s. Prints
      "served=<0|1> cut=<connections the server closed>".
  webhook_peers.py keepalive PORT CA N BYTES
      N keep-alive connections each send one review of about BYTES bytes,
      read the answer and stay open; prints "ready" and waits for stdin to
      close.
  webhook_peers.py raw PORT CA REQUEST
      Sends REQUEST (with \\r\\n escapes) and prints the status line.
"""
import socket
import ssl
import sys
import time


def tls(port, ca):
    ctx = ssl.create_default_context(cafile=ca)
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    return ctx.wrap_socket(raw, server_hostname="localhost")


def closed(sock):
    sock.setblocking(False)
    try:
        data = sock.recv(1)
        return data == b""
    except (BlockingIOError, ssl.SSLWantReadError):
        return False
    except (OSError, ssl.SSLError):
        return True
    finally:
        sock.setblocking(True)


def healthz(port, ca):
    try:
        s = tls(port, ca)
        s.settimeout(2)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        ok = s.recv(64).startswith(b"HTTP/1.1 200")
        s.close()
        return ok
    except (OSError, ssl.SSLError):
        return False


def slowloris(port, ca, n, seconds, headers_only=False):
    peers = []
    for i in range(n):
        try:
            if i % 2 or headers_only:
                s = tls(port, ca)  # handshake done: stall in the headers
                s.sendall(b"POST /validate HTTP/1.1\r\nHost: localhost\r\n")
            else:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(b"\x16\x03\x01\x02\x00")  # a 512-byte handshake record, never sent
            peers.append(s)
        except (OSError, ssl.SSLError):
            break
    cut = set()
    served = False
    end = time.time() + seconds
    next_probe = time.time() + 0.5
    while time.time() < end:
        for i, s in enumerate(peers):
            if i in cut:
                continue
            try:
                s.send(b"X" if isinstance(s, ssl.SSLSocket) else b"\x01")
            except (OSError, ssl.SSLError):
                cut.add(i)
                continue
            if closed(s):
                cut.add(i)
        if time.time() >= next_probe and not served:
            served = healthz(port, ca)
            next_probe = time.time() + 0.5
        time.sleep(0.3)
    print(f"served={int(served)} cut={len(cut)} of={len(peers)}")


def keepalive(port, ca, n, size):
    pad = "x" * size
    body = (
        '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"k",'
        '"kind":{"group":"karpenter.sh","version":"v1","kind":"NodeClaim"},"operation":"DELETE",'
        '"object":{"metadata":{"name":"n","annotations":{"pad":"' + pad + '"}}}}}'
    ).encode()
    head = (
        "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    conns = []
    for _ in range(n):
        s = tls(port, ca)
        s.sendall(head + body)
        answer = s.recv(65536)
        if not answer.startswith(b"HTTP/1.1 200"):
            print("unexpected answer:", answer[:80])
            sys.exit(1)
        conns.append(s)
    print("ready", flush=True)
    sys.stdin.read()
    for s in conns:
        s.close()


def raw(port, ca, request):
    s = tls(port, ca)
    s.settimeout(5)
    s.sendall(request.encode().decode("unicode_escape").encode("latin-1"))
    try:
        line = s.recv(256).split(b"\r\n")[0].decode()
    except (OSError, ssl.SSLError):
        line = "closed"
    print(line or "closed")


def main():
    mode, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if mode == "slowloris":
        slowloris(port, ca, int(sys.argv[4]), float(sys.argv[5]), sys.argv[6:] == ["headers"])
    elif mode == "keepalive":
        keepalive(port, ca, int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "raw":
        raw(port, ca, sys.argv[4])
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A render worker that lies, for SandboxAttackTests (issue 51): the service starts it in
place of `aspect render-worker` (the debug build's TESTHOOK_ASPECT_WORKER) and it speaks
the worker's protocol on descriptor 3, but answers each job as the job's source says:

  FAKE MODE      where MODE is one of
    huge-size    asks for a plan for a source of Int.max × 1 pixels
    nan          a JSON answer that is not a message (a NaN where a number goes)
    int-max      a result whose length is Int.max
    sparse       a 1 GiB sparse memfd, sealed
    unsealed     a result in a memfd that is not sealed
    truncated    a memfd of 4 bytes
    two-fds      two descriptors beside one message
    flood        asks for a plan a thousand times
    wrong-size   a real PNG of 7 × 3 pixels, whatever the plan
    false-choice a real PNG of the planned size said to be format=best's choice,
                 where no format=best was planned
    honest       a real PNG of the planned size

The service's messages: a byte with a sealed memfd beside it holding an 8-byte
little-endian length, that much JSON, then a blob; its requests: JSON in the message itself,
the source's descriptor beside a job's first one.
"""
import fcntl
import json
import os
import socket
import struct
import zlib

sock = socket.socket(fileno=3)


def recv():
    data, anc, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(8 * 4))
    fds = []
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += list(struct.unpack(f"{len(payload) // 4}i", payload[: len(payload) // 4 * 4]))
    return data, fds


def memfd(content, seal=True, size=None):
    fd = os.memfd_create("fake-answer", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(fd, content)
    if size is not None:
        os.ftruncate(fd, size)
    if seal:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    return fd


def send(message, blob=b"", seal=True, size=None, raw=None, fds=1):
    body = raw if raw is not None else json.dumps(message).encode()
    fd = memfd(struct.pack("<Q", len(body)) + body + blob, seal, size)
    sock.sendmsg([b"\x01"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{fds}i", *([fd] * fds)))])
    os.close(fd)


def png(width, height):
    row = b"\x00" + b"\x80\x80\x80" * width
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")


def description(width, height):
    return {"size": {"width": width, "height": height}, "hasAlpha": False, "format": "jpeg", "bytes": 100,
            "frames": 1, "pages": 1}


recv()  # the settings
sock.send(b"R\x00")
while True:
    data, fds = recv()
    if not data:
        break
    mode = os.pread(fds[0], 64, 0).decode(errors="replace").split()[1] if fds else "honest"
    for fd in fds:
        os.close(fd)
    if mode == "huge-size":
        send({"needOrder": {"_0": description(2**63 - 1, 1)}})
        continue
    if mode == "nan":
        send(None, raw=b'{"needOrder": {"_0": {"size": {"width": NaN, "height": 1}}}}')
        continue
    if mode == "flood":
        for _ in range(1000):
            try:
                send({"needOrder": {"_0": description(64, 48)}})
            except OSError:
                break
        continue
    send({"needOrder": {"_0": description(64, 48)}})
    order, _ = recv()
    plan = json.loads(order)["order"]["_0"]["plan"]["output"]
    w, h = plan["width"], plan["height"]
    rendered = lambda n: {"rendered": {"format": "png", "resultBytes": n}}
    if mode == "int-max":
        send(rendered(2**63 - 1), png(w, h))
    elif mode == "sparse":
        send(rendered(1 << 30), png(w, h), size=1 << 30)
    elif mode == "unsealed":
        send(rendered(len(png(w, h))), png(w, h), seal=False)
    elif mode == "truncated":
        fd = memfd(b"\x01\x02\x03\x04")
        sock.sendmsg([b"\x01"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))])
        os.close(fd)
    elif mode == "two-fds":
        send(rendered(len(png(w, h))), png(w, h), fds=2)
    elif mode == "wrong-size":
        send(rendered(len(png(7, 3))), png(7, 3))
    elif mode == "false-choice":
        answer = rendered(len(png(w, h)))
        answer["rendered"]["chosen"] = {"format": "png", "lossless": True}
        send(answer, png(w, h))
    else:
        send(rendered(len(png(w, h))), png(w, h))

#!/usr/bin/env python3
"""A stand-in for the ibacm service: speaks its client protocol
(<infiniband/acm.h>) on a unix socket and on TCP, answers from a small
simulated subnet, and can be told to misbehave.

It answers as ibacm 44 with its default provider (ibacmp) does:
  * RESOLVE of an IP address, IPv6 address or name; the source must be one
    of the local endpoint addresses; without a source, one is chosen (IPv4
    10.0.0.1, IPv6 fd00::1; a name needs a source: EDESTTYPE). A success
    reply keeps the request's opcode (no ACK bit, as ibacmp does) and holds
    the path record and, when the service chose the source, that source.
    Errors come back with the ACK bit and an empty body.
  * RESOLVE of a path record (by DLID or DGID), with ACM_FLAGS_QUERY_SA
    answered as an SA check would (ACK bit set).
  * ACM_FLAGS_NODELAY: only destinations resolved before are answered,
    others get ENODATA.
  * PERF_QUERY of the service's counters, of endpoint N (which ibacm looks
    up as the N-th endpoint on port N), or of the endpoint owning an
    address; EP_QUERY of endpoint N on a port.

Subnet: local port LID 1, SGID fe80::2:c903:0:1. An IPv4/IPv6 destination
whose last byte B is 1..199 is LID B+1 with GID fe80::2:c903:0:<B+1>; a
name ending in a number N (1..199) likewise; other names, and addresses
ending in 200..255, have no data (ENODATA). A path request by LID L
(2..999) or by such a GID resolves; others get ENODATA.

--paths FILE replaces the computed record for given destinations: a JSON
object {"<destination text>": {<path field>: value, ...}} with the fields
of fabric::acm::path_record (dgid, sgid, dlid, slid, flow_label, hop_limit,
tclass, reversible, numb_path, pkey, qos_class, sl, mtu, rate,
packet_life_time, and *_selector); a destination "lid:<L>" or "gid:<G>"
applies to path requests.

--misbehave MODE answers every request wrongly: truncated (half a reply,
then close), oversize (a length beyond the protocol's), version, opcode,
tid, short (a body that is not whole entries), nopath (success without a
path record), silent (never answers), close (closes without answering),
trailing (a good reply followed by junk), drip (a good reply one byte
every 50 ms), backlog (never accepts; its listen backlog kept full, so a
unix-socket connect finds no room), bytes (endpoint replies whose provider
name and addresses carry bytes that are not UTF-8 and terminal escapes),
counters (PERF replies with 10 counters, three past the known seven).
"""

import argparse
import ipaddress
import json
import os
import re
import selectors
import signal
import socket
import struct
import sys
import time

HDR = struct.Struct("=BBB3sHQ")       # host order: RESOLVE
HDR_BE = struct.Struct(">BBB3sH") # PERF/EP: length big-endian; tid kept raw
ENTRY = struct.Struct("=IHH64s")
OP_RESOLVE, OP_PERF, OP_EP, ACK = 1, 2, 3, 0x80
T_NAME, T_IP, T_IP6, T_PATH = 1, 2, 3, 0x10
F_SOURCE, F_DEST, F_NODELAY, F_QUERY_SA = 1, 2, 1 << 30, 1 << 31
ST_OK, ST_EINVAL, ST_ENODATA, ST_ESRCADDR, ST_ESRCTYPE, ST_EDESTADDR, ST_EDESTTYPE = 0, 2, 3, 7, 8, 9, 10
CNT_ERROR, CNT_RESOLVE, CNT_NODATA, CNT_ADDR_QUERY, CNT_ADDR_CACHE, CNT_ROUTE_QUERY, CNT_ROUTE_CACHE = range(7)

GID_PREFIX = bytes.fromhex("fe80000000000000") + bytes.fromhex("0002c903")
LOCAL_LID = 1
DEV_GUID = 0x0002C90300ABCDEF


def gid_for(lid):
    return GID_PREFIX + struct.pack(">I", lid)


class Endpoint:
    def __init__(self, port, pkey, addrs):
        self.port, self.pkey, self.addrs = port, pkey, addrs
        self.counters = [0] * 7


ENDPOINTS = [
    Endpoint(1, 0xFFFF, ["10.0.0.1", "fd00::1", "acm-host"]),
    Endpoint(1, 0x8001, ["10.0.1.1", "acm-host-1"]),
    Endpoint(2, 0xFFFF, ["10.0.2.1", "acm-host-2"]),
]
PORT_CNT = 2


def get_ep(index, port):
    """ibacm's acm_get_ep: the index-th endpoint (0-based) over the ports,
    restricted to one port unless port is 0."""
    inx = 0
    for p in range(1, PORT_CNT + 1):
        if port and port != p:
            continue
        for ep in ENDPOINTS:
            if ep.port != p:
                continue
            if inx == index:
                return ep
            inx += 1
    return None


def path_bytes(f):
    fl = (1 << 31 if f.get("raw_traffic") else 0) | (f.get("flow_label", 0) & 0xFFFFF) << 8 | f.get("hop_limit", 0)
    return struct.pack(
        ">Q16s16sHHIBBHHBBBB6x",
        f.get("service_id", 0),
        ipaddress.IPv6Address(f["dgid"]).packed,
        ipaddress.IPv6Address(f["sgid"]).packed,
        f["dlid"], f["slid"], fl, f.get("tclass", 0),
        (0x80 if f.get("reversible", True) else 0) | f.get("numb_path", 1),
        f.get("pkey", 0xFFFF),
        (f.get("qos_class", 0) << 4) | f.get("sl", 0),
        (f.get("mtu_selector", 2) << 6) | f.get("mtu", 4),
        (f.get("rate_selector", 2) << 6) | f.get("rate", 7),
        (f.get("packet_life_time_selector", 2) << 6) | f.get("packet_life_time", 18),
        f.get("preference", 0))


def computed_path(lid):
    return {"dgid": str(ipaddress.IPv6Address(gid_for(lid))), "sgid": str(ipaddress.IPv6Address(gid_for(LOCAL_LID))),
            "dlid": lid, "slid": LOCAL_LID}


class Service:
    def __init__(self, args):
        self.args = args
        self.paths = {}
        if args.paths:
            with open(args.paths) as f:
                self.paths = json.load(f)
        self.counters = [0] * 7
        self.cache = set()

    # -- resolution ---------------------------------------------------------

    def dest_lid(self, typ, raw):
        if typ == T_IP:
            last = raw[3]
        elif typ == T_IP6:
            last = raw[15]
        else:
            m = re.search(r"(\d+)$", raw.split(b"\0", 1)[0].decode(errors="replace"))
            if not m:
                return None
            last = int(m.group(1))
        return last + 1 if 1 <= last <= 199 else None

    @staticmethod
    def text(typ, raw):
        if typ == T_IP:
            return str(ipaddress.IPv4Address(raw[:4]))
        if typ == T_IP6:
            return str(ipaddress.IPv6Address(raw[:16]))
        return raw.split(b"\0", 1)[0].decode(errors="replace")

    def local_ep(self, typ, raw):
        t = self.text(typ, raw)
        for ep in ENDPOINTS:
            if t in ep.addrs:
                return ep
        return None

    def record_for(self, key, lid):
        fields = computed_path(lid) if lid else None
        if key in self.paths:
            fields = dict(computed_path(lid or 2), **self.paths[key])
        return fields

    def resolve(self, hdr, body):
        version, op, status, data, length, tid = hdr
        n = len(body) // ENTRY.size
        entries = [list(ENTRY.unpack_from(body, i * ENTRY.size)) for i in range(n)]
        self.counters[CNT_RESOLVE] += 1
        if n and entries[0][1] == T_PATH:
            return self.resolve_path(hdr, entries)
        src = [e for e in entries if e[0] & F_SOURCE]
        dst = [e for e in entries if e[0] & F_DEST]
        if len(src) > 1:
            return self.fail(hdr, ST_ESRCADDR)
        if len(dst) != 1:
            return self.fail(hdr, ST_EDESTTYPE if not dst else ST_EDESTADDR)
        d = dst[0]
        if not d[1] or d[1] >= 4:
            return self.fail(hdr, ST_EDESTTYPE)
        chosen = None
        if src:
            s = src[0]
            if not s[1] or s[1] >= 4:
                return self.fail(hdr, ST_ESRCTYPE)
        else:
            if d[1] == T_IP:
                chosen = [F_SOURCE, T_IP, 0, ipaddress.IPv4Address("10.0.0.1").packed.ljust(64, b"\0")]
            elif d[1] == T_IP6:
                chosen = [F_SOURCE, T_IP6, 0, ipaddress.IPv6Address("fd00::1").packed.ljust(64, b"\0")]
            else:
                return self.fail(hdr, ST_EDESTTYPE)
            s = chosen
        ep = self.local_ep(s[1], s[3])
        if ep is None:
            return self.fail(hdr, ST_ESRCADDR)
        ep.counters[CNT_RESOLVE] += 1
        key = self.text(d[1], d[3])
        lid = self.dest_lid(d[1], d[3])
        fields = self.record_for(key, lid)
        if fields is None:
            ep.counters[CNT_NODATA] += 1
            return self.fail(hdr, ST_ENODATA)
        if key not in self.cache:
            if d[0] & F_NODELAY:
                ep.counters[CNT_NODATA] += 1
                return self.fail(hdr, ST_ENODATA)
            ep.counters[CNT_ADDR_QUERY] += 1
            ep.counters[CNT_ROUTE_QUERY] += 1
            self.cache.add(key)
        else:
            ep.counters[CNT_ADDR_CACHE] += 1
        out = [(0x1 | 0x2 | 0x8 | 0x20, T_PATH, 0, path_bytes(fields))]
        if chosen:
            out.append(tuple(chosen))
        # ibacmp sends the request's header back as it came: no ACK bit.
        return self.reply_resolve((version, op, ST_OK, b"\0\0\0", 0, tid), out)

    def resolve_path(self, hdr, entries):
        version, op, status, data, length, tid = hdr
        e = entries[0]
        raw = e[3]
        dlid = struct.unpack_from(">H", raw, 40)[0]
        dgid = raw[8:24]
        if not dlid and dgid == bytes(16):
            return self.fail(hdr, ST_EDESTADDR)
        if dlid:
            key, lid = "lid:%d" % dlid, dlid if 2 <= dlid <= 999 else None
        else:
            key = "gid:" + str(ipaddress.IPv6Address(dgid))
            lid = struct.unpack(">I", dgid[12:])[0] if dgid[:12] == GID_PREFIX else None
            lid = lid if lid and 2 <= lid <= 999 else None
        fields = self.record_for(key, lid)
        if fields is None:
            # A path handed out for an address is known by its DLID / DGID.
            for rec in self.paths.values():
                if (dlid and rec.get("dlid") == dlid) or (not dlid and "dgid" in rec and
                        ipaddress.IPv6Address(rec["dgid"]).packed == dgid):
                    fields = dict(computed_path(2), **rec)
                    break
        ep = ENDPOINTS[0]
        ep.counters[CNT_RESOLVE] += 1
        if fields is None:
            ep.counters[CNT_NODATA] += 1
            return self.fail(hdr, ST_ENODATA)
        if e[0] & F_QUERY_SA:
            # An SA check answers with the record the SA holds, ACK set, and
            # the request's length.
            ep.counters[CNT_ROUTE_QUERY] += 1
            return self.reply_resolve((version, op | ACK, ST_OK, b"\0\0\0", 0, tid),
                                      [(e[0], T_PATH, 0, path_bytes(fields))])
        if key not in self.cache:
            if e[0] & F_NODELAY:
                ep.counters[CNT_NODATA] += 1
                return self.fail(hdr, ST_ENODATA)
            ep.counters[CNT_ROUTE_QUERY] += 1
            self.cache.add(key)
        else:
            ep.counters[CNT_ROUTE_CACHE] += 1
        return self.reply_resolve((version, op, ST_OK, b"\0\0\0", 0, tid),
                                  [(0x1 | 0x2 | 0x8 | 0x20, T_PATH, 0, path_bytes(fields))])

    def fail(self, hdr, status):
        version, op, _, data, length, tid = hdr
        self.counters[CNT_NODATA if status == ST_ENODATA else CNT_ERROR] += 1
        return HDR.pack(version, op | ACK, status, b"\0\0\0", HDR.size, tid)

    @staticmethod
    def reply_resolve(h, entries):
        version, op, status, data, _, tid = h
        body = b"".join(ENTRY.pack(f, t, r, d.ljust(64, b"\0")) for f, t, r, d in entries)
        return HDR.pack(version, op, status, data, HDR.size + len(body), tid) + body

    # -- queries ------------------------------------------------------------

    def perf(self, raw, body):
        version, op, status, data, length = HDR_BE.unpack_from(raw)
        tid_raw = raw[8:16]
        index = data[1]
        if (len(raw) < 16 + ENTRY.size and index < 1) or (len(raw) >= 16 + ENTRY.size and not
                                                           ENTRY.unpack_from(body)[0] & F_SOURCE):
            counters = self.counters
        else:
            if index >= 1:
                ep = get_ep(index - 1, index)
            else:
                f, t, _, a = ENTRY.unpack_from(body)
                ep = self.local_ep(t, a)
            if ep is None:
                return HDR_BE.pack(version, op | ACK, ST_ESRCADDR, bytes([data[0], index, 0]), 16) + tid_raw
            counters = ep.counters
        if self.args.misbehave == "counters":
            counters = list(counters) + [1007, 1008, 1009]
        payload = b"".join(struct.pack(">Q", c) for c in counters)
        return HDR_BE.pack(version, op | ACK, ST_OK, bytes([len(counters), index, 0]), 16 + len(payload)) + tid_raw + payload

    def ep_query(self, raw):
        version, op, status, data, length = HDR_BE.unpack_from(raw)
        tid_raw = raw[8:16]
        ep = get_ep(data[0] - 1, data[1])
        port, port_count = (ep.port if ep else 0), PORT_CNT
        if self.args.misbehave == "endless":  # the first endpoint at every index, on each of 255 ports
            ep, port, port_count = ENDPOINTS[0], data[1], 255
        if ep is None:
            return HDR_BE.pack(version, op | ACK, ST_EINVAL, bytes([data[0], 0, 0]), 16) + tid_raw
        prov, addrs = b"ibacmp", [a.encode() for a in ep.addrs]
        if self.args.misbehave == "bytes":
            prov = b"ib\xffacmp\x1b]0;owned\x07"
            addrs = [b"\xfe\xfehost\x1b[2J"] + addrs[1:]
        body = struct.pack(">QBB2xHH64s", DEV_GUID, port, port_count, ep.pkey, len(addrs), prov.ljust(64, b"\0"))
        body += b"".join(a.ljust(64, b"\0") for a in addrs)
        return HDR_BE.pack(version, op | ACK, ST_OK, bytes([data[0], 0, 0]), 16 + len(body)) + tid_raw + body

    # -- framing ------------------------------------------------------------

    def handle(self, msg):
        """One request (whole) -> reply bytes, or None to drop the client."""
        if msg[0] != 1:
            return None  # ibacm drops a client that speaks another version
        op = msg[1] & 0x0F
        if op == OP_RESOLVE:
            return self.resolve(HDR.unpack_from(msg), msg[16:])
        if op == OP_PERF:
            return self.perf(msg, msg[16:])
        if op == OP_EP:
            return self.ep_query(msg)
        return None

    def misbehave(self, reply):
        mode = self.args.misbehave
        if not mode:
            return reply, False
        r = bytearray(reply)
        resolve = (r[1] & 0x0F) == OP_RESOLVE
        if mode == "truncated":
            return bytes(r[: max(len(r) // 2, 20)]), True
        if mode == "oversize":
            big = 16 + 9 * 72
            body = bytes(r[16:]).ljust(big - 16, b"\xab")
            r = r[:16]
            struct.pack_into("=H" if resolve else ">H", r, 6, big)
            return bytes(r) + body, False
        if mode == "version":
            r[0] = 2
        elif mode == "opcode":
            r[1] = 0x84
        elif mode == "tid":
            r[8] ^= 0x5A
        elif mode == "short":
            r = r[: 16 + 40]
            struct.pack_into("=H" if resolve else ">H", r, 6, len(r))
        elif mode == "nopath":
            r = r[:16]
            r[2] = 0
            struct.pack_into("=H" if resolve else ">H", r, 6, 16)
        elif mode == "trailing":
            return bytes(r) + b"\x01\x81junk", False
        return bytes(r), False


def serve(args):
    svc = Service(args)
    sel = selectors.DefaultSelector()
    listeners = []
    if args.unix:
        try:
            os.unlink(args.unix)
        except FileNotFoundError:
            pass
        u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        u.bind(args.unix)
        u.listen(64)
        listeners.append(u)
    if args.tcp is not None:
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        t.bind((args.tcp_host, args.tcp))
        t.listen(64)
        listeners.append(t)
        if args.port_file:
            with open(args.port_file, "w") as f:
                f.write("%d\n" % t.getsockname()[1])
    fillers = []
    for l in listeners:
        l.setblocking(False)
        if args.misbehave == "backlog":
            # Never accept, and take every place in the backlog ourselves.
            l.listen(0)
            while l.family == socket.AF_UNIX:
                f = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                f.setblocking(False)
                try:
                    f.connect(args.unix)
                except BlockingIOError:
                    f.close()
                    break
                fillers.append(f)
            continue
        sel.register(l, selectors.EVENT_READ, "listen")
    if args.ready:
        with open(args.ready, "w") as f:
            f.write("ready\n")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    bufs = {}
    while True:
        if not sel.get_map():
            time.sleep(3600)
            continue
        for key, _ in sel.select():
            s = key.fileobj
            if key.data == "listen":
                c, _ = s.accept()
                c.setblocking(True)
                if c.family == socket.AF_INET:
                    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sel.register(c, selectors.EVENT_READ, "client")
                bufs[c] = b""
                continue
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                sel.unregister(s)
                bufs.pop(s, None)
                s.close()
                continue
            buf = bufs[s] + data
            drop = False
            while len(buf) >= 8:
                op = buf[1] & 0x0F
                length = struct.unpack_from("=H" if op == OP_RESOLVE else ">H", buf, 6)[0]
                if length < 16 or length > 16 + 8 * 72:
                    drop = True
                    break
                if len(buf) < length:
                    break
                msg, buf = buf[:length], buf[length:]
                reply = svc.handle(msg)
                if reply is None:
                    drop = True
                    break
                mode = args.misbehave
                if mode == "silent":
                    continue
                if mode == "close":
                    drop = True
                    break
                reply, close_after = svc.misbehave(reply)
                if mode == "drip":
                    for i in range(len(reply)):
                        try:
                            s.sendall(reply[i:i + 1])
                        except OSError:
                            break
                        time.sleep(0.05)
                    continue
                s.sendall(reply)
                if close_after:
                    drop = True
                    break
            if drop:
                sel.unregister(s)
                bufs.pop(s, None)
                s.close()
            else:
                bufs[s] = buf


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--unix", help="unix socket path to serve")
    ap.add_argument("--tcp", type=int, help="TCP port to serve (0: any free port)")
    ap.add_argument("--tcp-host", default="127.0.0.1")
    ap.add_argument("--port-file", help="write the TCP port here, as ibacm does")
    ap.add_argument("--paths", help="JSON file of path records per destination")
    ap.add_argument("--misbehave", choices=["truncated", "oversize", "version", "opcode", "tid", "short", "nopath",
                                            "silent", "close", "trailing", "drip", "backlog", "bytes", "counters", "endless"])
    ap.add_argument("--ready", help="file to create once listening")
    args = ap.parse_args()
    if not args.unix and args.tcp is None:
        ap.error("give --unix and/or --tcp")
    try:
        serve(args)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

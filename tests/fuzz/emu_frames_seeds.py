#!/usr/bin/env python3
# Writes the seeds of fuzz_emu_frames (tests/fuzz/seeds/fuzz_emu_frames/): frames as
# src/emu/proto.h describes them, in the records tb__emu_coord_feed reads
# (u8 connection, u16 length, the frame).  Run it again when the protocol
# changes: python3 tests/fuzz/emu_frames_seeds.py tests/fuzz/seeds/fuzz_emu_frames
import struct, os, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
HELLO, REPORT, FINAL, FAIL = 1, 2, 3, 4
RUNNING, BLOCKED, WAITING, DONE, SENDING = 0, 1, 2, 3, 4
def rec(conn, frame):
    return struct.pack('<BH', conn, len(frame)) + frame
def hello(r, P=4):
    host = b'node0'
    return struct.pack('<BIII', HELLO, r, P, 1000 + r) + struct.pack('<I', len(host)) + host + b'\x00'
def report(clock, state, kind, deadline, pats, sends, recvs):
    b = struct.pack('<BdBBd', REPORT, clock, state, kind, deadline)
    b += struct.pack('<I', len(pats)) + b''.join(struct.pack('<Iii', *p) for p in pats)
    b += struct.pack('<I', len(sends)) + b''.join(struct.pack('<IIiQd', *s) for s in sends)
    b += struct.pack('<I', len(recvs)) + b''.join(struct.pack('<IQ', *r) for r in recvs)
    return b
def final(clock, sends=(), recvs=()):
    b = report(clock, DONE, 0, float('inf'), [], list(sends), list(recvs))
    b = bytes([FINAL]) + b[1:]
    b += struct.pack('<ddddQQQ', 0.5, 0.1, 0.1, 0.0, len(sends), 100, len(recvs))
    b += struct.pack('<I', 0)
    return b
# a master (rank 0) and three workers: each worker sends one result, rank 0
# takes them with any-source receives, then all finalize
s = b''.join(rec(k, hello(k)) for k in range(4))
for w in (1, 2, 3):
    s += rec(w, report(0.01 * w, RUNNING, 0, float('inf'), [], [(0, 0, 7, 1, 0.01 * w + 1e-4)], []))
s += rec(0, report(0.0, WAITING, 0, float('inf'), [(0, -1, -1)], [], []))
s += rec(0, report(0.02, WAITING, 0, float('inf'), [(0, -1, -1)], [], [(1, 1)]))
s += rec(0, final(0.05, (), [(2, 1), (3, 1)]))
for w in (1, 2, 3):
    s += rec(w, final(0.01 * w + 2e-4))
open(os.path.join(out, 'master-3-workers'), 'wb').write(s)
# a probe (PEEK) with a deadline, then a FAIL
s = b''.join(rec(k, hello(k)) for k in range(4))
s += rec(1, report(0.0, WAITING, 1, 0.5, [(0, 2, 3)], [], []))
s += rec(2, report(0.1, BLOCKED, 0, float('inf'), [(0, 1, -1)], [(1, 0, 3, 1, 0.2)], []))
msg = b'rank 3: MPI_Comm_spawn is not supported by the emulator'
s += rec(3, bytes([FAIL]) + struct.pack('<I', len(msg)) + msg)
open(os.path.join(out, 'peek-then-fail'), 'wb').write(s)
# two ranks wait for each other: a deadlock
s = b''.join(rec(k, hello(k)) for k in range(4))
s += rec(0, report(0.0, BLOCKED, 0, float('inf'), [(0, 1, 5)], [], []))
s += rec(1, report(0.0, BLOCKED, 0, float('inf'), [(0, 0, 5)], [], []))
s += rec(2, final(0.0))
s += rec(3, final(0.0))
open(os.path.join(out, 'deadlock'), 'wb').write(s)

#!/usr/bin/env python3
"""Stands in for an image of another iogauge version (tests/kube_image_use.rs): reads `iogauge
check --format kube-frames` output on stdin, and writes it back with the document's `iogauge`
versions set to argv[1], framed anew with fresh checksums (src/report/frames.rs's layout).
Other lines pass through."""
import json
import sys

PREFIX = "iogauge-frame "
PAYLOAD = 8192


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def main():
    version = sys.argv[1]
    pieces = {}
    for line in sys.stdin:
        if not line.startswith(PREFIX):
            sys.stdout.write(line)
            continue
        # iogauge-frame 1 <id> <seq>/<total> <bytes> <doc crc> <frame crc> <payload>
        parts = line.rstrip("\n").split(" ", 7)
        seq = int(parts[3].split("/")[0])
        pieces[seq] = parts[7] if len(parts) > 7 else ""
    if not pieces:
        return
    doc = json.loads("".join(pieces[k] for k in sorted(pieces)))
    doc["iogauge"] = version
    if isinstance(doc.get("context"), dict):
        doc["context"]["iogauge"] = version
    # ASCII only (non-ASCII escaped), so that any cut is at a character boundary.
    raw = json.dumps(doc, separators=(",", ":")).encode()
    fixed = [raw[i:i + PAYLOAD] for i in range(0, len(raw), PAYLOAD)]
    doc_crc = crc32c(raw)
    total = len(fixed)
    for i, p in enumerate(fixed):
        covered = f"0000beef {i + 1}/{total} {len(raw)} {doc_crc:08x} ".encode()
        crc = crc32c(covered + p)
        sys.stdout.write(f"{PREFIX}1 {covered.decode()}{crc:08x} {p.decode()}\n")


main()

"""pcap traces read by an independent reader (dpkt; tshark too where installed).

A dumbbell run with SACK, timestamps and the handshake, traced on both
directions of the bottleneck: packet counts, sequence numbers and
retransmissions against aqmlab's counters, and the TCP options (MSS,
SACK-permitted, timestamps, SACK blocks) against what the flows did.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import aqmlab

dpkt = pytest.importorskip("dpkt")

MSS = 1000
SETS = {
    "duration": "4s",
    "tcp.sack": True,
    "tcp.timestamps": True,
    "tcp.handshake": True,
    "tcp.recovery": "sack",
    "output.pcap": ["bottleneck", "src->r1"],
}


def read(path: Path) -> list[tuple[int, dpkt.ip.IP]]:
    """(timestamp in ns, IP packet) of every record."""
    out = []
    with open(path, "rb") as f:
        r = dpkt.pcap.Reader(f)
        assert r.datalink() == dpkt.pcap.DLT_EN10MB
        assert r.snaplen == 128
        for ts, buf in r:
            out.append((round(float(ts) * 1e9), dpkt.ethernet.Ethernet(buf).data))
    return out


def opts(tcp: dpkt.tcp.TCP) -> dict[int, bytes]:
    return dict(dpkt.tcp.parse_opts(tcp.opts))


def ts_opt(tcp: dpkt.tcp.TCP) -> tuple[int, int]:
    v = opts(tcp)[dpkt.tcp.TCP_OPT_TIMESTAMP]
    return int.from_bytes(v[:4], "big"), int.from_bytes(v[4:], "big")


def sack_blocks(tcp: dpkt.tcp.TCP) -> list[tuple[int, int]]:
    v = opts(tcp).get(dpkt.tcp.TCP_OPT_SACK, b"")
    return [
        (int.from_bytes(v[i : i + 4], "big"), int.from_bytes(v[i + 4 : i + 8], "big"))
        for i in range(0, len(v), 8)
    ]


@pytest.fixture(scope="module")
def traced(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[aqmlab.Result, Path]:
    out = tmp_path_factory.mktemp("pcap")
    sc = aqmlab.Scenario.from_file(repo / "scenarios/aqm-compare.toml").set_many(SETS)
    return aqmlab.run(sc, seed=1, out=out), out


def test_packets_sequence_numbers_and_retransmissions(traced):
    r, out = traced
    links = r.links.set_index("link")
    for name, link in [
        ("bottleneck.r1-r2", "r1->r2"),
        ("bottleneck.r2-r1", "r2->r1"),
        ("src-r1.src-r1", "src->r1"),
    ]:
        assert len(read(out / f"{name}.pcap")) == links.loc[link, "tx_packets"], name
    # The access link carries every packet the senders emit, before any
    # queue can drop them: a sequence number seen again is a retransmission.
    flows = r.flows.set_index("id")
    sent: dict[int, Counter[int]] = defaultdict(Counter)
    for _, ip in read(out / "src-r1.src-r1.pcap"):
        tcp = ip.data
        if isinstance(tcp, dpkt.tcp.TCP) and not tcp.flags & dpkt.tcp.TH_SYN:
            assert tcp.seq % MSS == 0
            sent[tcp.sport - 1024][tcp.seq] += 1
    tcp_flows = flows[flows["cc"] != "cbr"]
    assert len(sent) == len(tcp_flows)
    for fid, seqs in sent.items():
        f = flows.loc[fid]
        assert sum(seqs.values()) == f["segments_sent"], fid
        assert sum(n - 1 for n in seqs.values()) == f["retransmits"], fid
    assert tcp_flows["retransmits"].sum() > 0, "the scenario should lose packets"


def test_tcp_options(traced):
    r, out = traced
    fwd, back = read(out / "bottleneck.r1-r2.pcap"), read(out / "bottleneck.r2-r1.pcap")
    tsvals: dict[int, set[int]] = defaultdict(set)
    syns = 0
    for t, ip in fwd:
        tcp = ip.data
        if not isinstance(tcp, dpkt.tcp.TCP):
            continue
        o = opts(tcp)
        if tcp.flags & dpkt.tcp.TH_SYN:
            syns += 1
            assert int.from_bytes(o[dpkt.tcp.TCP_OPT_MSS], "big") == MSS
            assert dpkt.tcp.TCP_OPT_SACKOK in o
        tsval, tsecr = ts_opt(tcp)
        # TSval: the sender's emission time in µs, at most the start of
        # transmission on this link.
        assert tsval * 1000 <= t
        assert t - tsval * 1000 < 1_000_000_000
        if not tcp.flags & dpkt.tcp.TH_SYN:
            assert tsecr == 0
        tsvals[tcp.sport].add(tsval)
    assert syns == len(tsvals)
    sacked: set[int] = set()
    n_sack = 0
    for t, ip in back:
        tcp = ip.data
        if not isinstance(tcp, dpkt.tcp.TCP) or tcp.flags & dpkt.tcp.TH_SYN:
            continue
        tsval, tsecr = ts_opt(tcp)
        assert tsval * 1000 <= t
        # The echo is the TSval of a segment of the same flow.
        assert tsecr in tsvals[tcp.dport], (tcp.dport, tsecr)
        assert tsecr <= tsval
        blocks = sack_blocks(tcp)
        assert len(blocks) <= 3  # with timestamps (RFC 2018 §3)
        for left, right in blocks:
            assert left % MSS == 0 and right % MSS == 0 and tcp.ack < left < right
        if blocks:
            n_sack += 1
            sacked.add(tcp.dport - 1024)
    flows = r.flows.set_index("id")
    assert n_sack > 0
    # SACK blocks only from flows that lost packets.
    assert all(flows.loc[f, "drops"] > 0 for f in sacked), sacked


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_reads_the_options(traced):
    r, out = traced
    fields = ["tcp.options.timestamp.tsval", "tcp.options.sack_le", "tcp.options.sack_re"]
    p = subprocess.run(
        ["tshark", "-n", "-r", str(out / "bottleneck.r2-r1.pcap"), "-T", "fields"]
        + [a for f in fields for a in ("-e", f)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    rows = [line.split("\t") for line in p.stdout.splitlines()]
    assert len(rows) == r.links.set_index("link").loc["r2->r1", "tx_packets"]
    assert all(x[0] for x in rows), "every ACK carries timestamps"
    assert any(x[1] for x in rows), "tshark sees SACK blocks"

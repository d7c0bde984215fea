"""Bad input raises aqmlab.ScenarioError with the key path and the CLI's message."""

from __future__ import annotations

import pickle
import subprocess
from pathlib import Path

import pytest

import aqmlab

COMPARE = "scenarios/aqm-compare.toml"


def cli_error(cli: str, repo: Path, tmp_path: Path, *args: str) -> str:
    p = subprocess.run(
        [cli, "run", *args, "--out", str(tmp_path / "out")],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert not (tmp_path / "out").exists()
    return p.stderr.strip()


def test_bad_value_same_message_as_cli(cli, repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    red = '{ kind = "red", limit = 400, min_th = 20, max_th = 10 }'
    want = cli_error(cli, repo, tmp_path, COMPARE, "--set", f"links.bottleneck.queue_ab={red}")
    sc = aqmlab.Scenario.from_file(COMPARE)
    with pytest.raises(aqmlab.ScenarioError) as e:
        sc.set(
            "links.bottleneck.queue_ab", {"kind": "red", "limit": 400, "min_th": 20, "max_th": 10}
        )
    assert want == f"error: {e.value}"
    assert e.value.path == "links[1].queue_ab.max_th"
    assert e.value.file == COMPARE
    assert "min_th" in e.value.reason
    # the failed set left the scenario as it was
    assert sc.get("links.bottleneck.queue_ab.kind") == "droptail"


def test_unknown_key_same_message_as_cli(cli, repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    want = cli_error(cli, repo, tmp_path, COMPARE, "--set", "links.bottleneck.queue_ab.max_pp=0.1")
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_file(COMPARE).set("links.bottleneck.queue_ab.max_pp", 0.1)
    assert want == f"error: {e.value}"
    assert e.value.path is not None and e.value.path.startswith("links[1].queue_ab")


def test_bad_file_same_message_as_cli(cli, repo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nduration = 10\n[nodes]\nhosts = []\nlinks = []\n')
    want = cli_error(cli, repo, tmp_path, str(bad))
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_file(bad)
    assert want == f"error: {e.value}"
    assert e.value.path == "duration"
    with pytest.raises(aqmlab.ScenarioError) as e2:
        aqmlab.run(str(bad))
    assert str(e2.value) == str(e.value)


def test_missing_file_and_bad_toml(tmp_path):
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_file(tmp_path / "nope.toml")
    assert "cannot read" in str(e.value) and e.value.path is None
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_toml("name = ", name="inline")
    assert str(e.value).startswith("inline: invalid TOML") and e.value.path is None


def test_from_dict_errors_name_the_key(repo):
    d = aqmlab.Scenario.from_file(repo / COMPARE).to_dict()
    d["links"][1]["rate"] = "20 furlongs"
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_dict(d, name="mine")
    assert e.value.path == "links[1].rate" and e.value.file == "mine"
    d["links"][1]["rate"] = None
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.Scenario.from_dict(d)
    assert e.value.path == "links[1].rate" and "None" in e.value.reason


def test_set_errors(repo):
    sc = aqmlab.Scenario.from_file(repo / COMPARE)
    with pytest.raises(aqmlab.ScenarioError) as e:
        sc.set("links.nosuch.rate", "1Mbps")
    assert e.value.path == "links.nosuch.rate" and "unknown element `nosuch`" in str(e.value)
    with pytest.raises(aqmlab.ScenarioError) as e:
        sc.set("links.7.rate", "1Mbps")
    assert "out of range" in e.value.reason
    with pytest.raises(aqmlab.ScenarioError) as e:
        sc.set("duration", object())
    assert e.value.path == "duration"
    # values valid only together go through set_many
    with pytest.raises(aqmlab.ScenarioError):
        sc.set(
            "links.bottleneck.queue_ab", {"kind": "red", "limit": 400, "min_th": 80, "max_th": 90}
        )
        sc.set("links.bottleneck.queue_ab.max_th", 70)
    ok = sc.copy().set_many(
        {
            "links.bottleneck.queue_ab": {"kind": "red", "limit": 400, "min_th": 80, "max_th": 90},
            "links.bottleneck.queue_ab.min_th": 20,
            "links.bottleneck.queue_ab.max_th": 70,
        }
    )
    assert ok.get("links.bottleneck.queue_ab.max_th") == 70


def test_scenario_error_pickles_and_is_a_value_error():
    e = aqmlab.ScenarioError("f: `a.b`: bad", "a.b", "f", "bad")
    back = pickle.loads(pickle.dumps(e))
    assert isinstance(back, ValueError)
    assert (str(back), back.path, back.file, back.reason) == ("f: `a.b`: bad", "a.b", "f", "bad")


class NoRuns:
    """An executor that fails the test if anything is submitted to it."""

    def submit(self, *a, **k):
        raise AssertionError("a run was submitted")


def test_sweep_validates_before_running(repo):
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.sweep(
            repo / "scenarios/papers/red-gateway/b1.toml",
            vary={"links.bottleneck.queue_ab.max_p": [0.1, 2.0]},
            seeds=1,
            client=NoRuns(),
        )
    assert e.value.path == "links[5].queue_ab.max_p"
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.sweep(repo / COMPARE, vary={"duration": ["1s"]}, link="r9->r1", client=NoRuns())
    assert e.value.path == "sweep.link" and "r1->r2" in str(e.value)


MINI = """
name = "mini"
duration = "1s"
[nodes]
hosts = ["h1", "h2"]
routers = ["r"]
[[links]]
a = "h1"
b = "r"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r"
b = "h2"
rate = "1Mbps"
delay = "5ms"
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
"""


@pytest.mark.parametrize("parts", [33, 5_000, 7_000, 100_000])
def test_a_deep_key_path_is_refused_with_the_limit(parts: int) -> None:
    # 7 000 parts crashed the interpreter; 5 000 echoed 10 kB of TOML
    sc = aqmlab.Scenario.from_toml(MINI, "inline")
    path = ".".join(["a"] * parts)
    with pytest.raises(aqmlab.ScenarioError) as e:
        sc.set(path, 1)
    msg = str(e.value)
    assert f"{parts} parts" in msg and "at most 32 parts and 500 characters" in msg, msg
    assert len(msg) < 600 and "\n" not in msg
    assert e.value.path is not None and len(e.value.path) <= 250
    with pytest.raises(aqmlab.ScenarioError):
        sc.set_many({path: 1})
    with pytest.raises(aqmlab.ScenarioError):
        sc.get(path)


def test_a_long_key_path_is_refused_with_the_limit() -> None:
    sc = aqmlab.Scenario.from_toml(MINI, "inline")
    with pytest.raises(aqmlab.ScenarioError) as e:
        sc.set("tcp." + "x" * 10_000, 1)
    assert "10004 characters" in str(e.value) and len(str(e.value)) < 600

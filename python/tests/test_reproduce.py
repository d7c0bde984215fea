"""`aqmlab.reproduce`: the paper-vs-aqmlab tables of `aqmlab reproduce`, as DataFrames."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

import aqmlab


def test_tables_equal_the_cli_tables_csv(cli, repo, tmp_path):
    subprocess.run(
        [
            cli,
            "reproduce",
            "maxnet-mice",
            "--seeds",
            "1",
            "--duration",
            "25s",
            "--out",
            str(tmp_path / "cli"),
        ],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=600,
    )
    want = pd.read_csv(tmp_path / "cli/tables.csv")
    got = aqmlab.reproduce("maxnet-mice", seeds=1, duration="25s", out=tmp_path / "py")
    assert list(got) == list(dict.fromkeys(want["table"]))
    for name, df in got.items():
        w = want[want["table"] == name].drop(columns="table").reset_index(drop=True)
        assert list(df.columns) == [
            "row",
            "column",
            "unit",
            "paper",
            "aqmlab_mean",
            "aqmlab_sd",
            "n",
        ]
        pd.testing.assert_frame_equal(df, w, check_exact=False, rtol=1e-12, obj=name)
        assert (df["n"] == 1).all()
    # out= writes what the command writes
    assert (tmp_path / "py/tables.csv").read_bytes() == (tmp_path / "cli/tables.csv").read_bytes()
    assert (tmp_path / "py/report.md").exists()
    # the same call with seconds
    again = aqmlab.reproduce("maxnet-mice", seeds=1, duration=25)
    for name in got:
        pd.testing.assert_frame_equal(again[name], got[name], check_exact=True)


def test_bad_options_raise_the_cli_message(cli, repo, tmp_path):
    for args, kwargs in [
        (["no-such-paper"], {"paper": "no-such-paper"}),
        (["red-gateway", "--duration", "10s"], {"paper": "red-gateway", "duration": "10s"}),
        (["maxnet-mice", "--seeds", "0"], {"paper": "maxnet-mice", "seeds": 0}),
        (["maxnet-mice", "--load", "0.5"], {"paper": "maxnet-mice", "load": 0.5}),
    ]:
        p = subprocess.run(
            [cli, "reproduce", *args, "--out", str(tmp_path / "x")],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 2, (args, p.stderr)
        with pytest.raises(ValueError) as e:
            aqmlab.reproduce(**kwargs)
        if args[0] != "no-such-paper":  # clap words the CLI's own refusal of the name
            assert p.stderr.strip() == f"error: {e.value}", args
        assert not (tmp_path / "x").exists()

"""Every command on generated arguments and small bad files: exit 0 or 2, never a traceback.

Each command gets a cheap base invocation and one to three options drawn from pools of
boundary values (zero, negative, NaN, infinity, huge, wrong type) and files (binary, empty,
truncated, wrong shape, a folder, a path under a file). Options given twice take the last
value, so a drawn option overrides the base. The examples are bounded so the whole file runs in
about a minute; an example that runs past ``EXAMPLE_TIMEOUT_S`` counts as a hang.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scalewall.cli.app import main

EXAMPLE_TIMEOUT_S = 30

INTS = ["-1", "0", "1", "2", "3", "7", "64", "abc", "1.5"]
FLOATS = ["-1", "0", "0.5", "1", "2", "nan", "inf", "-inf", "1e30", "x"]
FRACS = ["-0.1", "0", "0.4", "1", "1.5", "nan", "inf"]
MODELS = [
    "llama3-8b",
    "mixtral-8x7b",
    "nosuch",
    "custom:layers=-4,hidden=64,heads=4,ffn_hidden=1,vocab=8",
]
MODEL_FILES = [
    "binary",
    "empty_json",
    "bad_json",
    "list_json",
    "typed_json",
    "zero_json",
    "bad_toml",
]
DATA_FILES = ["binary", "empty", "header_csv", "garbage_csv", "bad_json", "bad_toml", "folder"]
OUT_PATHS = ["out_file", "out_under_file", "folder", "out_new_dir"]
STACK_SETS = ["tp_comm_overlap_frac=nan", "tp_comm_overlap_frac=-1", "foo=1", "grad_buckets"]

# What a file name in a pool stands for: written under the test's folder.
FILE_BYTES: dict[str, bytes] = {
    "binary": b"\x00\x01\xff\xfe\x89PNG garbage",
    "empty": b"",
    "empty_json": b"",
    "bad_json": b'{"hidden_size": ',
    "list_json": b"[1, 2]",
    "typed_json": b'{"hidden_size": "abc", "num_attention_heads": 8, "num_hidden_layers": 2, '
    b'"vocab_size": 10}',
    "zero_json": b'{"hidden_size": 64, "num_attention_heads": 0, "num_hidden_layers": 2, '
    b'"vocab_size": 10}',
    "bad_toml": b"x = [",
    "header_csv": b"name,cpu_milli,memory_mib,num_gpu,gpu_milli\n",
    "garbage_csv": b'a,b\n1,2,3,"4\n\x00',
}
SUFFIX = {"_json": ".json", "_toml": ".toml", "_csv": ".csv"}


def _pick(*pools: list[str]) -> st.SearchStrategy[str]:
    return st.sampled_from([v for pool in pools for v in pool])


PLAN = {
    "--tp": _pick(INTS),
    "--pp": _pick(INTS),
    "--cp": _pick(INTS),
    "--vpp": _pick(INTS),
    "--dp": _pick(INTS),
    "--ep": _pick(INTS),
    "--micro-batch": _pick(INTS),
    "--global-batch": _pick(INTS),
    "--seq-len": _pick(INTS, ["4096"]),
    "--recompute": _pick(["full", "xx", ""]),
    "--zero": _pick(INTS),
    "--precision": _pick(["fp8", "mxfp8", "bf16", "xx"]),
    "--model": _pick(MODELS, MODEL_FILES),
    "--gpu": _pick(["a100-sxm-80gb", "h100-sxm-80gb", "nosuch"]),
    "--gpus": _pick(INTS),
    "--stack": _pick(["megatron-core", "nosuch"]),
    "--stack-set": _pick(STACK_SETS),
}

# command: (base arguments, {option: values}); "" as an option is a positional argument.
COMMANDS: dict[str, tuple[list[str], dict[str, st.SearchStrategy[str]]]] = {
    "estimate": (
        ["estimate", "--model", "llama3-8b", "--gpus", "64", "--tp", "2", "--pp", "2"],
        {
            **PLAN,
            "--etp": _pick(INTS),
            "--cp-mode": _pick(["a2a", "xx"]),
            "--first-stage-layers": _pick(INTS),
            "--last-stage-layers": _pick(INTS),
            "--cuda-graphs": _pick(["full", "xx"]),
            "--calibration": _pick(DATA_FILES, ["missing"]),
            "--cluster": _pick(["dgx-h100-superpod-1024", "nosuch", "bad_toml", "binary"]),
        },
    ),
    "search": (
        ["search", "--model", "llama3-8b", "--gpus", "64"],
        {
            **{k: PLAN[k] for k in ("--model", "--gpu", "--gpus", "--stack-set", "--seq-len")},
            "--global-batch": _pick(INTS),
            "--global-batch-tokens": _pick(INTS),
            "--precision": _pick(["bf16,fp8", "xx", ""]),
            "--max-cp": _pick(INTS),
            "--max-micro-batch": _pick(INTS),
            "--objective": _pick(["time_to_train", "goodput_tokens_per_s", "xx"]),
            "--token-budget": _pick(FLOATS),
            "--top": _pick(INTS, ["1000000000"]),
            "--calibration": _pick(DATA_FILES),
        },
    ),
    "wall": (
        ["wall", "--model", "llama3-8b", "--sizes", "64,128", "--workers", "1", "--fresh"],
        {
            "--model": PLAN["--model"],
            "--sizes": _pick(["64", "8,-1", "abc", "0", ",", "64,64"]),
            "--token-budget": _pick(FLOATS),
            "--knee-threshold": _pick(FRACS),
            "--band-width": _pick(FLOATS),
            "--global-batch": _pick(INTS),
            "--seq-len": _pick(INTS),
            "--workers": _pick(["-1", "1"]),
            "--csv": _pick(OUT_PATHS),
            "--plot": _pick(OUT_PATHS),
            "--results": _pick(DATA_FILES, OUT_PATHS),
            "--calibration": _pick(DATA_FILES),
            "--gpu": _pick(["nosuch", "a100-sxm-80gb"]),
        },
    ),
    "goodput": (
        ["goodput", "--model", "llama3-8b", "--gpus", "64", "--tp", "2", "--pp", "2"],
        {
            **{k: PLAN[k] for k in ("--tp", "--pp", "--cp", "--model", "--gpus", "--precision")},
            "--run-days": _pick(FLOATS),
            "--step-s": _pick(FLOATS),
            "--mc-runs": _pick(INTS),
            "--seed": _pick(INTS),
            "--spare-nodes": _pick(INTS),
            "--interval": _pick(["auto", "-5", "abc", "3600", "nan", "inf"]),
            "--storage": _pick(["local-nvme", "xx"]),
            "--failure-rates": _pick(["llama3-h100", "xx"]),
        },
    ),
    "cost": (
        ["cost"],
        {
            "--mfu": _pick(FRACS),
            "--utilisation": _pick(FRACS),
            "--goodput": _pick(FRACS),
            "--tokens": _pick(FLOATS),
            "--tokens-per-s": _pick(FLOATS),
            "--seq-len": _pick(INTS),
            "--gpus": _pick(INTS),
            "--gpu": _pick(["h100-sxm-80gb", "nosuch"]),
            "--prices": _pick(DATA_FILES),
            "--facility": _pick(["colocation", "xx"]),
            "--model": _pick(MODELS, MODEL_FILES),
        },
    ),
    "simulate": (
        ["simulate", "--trace", "synthetic:Seren:30"],
        {
            "--trace": _pick(DATA_FILES, ["synthetic:Seren:x", "synthetic:Nope:5", "missing"]),
            "--format": _pick(["philly", "openb", "xx"]),
            "--cluster": _pick(DATA_FILES, ["nosuch", "dgx-h100-superpod-1024"]),
            "--nodes": _pick(INTS),
            "--gpus-per-node": _pick(INTS),
            "--nodes-per-domain": _pick(INTS),
            "--seed": _pick(INTS),
            "--demand": _pick(FLOATS),
            "--failures": st.just(""),
            "--failure-rate": _pick(FLOATS),
            "--repair-hours": _pick(FLOATS),
            "--spare-nodes": _pick(INTS),
            "--checkpoint-interval-s": _pick(FLOATS),
            "--sample-interval-s": _pick(FLOATS),
            "--queue": _pick(["sjf", "xx"]),
            "--placement": _pick(["fgd", "xx"]),
            "--out": _pick(OUT_PATHS),
            "--out-format": _pick(["csv", "xx"]),
        },
    ),
    "fgd": (
        ["fgd", "--seeds", "1", "--policies", "random", "--max-demand", "0.05", "--at", "0.05"],
        {
            "--seeds": _pick(["-1", "0", "1", "x"]),
            "--max-demand": _pick(["-1", "0", "0.02", "nan", "inf", "1e30"]),
            "--at": _pick(["-1", "0", "0.02", "nan", "0.5"]),
            "--trace": _pick(DATA_FILES, ["missing"]),
            "--cluster": _pick(DATA_FILES),
            "--policies": _pick(["xx", "", "fgd"]),
            "--workload": _pick(["xx", "cpu250"]),
            "--out": _pick(OUT_PATHS),
            "--out-format": _pick(["csv", "xx"]),
        },
    ),
    "validate": (["validate", "--cases", "empty"], {"--cases": _pick(DATA_FILES, ["missing"])}),
    "calibrate": (
        ["calibrate", "empty"],
        {
            "": _pick(DATA_FILES, MODEL_FILES, ["missing"]),
            "--output": _pick(OUT_PATHS),
            "--gpu": _pick(["h100-sxm-80gb", "nosuch"]),
            "--gpus": _pick(INTS),
            "--params": _pick(["xx", ""]),
            "--max-gpus": _pick(INTS),
        },
    ),
    "report": (
        ["report", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:64", "--out", "out_file"],
        {
            "--scenario": _pick(DATA_FILES, ["missing"]),
            "--model": _pick(MODELS, MODEL_FILES),
            "--cluster": _pick(["h100-sxm-80gb:0", "h100-sxm-80gb:-8", "nosuch:8", "x", ":"]),
            "--token-budget": _pick(FLOATS),
            "--target-days": _pick(FLOATS),
            "--lang": _pick(["zh", "xx"]),
            "--out": _pick(OUT_PATHS),
        },
    ),
    "catalog": (
        ["catalog"],
        {"": _pick(["models", "gpus", "xx", "models llama3-8b", "models nosuch"])},
    ),
    "probe": (
        ["probe", "show", "empty"],
        {"": _pick(DATA_FILES, ["missing"])},
    ),
    "probe-import": (
        ["probe", "import-nccl", "empty", "--out", "out_file"],
        {
            "": _pick(DATA_FILES, ["missing"]),
            "--out": _pick(OUT_PATHS),
            "--kind": _pick(["all_reduce", "xx"]),
            "--group-size": _pick(INTS),
        },
    ),
}
# Commands whose base run takes about a second get fewer examples.
EXAMPLES = {"validate": 10, "report": 8, "wall": 25}
DEFAULT_EXAMPLES = 40

TALLY: Counter[str] = Counter()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The pools' names as paths: small bad files, a folder, and output paths."""
    root = tmp_path_factory.mktemp("fuzz")
    paths: dict[str, str] = {}
    for name, data in FILE_BYTES.items():
        suffix = next((s for k, s in SUFFIX.items() if name.endswith(k)), ".dat")
        path = root / f"{name}{suffix}"
        path.write_bytes(data)
        paths[name] = str(path)
    (root / "folder").mkdir()
    paths["folder"] = str(root / "folder")
    paths["missing"] = str(root / "missing.toml")
    paths["out_file"] = str(root / "out" / "result.html")
    paths["out_new_dir"] = str(root / "new" / "deeper")
    paths["out_under_file"] = str(root / "binary.dat" / "result.csv")
    yield paths
    print(
        f"\nfuzz: {sum(TALLY.values())} tried, {TALLY['0']} exit 0, "
        f"{TALLY['2']} clean errors (exit 2), {TALLY['traceback']} tracebacks"
    )


def _alarm(_signum: int, _frame: object) -> None:
    raise TimeoutError(f"no answer within {EXAMPLE_TIMEOUT_S} s")


def run(argv: list[str]) -> tuple[int | str, str]:
    """Run the CLI in-process; a traceback or a hang is returned as its text."""
    sys.argv = ["scalewall", *argv]
    out = io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(EXAMPLE_TIMEOUT_S)
    code: int | str = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BaseException as exc:
        code = f"traceback: {type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue()


def _argv(base: list[str], drawn: list[tuple[str, str]], files: dict[str, str]) -> list[str]:
    argv = [files.get(a, a) for a in base]
    for option, value in drawn:
        values = [files.get(v, v) for v in value.split(" ")] if value else []
        argv += [*([option] if option else []), *values]
    return argv


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_traceback(command: str, files: dict[str, str]) -> None:
    base, options = COMMANDS[command]
    drawn_option = st.sampled_from(sorted(options)).flatmap(
        lambda name: st.tuples(st.just(name), options[name])
    )

    @settings(
        max_examples=EXAMPLES.get(command, DEFAULT_EXAMPLES),
        deadline=None,
        database=None,
        # The same examples on every run (CI must be reproducible); set
        # SCALEWALL_FUZZ_RANDOM=1 to explore new ones.
        derandomize=not os.environ.get("SCALEWALL_FUZZ_RANDOM"),
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(st.lists(drawn_option, min_size=1, max_size=3))
    def check(drawn: list[tuple[str, str]]) -> None:
        argv = _argv(base, drawn, files)
        code, output = run(argv)
        clean = code in (0, 2) and "Traceback" not in output
        TALLY[str(code) if clean else "traceback"] += 1
        assert clean, f"scalewall {' '.join(argv)}: exit {code}\n{output[-2000:]}"

    check()


# Inputs that once ended in a traceback, a hang or a silent answer: each is now a clean error.
KNOWN_BAD = [
    "estimate --pp 0",
    "estimate --cp 0",
    "estimate --gpus 0",
    "estimate --precision fp8 --gpu a100-sxm-80gb --gpus 64",
    "estimate --model typed_json",
    "estimate --model zero_json",
    "estimate --model binary",
    "estimate --model custom:layers=-4,hidden=4096,heads=32,ffn_hidden=14336,vocab=128256",
    "estimate --model custom:layers=32,hidden=4096,heads=32,kv_heads=64,ffn_hidden=1,vocab=8",
    "estimate --model custom:layers=32,hidden=4096,heads=32,kv_heads=5,ffn_hidden=1,vocab=8",
    "goodput --pp 0",
    "goodput --seed -1",
    "search --gpus 64 --token-budget -1",
    "search --gpus 64 --token-budget nan",
    "wall --sizes 64 --token-budget -1",
    "wall --sizes 64 --csv out_under_file",
    "wall --sizes 64 --plot folder",
    "cost --mfu -1",
    "cost --tokens-per-s -1",
    "cost --goodput 5",
    "cost --prices binary",
    "simulate --trace synthetic:Seren:30 --seed -1",
    "simulate --trace synthetic:Seren:30 --failure-rate -1",
    "simulate --trace synthetic:Seren:30 --repair-hours nan --failures",
    "simulate --trace synthetic:Seren:30 --out out_under_file",
    "simulate --trace header_csv --format openb",
    "fgd --max-demand -1",
    "fgd --at nan",
    "fgd --trace empty",
    "fgd --trace binary",
    "fgd --out out_under_file",
    "report --scenario binary",
    "report --out folder",
]


@pytest.mark.parametrize("line", KNOWN_BAD)
def test_known_bad_input(line: str, files: dict[str, str]) -> None:
    argv = [files.get(a, a) for a in line.split(" ")]
    code, output = run(argv)
    assert code == 2, f"scalewall {' '.join(argv)}: exit {code}\n{output[-2000:]}"
    assert "Traceback" not in output
    assert output.strip().startswith("error: "), output

"""The benchmarks' harness: a killed child is a row, the CSV round-trips, the timer's meaning."""

import io
import signal
import sys
import time

import pytest

from benchmarks import _harness


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV])
def test_a_child_killed_by_a_signal_is_a_failed_row(sig):
    # The OpenBLAS crash at M ≥ 23,000 is a SIGSEGV, the OOM killer a
    # SIGKILL: the runner returns, and the table prints the row and goes on.
    out = _harness.run_isolated(
        [sys.executable, "-c", f"import os; os.kill(os.getpid(), {int(sig)})"])
    assert not out.ok and out.why.startswith(f"killed by {sig.name}")
    text = io.StringIO()
    table = _harness.Table({"model": "<8", "M": ">6d", "FAA %": ">6.2f"}, out=text)
    table.failed("gauss", 23000, why=out.why)
    table.row("gauss", 2000, 95.5)
    lines = text.getvalue().splitlines()
    assert lines[1].split() == ["gauss", "23000", "failed:", "killed", "by", sig.name, *(
        ["(the", "OOM", "killer?)"] if sig == signal.SIGKILL else [])]
    assert lines[2].split() == ["gauss", "2000", "95.50"]


def test_a_function_called_in_a_child_returns_its_value_or_why_not():
    assert _harness.call_isolated("operator:add", 2, 3).value == 5
    crashed = _harness.call_isolated("ctypes:string_at", 0)  # reads address 0
    assert crashed.why == "killed by SIGSEGV" and crashed.value is None
    raised = _harness.call_isolated("math:sqrt", -1.0)
    assert raised.why == "ValueError: math domain error"
    slow = _harness.call_isolated("time:sleep", 30, timeout=0.5)
    assert slow.why == "timed out after 0.5 s" and slow.seconds < 10


def test_the_table_csv_round_trips(tmp_path):
    path = tmp_path / "table.csv"
    table = _harness.Table({"model": "<10", "M": ">6d", "FAA %": ">6.2f", "time s": ">8.3f"},
                           csv_path=str(path), out=io.StringIO())
    rows = [("skcl, LS", 2000, 96.12345678901234, 0.1 + 0.2), ("RanDumb", 10, 1e-300, 3.0)]
    for row in rows:
        table.row(*row)
    table.failed("Gaussian", 23000, why="killed by SIGSEGV")
    assert table.close() == str(path)
    back = _harness.read_csv(path)
    # Every float's digits, the text with its comma, and no figure where none was.
    assert [tuple(r.values()) for r in back] == [
        (*rows[0], None), (*rows[1], None),
        ("Gaussian", 23000, None, None, "failed: killed by SIGSEGV")]


def test_the_timer_is_the_median_after_one_untimed_warm_up():
    durations = iter([0.2, 0.01, 0.05, 0.03])  # the warm-up is the slow first call
    calls = []

    def fn():
        calls.append(1)
        time.sleep(next(durations))

    timing = _harness.timeit(fn, repeats=3)
    assert len(calls) == 4 and len(timing.runs) == 3
    # The warm-up is timed apart ("first"), never in the median.
    assert timing.first >= 0.2 and max(timing.runs) < 0.2
    assert 0.03 <= timing.median < 0.05 and timing.min >= 0.01
    assert timing.min <= timing.median <= timing.max
    assert timing.meaning == "median of 3 run(s) after one warm-up, wall clock"
    cold = _harness.timeit(lambda: None, repeats=2, warmup=False)
    assert "no warm-up" in cold.meaning and len(cold.runs) == 2


def test_the_stopwatch_tells_waiting_from_working():
    with _harness.Stopwatch() as idle:
        time.sleep(0.2)
    with _harness.Stopwatch() as busy:
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
    assert idle.seconds >= 0.2 and idle.cpu_seconds < 0.1  # slept: wall time, no work
    assert busy.cpu_seconds >= 0.2
    first = idle.seconds, idle.cpu_seconds
    time.sleep(0.01)
    assert (idle.seconds, idle.cpu_seconds) == first  # read after the block: the block's


def test_the_parser_adds_only_the_shared_options_asked_for(monkeypatch):
    monkeypatch.setenv("SKCL_DATA_DIR", "/data")
    args = _harness.parser("Doc.", data=True, repeats=7, quick="fewer").parse_args([])
    assert (args.data_dir, args.repeats, args.quick, args.csv) == ("/data", 7, False, None)
    bare = _harness.parser("Doc.", csv=False).parse_args([])
    assert vars(bare) == {}


def test_the_machine_line_names_the_versions():
    line = _harness.machine_line()
    assert line.startswith("# ") and "CPUs" in line and "numpy" in line and "Python" in line


class _Sleep:
    """A benchmark class in asv's form, for the class runner."""

    params = [[0.001, 0.002], ["a"]]
    quick_params = [[0.001], ["a"]]

    def setup(self, seconds, label):
        self.seconds = seconds

    def time_sleep(self, seconds, label):
        time.sleep(self.seconds)


def test_the_class_runner_times_each_case_and_writes_its_table(tmp_path, capsys):
    args = _harness.class_parser("Doc.").parse_args(
        ["--quick", "--repeats", "2", "--csv", str(tmp_path / "t.csv")])
    _harness.run_benchmarks([_Sleep], args)
    rows = _harness.read_csv(tmp_path / "t.csv")
    assert [(r["benchmark"], r["params"]) for r in rows] == [
        ("test_benchmark_harness._Sleep.time_sleep", "0.001, a")]
    assert 0.001 <= rows[0]["min s"] <= rows[0]["median s"] <= rows[0]["max s"]
    assert "first: the warm-up call" in capsys.readouterr().out

"""Tests for utils/runtime.py: device choice, seeding, the environment report, show_source, in_colab."""

from __future__ import annotations

import random
import sys
import types

import numpy as np
import pytest
import torch

import utils
from utils import runtime
from utils.runtime import (
    MAX_THREADS,
    choose_threads,
    environment_report,
    get_device,
    idle_cpus,
    in_colab,
    seed_everything,
    seed_offset,
    show_source,
    usable_cpus,
)


@pytest.fixture(autouse=True)
def _no_course_environment(monkeypatch):
    """The tests below set COURSE_SEED / COURSE_THREADS / OMP_NUM_THREADS themselves where they need them."""
    for name in ("COURSE_SEED", "COURSE_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def _fake_hardware(monkeypatch: pytest.MonkeyPatch, *, cuda: bool, mps: bool) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "Fake GPU 9000")


def test_package_exports_the_runtime_helpers():
    assert utils.get_device is get_device
    assert utils.seed_everything is seed_everything
    assert utils.show_source is show_source


# ---------------------------------------------------------------------------------------------------
# get_device
# ---------------------------------------------------------------------------------------------------
def test_get_device_returns_cpu_when_nothing_else_is_there(monkeypatch, capsys):
    _fake_hardware(monkeypatch, cuda=False, mps=False)
    device = get_device()
    assert device == torch.device("cpu")
    assert capsys.readouterr().out.startswith("Using device: cpu")


@pytest.mark.parametrize(("cuda", "mps", "expected"), [
    (True, True, "cuda"),
    (True, False, "cuda"),
    (False, True, "mps"),
])
def test_get_device_prefers_cuda_then_mps(monkeypatch, capsys, cuda, mps, expected):
    _fake_hardware(monkeypatch, cuda=cuda, mps=mps)
    assert get_device().type == expected
    out = capsys.readouterr().out
    assert f"Using device: {expected}" in out
    if expected == "cuda":
        assert "Fake GPU 9000" in out


def test_get_device_quiet_prints_nothing(monkeypatch, capsys):
    _fake_hardware(monkeypatch, cuda=False, mps=False)
    get_device(verbose=False)
    assert capsys.readouterr().out == ""


def test_get_device_honours_an_available_preference(monkeypatch):
    _fake_hardware(monkeypatch, cuda=True, mps=False)
    assert get_device("cpu", verbose=False) == torch.device("cpu")
    assert get_device("cuda", verbose=False).type == "cuda"


@pytest.mark.parametrize("prefer", ["cuda", "mps"])
def test_get_device_rejects_an_unavailable_preference(monkeypatch, prefer):
    _fake_hardware(monkeypatch, cuda=False, mps=False)
    with pytest.raises(RuntimeError, match=rf"device '{prefer}' was requested but is not available "
                                           r"here; available: \['cpu'\]"):
        get_device(prefer)


@pytest.mark.parametrize("prefer", ["gpu", "CUDA", "tpu", ""])
def test_get_device_rejects_an_unknown_name(prefer):
    with pytest.raises(ValueError, match=r"prefer must be 'cuda', 'mps', 'cpu' or None, got"):
        get_device(prefer)


def test_get_device_really_works_on_this_machine():
    device = get_device(verbose=False)
    assert torch.zeros(2, device=device).device.type == device.type


# ---------------------------------------------------------------------------------------------------
# seed_everything
# ---------------------------------------------------------------------------------------------------
def _draw() -> tuple[float, np.ndarray, torch.Tensor]:
    return random.random(), np.random.rand(3), torch.rand(3)


def test_seed_everything_makes_random_numpy_and_torch_repeatable(monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "unset-by-test")  # restored after the test
    seed_everything(123)
    first = _draw()
    seed_everything(123)
    second = _draw()
    assert first[0] == second[0]
    assert np.array_equal(first[1], second[1])
    assert torch.equal(first[2], second[2])
    seed_everything(124)
    third = _draw()
    assert third[0] != first[0]
    assert not np.array_equal(third[1], first[1])
    assert not torch.equal(third[2], first[2])


def test_seed_everything_makes_model_initialisation_repeatable(monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "unset-by-test")
    seed_everything(7)
    a = torch.nn.Linear(4, 3).weight.detach().clone()
    seed_everything(7)
    b = torch.nn.Linear(4, 3).weight.detach().clone()
    assert torch.equal(a, b)


def test_seed_everything_returns_an_independent_seeded_generator(monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "unset-by-test")
    g1 = seed_everything(5)
    torch.rand(10)  # consuming the global generator must not move the returned one
    g2 = seed_everything(5)
    assert isinstance(g1, torch.Generator)
    assert torch.equal(torch.rand(4, generator=g1), torch.rand(4, generator=g2))
    assert torch.equal(torch.randperm(8, generator=seed_everything(5)),
                       torch.randperm(8, generator=torch.Generator().manual_seed(5)))


def test_seed_everything_sets_pythonhashseed_and_accepts_large_seeds(monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "unset-by-test")
    seed_everything(2**40)  # NumPy only takes 32-bit seeds: the function must reduce it
    import os

    assert os.environ["PYTHONHASHSEED"] == str(2**40)


@pytest.mark.parametrize("seed", [-1, 1.5, "0", None, True])
def test_seed_everything_rejects_bad_seeds(seed):
    with pytest.raises(ValueError, match=r"seed must be a non-negative int, got"):
        seed_everything(seed)


# ---------------------------------------------------------------------------------------------------
# environment_report and in_colab
# ---------------------------------------------------------------------------------------------------
def test_environment_report_lists_versions_as_strings():
    report = environment_report()
    assert set(report) == {"python", "torch", "numpy", "matplotlib", "cuda", "mps", "cpu threads"}
    assert all(isinstance(v, str) and v for v in report.values())
    assert report["torch"] == torch.__version__
    assert report["numpy"] == np.__version__
    assert report["python"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}")
    assert int(report["cpu threads"]) >= 1


def test_environment_report_names_a_fake_gpu(monkeypatch):
    _fake_hardware(monkeypatch, cuda=True, mps=False)
    report = environment_report()
    assert report["cuda"] == "Fake GPU 9000"
    assert report["mps"] == "not available"


def test_in_colab_is_false_here_and_true_with_the_colab_module(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert in_colab() is False
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert in_colab() is True


# ---------------------------------------------------------------------------------------------------
# show_source
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("obj", "first_line"), [
    (get_device, "def get_device("),
    (runtime, '"""Where code runs'),
])
def test_show_source_returns_highlighted_code(obj, first_line):
    code_class = pytest.importorskip("IPython.display").Code

    shown = show_source(obj)
    assert isinstance(shown, code_class)
    assert shown.data.lstrip().startswith(first_line)
    assert "python" in shown._repr_html_() or "highlight" in shown._repr_html_()


def test_show_source_shows_a_class_and_a_method():
    from utils.train import History

    def text(shown: object) -> str:
        return shown if isinstance(shown, str) else shown.data  # Code outside a bare Python

    assert text(show_source(History)).lstrip().startswith("@dataclass")
    assert "def final_loss" in text(show_source(History.final_loss.fget))


def test_show_source_falls_back_to_plain_text_without_ipython(monkeypatch):
    monkeypatch.setitem(sys.modules, "IPython.display", None)  # makes `from IPython.display ...` fail
    shown = show_source(seed_everything)
    assert isinstance(shown, str)
    assert shown.startswith("def seed_everything(")


@pytest.mark.parametrize("bad", [42, "utils.attention.causal_mask", len, torch.zeros(2)])
def test_show_source_explains_what_it_needs(bad):
    with pytest.raises(TypeError, match=r"show_source needs a function, class or module, got"):
        show_source(bad)


def test_course_seed_shifts_every_seed(monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "unset-by-test")
    assert seed_offset() == 0
    seed_everything(3)
    plain = torch.rand(4)
    monkeypatch.setenv("COURSE_SEED", "2")
    assert seed_offset() == 2
    seed_everything(1)  # 1 + 2
    shifted = torch.rand(4)
    assert torch.equal(plain, shifted)
    assert torch.equal(torch.rand(3, generator=seed_everything(1)),
                       torch.rand(3, generator=torch.Generator().manual_seed(3)))


@pytest.mark.parametrize("text", ["-1", "two", "1.5"])
def test_a_malformed_course_seed_is_named_in_the_error(monkeypatch, text):
    monkeypatch.setenv("COURSE_SEED", text)
    with pytest.raises(ValueError, match=rf"COURSE_SEED must be an integer >= 0, got '{text}'"):
        seed_everything(0)


# ---------------------------------------------------------------------------------------------------
# choose_threads
# ---------------------------------------------------------------------------------------------------
def test_course_threads_wins_over_everything(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_THREADS", "3")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setattr(runtime, "idle_cpus", lambda window=0.2: pytest.fail("must not measure"))
    assert choose_threads() == 3
    assert torch.get_num_threads() == 3
    assert capsys.readouterr().out == "CPU threads: 3 (from COURSE_THREADS)\n"


def test_omp_num_threads_is_respected_when_course_threads_is_unset(monkeypatch, capsys):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert choose_threads() == 1
    assert "from OMP_NUM_THREADS" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "text"), [("COURSE_THREADS", "0"), ("COURSE_THREADS", "many"),
                                            ("OMP_NUM_THREADS", "-2")])
def test_a_malformed_thread_count_is_named_in_the_error(monkeypatch, name, text):
    monkeypatch.setenv(name, text)
    with pytest.raises(ValueError, match=rf"{name} must be an integer >= 1, got '{text}'"):
        choose_threads()


@pytest.mark.parametrize(("usable", "idle", "expected"), [
    (2.0, 1.95, 2),     # a quiet 2-core machine: both cores
    (2.0, 1.0, 1),      # one core busy with other work: one thread
    (2.0, 0.1, 1),      # both busy: still one thread, never zero
    (2.0, None, 2),     # no /proc/stat (macOS, Windows): the usable CPUs
    (64.0, 63.0, MAX_THREADS),  # a big quiet machine: capped for these small models
    (2.0, 1.6, 1),      # a core 40% busy: counts as taken
    (2.0, 1.8, 2),      # a core 20% busy: counts as free
    (1.5, 40.0, 1),     # a container quota of 1.5 CPUs on a big idle host: one thread
    (2.5, 40.0, 2),     # a quota of 2.5 CPUs: two
    (64.0, 2.4, 2),     # a big host that is nearly full
])
def test_the_automatic_choice_uses_the_free_cpus(monkeypatch, capsys, usable, idle, expected):
    monkeypatch.setattr(runtime, "usable_cpus", lambda: usable)
    monkeypatch.setattr(runtime, "idle_cpus", lambda window=0.2: idle)
    assert choose_threads() == expected
    assert torch.get_num_threads() == expected
    out = capsys.readouterr().out
    assert out.startswith(f"CPU threads: {expected} ({usable:g} usable CPUs")
    assert "COURSE_THREADS" in out


def test_choose_threads_can_be_quiet(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_THREADS", "1")
    choose_threads(verbose=False)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(("files", "expected"), [
    ({"cpu.max": "150000 100000\n"}, 1.5),                                      # cgroup v2 with a quota
    ({"cpu.max": "max 100000\n"}, None),                                         # cgroup v2, no quota
    ({"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 2.0),  # cgroup v1
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),     # v1, no quota
    ({}, None),                                                                   # no cgroups at all
])
def test_the_container_quota_is_read_from_cgroups(monkeypatch, tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    real_path = runtime.Path
    monkeypatch.setattr(runtime, "Path", lambda p: real_path(str(p).replace("/sys/fs/cgroup", str(tmp_path))))
    assert runtime._cgroup_quota() == expected


def test_usable_cpus_is_capped_by_the_quota(monkeypatch):
    monkeypatch.setattr(runtime, "_cgroup_quota", lambda: 1.5)
    assert usable_cpus() == min(1.5, len(runtime.os.sched_getaffinity(0)))
    monkeypatch.setattr(runtime, "_cgroup_quota", lambda: None)
    assert usable_cpus() == len(runtime.os.sched_getaffinity(0))


def test_idle_cpus_counts_the_idle_share_of_our_cpus(monkeypatch, tmp_path):
    # two samples of /proc/stat: cpu0 idle half the time, cpu1 busy all the time, cpu7 not ours
    samples = iter([
        "cpu  0 0 0 0 0 0 0 0\ncpu0 100 0 0 100 0 0 0 0\ncpu1 100 0 0 0 0 0 0 0\ncpu7 0 0 0 0 0 0 0 0\n",
        "cpu  0 0 0 0 0 0 0 0\ncpu0 150 0 0 140 10 0 0 0\ncpu1 200 0 0 0 0 0 0 0\ncpu7 0 0 0 100 0 0 0 0\n",
    ])

    class FakeStat:
        def __init__(self, _path):
            pass

        def read_text(self):
            return next(samples)

    monkeypatch.setattr(runtime, "Path", FakeStat)
    monkeypatch.setattr(runtime.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(runtime.time, "sleep", lambda seconds: None)
    assert idle_cpus() == pytest.approx(0.5)


def test_idle_cpus_on_this_machine_is_between_zero_and_the_cpu_count():
    idle = idle_cpus(window=0.05)
    assert idle is None or 0.0 <= idle <= len(runtime.os.sched_getaffinity(0)) + 1e-9

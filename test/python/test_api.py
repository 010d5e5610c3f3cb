"""Tests for the front door (tile_mlir.api: compile, load_kernel, the backend choice) that
need no GPU and no MLIR: the compiler is replaced by a fake ``tile_mlir.compiler`` that
counts its builds, and launches go to ``fakecuda.FakeDriver``.
"""

import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from fakecuda import CUBIN, PTX, SIGS, DeviceArray, FakeDriver, fake_artifact, install
from tile_mlir import api, cache, runtime
from tile_mlir.cache import Artifact
from tile_mlir.errors import (
    ArtifactError,
    BindingsTooOld,
    CacheError,
    CudaBindingsMissing,
    CudaError,
    KernelNotFound,
    LaunchError,
    OptionError,
)
from tile_mlir.options import Options
from tile_mlir.runtime import CudaKernel, Kernels
from tile_mlir.vocab import DEFAULT_CHIP

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"

IR = 'module { gpu.module @m { } }  // "demo"'


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def pipeline(monkeypatch, cache_root):
    """A fake ``tile_mlir.compiler``: counts builds, needs no MLIR. As the real one, an
    unset chip builds for the default (the module here names none)."""
    module = types.ModuleType("tile_mlir.compiler")
    module.builds = []

    def build_artifact(text, options):
        chip = options.chip or DEFAULT_CHIP
        module.builds.append((text, chip, options.fold))
        return fake_artifact(chip=chip)

    def lower_tile_ops(text, options):
        return f"lowered ({options.fold}) " + text, SIGS

    module.build_artifact = build_artifact
    module.lower_tile_ops = lower_tile_ops
    monkeypatch.setitem(sys.modules, "tile_mlir.compiler", module)
    return module


def test_compile_builds_on_a_miss_and_reads_the_cache_on_a_hit(pipeline, monkeypatch):
    k = api.compile(IR, {"fold": "tree"}, backend="cuda")
    assert isinstance(k, Kernels) and list(k) == ["add_one", "fill", "half", "add_into"]
    assert pipeline.builds == [(IR, "sm_90a", "tree")]
    monkeypatch.setitem(sys.modules, "tile_mlir.compiler", None)  # a hit must not need the compiler
    k = api.compile(IR, Options(fold="tree"), backend="cuda")
    assert k.add_one.signature == SIGS[0]


def test_the_chip_is_the_options_chip_else_the_default(pipeline):
    api.compile(IR, backend="cuda")
    api.compile(IR, {"chip": "sm_80"}, backend="cuda")
    api.compile(IR, Options(chip="sm_80"), backend="cuda")  # the same options: a hit
    api.compile(IR, {"chip": "sm_80", "fold": "tree"}, backend="cuda")
    assert pipeline.builds == [(IR, "sm_90a", "linear"), (IR, "sm_80", "linear"), (IR, "sm_80", "tree")]


@pytest.mark.parametrize(
    "options, message",
    [({"chip": "ampere"}, "chip must look like sm_90a"), ({"fold": "spiral"}, "fold must be linear or tree"),
     ({"arch": "sm_90a"}, "unknown option.* arch; the options are: chip, fold")],
)
def test_bad_options_are_option_errors(pipeline, options, message):
    with pytest.raises(OptionError, match=message):
        api.compile(IR, options, backend="cuda")
    assert pipeline.builds == []


def test_compile_accepts_a_module_object(pipeline):
    class Module:
        def __str__(self):
            return IR

    api.compile(Module(), backend="cuda")
    assert pipeline.builds[0][0] == IR


def test_compile_prints_an_mlir_module_with_its_locations(pipeline):
    """So that a diagnostic names the line that built the op, not a line of printed text."""

    class Operation:
        def get_asm(self, enable_debug_info=False):
            return IR + (" // with locations" if enable_debug_info else "")

    class Module:
        operation = Operation()

    api.compile(Module(), backend="cuda")
    assert pipeline.builds[0][0] == IR + " // with locations"


def test_compile_rebuilds_a_corrupt_entry(pipeline, cache_root):
    api.compile(IR, backend="cuda")
    (entry,) = [p for p in cache_root.iterdir() if p.name != "by-source"]
    (entry / "kernel.cubin").write_bytes(b"flipped")
    api.compile(IR, backend="cuda")
    assert len(pipeline.builds) == 2
    api.compile(IR, backend="cuda")
    assert len(pipeline.builds) == 2


def test_compile_without_cache_always_builds(pipeline, cache_root):
    api.compile(IR, backend="cuda", cache=False)
    api.compile(IR, backend="cuda", cache=False)
    assert len(pipeline.builds) == 2 and not cache_root.exists()


def test_compile_misses_without_mlir_say_so(cache_root, monkeypatch):
    monkeypatch.setitem(sys.modules, "tile_mlir.compiler", None)
    with pytest.raises(BindingsTooOld, match="no compiled kernel for this module .* needs the MLIR Python bindings"):
        api.compile(IR, backend="cuda")


def test_compile_backends(pipeline, monkeypatch):
    interpreter = types.ModuleType("tile_mlir.interpreter")
    interpreter.interpreted_kernels = lambda text, signatures: {"k": (text, signatures)}
    monkeypatch.setitem(sys.modules, "tile_mlir.interpreter", interpreter)
    # the interpreter runs the module after tile-lower-reduction, with the options' fold
    assert dict(api.compile(IR, {"fold": "tree"}, backend="interpreter")) == {"k": ("lowered (tree) " + IR, SIGS)}
    monkeypatch.setattr(api, "gpu_available", lambda: False)
    assert api.choose_backend() == "interpreter"
    assert list(api.compile(IR)) == ["k"]
    monkeypatch.setattr(api, "gpu_available", lambda: True)
    assert api.choose_backend("auto") == "cuda" and api.choose_backend("interpreter") == "interpreter"
    assert isinstance(api.compile(IR), Kernels)
    assert pipeline.builds == [(IR, "sm_90a", "linear")]  # the cuda backend built once


@pytest.mark.parametrize("backend", ["metal", "CUDA", "", None])
def test_a_bad_backend_is_an_option_error(backend):
    with pytest.raises(OptionError, match="backend must be 'auto', 'cuda', 'interpreter'; got"):
        api.compile(IR, backend=backend)


def test_a_gpu_machine_launches_cached_kernels_without_mlir_or_cuda(pipeline, cache_root):
    """Compile here; then, in a process where MLIR and cuda-python cannot be imported and
    the MLIR distribution is not installed, compile() finds the kernel through the index."""
    api.compile(IR, backend="cuda")
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("mlir", "cuda"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        sys.path.insert(0, {str(PYTHON_DIR)!r})
        import numpy as np
        import tile_mlir
        from tile_mlir import cache
        cache._MLIR_DISTRIBUTION = "not-installed-here"
        k = tile_mlir.compile({IR!r}, backend="cuda")
        try:
            k.add_one.launch(1, 1, np.zeros(5, np.float32), 1)
        except tile_mlir.LaunchError as e:
            print("LaunchError:", e)
        try:
            k.add_one.launch(1, 1, np.zeros(4, np.float32), 1)
        except tile_mlir.CudaBindingsMissing as e:
            print("CudaBindingsMissing:", e)
        print("modules:", sorted(m for m in sys.modules if m.split(".")[0] in ("mlir", "cuda")))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert "LaunchError: kernel add_one: argument 0 must be float32[4], got shape (5,)" in out
    assert "CudaBindingsMissing: launching kernels on a GPU needs cuda-python" in out
    assert "modules: []" in out


# --- load_kernel -----------------------------------------------------------------------


def test_load_kernel_from_an_artifact_directory(tmp_path, fake):
    fake_artifact().save(tmp_path / "art")
    k = api.load_kernel(tmp_path / "art")
    assert isinstance(k, Kernels) and list(k) == ["add_one", "fill", "half", "add_into"]
    one = api.load_kernel(tmp_path / "art", name="fill")
    assert isinstance(one, CudaKernel) and one.name == "fill"
    one.launch(1, 1, DeviceArray(np.zeros(4, np.float32)), 1.0)
    assert fake.images == [CUBIN]
    with pytest.raises(KeyError, match="no kernel named 'nope'"):
        api.load_kernel(tmp_path / "art", name="nope")


@pytest.mark.parametrize("suffix, image", [(".cubin", CUBIN), (".ptx", PTX.encode())])
def test_load_kernel_from_a_file_with_signatures_beside_it(tmp_path, fake, suffix, image):
    (tmp_path / f"kernel{suffix}").write_bytes(image)
    (tmp_path / "signatures.json").write_text(Artifact.signatures_to_json(SIGS))
    k = api.load_kernel(tmp_path / f"kernel{suffix}", name="add_one")
    k.launch(1, 1, DeviceArray(np.zeros(4, np.float32)), 1)
    assert fake.images == [image if suffix == ".cubin" else image + b"\0"]


def test_load_kernel_errors(tmp_path):
    (tmp_path / "kernel.cubin").write_bytes(CUBIN)
    with pytest.raises(ArtifactError, match="needs its launch signatures in .*signatures.json"):
        api.load_kernel(tmp_path / "kernel.cubin")
    (tmp_path / "signatures.json").write_text('[{"name": "k"')
    with pytest.raises(ArtifactError, match="needs its launch signatures"):
        api.load_kernel(tmp_path / "kernel.cubin")
    (tmp_path / "kernel.txt").write_text("")
    with pytest.raises(ArtifactError, match="expected an artifact directory"):
        api.load_kernel(tmp_path / "kernel.txt")
    with pytest.raises(ArtifactError, match="no such artifact directory or file"):
        api.load_kernel(tmp_path / "missing.cubin")
    (tmp_path / "broken").mkdir()
    with pytest.raises(ArtifactError, match="unreadable artifact"):
        api.load_kernel(tmp_path / "broken")


# --- one error base ----------------------------------------------------------------------


def _launch(kernels, *args, **kw):
    return lambda: kernels.add_one.launch(1, 1, *args, **kw)


def _without_cuda_python(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    runtime._driver.cache_clear()
    return runtime._driver


def _read_only(array):
    array.flags.writeable = False
    return array


def _cubin_for_another_gpu(monkeypatch):
    install(monkeypatch, FakeDriver(capability=(10, 0)))
    return _launch(runtime.cuda_kernels(fake_artifact(ptx="")), DeviceArray(np.zeros(4, np.float32)), 1)


def _failing_launch(monkeypatch):
    driver = FakeDriver()
    driver.fail["cuLaunchKernel"] = FakeDriver.CUresult.CUDA_ERROR_LAUNCH_FAILED
    install(monkeypatch, driver)
    return _launch(runtime.cuda_kernels(fake_artifact()), np.zeros(4, np.float32), 1)


# name -> (a function of (kernels, tmp_path, monkeypatch) returning the failing call, the class)
USER_ERRORS = {
    "a bad backend": (lambda k, t, m: lambda: api.compile(IR, backend="gpu"), OptionError),
    "options that are not a mapping": (lambda k, t, m: lambda: api.compile(IR, "sm_80"), OptionError),
    "an unknown option": (lambda k, t, m: lambda: api.compile(IR, {"arch": "sm_80"}), OptionError),
    "an unknown kernel, as an item": (lambda k, t, m: lambda: k["nope"], KernelNotFound),
    "an unknown kernel, as an attribute": (lambda k, t, m: lambda: k.nope, KernelNotFound),
    "load_kernel of a missing path": (lambda k, t, m: lambda: api.load_kernel(t / "nope"), ArtifactError),
    "load_kernel by an unknown name": (
        lambda k, t, m: (fake_artifact().save(t / "a"), lambda: api.load_kernel(t / "a", "nope"))[1], KernelNotFound),
    "not a cache key": (lambda k, t, m: lambda: cache.get("../etc"), ArtifactError),
    "the interpreter without MLIR": (
        lambda k, t, m: (m.setitem(sys.modules, "tile_mlir.compiler", None), lambda: api.compile(IR, backend="interpreter"))[1],
        BindingsTooOld),
    "a cache miss without MLIR": (
        lambda k, t, m: (m.setitem(sys.modules, "tile_mlir.compiler", None), lambda: api.compile(IR, backend="cuda"))[1],
        BindingsTooOld),
    "a wrong argument": (lambda k, t, m: _launch(k, np.zeros(3, np.float32), 1), LaunchError),
    "a bad grid": (lambda k, t, m: lambda: k.add_one.launch(0, 1, np.zeros(4, np.float32), 1), LaunchError),
    "a bad shared_mem": (lambda k, t, m: _launch(k, np.zeros(4, np.float32), 1, shared_mem=-1), LaunchError),
    "a bad stream": (lambda k, t, m: _launch(k, np.zeros(4, np.float32), 1, stream="s"), LaunchError),
    "a read-only output": (
        lambda k, t, m: (install(m, FakeDriver()), _launch(k, _read_only(np.zeros(4, np.float32)), 1))[1], LaunchError),
    "no cubin for this GPU and no PTX": (lambda k, t, m: _cubin_for_another_gpu(m), ArtifactError),
    "a failing driver call": (lambda k, t, m: _failing_launch(m), CudaError),
    "no cuda-python": (lambda k, t, m: _without_cuda_python(m), CudaBindingsMissing),
    "a cache entry others keep corrupting": (lambda k, t, m: _always_lost_race(m), CacheError),
}


def _always_lost_race(monkeypatch):
    """Every rename finds the entry there already, and every read finds it corrupt."""
    key = "0" * 64

    def rename(src, dst):
        Path(dst).mkdir(exist_ok=True)
        raise OSError("lost the race")

    monkeypatch.setattr(cache.os, "rename", rename)
    monkeypatch.setattr(cache, "get", lambda k: None)
    return lambda: cache.put(key, fake_artifact())


@pytest.mark.parametrize("make, error", USER_ERRORS.values(), ids=USER_ERRORS.keys())
def test_every_error_of_the_launch_half_is_a_tile_error(make, error, kernels, tmp_path, monkeypatch, cache_root):
    call = make(kernels, tmp_path, monkeypatch)
    try:
        with pytest.raises(tile_mlir.TileError) as info:
            call()
    finally:
        getattr(runtime._driver, "cache_clear", lambda: None)()  # the real one: forget the failed import
    assert type(info.value) is error, info.value
    assert isinstance(info.value, getattr(tile_mlir, error.__name__))  # exported at the top


def test_kernel_not_found_is_a_key_error_and_an_attribute_error(kernels):
    assert "nope" not in kernels and kernels.get("nope") is None
    assert not hasattr(kernels, "nope") and getattr(kernels, "nope", 7) == 7
    with pytest.raises(KeyError) as info:
        kernels["nope"]
    assert str(info.value) == "no kernel named 'nope'; there are ['add_into', 'add_one', 'fill', 'half']"


def test_the_package_exports_the_front_door(pipeline):
    """``tile_mlir.compile``/``load_kernel`` are the front door's, imported on first use."""
    assert tile_mlir.compile is api.compile and tile_mlir.load_kernel is api.load_kernel
    assert {"compile", "load_kernel", "Options", "TileError"} <= set(tile_mlir.__all__) <= set(dir(tile_mlir))
    assert list(tile_mlir.compile(IR, backend="cuda")) == ["add_one", "fill", "half", "add_into"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tile_mlir.nope


def _imported_after(statement: str) -> list[str]:
    """The tile_mlir, mlir, cuda and numpy modules a fresh interpreter holds after ``statement``."""
    script = (
        f"import sys; sys.path.insert(0, {str(PYTHON_DIR)!r}); {statement}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tile_mlir', 'mlir', 'cuda', 'numpy', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return eval(out)  # a list of module names


def test_import_tile_mlir_is_cheap():
    assert _imported_after("import tile_mlir") == ["tile_mlir", "tile_mlir.errors", "tile_mlir.options", "tile_mlir.vocab"]


def test_the_launch_half_imports_nothing_from_the_compile_half():
    loaded = _imported_after("import tile_mlir.api, tile_mlir.runtime, tile_mlir.cache, tile_mlir.arrays")
    launch_half = {"api", "arrays", "bf16", "cache", "errors", "options", "params", "runtime", "signature", "vocab"}
    ours = {m.split(".", 1)[1] for m in loaded if m.startswith("tile_mlir.")}
    assert ours == launch_half
    assert not [m for m in loaded if m.split(".")[0] in ("mlir", "cuda", "torch")]
    # and the runtime does not import the front door
    assert "tile_mlir.api" not in _imported_after("import tile_mlir.runtime")

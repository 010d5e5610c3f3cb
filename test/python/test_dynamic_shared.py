"""Dynamic shared memory (issue 18): ``shared_mem=`` bytes at launch, through
``gpu.dynamic_shared_memory`` and ``memref.view``, in the interpreter (a block-wide
reduction through it, the race check over it, a view past its end, the per-block limit)
and in the runtime (the opt-in attribute above 48 KB, the device's limit), on the fake
driver; and the compile: the pipeline makes it PTX ``.extern .shared``.
"""

import numpy as np
import pytest
import tile_mlir
from fakecuda import SIGS, DeviceArray, fake_artifact
from tile_mlir import runtime
from tile_mlir.errors import InterpreterError, LaunchError
from tile_mlir.signature import KernelSignature
from tile_mlir.testing.dynamic_shared import LARGE_OFFSET, OFFSET, THREADS, WG, needed, tree_reference, tree_sum
from tile_mlir.vocab import MAX_SHARED_BYTES_PER_BLOCK

NEEDED = needed(OFFSET)


@pytest.fixture
def rng():
    return np.random.default_rng(20261204)


def run_tree(text, a, **launch):
    b = np.full(1, np.nan, np.float32)
    tile_mlir.compile(text, backend="interpreter").tree.launch(1, THREADS, a, b, **launch)
    return b[0]


def test_a_block_reduction_through_dynamic_shared_memory(rng):
    a = rng.uniform(-4, 4, THREADS).astype(np.float32)
    got = run_tree(tree_sum(), a, shared_mem=NEEDED)
    assert got.view(np.uint32) == tree_reference(a).view(np.uint32)
    assert abs(float(got) - a.astype(np.float64).sum()) < 1e-4
    assert run_tree(tree_sum(), a, shared_mem=NEEDED + 1000).view(np.uint32) == got.view(np.uint32)  # more is fine
    big = run_tree(tree_sum(LARGE_OFFSET), a, shared_mem=needed(LARGE_OFFSET))  # past 48 KB
    assert big.view(np.uint32) == got.view(np.uint32)


def test_bind_runs_it_too(rng):
    a = rng.uniform(-4, 4, THREADS).astype(np.float32)
    b = np.zeros(1, np.float32)
    kernel = tile_mlir.compile(tree_sum(), backend="interpreter").tree
    bound = kernel.bind(1, THREADS, a, b, shared_mem=NEEDED, carveout=43)  # the carveout: checked, a GPU's hint
    bound()
    assert b[0].view(np.uint32) == tree_reference(a).view(np.uint32)
    with pytest.raises(LaunchError, match="kernel tree: carveout must be a percentage, an int from 0 to 100, got 120"):
        kernel.bind(1, THREADS, a, b, shared_mem=NEEDED, carveout=120)


def test_a_missing_barrier_is_a_race_in_dynamic_shared_memory(rng):
    a = rng.uniform(-4, 4, THREADS).astype(np.float32)
    with pytest.raises(InterpreterError, match=rf"memref.load at .*: a race on workgroup memory memref<\?xi8, {WG}> "
                                               rf"\(gpu.dynamic_shared_memory, {NEEDED} bytes\) at index \[\d+\]: "
                                               r"thread \(\d+, 0, 0\) of block \(0, 0, 0\) writes it \(memref.store"):
        run_tree(tree_sum(barriers=False), a, shared_mem=NEEDED)


def test_views_of_other_types_race_on_the_bytes_they_share(rng):
    """Thread 0 writes the float at byte 64 (bytes 64-67); thread 32 then reads the i16 at
    byte 66, through another view, with no barrier between: a race on byte 66."""
    extra = f"""
      %c66 = arith.constant 66 : index
      %cr = arith.constant 32 : index
      %halves = memref.view %dyn[%c66][] : memref<?xi8, {WG}> to memref<2xi16, {WG}>
      %reader = arith.cmpi eq, %t, %cr : index
      scf.if %reader {{
        %x = memref.load %halves[%c0] : memref<2xi16, {WG}>
      }}"""
    a = rng.uniform(-4, 4, THREADS).astype(np.float32)
    run_tree(tree_sum(extra=extra.replace("%cr = arith.constant 32", "%cr = arith.constant 0")), a,
             shared_mem=NEEDED)  # thread 0 reading what it wrote is fine
    with pytest.raises(InterpreterError, match=r"memref.load at .*: a race on workgroup memory .* at index \[66\]: "
                                               r"thread \(0, 0, 0\) of block \(0, 0, 0\) writes it .* thread \(32, 0, 0\)"):
        run_tree(tree_sum(extra=extra), a, shared_mem=NEEDED)


@pytest.mark.parametrize("shared_mem", [0, 256, NEEDED - 1])
def test_too_little_shared_mem_is_an_error_at_the_view(rng, shared_mem):
    a = rng.uniform(-4, 4, THREADS).astype(np.float32)
    with pytest.raises(InterpreterError, match=rf"memref.view at .*: the view memref<{THREADS}xf32, {WG}> needs bytes "
                                               rf"\[{OFFSET}, {NEEDED}\), past the end of the launch's {shared_mem} "
                                               rf"bytes of dynamic shared memory \(shared_mem={shared_mem}\)"):
        run_tree(tree_sum(), a, shared_mem=shared_mem)


def test_a_misaligned_view_is_an_error(rng):
    text = tree_sum().replace(f"%off = arith.constant {OFFSET} : index", "%off = arith.constant 66 : index")
    with pytest.raises(InterpreterError, match=r"starts at byte 66, not a multiple of its element's 4 bytes"):
        run_tree(text, rng.uniform(-4, 4, THREADS).astype(np.float32), shared_mem=NEEDED + 4)


def test_fresh_dynamic_shared_memory_reads_as_nan():
    text = tree_sum().replace("memref.store %a, %s[%t]", "%unused = arith.addf %a, %a : f32 //")
    assert np.isnan(run_tree(text, np.ones(THREADS, np.float32), shared_mem=NEEDED))


def test_the_interpreter_caps_shared_mem_at_the_block_limit_less_static_shared_memory():
    kernel = tile_mlir.compile(tree_sum(), backend="interpreter").tree
    a, b = np.ones(THREADS, np.float32), np.zeros(1, np.float32)
    with pytest.raises(LaunchError, match=rf"kernel tree: shared_mem={MAX_SHARED_BYTES_PER_BLOCK + 1} bytes of "
                                          rf"dynamic shared memory, but a block of it can have at most "
                                          rf"{MAX_SHARED_BYTES_PER_BLOCK} \({MAX_SHARED_BYTES_PER_BLOCK} bytes per "
                                          r"block, less its 0 bytes of static shared memory\)"):
        kernel.launch(1, THREADS, a, b, shared_mem=MAX_SHARED_BYTES_PER_BLOCK + 1)
    static = tree_sum().replace("kernel {", f"workgroup(%w: memref<256xf32, {WG}>) kernel {{")
    kernel = tile_mlir.compile(static, backend="interpreter").tree
    with pytest.raises(LaunchError, match=r"at most 231424 \(232448 bytes per block, less its 1024 bytes of static"):
        kernel.bind(1, THREADS, a, b, shared_mem=MAX_SHARED_BYTES_PER_BLOCK - 1000)
    kernel.launch(1, THREADS, a, b, shared_mem=MAX_SHARED_BYTES_PER_BLOCK - 1024)
    assert b[0] == THREADS


# --- the compile: PTX .extern .shared ---------------------------------------------------


def test_the_ptx_declares_extern_dynamic_shared_memory():
    """Upstream's convert-gpu-to-nvvm gives the global internal linkage, which NVPTX
    turns into a 1-byte static .shared variable; the pipeline makes it external."""
    from tile_mlir.compiler import lower_to_ptx, ptx_to_cubin

    ptx = lower_to_ptx(tree_sum()).ptx
    assert ".extern .shared .align 16 .b8 __dynamic_shmem__0[];" in ptx
    assert "demoted" not in ptx
    ptx_to_cubin(ptx)  # ptxas takes it (where ptxas is)


# --- the runtime, on the fake driver --------------------------------------------------------


def test_above_48_kb_the_kernel_opts_in_once(kernels, fake):
    x = np.zeros(4, np.float32)
    attribute = (SIGS[0].name, "max dynamic shared")
    kernels.add_one.launch(1, 1, DeviceArray(x), 1, shared_mem=48 * 1024)
    assert attribute not in fake.function_attributes  # 48 KB needs no opt-in
    kernels.add_one.launch(1, 1, DeviceArray(x), 1, shared_mem=100_000)
    assert fake.function_attributes[attribute] == 100_000
    kernels.add_one.launch(1, 1, DeviceArray(x), 1, shared_mem=60_000)  # below what is allowed: no call
    kernels.add_one.bind(1, 1, DeviceArray(x), 1, shared_mem=200_000)()
    assert fake.function_attributes[attribute] == 200_000
    assert fake.calls.count("cuFuncSetAttribute") == 2
    assert [launch[2] for launch in fake.launches] == [48 * 1024, 100_000, 60_000, 200_000]
    np.testing.assert_array_equal(x, [4, 0, 0, 0])


def test_static_shared_memory_counts_against_both_limits(monkeypatch, fake):
    fake.static_shared["add_one"] = 8192
    kernels = runtime.cuda_kernels(fake_artifact())
    x = np.zeros(4, np.float32)
    kernels.add_one.launch(1, 1, DeviceArray(x), 1, shared_mem=48 * 1024 - 8192)  # 48 KB in all
    assert fake.calls.count("cuFuncSetAttribute") == 0
    kernels.add_one.launch(1, 1, DeviceArray(x), 1, shared_mem=48 * 1024 - 8191)
    assert fake.function_attributes[("add_one", "max dynamic shared")] == 48 * 1024 - 8191
    with pytest.raises(LaunchError, match=r"kernel add_one: shared_mem=224257 bytes of dynamic shared memory, but a "
                                          r"block of it can have at most 224256 \(232448 bytes per block, less its "
                                          r"8192 bytes of static shared memory\)"):
        kernels.add_one.launch(1, 1, DeviceArray(x), 1, shared_mem=232448 - 8192 + 1)
    kernels.add_one.launch(1, 1, DeviceArray(x), 1, shared_mem=232448 - 8192)


def test_the_fake_driver_refuses_a_launch_over_48_kb_without_the_opt_in(fake):
    """What the real driver does, so that the tests above mean something."""
    assert fake.cuLaunchKernel("add_one", 1, 1, 1, 1, 1, 1, 48 * 1024 + 1, 0, 0, 0)[0] != 0


def test_the_device_limit_is_the_devices(monkeypatch):
    from fakecuda import FakeDriver, install

    driver = FakeDriver(capability=(8, 0), max_shared=163 * 1024)
    install(monkeypatch, driver)
    kernels = runtime.cuda_kernels(fake_artifact(chip=""))
    with pytest.raises(LaunchError, match=r"at most 166912 \(166912 bytes per block"):
        kernels.add_one.launch(1, 1, DeviceArray(np.zeros(4, np.float32)), 1, shared_mem=166913)


def test_a_signature_needs_nothing_new_for_dynamic_shared_memory():
    """shared_mem is a launch argument, not part of the kernel's signature."""
    assert KernelSignature.from_json(SIGS[0].to_json()) == SIGS[0]

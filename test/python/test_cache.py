"""Tests for tile_mlir.cache: keys, atomic writes, corruption, the by-source index."""

import hashlib
import json
import os
import shutil
import threading
from dataclasses import replace

import pytest

import tile_mlir
from tile_mlir import cache
from tile_mlir.cache import Artifact, ArtifactError
from tile_mlir.options import Options
from tile_mlir.signature import ArgSpec, KernelSignature

IR = "module { func.func @demo() { return } }"
VERSIONS = {"tile_mlir": "0.1.0", "mlir": "22.1.8.4", "ptxas": "release 13.0"}
SIGS = (
    KernelSignature("demo", (ArgSpec("memref", "float32", (4,)), ArgSpec("scalar", "int32"))),
    KernelSignature("other", (ArgSpec("memref", "bfloat16", (2, 8)),)),
)


def artifact(cubin=b"\x7fELF fake cubin", **kw):
    return Artifact(ptx=".version 8.0\n// fake\n", cubin=cubin, signatures=SIGS, chip="sm_90a", **kw)


@pytest.fixture(autouse=True)
def cache_root(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(root))
    return root


def entries(root):
    return sorted(p.name for p in root.iterdir() if p.name != "by-source")


# --- where, and keys -------------------------------------------------------------------


def test_cache_dir_from_env_else_home(cache_root, monkeypatch, tmp_path):
    assert cache.cache_dir() == cache_root
    monkeypatch.delenv("TILE_MLIR_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / ".cache" / "tile-mlir"


SM90 = Options(chip="sm_90a")


def test_key_is_stable_hex_and_ignores_version_order():
    k = cache.key(IR, SM90, VERSIONS)
    assert len(k) == 64 and int(k, 16) >= 0
    assert k == cache.key(IR, Options(chip="sm_90a", fold="linear"), dict(reversed(VERSIONS.items())))


@pytest.mark.parametrize(
    "change",
    [
        {"ir_text": IR + " "},
        {"options": Options(chip="sm_100a")},
        {"options": Options(chip="sm_90a", fold="tree")},
        {"options": Options()},
        {"versions": {**VERSIONS, "mlir": "22.1.9"}},
        {"versions": {**VERSIONS, "ptxas": None}},
        {"versions": {**VERSIONS, "tile_mlir": "0.2.0"}},
    ],
)
def test_key_changes_with_each_input(change):
    base = {"ir_text": IR, "options": SM90, "versions": VERSIONS}
    assert cache.key(**base) != cache.key(**{**base, **change})


def test_key_defaults_to_this_machines_toolchain(monkeypatch):
    assert cache.key(IR, SM90) == cache.key(IR, SM90, cache.toolchain_versions())
    monkeypatch.setattr(cache, "toolchain_versions", lambda: {**VERSIONS, "mlir": "other"})
    assert cache.key(IR, SM90) == cache.key(IR, SM90, {**VERSIONS, "mlir": "other"})


def test_source_key_ignores_versions_and_differs_from_the_full_key():
    s = cache.source_key(IR, SM90)
    assert s == cache.source_key(IR, Options(chip="sm_90a"))
    assert s != cache.source_key(IR, Options(chip="sm_80"))
    assert s != cache.key(IR, SM90, VERSIONS)


def test_toolchain_versions():
    v = cache.toolchain_versions()
    assert set(v) == {"tile_mlir", "tile_mlir_source", "mlir", "ptxas"}
    assert v["tile_mlir"] == tile_mlir.__version__
    assert len(v["tile_mlir_source"]) == 64  # a sha256 of the compiler's source
    v["mlir"] = "mutated"  # a copy: the cached value is safe
    assert cache.toolchain_versions()["mlir"] != "mutated"
    if shutil.which("ptxas"):
        assert "release" in cache.toolchain_versions()["ptxas"]


# --- artifacts -------------------------------------------------------------------------


@pytest.mark.parametrize("cubin", [b"\x00\x01cubin\xff", None])
def test_artifact_save_load_round_trip(tmp_path, cubin):
    a = artifact(cubin=cubin, meta={"note": [1, 2]})
    a.save(tmp_path / "a")
    assert Artifact.load(tmp_path / "a") == a
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    assert meta["chip"] == "sm_90a" and meta["format"] == 2
    ptx_sha = hashlib.sha256(a.ptx.encode()).hexdigest()
    assert meta["files"]["kernel.ptx"] == ptx_sha
    assert ("kernel.cubin" in meta["files"]) == (cubin is not None)


def test_saving_without_cubin_over_an_artifact_drops_the_old_cubin(tmp_path):
    artifact().save(tmp_path)
    artifact(cubin=None).save(tmp_path)
    assert not (tmp_path / "kernel.cubin").exists()
    assert Artifact.load(tmp_path).cubin is None


def test_loading_a_missing_artifact_raises(tmp_path):
    with pytest.raises(ArtifactError, match="unreadable artifact"):
        Artifact.load(tmp_path / "nothing")


# --- get / put -------------------------------------------------------------------------

KEY = "ab" * 32


def test_get_misses_then_put_hits(cache_root):
    assert cache.get(KEY) is None
    a = artifact()
    assert cache.put(KEY, a) == a
    assert cache.get(KEY) == a
    assert entries(cache_root) == [KEY]


def test_keys_must_be_sha256_hex():
    with pytest.raises(ValueError, match="not a cache key"):
        cache.get("../etc")
    with pytest.raises(ValueError, match="not a cache key"):
        cache.put("x", artifact())


def test_a_crashed_writer_leaves_a_temp_dir_that_nothing_reads(cache_root):
    crashed = cache_root / ".tmp-crashed"
    crashed.mkdir(parents=True)
    (crashed / "kernel.ptx").write_text("half a kern")  # no meta.json: the crash came first
    assert cache.get(KEY) is None
    a = artifact()
    assert cache.put(KEY, a) == a
    assert cache.get(KEY) == a
    assert entries(cache_root) == [".tmp-crashed", KEY]


def test_a_writer_that_loses_the_race_returns_the_winners_entry(cache_root):
    winner = artifact(meta={"who": "winner"})
    cache.put(KEY, winner)
    assert cache.put(KEY, artifact(meta={"who": "loser"})) == winner
    assert entries(cache_root) == [KEY]


def test_a_corrupt_winner_is_replaced(cache_root):
    cache.put(KEY, artifact(meta={"who": "first"}))
    (cache_root / KEY / "kernel.ptx").write_text("garbage")
    second = artifact(meta={"who": "second"})
    assert cache.put(KEY, second) == second
    assert cache.get(KEY) == second


def test_concurrent_puts_from_threads(cache_root):
    n = 8
    barrier = threading.Barrier(n)
    results = [None] * n

    def writer(i):
        barrier.wait()
        results[i] = cache.put(KEY, artifact(meta={"writer": i}))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = cache.get(KEY)
    assert stored is not None
    assert all(r == stored for r in results)  # every writer ends up with the one entry
    assert entries(cache_root) == [KEY]  # and no temp dirs are left behind


def _rewrite_json(path, edit):
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))


def _garble_signatures(entry):
    bad = b'[{"name": "demo"'
    (entry / "signatures.json").write_bytes(bad)
    digest = hashlib.sha256(bad).hexdigest()  # a consistent checksum: the JSON itself is bad

    def fix(meta):
        meta["files"]["signatures.json"] = digest
        return meta

    _rewrite_json(entry / "meta.json", fix)


def _flip_cubin_byte(entry):
    data = bytearray((entry / "kernel.cubin").read_bytes())
    data[3] ^= 0x01
    (entry / "kernel.cubin").write_bytes(bytes(data))


CORRUPTIONS = {
    "truncated ptx": lambda e: (e / "kernel.ptx").write_bytes((e / "kernel.ptx").read_bytes()[:5]),
    "missing cubin": lambda e: (e / "kernel.cubin").unlink(),
    "missing meta": lambda e: (e / "meta.json").unlink(),
    "garbled meta json": lambda e: (e / "meta.json").write_text('{"format": 1, "files": {'),
    "meta without files": lambda e: _rewrite_json(e / "meta.json", lambda m: {"format": 1}),
    "unknown format": lambda e: _rewrite_json(e / "meta.json", lambda m: {**m, "format": 99}),
    "garbled signatures json": _garble_signatures,
    "flipped cubin byte": _flip_cubin_byte,
    "entry is a file": lambda e: (shutil.rmtree(e), e.write_text("x")),
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupt_entry_is_removed_and_rebuilt(cache_root, corrupt):
    a = artifact()
    cache.put(KEY, a)
    corrupt(cache_root / KEY)
    assert cache.get(KEY) is None
    assert entries(cache_root) == []  # removed, trash included
    assert cache.put(KEY, a) == a
    assert cache.get(KEY) == a


# --- store / lookup: full key with a compiler, the index without -------------------------


def test_store_records_the_toolchain_and_lookup_finds_it(monkeypatch):
    monkeypatch.setattr(cache, "toolchain_versions", lambda: dict(VERSIONS))
    stored = cache.store(IR, SM90, artifact(meta={"note": 1}))
    assert stored.meta == {"note": 1, "toolchain": VERSIONS}
    assert cache.lookup(IR, Options(chip="sm_90a", fold="linear")) == stored
    assert cache.lookup(IR, Options(chip="sm_90a", fold="tree")) is None
    assert cache.lookup(IR, Options(chip="sm_80")) is None
    assert cache.lookup(IR, Options()) is None  # no chip: the module's own, a different key


def test_with_a_compiler_a_toolchain_change_is_a_miss(monkeypatch):
    monkeypatch.setattr(cache, "toolchain_versions", lambda: dict(VERSIONS))
    cache.store(IR, SM90, artifact())
    monkeypatch.setattr(cache, "toolchain_versions", lambda: {**VERSIONS, "mlir": "23.0"})
    assert cache.lookup(IR, SM90) is None


def test_without_mlir_lookup_follows_the_by_source_index(monkeypatch):
    monkeypatch.setattr(cache, "toolchain_versions", lambda: dict(VERSIONS))
    stored = cache.store(IR, SM90, artifact())
    # The GPU machine: no MLIR bindings, another ptxas. It cannot rebuild the full key.
    monkeypatch.setattr(cache, "toolchain_versions", lambda: {**VERSIONS, "mlir": None, "ptxas": None})
    assert cache.lookup(IR, SM90) == stored
    assert cache.lookup(IR + "\n", SM90) is None


def test_the_index_points_at_the_newest_store(monkeypatch):
    monkeypatch.setattr(cache, "toolchain_versions", lambda: dict(VERSIONS))
    cache.store(IR, SM90, artifact(meta={"build": 1}))
    monkeypatch.setattr(cache, "toolchain_versions", lambda: {**VERSIONS, "mlir": "23.0"})
    cache.store(IR, SM90, artifact(meta={"build": 2}))
    monkeypatch.setattr(cache, "toolchain_versions", lambda: {**VERSIONS, "mlir": None})
    assert cache.lookup(IR, SM90).meta["build"] == 2


@pytest.mark.parametrize("index_text", ["not a key", "cd" * 32])
def test_a_bad_or_dangling_index_is_a_miss(cache_root, monkeypatch, index_text):
    monkeypatch.setattr(cache, "toolchain_versions", lambda: {**VERSIONS, "mlir": None})
    cache.store(IR, SM90, artifact())
    (cache_root / "by-source" / cache.source_key(IR, SM90)).write_text(index_text)
    assert cache.lookup(IR, SM90) is None


def test_store_leaves_no_temp_files(cache_root, monkeypatch):
    monkeypatch.setattr(cache, "toolchain_versions", lambda: dict(VERSIONS))
    cache.store(IR, SM90, artifact())
    cache.store(IR, SM90, replace(artifact(), ptx="// v2"))
    names = [p.name for p in cache_root.rglob("*")]
    assert not [n for n in names if n.startswith((".tmp-", ".trash-"))]
    assert os.listdir(cache_root / "by-source") == [cache.source_key(IR, SM90)]


# --- pruning ---------------------------------------------------------------------------------


def test_prune_stale_keeps_this_toolchains_entries_and_what_the_index_needs(cache_root, monkeypatch):
    other = IR.replace("demo", "other")
    monkeypatch.setattr(cache, "toolchain_versions", lambda: {**VERSIONS, "tile_mlir_source": "old"})
    cache.store(IR, SM90, artifact(meta={"build": "old"}))
    cache.store(other, SM90, artifact(meta={"build": "old"}))  # not stored again below
    (cache_root / "bench").mkdir()  # a folder of another user of the directory
    now = {**VERSIONS, "tile_mlir_source": "new"}
    monkeypatch.setattr(cache, "toolchain_versions", lambda: dict(now))
    fresh = cache.store(IR, SM90, artifact(meta={"build": "new"}))
    cache.store(IR, Options(chip="sm_80"), artifact(meta={"build": "new"}))
    assert len(entries(cache_root)) == 5

    assert cache.prune_stale() == 2
    assert entries(cache_root) == sorted(["bench", cache.key(IR, SM90, now), cache.key(IR, Options(chip="sm_80"), now)])
    assert sorted(os.listdir(cache_root / "by-source")) == sorted(
        [cache.source_key(IR, SM90), cache.source_key(IR, Options(chip="sm_80"))]
    )
    assert cache.prune_stale() == 0
    monkeypatch.setattr(cache, "toolchain_versions", lambda: {**now, "mlir": None})  # the GPU machine
    assert cache.lookup(IR, SM90) == fresh and cache.lookup(other, SM90) is None
    assert cache.prune_stale() == 0  # without MLIR, the versions are unknown: nothing goes
    assert len(entries(cache_root)) == 3


def test_a_named_kernels_text_is_remembered_and_recalled(cache_root):
    """``remember`` keeps the text a named kernel was built from (by-name/), replaced by
    the next one; ``recall`` reads it back, or None for a name never remembered."""
    assert cache.recall("softmax 4x100 f32") is None
    cache.remember("softmax 4x100 f32", "module {}\n")
    cache.remember("softmax 4x200 f32", "module { }\n")
    assert cache.recall("softmax 4x100 f32") == "module {}\n"
    cache.remember("softmax 4x100 f32", "// newer\nmodule {}\n")
    assert cache.recall("softmax 4x100 f32") == "// newer\nmodule {}\n"
    assert sorted(p.name.startswith(".tmp-") for p in (cache_root / "by-name").iterdir()) == [False, False]

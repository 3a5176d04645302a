"""`kb-agent models install` / `status`: the local generative model."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from kb_agent.interfaces.cli.app import GovernedTyper, JsonOpt, app, err, fail, out

models_app = GovernedTyper(no_args_is_help=True, help="The local generative model.")
app.add_typer(models_app, name="models")


@models_app.command("install")
def models_install(
    model: Annotated[
        str | None, typer.Option("--model", help="Bundled model to fetch (default: KB_AGENT_LOCAL_MODEL).")
    ] = None,
) -> None:
    """Fetch, verify (sha256) and place a bundled local model in the data folder. Idempotent."""
    from kb_agent.config import get_settings
    from kb_agent.llm.model_install import ModelInstallError, install, is_installed, spec_named

    settings = get_settings()
    try:
        spec = spec_named(model or settings.local_model)
    except ModelInstallError as exc:
        fail(str(exc))
    if is_installed(settings.models_folder, spec):
        out.print(f"{spec.filename} is installed and verified in {settings.models_folder}")
        return
    with Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=err
    ) as progress:
        task = progress.add_task(spec.name, total=spec.size)

        def on_progress(done: int, total: int, step: str) -> None:
            progress.update(task, completed=done, description=f"{spec.name}: {step}")

        try:
            path = install(settings.models_folder, spec, on_progress=on_progress)
        except ModelInstallError as exc:
            fail(str(exc))
    out.print(f"installed {path} (sha256 verified, licence {spec.licence})")
    if spec.name != settings.local_model:
        out.print(f"to use it: KB_AGENT_LOCAL_MODEL={spec.name}")


@models_app.command("status")
def models_status(as_json: JsonOpt = False) -> None:
    """Which generative backend `ask` will use."""
    from kb_agent.config import get_settings
    from kb_agent.llm.model_install import MODELS, is_installed, local_model_file, local_runtime, spec_named

    settings = get_settings()
    spec = spec_named(settings.local_model)
    info = {
        "provider": settings.llm_provider,
        "api": settings.llm_base_url,
        "model": settings.llm_model,
        "local_model": str(local_model_file(settings)),
        "local_model_installed": bool(settings.local_model_path) or is_installed(settings.models_folder, spec),
        "bundled_models_installed": [name for name, s in MODELS.items() if is_installed(settings.models_folder, s)],
        "local_runtime": local_runtime(settings),  # native: llama.cpp compiled here (setup.sh --native-llm)
    }
    if as_json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            out.print(f"{key}: {value}")

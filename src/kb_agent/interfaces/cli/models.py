"""`kb-agent models install` / `status`: the local generative model."""

from __future__ import annotations

import json

from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from kb_agent.interfaces.cli.app import GovernedTyper, JsonOpt, app, err, fail, out

models_app = GovernedTyper(no_args_is_help=True, help="The local generative model.")
app.add_typer(models_app, name="models")


@models_app.command("install")
def models_install() -> None:
    """Fetch, verify (sha256) and place the default local model in the data folder. Idempotent."""
    from kb_agent.config import get_settings
    from kb_agent.llm.model_install import DEFAULT_MODEL, ModelInstallError, install, is_installed

    settings = get_settings()
    if is_installed(settings.models_folder):
        out.print(f"{DEFAULT_MODEL.filename} is installed and verified in {settings.models_folder}")
        return
    with Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=err
    ) as progress:
        task = progress.add_task(DEFAULT_MODEL.name, total=DEFAULT_MODEL.size)

        def on_progress(done: int, total: int, step: str) -> None:
            progress.update(task, completed=done, description=f"{DEFAULT_MODEL.name}: {step}")

        try:
            path = install(settings.models_folder, on_progress=on_progress)
        except ModelInstallError as exc:
            fail(str(exc))
    out.print(f"installed {path} (sha256 verified, licence {DEFAULT_MODEL.licence})")


@models_app.command("status")
def models_status(as_json: JsonOpt = False) -> None:
    """Which generative backend `ask` will use."""
    from kb_agent.config import get_settings
    from kb_agent.llm.model_install import DEFAULT_MODEL, is_installed, model_path

    settings = get_settings()
    info = {
        "provider": settings.llm_provider,
        "api": settings.llm_base_url,
        "model": settings.llm_model,
        "local_model": str(settings.local_model_path or model_path(settings.models_folder)),
        "local_model_installed": bool(settings.local_model_path) or is_installed(settings.models_folder),
        "default_local_model": DEFAULT_MODEL.name,
    }
    if as_json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            out.print(f"{key}: {value}")

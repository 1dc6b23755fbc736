"""The ``lcp`` command: exit 0 done, 1 refused or failed (problems one a line, ``<pointer>: <message>``),
2 usage. ``--json`` prints one JSON document for scripts. Every failure is one ``lcp: ...`` line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click

from app_templates import FIELD_TYPES
from lcp import calls
from lcp.bundle_files import read_folder
from lcp.client import Platform
from lcp.config import Login, config_path, load_login, save_login
from lcp.dev import DevLoop
from lcp.exceptions import LcpError, Refused
from lcp.output import call_log_lines, emit_json, error_lines, note, plural
from lcp.templates import TEMPLATES, fields_of, write_app

FOLLOW_SECONDS = 1.0

json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document (for scripts).")
folder_argument = click.argument(
    "folder", default=".", type=click.Path(file_okay=False, path_type=Path), metavar="[DIR]"
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lowcode-platform", prog_name="lcp", message="%(prog)s %(version)s")
def cli() -> None:
    """Build and deploy a tenant's apps from your own machine (see docs/lcp.md)."""


@cli.command()
@click.argument("url")
@click.option("--tenant", required=True, help="The tenant's slug, e.g. acme.")
@click.option("--token", required=True, help="A tenant admin's API token (lcp_...).")
@json_option
def login(url: str, tenant: str, token: str, as_json: bool) -> None:
    """Check TOKEN against the platform at URL and store the login (mode 0600)."""
    url = url.rstrip("/")
    if not url.startswith(("http://", "https://")):
        example = "https://platform.example.com"
        raise click.BadParameter(f"give the platform's URL, e.g. {example}", param_hint="URL")
    found = Login(url=url, tenant=tenant, token=token)
    with Platform(found) as platform:
        apps = platform.apps()  # a tenant admin's call: proves the URL, the tenant and the token
    path = save_login(found)
    if as_json:
        emit_json({"url": url, "tenant": tenant, "config": str(path), "apps": len(apps)})
        return
    click.echo(f"logged in to {url} as an admin of '{tenant}' ({plural(len(apps), 'app')}); saved in {path}")


@cli.command()
@click.argument("name")
@click.option("--template", type=click.Choice(TEMPLATES), default="blank", show_default=True)
@click.option("--dir", "target", type=click.Path(file_okay=False, path_type=Path), help="Default: ./NAME")
@click.option(
    "--field",
    "field_specs",
    multiple=True,
    metavar="NAME:TYPE[:required]",
    help=f"A field of the crud collection, repeatable (types: {', '.join(FIELD_TYPES)}). "
    "Default: title:string:required, notes:text, done:boolean",
)
@json_option
def init(name: str, template: str, target: Path | None, field_specs: tuple[str, ...], as_json: bool) -> None:
    """Make a new app folder NAME from a template (crud: a collection with its five tools, a resource, a
    prompt, a screen and an example test; service: a tool that calls another service)."""
    target = target or Path(name)
    written = write_app(template, name, target, fields_of(field_specs))
    if as_json:
        emit_json({"app": name, "folder": str(target), "files": written})
        return
    for path in written:
        click.echo(f"{target / path}")
    note(f"next: `lcp validate {target}`, `lcp deploy {target}`, `lcp dev {target}`")


def _platform() -> Platform:
    return Platform(load_login())


def _report_refusal(refused: Refused, as_json: bool, what: str) -> None:
    """Print a refusal's problems (stdout) and warnings (stderr), and fail with exit status 1."""
    if as_json:
        emit_json({"ok": False, "problems": refused.problems, "warnings": refused.warnings})
        sys.exit(1)
    for line in refused.problems:
        click.echo(line)
    for warning in refused.warnings:
        note(f"warning: {warning}")
    raise LcpError(f"{what} refused: {plural(len(refused.problems), 'problem')}")


@cli.command()
@folder_argument
@json_option
def validate(folder: Path, as_json: bool) -> None:
    """Validate the app in DIR as a deploy would, deploying nothing."""
    bundle = read_folder(folder)
    with _platform() as platform:
        verdict = platform.validate(bundle)
    if not verdict["valid"]:
        problems = [f"{p['pointer']}: {p['message']}" for p in verdict["problems"]]
        _report_refusal(Refused("validation", problems, verdict["warnings"]), as_json, "validation")
    if as_json:
        emit_json({"ok": True, **verdict})
        return
    for warning in verdict["warnings"]:
        note(f"warning: {warning}")
    for tool in verdict["tools"]:
        click.echo(tool["wire_name"])
    note(f"{bundle['manifest'].get('name')} is valid ({plural(len(verdict['tools']), 'tool')})")


@cli.command()
@folder_argument
@json_option
def deploy(folder: Path, as_json: bool) -> None:
    """Deploy the app in DIR as its new version; prints each tool's wire name."""
    bundle = read_folder(folder)
    try:
        with _platform() as platform:
            deployed = platform.deploy(bundle)
    except Refused as refused:
        _report_refusal(refused, as_json, "deploy")
    _report_deployed(deployed, as_json)


def _report_deployed(deployed: dict, as_json: bool) -> None:
    if as_json:
        emit_json({"ok": True, **deployed})
        return
    for warning in deployed.get("warnings") or []:
        note(f"warning: {warning}")
    for tool in deployed["tools"]:
        click.echo(tool["wire_name"])
    tools = plural(len(deployed["tools"]), "tool")
    note(f"{deployed['name']} v{deployed['active_version']} is live ({tools})")


@cli.command()
@folder_argument
@click.option("--interval", default=0.5, show_default=True, type=click.FloatRange(0.05, 60), help="Seconds.")
@click.option("--for", "max_seconds", type=click.FloatRange(0), hidden=True)  # tests: stop after a while
def dev(folder: Path, interval: float, max_seconds: float | None) -> None:
    """Watch DIR: on each save validate and deploy, print the wire names that changed (+ new, - gone,
    ~ changed), and stream the app's handler errors and logs as they happen."""
    read_folder(folder)  # a wrong folder fails now, not in the loop
    try:
        with _platform() as platform:
            DevLoop(platform, folder, interval=interval).run(max_seconds=max_seconds)
    except KeyboardInterrupt:
        note("stopped")


@cli.command()
@click.argument("wire_name")
@click.option("--args", "arguments", default="{}", help="The arguments as a JSON object.")
@json_option
def call(wire_name: str, arguments: str, as_json: bool) -> None:
    """Call the tool WIRE_NAME through the tenant's MCP endpoint; exit 1 when it answers isError."""
    try:
        parsed = json.loads(arguments)
    except ValueError as err:
        raise click.BadParameter(f"not JSON: {err}", param_hint="--args") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--args")
    result = calls.call_tool(load_login(), wire_name, parsed)
    if as_json:
        emit_json(result)
    elif result["structuredContent"] is not None:
        click.echo(json.dumps(result["structuredContent"], indent=2, ensure_ascii=False))
    else:
        click.echo(result["text"])
    if result["isError"]:
        sys.exit(1)


@cli.command()
@click.option("--follow", "-f", is_flag=True, help="Keep printing new errors as they happen.")
@click.option("--app", help="Only this app's errors.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100))
@json_option
def errors(follow: bool, app: str | None, limit: int, as_json: bool) -> None:
    """The tenant's latest handler errors, with the trace of its own files and the logs."""
    with _platform() as platform:
        _print_pages(
            platform.errors, "errors", error_lines, app=app, limit=limit, follow=follow, as_json=as_json
        )


def _print_pages(
    fetch: Callable[..., dict],
    key: str,
    lines: Callable[[dict], list[str]],
    *,
    app: str | None,
    limit: int,
    follow: bool,
    as_json: bool,
) -> None:
    """Print the latest page of ``fetch`` (errors or logs), then with ``follow`` each newer one."""
    page = fetch(app=app, limit=limit)
    try:
        while True:
            for entry in page[key]:
                # one JSON document a line, --follow included
                click.echo(json.dumps(entry, ensure_ascii=False) if as_json else "\n".join(lines(entry)))
            if not follow:
                return
            time.sleep(FOLLOW_SECONDS)
            page = fetch(since=page["cursor"], app=app, limit=100)
    except KeyboardInterrupt:
        return


@cli.command()
@click.option("--follow", "-f", is_flag=True, help="Keep printing new logs as they happen.")
@click.option("--app", help="Only this app's logs.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100))
@json_option
def logs(follow: bool, app: str | None, limit: int, as_json: bool) -> None:
    """What the tenant's successful handler runs printed or logged, kept a short while (failed runs'
    logs are in `lcp errors`)."""
    with _platform() as platform:
        _print_pages(
            platform.logs, "logs", call_log_lines, app=app, limit=limit, follow=follow, as_json=as_json
        )


@cli.command()
@click.argument("app")
@json_option
def rollback(app: str, as_json: bool) -> None:
    """Switch APP back to its previous version."""
    with _platform() as platform:
        deployed = platform.rollback(app)
    _report_deployed(deployed, as_json)


@cli.command()
@json_option
def apps(as_json: bool) -> None:
    """The tenant's apps, their active versions and their tools' wire names."""
    with _platform() as platform:
        found = platform.apps()
    if as_json:
        emit_json(found)
        return
    for each in found:
        version = f"v{each['active_version']}" if each["active_version"] is not None else "undeployed"
        click.echo(f"{each['name']} {version} ({plural(len(each['tools']), 'tool')})")
        for tool in each["tools"]:
            click.echo(f"  {tool['wire_name']}")


@cli.command(context_settings={"ignore_unknown_options": True})
@folder_argument
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def test(folder: Path, pytest_args: tuple[str, ...]) -> None:
    """Run the tests in DIR/tests with pytest and the ``app`` fixture (docs/lcp.md, "Testing handlers"):
    the app validated as a deploy would, its tools run in the platform's handler runtime against scratch
    records. Needs the platform installed here (`pip install <checkout>`); no server."""
    tests = folder / "tests"
    if not tests.is_dir():
        raise LcpError(f"{folder} has no tests/ folder (`lcp init NAME --template crud` writes an example)")
    sys.exit(run_tests(folder, list(pytest_args)))


def run_tests(folder: Path, pytest_args: list[str]) -> int:
    """pytest on ``folder/tests`` in a child process whose platform lives in a scratch directory."""
    with tempfile.TemporaryDirectory(prefix="lcp-test-") as scratch:
        ini = Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n")
        env = testkit_environment(folder, Path(scratch))
        command = [
            sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(folder.resolve()),
            "-p", "no:django", "-p", "no:cacheprovider", "-p", "builder.testkit",
            str(folder.resolve() / "tests"), *pytest_args,
        ]  # fmt: skip
        return subprocess.call(command, env=env)


# The platform of `lcp test` is a scratch one: nothing of a platform this shell may point at leaks in.
_PLATFORM_VARIABLES = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "RATE_LIMIT_REDIS_URL")


def testkit_environment(folder: Path, scratch: Path) -> dict[str, str]:
    """The test kit's environment: the platform's settings, on a database and var dir in ``scratch``.

    The sandbox takes the strongest isolation tier the machine offers, down to tier 3 (resource
    limits), which every Linux host has.
    """
    env = {key: value for key, value in os.environ.items() if key not in _PLATFORM_VARIABLES}
    return {
        **env,
        "LCP_APP_DIR": str(folder.resolve()),
        "DJANGO_SETTINGS_MODULE": "lowcode_platform.settings",
        "PLATFORM_VAR_DIR": str(scratch / "var"),
        "DATABASE_URL": f"sqlite:///{scratch / 'platform.sqlite3'}",
        "DEBUG": "true",
        "SANDBOX_MIN_TIER": env.get("SANDBOX_MIN_TIER", "3"),
    }


def main() -> None:
    """The console script: click's usage errors exit 2; anything unforeseen is one line, never a traceback."""
    try:
        cli.main(prog_name="lcp", standalone_mode=True)
    except SystemExit:
        raise
    except Exception as err:  # the last resort of a command-line tool: one line instead of a traceback
        click.echo(f"lcp: unexpected {err.__class__.__name__}: {err} (config: {config_path()})", err=True)
        sys.exit(1)

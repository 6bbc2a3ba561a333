"""The dashboard's Starlette app: pages (Jinja2, rendered on the server, paginated), the live
streams (server-sent events) and the action endpoints (JSON POSTs under /api/, see guard.py)."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from compute import Client, ComputeError, JobNotFound, priority_name
from compute.attempt_logs import read_tail
import autoresearch.ui.campaigns as campaigns
import autoresearch.ui.fleet as fleet
from autoresearch.ui.guard import COOKIE, Guard, Refused
from autoresearch.ui.live import ChangeFeed, changes, follow_log
from autoresearch.ui.paging import page_args
from autoresearch.ui.settings import UiSettings
from autoresearch.ui.trial_filter import TRIAL_STATES

if TYPE_CHECKING:
    from starlette.templating import Jinja2Templates

HERE = Path(__file__).parent
BUDGET_FIELDS = ("max_trials", "max_parallel", "max_gpu_hours", "max_llm_usd", "deadline")
CHARTS = ("curves", "parallel", "slice")
"""The campaign page's plotly charts, each at `/api/campaigns/NAME/charts/KIND` (`figures.trial_*`)."""
KEPT_FIGURES = 64
"""How many drawn charts the server keeps (each until its ledger changes)."""


def _when(ts: float | None) -> str:
    return "" if ts is None else datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _ago(ts: float | None) -> str:
    if ts is None:
        return "never"
    seconds = max(0.0, time.time() - ts)
    return (
        f"{seconds:.0f}s ago"
        if seconds < 120
        else f"{seconds / 60:.0f}m ago"
        if seconds < 7200
        else f"{seconds / 3600:.1f}h ago"
    )


class Gate:
    """Every request must name this server in its Host header; it needs the token when one is set;
    `?token=` once sets it as a cookie (guard.py has the rules)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        try:
            self.guard.check_host(request.headers.get("host"))
        except Refused as exc:
            await PlainTextResponse(f"{exc.status}: {exc.message}.", exc.status)(scope, receive, send)
            return
        if self.guard.token is None:
            await self.app(scope, receive, send)
            return
        given = request.query_params.get("token")
        if self.guard.matches(given):
            response: Response = RedirectResponse(request.url.remove_query_params("token").path or "/", 303)
            response.set_cookie(COOKIE, self.guard.token or "", httponly=True, samesite="strict")
        elif self.guard.allows(request):
            await self.app(scope, receive, send)
            return
        else:
            response = PlainTextResponse(
                "401: this dashboard needs its token: open it once as /?token=TOKEN (the token given to "
                "`autoresearch ui --token`), or send `Authorization: Bearer TOKEN`.",
                401,
            )
        await response(scope, receive, send)


class Dashboard:
    """The routes of one server, over one compute home."""

    def __init__(self, settings: UiSettings, warm: bool = True) -> None:
        self.settings = settings
        self._warm = warm
        self.home = settings.home
        self.guard = Guard(settings)
        self.client = Client(settings.home, autostart=False)
        self.feed = ChangeFeed(Client(settings.home, autostart=False), settings.home)
        self.ledgers = campaigns.Ledgers(settings.home)
        self._figures: dict[tuple[str, str, str], tuple[object, bytes]] = {}
        """(campaign, chart, query) -> (the ledger read it was drawn from, its JSON)."""
        self._figures_lock = threading.Lock()

    @functools.cached_property
    def templates(self) -> Jinja2Templates:
        """Made on the first page (Jinja2 is imported then, not at start-up)."""
        from starlette.templating import Jinja2Templates

        templates = Jinja2Templates(directory=HERE / "templates")
        templates.env.filters.update(when=_when, ago=_ago, priority_name=priority_name)
        templates.env.globals.update(
            read_only=self.settings.read_only,
            csrf=self.guard.csrf,
            budget_fields=BUDGET_FIELDS,
            trial_states=TRIAL_STATES,
        )
        return templates

    # -- pages ------------------------------------------------------------------------

    def render(self, request: Request, name: str, section: str, status_code: int = 200, **context: Any) -> Response:
        partial = request.headers.get("x-partial") == "1"
        response = self.templates.TemplateResponse(
            request, name, {"section": section, "partial": partial, **context}, status_code=status_code
        )
        if self._warm:  # the first page is rendered: the rest may load now, off the start-up path
            self._warm = False
            threading.Thread(target=_warm, name="ui-warm", daemon=True).start()
        return response

    def fleet_page(self, request: Request) -> Response:
        return self.render(request, "fleet.html", "fleet", view=fleet.fleet(self.client))

    def queue_page(self, request: Request) -> Response:
        number, per_page = page_args(request.query_params.get("page"), request.query_params.get("per_page"))
        return self.render(request, "queue.html", "queue", page=fleet.queue(self.client, number, per_page))

    def jobs_page(self, request: Request) -> Response:
        q = request.query_params
        number, per_page = page_args(q.get("page"), q.get("per_page"))
        wanted = fleet.parse_filter(q.getlist("state"), q.get("label"), q.get("min_priority"))
        return self.render(
            request,
            "jobs.html",
            "jobs",
            page=fleet.jobs(self.client, wanted, number, per_page),
            wanted=wanted,
            label=q.get("label") or "",
            min_priority=q.get("min_priority") or "",
        )

    def job_page(self, request: Request) -> Response:
        view = fleet.job(self.client, request.path_params["job_id"])
        tail = read_tail(view.log_path, max_bytes=fleet.LOG_TAIL_BYTES)
        return self.render(request, "job.html", "jobs", view=view, job=view.job, log_tail=tail.text, log_offset=tail.size)

    def campaigns_page(self, request: Request) -> Response:
        return self.render(request, "campaigns.html", "campaigns", rows=campaigns.overview(self.ledgers))

    def campaign_page(self, request: Request) -> Response:
        q = request.query_params
        number, per_page = page_args(q.get("page"), q.get("per_page"))
        view = campaigns.campaign(self.ledgers, request.path_params["name"], number, per_page, q,
                                  q.get("sort") or "number", q.get("desc") == "1")  # fmt: skip
        return self.render(request, "campaign.html", "campaigns", view=view, status=view.status)

    def compare_page(self, request: Request) -> Response:
        view = campaigns.compare_page(self.ledgers, request.path_params["name"], request.query_params.getlist("t"))
        return self.render(request, "compare.html", "campaigns", view=view)

    def campaign_chart(self, request: Request) -> Response:
        """One chart of a campaign's trials as a plotly figure (JSON), fetched by the page after its
        table: the trials its filter keeps, or those `?t=` names (the compare page's curves). Kept
        until the campaign's ledger changes, so live refreshes of an idle campaign draw nothing again."""
        from autoresearch.report import figures

        name, kind = request.path_params["name"], request.path_params["kind"]
        if kind not in CHARTS:
            return JSONResponse({"ok": False, "error": f"no chart {kind!r}; charts: {', '.join(CHARTS)}"}, 404)
        missing = figures.plotly_missing()
        if missing is not None:
            return JSONResponse({"ok": False, "error": f"no charts: {missing}"}, 501)
        from plotly.io import to_json

        ledger, trials = campaigns.chart_trials(self.ledgers, name, request.query_params)
        key = (name, kind, str(request.query_params))
        with self._figures_lock:
            kept = self._figures.get(key)
        if kept is None or kept[0] is not ledger:
            fig: Any = (figures.trial_curves(trials) if kind == "curves"
                   else figures.trial_parallel(trials, ledger.campaign) if kind == "parallel"
                   else figures.trial_slice(trials, ledger.campaign))  # fmt: skip
            kept = (ledger, to_json(fig, validate=False).encode())
            with self._figures_lock:
                if len(self._figures) >= KEPT_FIGURES:
                    self._figures.pop(next(iter(self._figures)))
                self._figures[key] = kept
        return Response(kept[1], media_type="application/json")

    def plotly_js(self, request: Request) -> Response:
        """plotly.js from the installed `plotly` package (no CDN: the dashboard makes no outside request)."""
        from autoresearch.report import figures

        missing = figures.plotly_missing()
        if missing is not None:
            return Response(f"// no charts: {missing}", 404, media_type="application/javascript")
        from plotly.offline import get_plotlyjs

        return Response(get_plotlyjs(), media_type="application/javascript",
                        headers={"Cache-Control": "public, max-age=86400"})  # fmt: skip

    # -- streams ----------------------------------------------------------------------

    async def live(self, request: Request) -> Response:
        from sse_starlette import EventSourceResponse

        return EventSourceResponse(changes(self.feed), ping=15)

    async def job_log(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]
        try:
            offset = int(request.query_params.get("offset", "0"))
        except ValueError:
            return PlainTextResponse("offset must be a byte offset (a whole number)", 400)
        from sse_starlette import EventSourceResponse

        return EventSourceResponse(follow_log(self.client, job_id, offset), ping=15)

    # -- actions ----------------------------------------------------------------------

    async def act(self, request: Request, model: type[BaseModel], apply: Callable[[Any], str]) -> Response:
        from autoresearch.ui.controls import ActionError

        try:
            self.guard.check_action(request)
            body = await request.body()
            action = model.model_validate_json(body or b"{}")
            message = await run_in_threadpool(apply, action)
        except Refused as exc:
            return JSONResponse({"ok": False, "error": exc.message}, exc.status)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
            return JSONResponse({"ok": False, "error": f"bad request body: {problems}"}, 400)
        except ActionError as exc:
            return JSONResponse({"ok": False, "error": str(exc)}, exc.status)
        return JSONResponse({"ok": True, "message": message})

    # `controls` (its request records) is imported by the first action, not at start-up

    def job_action(self, model: str) -> Callable[[Request], Awaitable[Response]]:
        """The endpoint of `controls.<model>` (CancelJob, SetJobPriority) on the job in the path."""

        async def endpoint(request: Request) -> Response:
            import autoresearch.ui.controls as controls

            job_id = request.path_params["job_id"]
            return await self.act(
                request, getattr(controls, model), lambda a: controls.job_action(self.client, job_id, a)
            )

        return endpoint

    def node_action(self, model: str) -> Callable[[Request], Awaitable[Response]]:
        """The endpoint of `controls.<model>` (Cordon, Uncordon) on the node in the path."""

        async def endpoint(request: Request) -> Response:
            import autoresearch.ui.controls as controls

            node = request.path_params["node"]
            return await self.act(
                request, getattr(controls, model), lambda a: controls.node_action(self.client, node, a)
            )

        return endpoint

    async def campaign_action(self, request: Request) -> Response:
        import autoresearch.ui.controls as controls

        name, kind = request.path_params["name"], request.path_params["kind"]
        if kind == "chat":
            return await self.act(request, controls.ChatLine, lambda a: controls.chat_line(name, self.home, a))
        actions = await run_in_threadpool(controls.campaign_actions)
        if kind not in actions:
            known = ", ".join(actions)
            return JSONResponse({"ok": False, "error": f"no campaign action {kind!r}; known: {known}"}, 404)
        model = actions[kind]
        return await self.act(request, model, lambda command: controls.campaign_action(name, self.home, command))

    def routes(self) -> list[Route | Mount]:
        return [
            Route("/", lambda request: RedirectResponse("/fleet", 307)),
            Route("/fleet", self.fleet_page),
            Route("/queue", self.queue_page),
            Route("/jobs", self.jobs_page),
            Route("/jobs/{job_id}", self.job_page),
            Route("/jobs/{job_id}/log", self.job_log),
            Route("/campaigns", self.campaigns_page),
            Route("/campaigns/{name}", self.campaign_page),
            Route("/campaigns/{name}/compare", self.compare_page),
            Route("/live", self.live),
            Route("/api/jobs/{job_id}/cancel", self.job_action("CancelJob"), methods=["POST"]),
            Route("/api/jobs/{job_id}/priority", self.job_action("SetJobPriority"), methods=["POST"]),
            Route("/api/nodes/{node}/cordon", self.node_action("Cordon"), methods=["POST"]),
            Route("/api/nodes/{node}/uncordon", self.node_action("Uncordon"), methods=["POST"]),
            Route("/api/campaigns/{name}/charts/{kind}", self.campaign_chart),
            Route("/api/campaigns/{name}/{kind:str}", self.campaign_action, methods=["POST"]),
            Route("/static/plotly.min.js", self.plotly_js),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ]

    def error_page(self, request: Request, exc: Exception) -> Response:
        status = 404 if isinstance(exc, (JobNotFound, campaigns.CampaignNotFound)) else 400
        return self.render(request, "error.html", "", status_code=status, message=str(exc))


def _warm() -> None:
    """Import, in the background once the first page is out, what the campaign pages read (the
    campaign config and its ledger reader), so neither start-up nor the first campaign page waits
    for it. What campaign actions post through (chat: langgraph, mlflow) is imported by the first
    campaign action: importing it here would slow every page served meanwhile, for seconds."""
    import autoresearch.campaign.ledger._sqlite_reader  # noqa: F401  (the config models, the reader)
    import autoresearch.campaign.status  # noqa: F401


def create_app(settings: UiSettings, warm: bool = True) -> Starlette:
    """The dashboard app over `settings.home`'s compute store and campaigns."""
    dashboard = Dashboard(settings, warm)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        dashboard.client.close()
        dashboard.ledgers.close()

    async def on_error(request: Request, exc: Exception) -> Response:
        return dashboard.error_page(request, exc)

    app = Starlette(
        routes=dashboard.routes(), lifespan=lifespan, exception_handlers={ValueError: on_error, ComputeError: on_error}
    )
    app.state.dashboard = dashboard
    app.add_middleware(Gate, guard=dashboard.guard)
    return app

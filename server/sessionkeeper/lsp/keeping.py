"""The server's Keeper, built from the editor's options on first need, and the agents' roots it reads.

Invariants: the Keeper is created on the domain worker, at the first request that needs it (so
`initialize` opens no store, no index, no lock); its durability, redaction, hooks (no registry
made when the options name none), content limits and agents come from the options (an unknown
durability or agent is logged, reported as an option problem, and replaced by the default). The
first listing starts the workspace's git look-up (`look_ahead`) before it makes the Keeper: a
thread of the baseline cache's own runs git meanwhile, and touches nothing but that cache. The
agents' roots are watched once first listed (when watching is on); a change makes the next
listing import them and tells the client.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import __version__
from .options import ServerOptions

if TYPE_CHECKING:
    from ..agents.importer import AgentSources
    from ..api import Keeper
    from ..keeper.listing import BaselineCache
    from ..recovery.lifecycle import HookRegistry
    from ..schema import ClientInfo
    from .agent_roots import RootsWatcher

log = logging.getLogger("sessionkeeper.lsp")

ENV_DURABILITY = "SESSIONKEEPER_DURABILITY"
ENV_REDACTION = "SESSIONKEEPER_REDACTION"


class KeeperHost:
    """Mixin of `SessionKeeperServer`: its lazy Keeper and the watcher of the agents' roots."""

    store_path: str | None
    options: ServerOptions
    option_problems: list[str]
    editor: str | None
    agent_watcher: RootsWatcher | None
    _agents_loop: asyncio.AbstractEventLoop | None
    _keeper: Keeper | None
    _baselines: BaselineCache | None = None
    _closed: bool

    if TYPE_CHECKING:  # provided by SessionKeeperServer
        def notify_threads(self, reason: str) -> None: ...

    @property
    def keeper(self) -> Keeper:
        """The Keeper, created on first need (domain worker only)."""
        if self._keeper is None:
            from ..api import Keeper  # the store, the index, filelock: on first need only

            content: dict[str, Any] = {"allow_secret_files": self.options.allowSecretFiles}
            if self.options.contentLimitBytes is not None:
                content["content_limit_bytes"] = self.options.contentLimitBytes
            self._keeper = Keeper(self.store_path, durability=self._durability(),
                                  redact=self._redact(), hooks=self._hooks(),
                                  client=self._client_info, agents=self._agent_sources(),
                                  shared_index=self._shared_index(), **content)
            self._keeper.baselines = self.baselines
        return self._keeper

    def _shared_index(self) -> str | None:
        """The shared index: the editor's option, else $SESSIONKEEPER_INDEX (`local`: none)."""
        chosen = self.options.index or os.environ.get("SESSIONKEEPER_INDEX") or None
        if chosen is None or chosen.strip() in ("", "local"):
            return None
        from ..errors import IndexUnavailable
        from ..store.index.pg_url import checked, shown

        try:
            return checked(chosen)
        except IndexUnavailable as exc:
            log.warning("SESSIONKEEPER_INDEX %s ignored: %s", shown(chosen), exc)
            return None

    @property
    def baselines(self) -> BaselineCache:
        """The workspaces' git baselines picker pages reuse (made on first need)."""
        if self._baselines is None:
            from ..keeper.listing import BaselineCache

            self._baselines = BaselineCache()
        return self._baselines

    def look_ahead(self, workspace: str | None) -> None:
        """Before the first listing makes the Keeper (~35 ms of imports here), start the git
        look-up of the workspace it estimates against, to run meanwhile (domain worker only)."""
        if self._keeper is None and workspace is not None:
            self.baselines.get_soon(workspace)

    def _hooks(self) -> HookRegistry | None:
        """The options' command hooks; None when they name none (the Keeper then makes its empty
        registry when a session first runs hooks: a listing loads no lifecycle)."""
        if not self.options.hooks:
            return None
        from ..recovery.command_hooks import registry_from

        return registry_from(self.options.hooks)

    def _client_info(self) -> ClientInfo:
        """Who records through this server (made when first recorded: a listing needs no schema)."""
        from ..schema import ClientInfo

        name = "sessionkeeper-lsp" + (f" ({self.editor})" if self.editor else "")
        return ClientInfo(name=name[:100], version=__version__)

    def _agent_sources(self) -> AgentSources | None:
        """The agents' logs the options name (all, from their env/default roots, by default)."""
        from ..agents.importer import AgentSources
        from ..errors import InvalidId

        given = self.options.agents
        if given is not None and not given:
            return None
        roots = {name: (value,) for name, value in (("codex", self.options.codexHome),
                                                    ("claude", self.options.claudeHome),
                                                    ("hermes", self.options.hermesHome),
                                                    ("openclaw", self.options.openclawHome)) if value}
        try:
            return AgentSources(agents=tuple(given) if given is not None else None, roots=roots)
        except InvalidId as exc:
            log.warning("agents: %s (reading every agent's logs from their default roots)", exc)
            self.option_problems.append(f"agents: {exc}")
            return AgentSources()

    def import_agents(self, progress: Callable[[int, int], None] | None = None, *,
                      loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Import the agents' changed files, then watch their roots (domain worker only; `loop`:
        the event loop a change of the roots is reported on)."""
        self._agents_loop = loop or self._agents_loop
        keeper = self.keeper
        if keeper.agent_sources is None:
            return
        watcher = self.agent_watcher
        if watcher is not None and watcher.stale():  # a root that was missing exists now
            self.stop_watching_agents()
            keeper.agents_changed()
        keeper.import_agents(progress)
        if self.agent_watcher is None and self.options.watch and not self._closed:
            from .agent_roots import RootsWatcher

            sources = keeper.agent_sources
            roots = [str(r) for name in sources.enabled() for r in sources.roots_of(name)]
            self.agent_watcher = RootsWatcher(roots, on_change=self._agents_changed,
                                              on_watching=self._agents_watched)
            self.agent_watcher.start()

    def _agents_watched(self) -> None:
        """The roots watcher watches (its thread): trust it, after one more look at the roots."""
        if self._keeper is not None:
            self._keeper.watching_agents = True
            self._keeper.agents_changed()  # what changed before the watch began is read next

    def _agents_changed(self) -> None:
        """The agents' roots changed (watcher thread): import on the next listing, tell the client."""
        if self._keeper is not None:
            self._keeper.agents_changed()
        loop = self._agents_loop
        if loop is not None and not loop.is_closed() and not self._closed:
            loop.call_soon_threadsafe(self.notify_threads, "agents")

    def stop_watching_agents(self) -> None:
        """Stop watching the agents' roots (listings then stat them every time)."""
        watcher, self.agent_watcher = self.agent_watcher, None
        if watcher is not None:
            watcher.stop()
        if self._keeper is not None:
            self._keeper.watching_agents = False

    def _durability(self) -> str:
        value = self.options.durability or os.environ.get(ENV_DURABILITY) or "written"
        if value not in ("none", "written", "durable"):
            log.warning("unknown durability %r; using 'written'", value)
            return "written"
        return value

    def _redact(self) -> bool:
        if self.options.redaction is not None:
            return self.options.redaction
        return os.environ.get(ENV_REDACTION, "1").strip().lower() not in ("0", "false", "no", "off")


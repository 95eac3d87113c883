"""What the collector watches: each runner type bound to its queue and its signals' sources.

Configured runner types first; discovery adds the queues a name pattern finds in a
region, which the config does not name. A failed listing is reported, not raised.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from queuewatch.adapters.errors import describe
from queuewatch.adapters.sqs import list_queue_urls, queue_url
from queuewatch.config import Config, SignalSource
from queuewatch.signals import SignalName
from queuewatch.snapshot import DiscoveryResult

if TYPE_CHECKING:
    from queuewatch.adapters.clients import AwsClients


@dataclass(frozen=True)
class WatchedQueue:
    """A runner type bound to its queue and to the source of each of its signals."""

    runner_type: str
    region: str
    account_id: str
    queue_name: str
    team: str | None
    signals: dict[SignalName, SignalSource]

    @property
    def url(self) -> str:
        return queue_url(self.region, self.account_id, self.queue_name)


def resolve_queues(
    config: Config, clients: AwsClients, account_id: str, pool: ThreadPoolExecutor
) -> tuple[list[WatchedQueue], list[DiscoveryResult]]:
    """Configured runner types first; discovered ones add what the config does not name."""
    default_account = config.defaults.account_id or account_id
    targets = [
        WatchedQueue(
            runner_type=spec.name,
            region=spec.queue.region_or(config.defaults.region),
            account_id=spec.queue.account_id or _url_account(spec.queue.url) or default_account,
            queue_name=spec.queue.queue_name,
            team=spec.team,
            signals=config.signals_for(spec.signals),
        )
        for spec in config.runner_types
    ]
    known = {t.runner_type for t in targets}
    bound_queues = {(t.region, t.queue_name) for t in targets}  # a named runner type owns its queue
    listings = [
        (spec, region, pool.submit(list_queue_urls, clients.sqs(region), spec.name_prefix))
        for spec in config.discovery
        for region in [spec.region or config.defaults.region]
    ]
    results: list[DiscoveryResult] = []
    for spec, region, future in listings:
        try:
            urls = future.result()
        except Exception as error:  # noqa: BLE001 - a failed listing is reported, not raised
            results.append(DiscoveryResult(region=region, pattern=spec.queue_name_pattern, error=describe(error)))
            continue
        found = 0
        for url in sorted(urls):
            name = url.rsplit("/", 1)[-1]
            runner_type = spec.runner_type_of(name)
            if runner_type is None or runner_type in known or (region, name) in bound_queues:
                continue
            known.add(runner_type)
            found += 1
            targets.append(
                WatchedQueue(
                    runner_type=runner_type,
                    region=region,
                    account_id=_url_account(url) or spec.account_id or default_account,
                    queue_name=name,
                    team=spec.team,
                    signals=config.signals_for(spec.signals),
                )
            )
        results.append(DiscoveryResult(region=region, pattern=spec.queue_name_pattern, found=found))
    return targets, results


def _url_account(url: str | None) -> str | None:
    if not url:
        return None
    parts = url.rstrip("/").split("/")
    return parts[-2] if len(parts) >= 2 and parts[-2].isdigit() else None

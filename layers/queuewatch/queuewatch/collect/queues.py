"""What the collector watches: each runner type bound to its queue and its signals' sources.

Configured runner types first; discovery adds the queues a name pattern finds in a
region. A failed listing is reported, not raised, and so is every queue a listing
finds and does not watch under its own name (`DiscoveryResult.skipped_queues`).

Identity. A runner type key (`linux-x64`) may be watched in several places: the same
runner config deployed in two regions or two accounts is two queues, each watched. The
identity of each queue (its name in the snapshot, the state table's `rule#runner_type`
keys, the RunnerType metric dimension, silences, the dashboard, the page) is:

- the plain key for a configured runner type, and for the first queue discovery finds
  for a key, in config order (discovery entries in the order written, queue names
  sorted within one), when no configured runner type has the key;
- `<key>@<region>` for every other copy, `<key>@<region>.<account>` outside the config's
  default account (`defaults.account_id`, else the collector's own).

So a key watched in one place keeps the plain name it always had, and adding a second
region never renames the first: a deploy over existing state neither pages again nor
loses the resolve of an open alert. Config order, not "the default region", decides,
because config order is what picked the one watched queue before copies were watched.
A copy is never renamed by another region's trouble either: while an earlier entry's
listing fails, a later entry's queue whose key that entry could find is taken to be a
copy (`@<region>`), as it is whenever both regions hold the key.

Rules select keys: `match: [linux-x64]` selects every region's copy, a pattern with
'@' one copy's identity (rules.Rule.applies_to). Silences match identities as the page
names them, so a silence can hide one region's copy and an older silence keeps
hiding what it hid. Tracked jobs are routed by their labels to a key, not to a region:
their figures belong to the plain identity, and each copy is judged on its own queue
(collect/stage.py).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.sqs import list_queue_urls, queue_url
from queuewatch.config import Config, DiscoverySpec, SignalSource
from queuewatch.model.demand_paths import beside
from queuewatch.model.rules import RESERVED_RUNNER_TYPES
from queuewatch.model.signals import SQS_SOURCE, SignalName
from queuewatch.model.snapshot import (
    MAX_SKIPPED_LISTED,
    RUNNER_TYPE,
    DiscoveryResult,
    SkippedQueue,
    qualified,
    runner_type_key,
)

if TYPE_CHECKING:
    from queuewatch.adapters.aws.clients import AwsClients


@dataclass(frozen=True)
class WatchedQueue:
    """A runner type bound to its queue and to the source of each of its signals."""

    runner_type: str  # the identity: the key, or `<key>@<region>[.<account>]` for a copy (see above)
    region: str
    account_id: str
    queue_name: str
    team: str | None
    signals: dict[SignalName, SignalSource]
    foreign: bool = False  # in another account than the collector's: its metrics are read with AccountId
    # The autoscaler's job-retry and dead-letter queues beside the build queue (demand_paths.py), where
    # found: a discovery listing holds them, or the config names the runner type (its own names, or
    # upstream's beside its build queue). None: that path is not deployed, or not read.
    job_retry_queue: str | None = None
    dead_letter_queue: str | None = None

    @property
    def url(self) -> str:
        return queue_url(self.region, self.account_id, self.queue_name)

    def url_of(self, queue_name: str) -> str:
        """A queue beside this one, in its region and account."""
        return queue_url(self.region, self.account_id, queue_name)

    @property
    def has_queue(self) -> bool:
        """False for a runner type with no build queue (queue: none)."""
        return bool(self.queue_name)

    @property
    def is_copy(self) -> bool:
        """A key's copy in another place than its plain identity's."""
        return self.runner_type != runner_type_key(self.runner_type)


@dataclass
class _Claims:
    """What the queues resolved so far hold: queues by place, identities, keys with their plain identity."""

    owners: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (account, region, queue) -> identity
    identities: dict[str, str] = field(default_factory=dict)  # identity -> its queue
    plain: set[str] = field(default_factory=set)


def resolve_queues(
    config: Config, clients: AwsClients, account_id: str, pool: ThreadPoolExecutor
) -> tuple[list[WatchedQueue], list[DiscoveryResult]]:
    """Configured runner types first; discovered ones add every other queue, each under its identity."""
    listings = [
        (spec, region, pool.submit(list_queue_urls, clients.sqs(region), spec.name_prefix))
        for spec in config.discovery
        for region in [spec.region or config.defaults.region]
    ]
    answers: list[tuple[DiscoverySpec, str, list[str] | Exception]] = []
    for spec, region, future in listings:
        try:
            answers.append((spec, region, future.result()))
        except Exception as error:  # noqa: BLE001 - a failed listing is reported, not raised
            answers.append((spec, region, error))
    # ListQueues lists the caller's own account alone, so a listing's URLs say which account that is, whatever
    # the caller was told (sam local invents one; a backtest knows none): a named queue is then the very queue
    # discovery finds, and shadows it, instead of being watched twice.
    listed_accounts = (_url_account(url) for _, _, urls in answers if isinstance(urls, list) for url in urls)
    account_id = next((account for account in listed_accounts if account), account_id)
    default_account = config.defaults.account_id or account_id
    targets: list[WatchedQueue] = []
    claims = _Claims()
    # Every queue the listings hold, by place: where the paths beside a build queue are found, at no call more
    # (ListQueues' prefix is the build queues', so it lists their job-retry and dead-letter queues too).
    listed = {
        (_url_account(url) or default_account, region, url.rsplit("/", 1)[-1])
        for _, region, urls in answers
        if isinstance(urls, list)
        for url in urls
    }
    retry_on = config.defaults.job_retry.max_age is not None
    dead_on = config.defaults.dead_letter.max_messages is not None
    for named in config.runner_types:
        if named.queue is None:  # queue: none: its tracked jobs alone (collect/jobs.py), no SQS signal
            signals: dict[SignalName, SignalSource] = {
                s: src for s, src in config.signals_for(named.signals).items() if src != SQS_SOURCE
            }
            targets.append(WatchedQueue(named.name, config.defaults.region, default_account, "", named.team, signals))
            continue
        account = named.queue.account_id or _url_account(named.queue.url) or default_account
        paths = beside(named.queue.queue_name)
        place = named.queue.region_or(config.defaults.region)
        target = WatchedQueue(
            runner_type=named.name,
            region=place,
            account_id=account,
            queue_name=named.queue.queue_name,
            team=named.team,
            signals=config.signals_for(named.signals),
            foreign=account != account_id,
            job_retry_queue=(named.job_retry_queue if retry_on else None)
            or _if_listed(paths.job_retry, account, place, listed, retry_on),
            dead_letter_queue=(named.dead_letter_queue if dead_on else None)
            or _if_listed(paths.dead_letter, account, place, listed, dead_on),
        )
        targets.append(target)
        claims.owners.setdefault((target.account_id, target.region, target.queue_name), target.runner_type)
        claims.identities[target.runner_type] = target.queue_name
        claims.plain.add(target.runner_type)
    results: list[DiscoveryResult] = []
    failed: list[DiscoverySpec] = []
    for spec, region, urls in answers:
        if isinstance(urls, Exception):
            results.append(DiscoveryResult(region=region, pattern=spec.queue_name_pattern, error=describe(urls)))
            failed.append(spec)
            continue
        found: list[WatchedQueue] = []
        skipped: list[SkippedQueue] = []
        for url in sorted(urls):
            name = url.rsplit("/", 1)[-1]
            key = spec.key_of(name)
            if key is None or not spec.selects(key):
                continue  # not a runner type's queue (a dead-letter queue), or left to another collector
            account = _url_account(url) or spec.account_id or default_account
            outcome = _place(key, name, region, account, default_account, claims, failed)
            if isinstance(outcome, SkippedQueue):
                skipped.append(outcome)
                continue
            paths = beside(name)
            found.append(
                WatchedQueue(
                    runner_type=outcome,
                    region=region,
                    account_id=account,
                    queue_name=name,
                    team=spec.team,
                    signals=config.signals_for(spec.signals),
                    foreign=account != account_id,
                    job_retry_queue=_if_listed(paths.job_retry, account, region, listed, retry_on),
                    dead_letter_queue=_if_listed(paths.dead_letter, account, region, listed, dead_on),
                )
            )
        targets += found
        shown = sorted(skipped, key=lambda q: (q.shadowed, q.queue))[:MAX_SKIPPED_LISTED]  # the unwatched first
        results.append(
            DiscoveryResult(
                region=region,
                pattern=spec.queue_name_pattern,
                found=len(found),
                skipped=len(skipped),
                skipped_queues=shown,
            )
        )
    return targets, results


def _place(
    key: str, queue: str, region: str, account: str, default_account: str, claims: _Claims, failed: list[DiscoverySpec]
) -> str | SkippedQueue:
    """The identity a discovered queue is watched under, recorded in `claims`; or why it is not watched."""
    owner = claims.owners.get((account, region, queue))
    if owner is not None:  # first: a queue whose key cannot be a name is watched once named under runner_types:
        return SkippedQueue(queue=queue, reason=f"watched as {owner}, found first", shadowed=True)
    if key in RESERVED_RUNNER_TYPES:
        return SkippedQueue(
            queue=queue,
            reason=f"its runner type would be {key!r}, which queuewatch reserves; "
            "name the queue under runner_types: with another name",
        )
    if not RUNNER_TYPE.match(key):
        return SkippedQueue(
            queue=queue,
            reason=f"its runner type would be {key!r}, not a runner type name (a letter or digit first); "
            "name the queue under runner_types:",
        )
    # A failed earlier listing could hold the key: its copy here is then a copy, as on a tick it answers.
    copy = key in claims.plain or any(spec.selects(key) for spec in failed)
    identity = qualified(key, region, None if account == default_account else account) if copy else key
    other = claims.identities.get(identity)
    if other is not None:
        return SkippedQueue(
            queue=queue,
            reason=f"{identity} is already the queue {other} in {region}; one runner type key has one queue in a "
            "region and account: rename one, or leave it out with the discovery entry's exclude",
        )
    claims.owners[(account, region, queue)] = identity
    claims.identities[identity] = queue
    claims.plain.add(key)
    return identity


def _if_listed(name: str | None, account: str, region: str, listed: set[tuple[str, str, str]], on: bool) -> str | None:
    """A path's queue under upstream's name where a listing of its place holds it; else none is known."""
    return name if on and name is not None and (account, region, name) in listed else None


def _url_account(url: str | None) -> str | None:
    if not url:
        return None
    parts = url.rstrip("/").split("/")
    return parts[-2] if len(parts) >= 2 and parts[-2].isdigit() else None

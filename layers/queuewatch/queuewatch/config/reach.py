"""Where a config reads, and what the stack must be deployed with for it: said by check-config and `make build`.

A named queue in another account is read only if the stack lists that account in `WatchedAccountIds` (its
collector's role gets GetQueueAttributes there); nothing in the config alone can grant it, so the build
says so beside its OK rather than the first tick finding out.
"""

from __future__ import annotations

from dataclasses import dataclass

from queuewatch.config.autoscaler import AutoscalerSpec
from queuewatch.config.names import QUEUE_URL
from queuewatch.config.schema import Config
from queuewatch.model.autoscaler import QUEUE_ONLY_BLIND

OWN_ACCOUNT = "the stack's own account"


@dataclass(frozen=True)
class Reach:
    """Each account the config reads (None: the stack's own), with its regions, sorted."""

    accounts: dict[str | None, tuple[str, ...]]
    autoscaler: AutoscalerSpec | None = None

    @property
    def named_accounts(self) -> list[str]:
        return sorted(account for account in self.accounts if account is not None)

    def lines(self) -> list[str]:
        reads = [
            f"  reads {OWN_ACCOUNT if account is None else 'account ' + account} in {', '.join(regions)}"
            for account, regions in sorted(self.accounts.items(), key=lambda item: item[0] or "")
        ]
        named = self.named_accounts
        if named:
            deploy = (
                f"  deploy with WatchedAccountIds={','.join(named)} (leave out the stack's own account), and let the "
                "collector's role read those queues (docs/operations.md: Queues in other accounts)"
            )
        else:
            deploy = "  deploy parameters: none needed for these queues (WatchedAccountIds stays empty)"
        return [*reads, deploy, self.tracking_line()]

    def tracking_line(self) -> str:
        """How the stack sees GitHub's waiting jobs: the autoscaler's bus, by its prefix, or queue-only and
        what that cannot see (unless the deploy names a bus or a webhook secret the config cannot know of)."""
        spec = self.autoscaler
        if spec is None:
            return (
                f"  {QUEUE_ONLY_BLIND} (or AutoscalerEventBusName, or WebhookSecretArn for GitHub's webhook); "
                "name it in the config as autoscaler: {prefix: ...}"
            )
        where = ":".join(spec.matcher_config) if spec.matcher_config else spec.default_path(spec.prefix)
        return (
            f"  deploy with AutoscalerPrefix={spec.prefix}: jobs tracked from its bus {spec.bus_name}, "
            f"routed as its webhook routes them (matcher config {where})"
        )


def config_reach(config: Config) -> Reach:
    default_account = config.defaults.account_id
    regions: dict[str | None, set[str]] = {}
    for spec in config.runner_types:
        if spec.queue is None:  # a lane with no build queue: judged on its tracked jobs alone, nothing to read
            continue
        url = QUEUE_URL.match(spec.queue.url or "")
        account = spec.queue.account_id or (url["account"] if url else None) or default_account
        regions.setdefault(account, set()).add(spec.queue.region_or(config.defaults.region))
    for discovery in config.discovery:  # ListQueues: the stack's own account, always
        regions.setdefault(None, set()).add(discovery.region or config.defaults.region)
    return Reach({account: tuple(sorted(found)) for account, found in regions.items()}, config.autoscaler)

"""Balance changes that are not charges: top-ups. Every change is a ledger entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.billing.money import micros_to_usd
from emulator.errors import NotFound, ValidationFailed
from emulator.jobs.service import settle_refunds, settled_read
from emulator.store.accounts import Account, LedgerEntry, add_ledger_entry, get_account
from emulator.store.reservations import active_total

if TYPE_CHECKING:
    from emulator.runtime import Runtime

MAX_TOP_UP_MICROS = 10**12  # $1,000,000 in one go is plenty for a demo


def top_up(
    rt: Runtime, account_id: str, amount_micros: int, reference: str, param: str = "amount_micros"
) -> LedgerEntry:
    """`param`: the field the amount came in, named when it is out of range."""
    if not 0 < amount_micros <= MAX_TOP_UP_MICROS:
        raise ValidationFailed(
            f"A top-up must be more than 0 and at most {micros_to_usd(MAX_TOP_UP_MICROS)} USD.",
            param=param,
        )
    with rt.store.write() as conn:
        if get_account(conn, account_id) is None:
            raise NotFound(f"No account {account_id!r}.", param="account_id")
        # A job that failed by now is refunded first: its entry, dated when it failed,
        # comes before the top-up in the ledger as in time.
        settle_refunds(rt, conn, account_id)
        return add_ledger_entry(
            conn,
            rt.ids,
            account_id=account_id,
            asset="usd_micros",
            kind="topup",
            amount=amount_micros,
            reference=reference,
            now=rt.clock.now_iso(),
            entry_id=rt.new_id("le"),  # numbered as the server's other entries are
        )


def balance_of(rt: Runtime, account_id: str) -> dict[str, Any]:
    # A job that failed by now is refunded by now.
    account, pending = settled_read(
        rt, account_id, lambda c: (get_account(c, account_id), active_total(c, account_id))
    )
    if account is None:
        raise NotFound(f"No account {account_id!r}.", param="account_id")
    return balance_view(account, pending)


def balance_view(account: Account, pending_micros: int = 0) -> dict[str, Any]:
    """The balance object: `available = balance - active holds` (holds land with billing)."""
    available = account.balance_micros - pending_micros
    return {
        "balance_micros": account.balance_micros,
        "pending_micros": pending_micros,
        "available_micros": available,
        "balance_usd": micros_to_usd(account.balance_micros),
        "available_usd": micros_to_usd(available),
        "studio_credits": account.studio_credits,
    }

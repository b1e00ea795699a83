"""File versions shared by the rewind tests (contract and CLI): three files over two turns."""

from __future__ import annotations

import hashlib

V1 = {"payment.py": b"def charge(amount):\n    return round(amount, 2)\n",
      "test_payment.py": b"from payment import charge\n\ndef test_round():\n    assert charge(1.005)\n",
      "ledger.py": b"ENTRIES = []\n\ndef post(entry):\n    ENTRIES.append(entry)\n"}
V2 = {"payment.py": b"def charge(amount, fee=0):\n    return round(amount + fee, 2)\n",
      "test_payment.py": b"from payment import charge\n\ndef test_fee():\n    assert charge(1, fee=1) == 2\n",
      "ledger.py": b"ENTRIES: list = []\n\ndef post(entry):\n    ENTRIES.append(dict(entry))\n"}
REFUND = b"def refund(amount):\n    return -amount\n"
USER = b"from payment import charge\n\n# the user's own test, never recorded by the session\n"


def sha(data: bytes) -> str:
    """The sha256 hex digest Session Keeper keys file versions by."""
    return hashlib.sha256(data).hexdigest()

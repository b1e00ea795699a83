"""The demo's small project: a payment module with a rounding bug and its unittest suite."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PAYMENT = '''"""Money helpers (amounts in dollars, results in cents)."""


def to_cents(amount):
    return int(amount * 100)


def charge(amount, fee=0.0):
    return to_cents(amount) + to_cents(fee)


def refund(cents):
    return -cents


def split(cents, parts):
    return [cents // parts] * parts


def currency(cents):
    return f"${cents / 100:.2f}"
'''

PAYMENT_FIXED = PAYMENT.replace("return int(amount * 100)", "return round(amount * 100)")

TESTS = '''import unittest

from payment import charge, currency, refund, split, to_cents


class PaymentTest(unittest.TestCase):
    def test_whole_dollars(self):
        self.assertEqual(to_cents(3), 300)

    def test_charge_with_fee(self):
        self.assertEqual(charge(10, fee=0.5), 1050)

    def test_refund(self):
        self.assertEqual(refund(250), -250)

    def test_currency(self):
        self.assertEqual(currency(1234), "$12.34")

    def test_cents_of_nineteen(self):
        self.assertEqual(to_cents(0.19), 19)

    def test_split_even(self):
        self.assertEqual(split(100, 4), [25, 25, 25, 25])

    def test_split_keeps_every_cent(self):
        self.assertEqual(sum(split(100, 3)), 100)

    def test_split_keeps_every_cent_of_ten(self):
        self.assertEqual(sum(split(10, 4)), 10)
'''

REGRESSION = '''
    def test_rounding_regression(self):
        self.assertEqual(to_cents(0.29), 29)
'''

GIT_ENV = {"GIT_AUTHOR_NAME": "Demo", "GIT_AUTHOR_EMAIL": "demo@example.com",
           "GIT_COMMITTER_NAME": "Demo", "GIT_COMMITTER_EMAIL": "demo@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    """Run git in the demo repository (never the one an exported GIT_DIR names)."""
    from ..recovery.gitrun import environment

    env = environment(GIT_ENV)
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def create(repo: Path) -> None:
    """A repository whose `main` has the bug and whose `fix/payment` is one commit ahead."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "payment.py").write_text(PAYMENT)
    (repo / "test_payment.py").write_text(TESTS)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "payment helpers")
    git(repo, "checkout", "-q", "-b", "fix/payment")
    (repo / "NOTES.md").write_text("to_cents(0.29) returns 28: rounding bug\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "reproduce the rounding bug")

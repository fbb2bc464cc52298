"""The lecture's claims as experiments: each claim's question, its sweep, its rule stated before the run,
and the report that applies the rule to the finished sweep (`tx-claims`)."""

from tx_keras.claims.definitions import CLAIMS, Claim
from tx_keras.claims.verdicts import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, Verdict

__all__ = ["CLAIMS", "DOES_NOT_HOLD", "HOLDS", "INCONCLUSIVE", "Claim", "Verdict"]

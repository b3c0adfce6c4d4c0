"""How a records client reads its records: without replacement, and what reuse costs.

A records client (:func:`~ldpjax.quantile.record_clients`) holds n_k real records. The quantile
algorithms never resample them. Client k's report number j (j = 0, 1, ...) reads the record

    index_k(j) = pi_{k, p}(j mod n_k),        p = j // n_k (the pass),

where pi_{k, p} is a pseudo-random permutation of {0, ..., n_k - 1}, a new one for each pass and
each run. A stream of n_k reports reads every record exactly once; a stream of R reports reads
each record at most m_k = ceil(R / n_k) times (m_k passes).

Privacy. The order depends only on the run's key and on the records' positions in the input,
never on their values, so replacing one record changes only the reports that read it: one per
pass. Each report is a randomized-response bit (Local SGD, DC, Single) or a Gaussian release
(DP-SGD), so the per-record claim is the m_k-fold sequential composition of the single-use
event inside the parallel composition over clients:
``ParallelEvent(ComposedEvent((RandomizedResponseEvent(r_k),) * m_k) for k)`` (pure DP:
eps = max_k m_k log((1 + r_k) / (1 - r_k)); at delta > 0 :func:`ldpjax.accounting.epsilon`
returns the tighter of that and the composition's privacy loss distribution), or ``ComposedEvent`` of m_k ``GaussianEvent(mu_k)``
for DP-SGD (exact: mu_k sqrt(m_k)). With m_k = 1 the part is the single event itself.

Reuse is opt-in: ``record_clients(records, max_uses=m)``. With the default ``max_uses=1`` a
stream longer than n_k is a ``ValueError`` (at ``validate``, ``init`` and ``privacy_event``)
naming the client, its record count and the reports requested; with ``max_uses=m`` streams of
up to m n_k reports run and the claim composes m_k = ceil(R / n_k) <= m uses. Which release
is safe for real data: the default, where every record is reported once and the claim is the
single-use eps_k; with reuse the release is the same kind of bits, safe only at the composed
claim (m_k eps_k pure, less at delta > 0), which :func:`~ldpjax.accounting.epsilon` of
``privacy_event`` reports.
Parametric clients are unaffected: each of their draws is a fresh simulated record.

Fail closed: a report beyond a client's claimed stream (e.g. a run longer than the
configuration's rounds) reads NaN, and :func:`fail_closed` turns its increment into NaN, so
the estimate is NaN rather than a reuse the claim does not cover.

Permutation: Kensler's hash-based permutation with cycle walking (A. Kensler, "Correlated
Multi-Jittered Sampling", Pixar Technical Memo 13-01, 2013, ``permute``): a keyed bijection of
[0, 2^B) built from uint32 operations that are invertible on the low B bits (xor with a key,
multiplication by an odd constant, xorshifts of the masked value), applied until the value
lands in [0, n), then rotated by the key. A pure function of (seed, client, pass, position):
no array of length n per run, no loop over time, ``jit``/``vmap``-able. The seed (two uint32
words) is drawn once per run from the init key (data sampling, not privacy noise; see
:func:`stream_seed`) and kept in the algorithm's state. The family is keyed by 32 bits, so it
is not uniform over all n! orders; that affects only the statistics of the stream, never the
privacy claim, which holds for any order that does not depend on the records' values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

import ldpjax.accounting as acc
from ldpjax.quantile.clients import Clients
from ldpjax.types import Array, ArrayLike, PRNGKey

_GOLDEN = np.uint32(0x9E3779B9)
_CLIENT_MIX = np.uint32(0x85EBCA6B)
#: The salt of a stream that is not one client's (Single's arrangement of owners).
POOLED = 0xFFFFFFFF


def _u32(x) -> Array:
    if isinstance(x, (int, np.integer)):
        return jnp.asarray(np.uint32(x))
    return jnp.asarray(x).astype(jnp.uint32)


def _mix32(x: Array) -> Array:
    """An avalanching bijection of uint32 ("lowbias32", C. Wellons' hash prospector)."""
    x = x ^ (x >> 16)
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> 16)


def stream_salt(seed: ArrayLike, client: ArrayLike, pass_index: ArrayLike) -> Array:
    """The 32-bit key of permutation pi_{client, pass} of the run with ``seed`` (uint32 (2,))."""
    seed = _u32(seed)
    h = _mix32(seed[..., 1] ^ (_u32(pass_index) * _GOLDEN))
    h = _mix32(h ^ (_u32(client) * _CLIENT_MIX) ^ np.uint32(0x632BE5AB))
    return _mix32(h ^ seed[..., 0])


def _kensler_round(i: Array, p: Array, w: Array) -> Array:
    i = i ^ p
    i = i * np.uint32(0xE170893D)
    i = i ^ (p >> 16)
    i = i ^ ((i & w) >> 4)
    i = i ^ (p >> 8)
    i = i * np.uint32(0x0929EB3F)
    i = i ^ (p >> 23)
    i = i ^ ((i & w) >> 1)
    i = i * (np.uint32(1) | (p >> 27))
    i = i * np.uint32(0x6935FA69)
    i = i ^ ((i & w) >> 11)
    i = i * np.uint32(0x74DCB303)
    i = i ^ ((i & w) >> 2)
    i = i * np.uint32(0x9E501CC3)
    i = i ^ ((i & w) >> 2)
    i = i * np.uint32(0xC860A3DF)
    i = i & w
    return i ^ (i >> 5)


def permutation_index(salt: ArrayLike, position: ArrayLike, size: ArrayLike) -> Array:
    """pi(position) for the permutation pi of {0, ..., size - 1} keyed by ``salt`` (broadcast).

    ``position`` must lie in [0, size); sizes >= 1 and < 2^31. Every (salt, size) gives a
    bijection, so positions 0..size-1 map to every index exactly once.

    Example:
      >>> import jax.numpy as jnp
      >>> sorted(int(i) for i in permutation_index(7, jnp.arange(5), 5))
      [0, 1, 2, 3, 4]
    """
    salt, position, size = jnp.broadcast_arrays(_u32(salt), _u32(position), _u32(size))
    w = size - np.uint32(1)
    for shift in (1, 2, 4, 8, 16):
        w = w | (w >> shift)
    i = _kensler_round(position, salt, w)
    # cycle walking: a bijection of [0, 2^B) restricted to [0, size) (2^B < 2 size)
    i = jax.lax.while_loop(
        lambda i: jnp.any(i >= size), lambda i: jnp.where(i >= size, _kensler_round(i, salt, w), i), i
    )
    return ((i + salt % size) % size).astype(jnp.int32)


def stream_seed(clients: Clients, key: PRNGKey) -> Array:
    """The run's record-order seed: two uint32 words from ``key`` (zeros for parametric clients).

    Data sampling (the order in which the records are read), not privacy noise.
    """
    if clients.records is None:
        return jnp.zeros((2,), jnp.uint32)
    # data sampling: the seed of the run's record order (no privacy noise is drawn here)
    return jax.random.bits(key, (2,), jnp.uint32)


def record_index(seed: ArrayLike, client: ArrayLike, position: ArrayLike, count: ArrayLike) -> Array:
    """index_k(j) = pi_{k, j // n_k}(j mod n_k): the record read by report ``position`` (j) of
    ``client`` (k) with ``count`` (n_k) records (arguments broadcast; seed uint32 (2,))."""
    position = jnp.asarray(position, jnp.int32)
    count = jnp.asarray(count, jnp.int32)
    salt = stream_salt(seed, client, position // count)
    return permutation_index(salt, position % count, count)


def _per_client(clients: Clients, reports) -> np.ndarray:
    k = clients.num_clients
    out = np.asarray(reports, dtype=np.int64)
    out = out.reshape((-1, k)).max(axis=0) if out.ndim else np.full((k,), int(out))
    return out


def uses_per_record(clients: Clients, reports) -> tuple[int, ...] | None:
    """m_k = ceil(R_k / n_k): the most times a record of client k is read by R_k reports.

    ``reports``: one count for every client, or one per client (a stacked grid of counts: the
    maximum over the grid). ``None`` for parametric clients (fresh draws, no reuse).
    """
    if clients.records is None:
        return None
    counts = clients.records.counts
    return tuple(max(1, math.ceil(int(r) / int(n))) for r, n in zip(_per_client(clients, reports), counts, strict=True))


def check_stream(clients: Clients, reports) -> None:
    """``ValueError`` unless every records client can serve ``reports`` reports (see module).

    Raises:
      ValueError: naming the client, its record count, the reports requested and
        ``max_uses`` (nothing for parametric clients).
    """
    if clients.records is None:
        return
    max_uses = clients.records.max_uses
    counts = clients.records.counts
    requested = _per_client(clients, reports)
    needed = [math.ceil(int(r) / int(n)) for r, n in zip(requested, counts, strict=True)]
    over = [k for k, m in enumerate(needed) if m > max_uses]
    if over:
        k = over[0]
        hint = (
            "each record may be reported once (max_uses=1)" if max_uses == 1
            else f"each record may be reported at most max_uses={max_uses} times"
        )
        raise ValueError(
            f"records[{k}] (client {k}) holds {int(counts[k])} records but the stream requests "
            f"{int(requested[k])} reports ({len(over)} client(s) too short): {hint}; shorten the "
            f"budget or opt into reuse with record_clients(..., max_uses={max(needed)}), which "
            "composes the privacy claim over the uses"
        )


def stream_caps(clients: Clients, reports) -> np.ndarray:
    """m_k n_k: how many reports of client k the claim for ``reports`` covers (int32 (K,))."""
    uses = np.asarray(uses_per_record(clients, reports), np.int64)
    return (uses * clients.records.counts).astype(np.int32)


def stream_records(
    clients: Clients, seed: ArrayLike, position: ArrayLike, client_index: ArrayLike | None = None,
    caps: np.ndarray | None = None, dtype=None,
) -> Array:
    """The records read by reports ``position`` of the clients: x = records_k[index_k(j)].

    Args:
      clients: records clients.
      seed: the run's :func:`stream_seed`.
      position: report numbers j >= 0 (integer; without ``client_index`` the last axis is the
        client axis, broadcast).
      client_index: optional owner of each entry (a pooled stream).
      caps: static (K,) report caps (default ``max_uses * n_k``): positions at or beyond the
        cap read NaN (fail closed; see :func:`fail_closed`).
      dtype: float dtype of the values (default: the default float).

    Returns:
      The record values, shape of ``position`` broadcast with ``client_index``.
    """
    rec = clients.records
    dtype = jnp.result_type(float) if dtype is None else dtype
    position = jnp.asarray(position, jnp.int32)
    if client_index is None:
        position = jnp.broadcast_to(position, position.shape[:-1] + (clients.num_clients,)) if position.ndim else (
            jnp.broadcast_to(position, (clients.num_clients,)))
        client_index = jnp.broadcast_to(jnp.arange(clients.num_clients, dtype=jnp.int32), position.shape)
    else:
        position, client_index = jnp.broadcast_arrays(position, jnp.asarray(client_index, jnp.int32))
    counts = jnp.asarray(rec.counts, jnp.int32)[client_index]
    cap = rec.max_uses * rec.counts if caps is None else np.asarray(caps)
    ok = (position >= 0) & (position < jnp.asarray(cap, jnp.int32)[client_index])
    index = record_index(seed, client_index, jnp.where(ok, position, 0), counts)
    values = jnp.asarray(rec.stream, dtype)[client_index, index]
    return jnp.where(ok, values, jnp.nan)


def fail_closed(value: ArrayLike, x: ArrayLike) -> Array:
    """``value`` where the record ``x`` was read, NaN where the stream was exhausted (x NaN)."""
    value = jnp.asarray(value)
    return jnp.where(jnp.isnan(x), jnp.nan, value).astype(value.dtype)


def composed_uses(event, uses: int):
    """``event`` used ``uses`` times by the same record: the event itself for one use, else
    ``SelfComposedEvent(event, uses)`` (the sequential composition of ``uses`` copies, stored
    once so ``run.json`` stays small)."""
    return event if uses == 1 else acc.SelfComposedEvent(event, uses)


def per_client_claim(parts: Sequence, uses: Sequence[int] | None):
    """``ParallelEvent`` over clients of each client's single-use event composed over its uses."""
    uses = (1,) * len(parts) if uses is None else uses
    return acc.ParallelEvent(tuple(composed_uses(e, m) for e, m in zip(parts, uses, strict=True)))


__all__ = [
    "POOLED",
    "check_stream",
    "composed_uses",
    "fail_closed",
    "per_client_claim",
    "permutation_index",
    "record_index",
    "stream_caps",
    "stream_records",
    "stream_salt",
    "stream_seed",
    "uses_per_record",
]

"""Client data models for federated quantile estimation, and the global quantile Q*.

"Federated Learning of Quantile Inference under Local Differential Privacy" (ICLR 2026):
client k holds an iid stream x ~ P_k and has weight p_k; the
target is the global quantile Q* solving

    sum_k p_k F_k(Q*) = tau.                                   (paper eq. 2.1, first-order condition)

A :class:`Clients` object describes the K distributions. It is a pytree: ``loc`` and ``scale``
are array leaves (they ``vmap`` and ``jax.grad`` reaches them); the family of each client and,
for "records" clients, the data arrays are static (hashable) metadata, so a simulation compiles
once per data set and the records are shared by every run instead of being copied per run.

Families (location ``loc``, scale ``scale`` > 0):

* ``normal``:  N(loc, scale^2);
* ``uniform``: U(loc - scale, loc + scale) (the authors' ``U(mu - 1, mu + 1)`` at scale 1);
* ``cauchy``:  Cauchy(loc, scale);
* ``laplace``: Laplace(loc, scale) (density exp(-|x - loc| / scale) / (2 scale));
* ``records``: a given array of real records; the CDF is the empirical CDF of that array.
  ``loc``/``scale`` are unused for records clients. The quantile algorithms read a client's
  records **without replacement** (each record at most ``max_uses`` times, once by default;
  see :mod:`ldpjax.quantile.record_stream`); :func:`sample` / :func:`sample_from_uniform`
  draw from the empirical distribution *with* replacement, a simulation helper that releases
  nothing and that no algorithm uses for records.

Mixtures across clients (different families per client) are built by passing one family name
per client to :func:`make_clients`.

Sampling is by inverse CDF from one uniform per draw (:func:`sample_from_uniform`), so every
family costs one uniform and clients of different families share the draw. A parametric draw
is a fresh simulated record each time (no record is reused). Uniforms are lifted
to [2^-24, 1) (float32 resolution), so a draw is never infinite: the normal is truncated at
about 5.3 sd, the Cauchy at about 5e6 scales.

Q* is computed by :func:`global_quantile` with the foundation's safeguarded Newton root finder
(``ldpjax.roots.bracketed_root``) on the bracket [min_k Q_k(tau), max_k Q_k(tau)] (at its left
end every F_k <= tau, at its right end every F_k >= tau), widened slightly. For records clients
the function is a step function: the root finder then bisects to the jump of the weighted ECDF
across tau (the left-continuous tau-quantile); when the ECDF equals tau exactly on an interval,
any point of that interval is returned.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtr, ndtri

from ldpjax import _validation as v
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike, PRNGKey

FAMILIES = ("normal", "uniform", "cauchy", "laplace")
RECORDS = "records"
_UNIFORM_FLOOR = 2.0**-24


class RecordSet:
    """Static holder of the records of every client, padded to a common width.

    Attributes:
      values: (K, width) each client's records sorted, padded with +inf (CDFs, quantiles).
      stream: (K, width) the records in their input order, padded with NaN: what the
        algorithms read, by position, without replacement (an order that never depends on the
        values; :mod:`ldpjax.quantile.record_stream`).
      counts: (K,) n_k.
      max_uses: the most times any record may be reported (1: each record once).

    Hashable by content (SHA-256 of both arrays, the counts and ``max_uses``), so it can be
    static metadata of a pytree and a jit cache key.
    """

    def __init__(self, rows: Sequence[ArrayLike], max_uses: int = 1):
        arrays = [np.asarray(r, dtype=np.float64).ravel() for r in rows]
        counts = np.array([a.size for a in arrays], dtype=np.int64)
        width = int(counts.max()) if counts.size else 0
        padded = np.full((len(arrays), width), np.inf, dtype=np.float64)
        stream = np.full((len(arrays), width), np.nan, dtype=np.float64)
        for k, a in enumerate(arrays):
            padded[k, : a.size] = np.sort(a)
            stream[k, : a.size] = a
        self.values = padded
        self.stream = stream
        self.counts = counts
        self.max_uses = int(max_uses)
        digest = hashlib.sha256(
            padded.tobytes() + stream.tobytes() + counts.tobytes() + str(self.max_uses).encode()
        ).hexdigest()
        self.digest = digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, RecordSet) and other.digest == self.digest

    def __repr__(self) -> str:
        return (
            f"RecordSet(clients={len(self.counts)}, max_records={self.values.shape[1]}, "
            f"max_uses={self.max_uses}, sha256={self.digest[:16]})"
        )


@dataclasses.dataclass(frozen=True)
class Clients:
    """K client distributions (a pytree; see the module docstring).

    Attributes:
      loc: (K,) locations (array leaf).
      scale: (K,) scales > 0 (array leaf).
      families: static tuple of K family names.
      records: static :class:`RecordSet` for ``records`` clients, else None.
    """

    loc: Array
    scale: Array
    families: tuple[str, ...] = ()
    records: RecordSet | None = None

    @property
    def num_clients(self) -> int:
        return len(self.families)


jax.tree_util.register_dataclass(
    Clients, data_fields=["loc", "scale"], meta_fields=["families", "records"]
)


def _check_num_clients(num_clients: int) -> None:
    if num_clients < 1:
        raise ValueError(f"num_clients (K) must be an integer >= 1; got {num_clients}")


def make_clients(
    families: str | Sequence[str],
    loc: ArrayLike = 0.0,
    scale: ArrayLike = 1.0,
    num_clients: int | None = None,
) -> Clients:
    """Parametric clients, one family per client (a mixture across clients if they differ).

    Args:
      families: one family name for all clients, or a sequence of K names from
        ``("normal", "uniform", "cauchy", "laplace")``.
      loc: locations, scalar or (K,).
      scale: scales > 0, scalar or (K,).
      num_clients: K, needed only when ``families`` is one name and ``loc``/``scale`` are
        scalars (default: inferred from ``families``, ``loc`` or ``scale``).

    Raises:
      ValueError: unknown family, K < 1, scale <= 0, or mismatched lengths.
    """
    sizes = {int(np.size(loc))} | {int(np.size(scale))}
    if isinstance(families, str):
        families_seq = None
    else:
        families_seq = tuple(families)
        sizes.add(len(families_seq))
    sizes.discard(1)
    if num_clients is not None:
        sizes.add(int(num_clients))
    if len(sizes) > 1:
        raise ValueError(
            f"families, loc and scale must describe the same number of clients; got sizes {sizes}"
        )
    k = sizes.pop() if sizes else (int(num_clients) if num_clients is not None else 1)
    if families_seq is not None and len(families_seq) == 1:
        families_seq = families_seq * k
    names = families_seq if families_seq is not None else (families,) * k
    _check_num_clients(len(names))
    for name in names:
        if name not in FAMILIES:
            raise ValueError(f"families must be names in {FAMILIES}; got {name!r}")
    v.check_range("loc", loc, -np.inf, np.inf, low_open=True, high_open=True)
    v.check_range("scale", scale, 0.0, np.inf, low_open=True, high_open=True)
    dtype = jnp.result_type(float)
    loc = jnp.broadcast_to(jnp.asarray(loc, dtype), (k,))
    scale = jnp.broadcast_to(jnp.asarray(scale, dtype), (k,))
    return Clients(loc=loc, scale=scale, families=tuple(names), records=None)


def record_clients(records: Sequence[ArrayLike], *, max_uses: int = 1) -> Clients:
    """Clients that hold real records, read **without replacement** by the algorithms.

    Client k's reports read its records in a fresh pseudo-random order each run (an order that
    depends on the key and on the records' positions, never on their values), one pass after
    another: with n_k records, a stream of R reports reads each record at most
    m_k = ceil(R / n_k) times (:mod:`ldpjax.quantile.record_stream`).

    Args:
      records: K one-dimensional arrays of finite values (lengths may differ, each >= 1).
      max_uses: the most times any record may be reported (static integer >= 1). The default 1
        reports every record at most once, so the per-record claim is the single-use one
        (eps_k = log((1 + r_k) / (1 - r_k)) for randomized response): the release to use on
        real data. A stream longer than n_k is then a ``ValueError``. With ``max_uses=m`` a
        stream of up to m n_k reports runs and the algorithms' ``privacy_event`` composes the
        m_k <= m uses (randomized response: m_k eps_k); reuse costs privacy linearly in m_k.

    Raises:
      ValueError: no client, an empty or non-finite array, or ``max_uses`` not an integer >= 1.

    Example:
      >>> c = record_clients([[1.0, 2.0, 3.0], [5.0]], max_uses=2)
      >>> c.records.counts.tolist(), c.records.max_uses
      ([3, 1], 2)
    """
    rows = [np.asarray(r, dtype=np.float64).ravel() for r in records]
    _check_num_clients(len(rows))
    for k, row in enumerate(rows):
        if row.size == 0:
            raise ValueError(f"records[{k}] must hold at least one value; got an empty array")
        v.check_range(f"records[{k}]", row, -np.inf, np.inf, low_open=True, high_open=True)
    if isinstance(max_uses, bool) or not isinstance(max_uses, (int, np.integer)) or max_uses < 1:
        raise ValueError(f"max_uses must be an integer >= 1 (the most uses of any record); got {max_uses!r}")
    k = len(rows)
    dtype = jnp.result_type(float)
    return Clients(
        loc=jnp.zeros((k,), dtype),
        scale=jnp.ones((k,), dtype),
        families=(RECORDS,) * k,
        records=RecordSet(rows, max_uses),
    )


# --------------------------------------------------------------------------- helpers
def _is_records(clients: Clients) -> bool:
    return clients.records is not None


def _records_arrays(clients: Clients, dtype) -> tuple[Array, Array]:
    rec = clients.records
    return jnp.asarray(rec.values, dtype), jnp.asarray(rec.counts, jnp.int32)


def _standard_inverse_cdf(family: str, u: Array) -> Array:
    if family == "normal":
        return ndtri(u)
    if family == "uniform":
        return 2.0 * u - 1.0
    if family == "cauchy":
        return jnp.tan(math.pi * (u - 0.5))
    if family == "laplace":
        centred = u - 0.5
        return -jnp.sign(centred) * jnp.log1p(-2.0 * jnp.abs(centred))
    raise ValueError(f"unknown family {family!r}")


def _standard_cdf(family: str, z: Array) -> Array:
    if family == "normal":
        return ndtr(z)
    if family == "uniform":
        return jnp.clip(0.5 * (z + 1.0), 0.0, 1.0)
    if family == "cauchy":
        return 0.5 + jnp.arctan(z) / math.pi
    if family == "laplace":
        return jnp.where(z < 0, 0.5 * jnp.exp(jnp.minimum(z, 0.0)), 1.0 - 0.5 * jnp.exp(-jnp.maximum(z, 0.0)))
    raise ValueError(f"unknown family {family!r}")


def _standard_pdf(family: str, z: Array) -> Array:
    if family == "normal":
        return jnp.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    if family == "uniform":
        return jnp.where(jnp.abs(z) <= 1.0, 0.5, 0.0)
    if family == "cauchy":
        return 1.0 / (math.pi * (1.0 + z * z))
    if family == "laplace":
        return 0.5 * jnp.exp(-jnp.abs(z))
    raise ValueError(f"unknown family {family!r}")


def _by_family(clients: Clients, fn, z_of_family, client_index=None) -> Array:
    """Evaluate ``fn(family, z)`` for each family present and pick each client's family."""
    present = sorted(set(clients.families))
    if len(present) == 1:
        return fn(present[0], z_of_family)
    codes = np.array([present.index(f) for f in clients.families], dtype=np.int32)
    code = jnp.asarray(codes)
    code = code if client_index is None else code[client_index]
    out = fn(present[0], z_of_family)
    for i, family in enumerate(present[1:], start=1):
        out = jnp.where(code == i, fn(family, z_of_family), out)
    return out


def _client_params(clients: Clients, client_index):
    if client_index is None:
        return clients.loc, clients.scale
    return clients.loc[client_index], clients.scale[client_index]


# --------------------------------------------------------------------------- public functions
def uniform_draws(key: PRNGKey, shape: Sequence[int], dtype=None) -> Array:
    """Standard uniforms in [0, 1) that drive the *data* draws (``sample_from_uniform`` lifts
    0 to 2^-24). Data sampling, not privacy noise: privacy noise is drawn only by
    :mod:`ldpjax.mechanisms`."""
    dtype = jnp.result_type(float) if dtype is None else dtype
    # data sampling: the uniforms behind each client's draw x ~ P_k (inverse CDF)
    return jax.random.uniform(key, tuple(shape), dtype)


def sample_from_uniform(clients: Clients, u: ArrayLike, client_index: ArrayLike | None = None) -> Array:
    """Transform uniforms into data draws by inverse CDF.

    For records clients this is the inverse of the empirical CDF: a draw *with* replacement.
    The algorithms do not use it for records (they read the records without replacement,
    :func:`ldpjax.quantile.record_stream.stream_records`).

    Args:
      clients: the client distributions.
      u: uniforms in (0, 1). Without ``client_index`` the last axis is the client axis (K).
      client_index: optional integer array (broadcast with ``u``) saying which client each
        uniform belongs to (used for a pooled stream).

    Returns:
      Draws with the shape of ``u`` (broadcast with ``client_index``).
    """
    u = jnp.asarray(u)
    dtype = jnp.result_type(u.dtype, float)
    u = jnp.maximum(u.astype(dtype), _UNIFORM_FLOOR)
    if client_index is not None:
        client_index = jnp.asarray(client_index, jnp.int32)
        u, client_index = jnp.broadcast_arrays(u, client_index)
    if _is_records(clients):
        values, counts = _records_arrays(clients, dtype)
        k_index = (
            jnp.broadcast_to(jnp.arange(clients.num_clients, dtype=jnp.int32), u.shape)
            if client_index is None
            else client_index
        )
        n = counts[k_index]
        pick = jnp.minimum(jnp.floor(u * n.astype(dtype)).astype(jnp.int32), n - 1)
        return values[k_index, pick]
    loc, scale = _client_params(clients, client_index)
    z = _by_family(clients, _standard_inverse_cdf, u, client_index)
    return loc + scale * z


def sample(key: PRNGKey, clients: Clients, shape: Sequence[int] = ()) -> Array:
    """Draws from every client: an array of shape ``shape + (K,)``.

    Pure function of ``key`` (inverse-CDF sampling from one uniform per draw; records clients:
    iid draws from the empirical distribution, with replacement — a simulation helper).
    """
    u = uniform_draws(key, tuple(shape) + (clients.num_clients,))  # data sampling
    return sample_from_uniform(clients, u)


def cdf(clients: Clients, q: ArrayLike) -> Array:
    """F_k(q) for every client: shape ``jnp.shape(q) + (K,)`` (empirical CDF for records)."""
    q = jnp.asarray(q, jnp.result_type(q, clients.loc.dtype, float))
    if _is_records(clients):
        values, counts = _records_arrays(clients, q.dtype)
        below = jnp.sum(values <= q[..., None, None], axis=-1)
        return below.astype(q.dtype) / counts.astype(q.dtype)
    z = (q[..., None] - clients.loc) / clients.scale
    return _by_family(clients, _standard_cdf, z)


def client_cdf(clients: Clients, q: ArrayLike, client_index: ArrayLike | None = None) -> Array:
    """Each client's CDF at its own point: F_k(q_k).

    Args:
      clients: the client distributions.
      q: points. Without ``client_index`` the last axis is the client axis (K entries, or 1 to
        broadcast one point to every client).
      client_index: optional integer array (broadcast with ``q``): entry i is
        F_{client_index[i]}(q[i]) (used for a pooled stream).

    Returns:
      F values with the broadcast shape (empirical CDF for records clients).

    Example:
      >>> c = make_clients("normal", loc=[0.0, 1.0])
      >>> [round(float(x), 3) for x in client_cdf(c, [0.0, 0.0])]
      [0.5, 0.159]
    """
    q = jnp.asarray(q)
    q = q.astype(jnp.result_type(q.dtype, clients.loc.dtype, float))
    if client_index is None:
        q = jnp.broadcast_to(q, q.shape[:-1] + (clients.num_clients,)) if q.ndim else jnp.broadcast_to(q, (clients.num_clients,))
    else:
        client_index = jnp.asarray(client_index, jnp.int32)
        q, client_index = jnp.broadcast_arrays(q, client_index)
    if _is_records(clients):
        values, counts = _records_arrays(clients, q.dtype)
        index = (
            jnp.broadcast_to(jnp.arange(clients.num_clients, dtype=jnp.int32), q.shape)
            if client_index is None
            else client_index
        )
        below = jnp.sum(values[index] <= q[..., None], axis=-1)  # integer count: exact
        return below.astype(q.dtype) / counts[index].astype(q.dtype)
    loc, scale = _client_params(clients, client_index)
    return _by_family(clients, _standard_cdf, (q - loc) / scale, client_index)


def pdf(clients: Clients, q: ArrayLike) -> Array:
    """Densities f_k(q), shape ``jnp.shape(q) + (K,)`` (parametric families only)."""
    if _is_records(clients):
        raise ValueError("clients must be parametric for pdf (records clients have no density)")
    q = jnp.asarray(q, jnp.result_type(q, clients.loc.dtype, float))
    z = (q[..., None] - clients.loc) / clients.scale
    return _by_family(clients, _standard_pdf, z) / clients.scale


def local_quantiles(tau: ArrayLike, clients: Clients) -> Array:
    """Each client's own tau-quantile F_k^{-1}(tau), shape ``jnp.shape(tau) + (K,)``.

    Closed forms for the parametric families; the left-continuous empirical quantile
    (``inf {x : F_k(x) >= tau}``, NumPy's ``inverted_cdf``) for records.
    """
    v.check_range("tau", tau, 0.0, 1.0, low_open=True, high_open=True)
    tau = jnp.asarray(tau, jnp.result_type(tau, clients.loc.dtype, float))
    if _is_records(clients):
        values, counts = _records_arrays(clients, tau.dtype)
        rank = jnp.ceil(tau[..., None] * counts.astype(tau.dtype)).astype(jnp.int32) - 1
        rank = jnp.clip(rank, 0, counts - 1)
        rows = jnp.broadcast_to(jnp.arange(clients.num_clients), rank.shape)
        return values[rows, rank]
    z = _by_family(clients, _standard_inverse_cdf, jnp.broadcast_to(tau[..., None], tau.shape + (clients.num_clients,)))
    return clients.loc + clients.scale * z


def _global_residual(q: Array, tau: Array, loc: Array, scale: Array, weights: Array, clients: Clients) -> Array:
    model = dataclasses.replace(clients, loc=loc, scale=scale)
    return jnp.sum(weights * cdf(model, q), axis=-1) - tau


def check_weights(weights: ArrayLike | None, num_clients: int) -> Array:
    """Validated client weights p_k (default 1/K): non-negative, sum 1, length K."""
    dtype = jnp.result_type(float)
    if weights is None:
        return jnp.full((num_clients,), 1.0 / num_clients, dtype)
    v.check_sums_to_one("weights", weights, atol=1e-5)
    if v.is_concrete(weights) and np.shape(weights)[-1:] != (num_clients,):
        raise ValueError(
            f"weights must have one entry per client (K={num_clients}); got shape {np.shape(weights)}"
        )
    return jnp.asarray(weights, dtype)


def global_quantile(tau: ArrayLike, clients: Clients, weights: ArrayLike | None = None) -> Array:
    """The global quantile Q* solving sum_k p_k F_k(Q*) = tau (the paper's Sec. 2).

    Uses ``ldpjax.roots.bracketed_root`` (differentiable in ``tau``, ``clients.loc``,
    ``clients.scale`` and ``weights`` by the implicit function theorem).

    Args:
      tau: quantile level(s) in (0, 1) (any shape; one Q* per entry).
      clients: the K client distributions.
      weights: p_k, non-negative, summing to 1 (default 1/K).

    Returns:
      Q* with the shape of ``tau``. Under ``jit`` an invalid tau gives NaN.

    Example:
      >>> c = make_clients("normal", loc=[0.0, 0.0])
      >>> round(float(global_quantile(0.975, c)), 3)
      1.96
    """
    v.check_range("tau", tau, 0.0, 1.0, low_open=True, high_open=True)
    k = clients.num_clients
    _check_num_clients(k)
    weights = check_weights(weights, k)
    dtype = jnp.result_type(tau, clients.loc.dtype, weights.dtype, float)
    return _global_quantile(jnp.asarray(tau, dtype), clients, weights.astype(dtype))


@jax.jit
def _global_quantile(tau: Array, clients: Clients, weights: Array) -> Array:
    """Compiled once per client structure (families and records are static pytree metadata)."""
    dtype = tau.dtype
    valid = (tau > 0) & (tau < 1)
    safe_tau = jnp.where(valid, tau, 0.5)
    if _is_records(clients):
        values, counts = _records_arrays(clients, dtype)
        finite = jnp.where(jnp.isfinite(values), values, jnp.nan)
        lo = jnp.nanmin(finite)
        hi = jnp.nanmax(finite)
        pad = 1e-3 * (1.0 + jnp.abs(hi - lo))
        lo = jnp.broadcast_to(lo - pad, tau.shape)
        hi = jnp.broadcast_to(hi + pad, tau.shape)
    else:
        local = jax.lax.stop_gradient(local_quantiles(safe_tau, clients))
        spread = jnp.max(local, axis=-1) - jnp.min(local, axis=-1)
        pad = 1e-3 * (spread + jnp.max(clients.scale))
        lo = jnp.min(local, axis=-1) - pad
        hi = jnp.max(local, axis=-1) + pad
    root = bracketed_root(
        lambda q, t, loc, scale, w: _global_residual(q, t, loc, scale, w, clients),
        lo,
        hi,
        safe_tau,
        clients.loc.astype(dtype),
        clients.scale.astype(dtype),
        weights,
        num_iters=100,
    )
    return v.valid_or_nan(valid, root)


__all__ = [
    "FAMILIES",
    "RECORDS",
    "Clients",
    "RecordSet",
    "cdf",
    "check_weights",
    "client_cdf",
    "global_quantile",
    "local_quantiles",
    "make_clients",
    "pdf",
    "record_clients",
    "sample",
    "sample_from_uniform",
    "uniform_draws",
]

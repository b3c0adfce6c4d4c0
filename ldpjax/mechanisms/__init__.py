"""The privacy layer: the only code in ldpjax that draws privacy noise.

Every algorithm releases through these mechanisms, and states its per-record claim as an event
(:mod:`ldpjax.accounting.events`; import them, and the accountants, from :mod:`ldpjax.accounting`)
that the differentiable accountants (:mod:`ldpjax.accounting.accountant`) take.

Mechanisms (pure functions of an explicit key; ``jit``/``vmap``/``grad``-able):

* :func:`gaussian_mechanism` — ``value + N(0, (sensitivity / mu)^2 I)``, mu-GDP. ``granularity=g``
  selects the float-safe path (rounding to g Z + exact discrete Gaussian noise): **use it for
  real data**; the default float path is for simulation (its low-order bits leak, Mironov 2012).
  :func:`gaussian_noise_scale` is the one noise scale (sensitivity / mu; 0 only for an explicit
  mu = inf).
* :func:`randomized_response` — binary RR at truthful rate r (eps = log((1+r)/(1-r))), decided
  on one 32-bit word per report (exact to 2^-32); :func:`randomized_response_bernoulli` — the
  reported-bit law when only P[bit = 1] is known (simulation fast path);
  :func:`debias_randomized_response`.
* :func:`kary_randomized_response` (budget xi) and :func:`kary_randomized_response_explore`
  (exploration probability p, epsilon-greedy's rate), two 32-bit words per report (exact to
  2^-32 per category); ``*_from_bits`` forms for callers that share the words
  (:func:`report_bits`, :func:`uniform_from_bits`).
* :func:`ldpjax.mechanisms.binomial.binomial` — Binomial counts for the count forms
  (``kary_randomized_response_counts``, the block policies' segments and clicks): the draws of
  ``jax.random.binomial`` at ~2.5x its speed on CPU (simulation path, floating point).
* :func:`discrete_gaussian` — exact integer discrete Gaussian (Canonne, Kamath & Steinke 2020).
* :func:`laplace_mechanism` — ``value + (sensitivity / eps) Laplace``, pure eps-DP; with
  ``granularity=g`` an exact discrete Laplace on g Z (real data); :func:`laplace_claim` its
  ``LaplaceEvent``; :func:`discrete_laplace` the integer sampler.
* :func:`secure_key` — 128 bits from the OS CSPRNG as a key of ``ldpjax_secure128``
  (Threefry-4x32, no seed, never converted to another generator); simulation uses integer
  seeds (replayable noise). :func:`release` calls a real-data-safe mechanism only with such a
  key (:func:`is_secure_key`, :func:`require_secure_key`; :func:`register_release` admits
  more); :func:`ldpjax.engine.release_run` releases one run of an algorithm.
  :func:`no_privacy_permitted` — where a traced inf budget means "no noise" (the engine enters
  it after its concrete grid check).

Fail closed: concrete out-of-domain budgets, sensitivities, values, bits or categories raise
``ValueError`` naming the argument; traced ones give a NaN release (real values), an invalid
category (-1) or a fair coin — never the unperturbed input. float16 / bfloat16 are refused.
"""

from ldpjax.mechanisms.discrete_gaussian import discrete_gaussian
from ldpjax.mechanisms.discrete_gaussian import discrete_gaussian_delta
from ldpjax.mechanisms.duchi import duchi_mechanism
from ldpjax.mechanisms.hadamard_response import hadamard_response
from ldpjax.mechanisms.hybrid import hybrid_mechanism
from ldpjax.mechanisms.local_hashing import local_hash_seeds
from ldpjax.mechanisms.local_hashing import local_hashing
from ldpjax.mechanisms.local_hashing import olh_buckets
from ldpjax.mechanisms.piecewise import piecewise_mechanism
from ldpjax.mechanisms.subset_selection import subset_selection
from ldpjax.mechanisms.subset_selection import subset_size
from ldpjax.mechanisms.unary_encoding import optimized_unary_encoding
from ldpjax.mechanisms.unary_encoding import symmetric_unary_encoding
from ldpjax.mechanisms.unary_encoding import unary_encoding
from ldpjax.mechanisms.gaussian import gaussian_mechanism
from ldpjax.mechanisms.gaussian import gaussian_noise_scale
from ldpjax.mechanisms.gaussian import granular_claim
from ldpjax.mechanisms.gaussian import rounded_sensitivity
from ldpjax.mechanisms.kary import budget_width
from ldpjax.mechanisms.kary import kary_randomized_response
from ldpjax.mechanisms.kary import weighted_category_widths
from ldpjax.mechanisms.kary import weighted_randomized_response_from_bits
from ldpjax.mechanisms.laplace import discrete_laplace
from ldpjax.mechanisms.laplace import laplace_claim
from ldpjax.mechanisms.laplace import laplace_mechanism
from ldpjax.mechanisms.laplace import laplace_noise_scale
from ldpjax.mechanisms.kary import kary_randomized_response_counts
from ldpjax.mechanisms.kary import kary_randomized_response_explore
from ldpjax.mechanisms.kary import kary_randomized_response_from_bits
from ldpjax.mechanisms.randomized_response import debias_randomized_response
from ldpjax.mechanisms.randomized_response import randomized_response
from ldpjax.mechanisms.randomized_response import randomized_response_bernoulli
from ldpjax.mechanisms.randomized_response import randomized_response_bernoulli_from_bits
from ldpjax.mechanisms.randomized_response import randomized_response_from_bits
from ldpjax.mechanisms.randomized_response import report_bits
from ldpjax.mechanisms.randomized_response import uniform_from_bits
from ldpjax.mechanisms._domain import no_privacy_permitted
from ldpjax.mechanisms.release import register_release
from ldpjax.mechanisms.release import release
from ldpjax.mechanisms.secure import is_secure_key
from ldpjax.mechanisms.secure import require_secure_key
from ldpjax.mechanisms.secure import secure_key

__all__ = [
    "duchi_mechanism",
    "hadamard_response",
    "hybrid_mechanism",
    "local_hash_seeds",
    "local_hashing",
    "olh_buckets",
    "piecewise_mechanism",
    "subset_selection",
    "subset_size",
    "optimized_unary_encoding",
    "symmetric_unary_encoding",
    "unary_encoding",
    "budget_width",
    "debias_randomized_response",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_laplace",
    "gaussian_mechanism",
    "gaussian_noise_scale",
    "granular_claim",
    "kary_randomized_response",
    "laplace_claim",
    "laplace_mechanism",
    "laplace_noise_scale",
    "kary_randomized_response_counts",
    "kary_randomized_response_explore",
    "kary_randomized_response_from_bits",
    "randomized_response",
    "randomized_response_bernoulli",
    "no_privacy_permitted",
    "randomized_response_bernoulli_from_bits",
    "randomized_response_from_bits",
    "report_bits",
    "secure_key",
    "is_secure_key",
    "register_release",
    "release",
    "require_secure_key",
    "uniform_from_bits",
    "weighted_category_widths",
    "weighted_randomized_response_from_bits",
    "rounded_sensitivity",
]

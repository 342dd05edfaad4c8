"""gate: a measured write gate for coding-assistant memory.

Data flows one way: YAML -> validated model (loader) -> compiled classifier
(compiler) -> decisions (classify) -> scores (metrics) -> report.
"""

__version__ = "0.1.0"

# The rules-file schema versions this engine can read. A file written for a
# newer one is refused with a clear message rather than half-understood.
SUPPORTED_SCHEMA_VERSIONS = (1,)

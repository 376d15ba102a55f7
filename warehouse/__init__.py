"""The DuckDB warehouse: schema (migrations/), analyst views (models/), the one writer (db)."""

from warehouse.db import Warehouse

__all__ = ["Warehouse"]

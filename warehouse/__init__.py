"""The DuckDB warehouse: schema (migrations/), analyst views (models/), the one writer (db)."""

from lilo.warehouse.db import Warehouse, WarehouseBusy, open_warehouse

__all__ = ["Warehouse", "WarehouseBusy", "open_warehouse"]

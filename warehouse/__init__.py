"""The DuckDB warehouse: the one writer (db), its schema (schema: migrations/ and the analyst
views of models/), opening the file another process may hold (lock), the serving copy
(publishing) and its Parquet files (parquet)."""

from lilo.warehouse.db import Warehouse
from lilo.warehouse.lock import WarehouseBusy, open_warehouse

__all__ = ["Warehouse", "WarehouseBusy", "open_warehouse"]

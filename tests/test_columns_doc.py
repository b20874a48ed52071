"""docs/columns.md is the writer's own column table: generated from ``sweep/columns.py``, never edited by hand.

The page drifts when a column is added, renamed or dropped without its one-line description, or
when the page was not regenerated; either way a reader of the Parquet rows would meet a column
documented nowhere (66 of 102 were, before the page existed).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from stickyproof.sweep.columns import COLUMNS, DESCRIPTIONS, arrow_schema, columns_page
from stickyproof.sweep.rows import TaskParams, adversarial_task

PAGE = Path(__file__).resolve().parents[1] / "docs" / "columns.md"
REGENERATE = "python -m stickyproof.sweep.columns > docs/columns.md"


def test_every_column_written_has_a_description_and_every_description_a_column():
    written = [name for name, _ in COLUMNS]
    assert [n for n in written if not DESCRIPTIONS.get(n, "").strip()] == [], "describe these in columns.DESCRIPTIONS"
    assert sorted(set(DESCRIPTIONS) - set(written)) == [], "these descriptions name no column any more"


def test_a_real_rows_columns_are_the_schema_the_page_documents():
    (row,) = adversarial_task(3, 1, "range", TaskParams(source="adversarial"))
    table = pa.Table.from_pylist([row], schema=arrow_schema())  # raises on a key the schema lacks
    assert set(row) == set(table.column_names) == set(DESCRIPTIONS)
    documented = [line.split("`")[1] for line in PAGE.read_text().splitlines() if line.startswith("| `")]
    assert documented == table.column_names


def test_docs_columns_page_is_the_generated_one():
    assert PAGE.read_text() == columns_page(), f"docs/columns.md is stale: run {REGENERATE}"


def test_the_page_states_each_columns_arrow_type():
    types = {f.name: str(f.type) for f in arrow_schema()}
    for line in PAGE.read_text().splitlines():
        if line.startswith("| `"):
            name, kind = line.split("`")[1], line.split("|")[2].strip()
            assert kind == types[name], (name, kind, types[name])

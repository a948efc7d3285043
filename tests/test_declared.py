"""``schema/tables.sql`` (the DDL every open reads) makes the tables the SQLAlchemy declarations
make, and the comparison sees a difference of type, nullability, default, column or key."""

from __future__ import annotations

import pytest

from ctxprior.schema import declared

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)


def test_tables_sql_makes_what_the_declarations_make():
    diff = declared.ddl_differences(declared.ddl_statements(), declared.compiled_ddl())
    assert not diff, "\n".join(diff[:10]) + "\nrun: python scripts/docs_tables.py --update"


def test_tables_sql_names_every_declared_table_in_order():
    from ctxprior.schema import metadata

    assert declared.table_names() == [t.name for t in metadata.sorted_tables]


@pytest.mark.parametrize(
    "old, new",
    [
        ("name TEXT NOT NULL,", "name VARCHAR,"),  # nullability
        ("name TEXT NOT NULL,", "name INTEGER NOT NULL,"),  # type
        ("separator TEXT DEFAULT '',", "separator TEXT DEFAULT 'x',"),  # default
        ("UNIQUE (name)", "UNIQUE (name, description)"),  # a key
        ("description TEXT,", ""),  # a column
    ],
)
def test_a_changed_table_is_a_difference(old, new):
    statements = list(declared.ddl_statements())
    assert old in statements[0], statements[0]
    statements[0] = statements[0].replace(old, new, 1)
    assert declared.ddl_differences(statements, declared.ddl_statements())


def test_the_text_written_reads_back_as_the_same_statements():
    text = declared.tables_text(declared.compiled_ddl())
    assert "\t" not in text and all(line == line.rstrip() for line in text.splitlines())
    from ctxprior.sqlfiles import split_statements

    back = [s.strip().rstrip(";").strip() for s in split_statements(text)]
    assert not declared.ddl_differences(back, declared.ddl_statements())

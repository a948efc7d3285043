"""The one SQLAlchemy MetaData every table module registers on."""

from sqlalchemy import MetaData

metadata = MetaData()

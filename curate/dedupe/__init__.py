"""Deduplication and the row policies: which records survive into the table, and with what.

``plan`` groups exact and near duplicates (every occurrence kept in the survivor's provenance);
``policy`` decides, from the report's findings, which rows are flagged or dropped; ``provenance``
lists, file by file, each survivor with every occurrence it stands for.
"""

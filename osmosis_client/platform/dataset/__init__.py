"""Datasets: what an upload must be, the upload itself, a dataset's file fetched."""

"""Writes receipt files as a Parquet input for verify_receipts.py: columns `file` and
`receipt` (the raw bytes).   python3 examples/spark/make_input.py OUT.parquet FILE..."""
import sys

import pyarrow as pa
import pyarrow.parquet as pq

files = sys.argv[2:]
table = pa.table({"file": files, "receipt": pa.array([open(path, "rb").read() for path in files], type=pa.binary())})
pq.write_table(table, sys.argv[1])
print(f"{len(files)} receipts in {sys.argv[1]}")

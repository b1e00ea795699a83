"""Beyond one machine: a store's rollouts, blobs and index rows shared on a PostgreSQL server.

The local store stays the truth for what it wrote and works without the server; the server holds
copies (`push`), which other machines fetch into their own stores on demand (`pull`), and the
leases that let one machine at a time continue a thread (`lease`). `shared` is the connection and
the cross-machine view; `schema` the server's tables and their migrations; `identity` the store's
id. psycopg is imported only here and in `index.postgres` (the optional extra).
"""

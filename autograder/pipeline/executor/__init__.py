"""Where jobs run: Dask distributed, a local cluster or an existing one, with retries,
progress and the check of every worker's packages (``executor``), and only for holders of the
cluster's TLS credentials (``tls``); a local cluster's workers fork from the job's warm server
(``local_worker``). It may import the job and what the job stands on, never
the term's tools or the ledger, which hands it the jobs."""

"""The results database: what a run stores (``database``, its ``schema`` and ``rows``),
how SQLite is written (``sqlitetx``), matches set aside for a re-run (``setaside``),
the check of stored matches against a replay (``verify``), the stored configuration
compared for a resume (``resume``), and the hint for a RESULTS path that holds none (``hint``)."""

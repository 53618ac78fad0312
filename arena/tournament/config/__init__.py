"""The tournament file: read within bounds (``bounded``), walked as YAML nodes with
line numbers (``nodes``), its bots (``bots``) and other sections (``reader``) read
into the frozen dataclasses of ``model``; ``diff`` tells what changed between two."""

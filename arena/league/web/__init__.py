"""The league's live page (Starlette, uvicorn, sse-starlette: ``pip install 'arena[league]'``).

Loaded by ``arena league serve`` alone: no other command imports the web stack
(``tests/test_lean_imports.py``).
"""

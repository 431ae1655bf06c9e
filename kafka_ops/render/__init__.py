"""The report's renderers: text (table, brief, markdown, junit, prometheus: none of them has a JSON Schema; the
prometheus metric names are its contract, docs/commands/audit.md), the HTML page (report), the pydantic models
behind the JSON Schema, and the check catalogue."""

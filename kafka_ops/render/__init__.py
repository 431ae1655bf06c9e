"""The report's renderers: text (table, brief, markdown, junit), the HTML page (report), the pydantic models
behind the JSON Schema, and the check catalogue."""

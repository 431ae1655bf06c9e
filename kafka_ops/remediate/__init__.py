"""Remediation: the fixes (dry run until --apply, journaled, undoable). Standard library only (shipped)."""

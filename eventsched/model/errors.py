"""Errors the model raises for input it cannot accept."""


class ManifestError(ValueError):
    """A Kubernetes object whose fields cannot be read; names the field and the fix."""

    def __init__(self, where: str, field: str, problem: str) -> None:
        self.where = where
        self.field = field
        self.problem = problem
        super().__init__(f"{where}: {field}: {problem}")

"""check's cache: what each unit's replay gave, reused while nothing it depends on changed."""
